"""One GFL parser, three backends: the tiny parser built and saved (.keras)
on TensorFlow, loaded on JAX and on PyTorch (each in a fresh process,
tests/backends/parity.py), gives the same teacher-forced logits (1e-5,
float32) and the same greedy and beam parses of a few sentences."""

import json

import keras
import numpy as np
import pytest

from harness import tiny_gfl_parser
from harness import to_numpy
from keras_ordered.models.gfl.inference import parse_sentences
from parity import run_on_backend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                       reason="builds the model on TensorFlow"),
]

SENTENCES = [
    ["john", "has", "a", "dog"],
    ["mary", "runs"],
    ["the", "cat", "sleeps"],
    ["a", "dog", "runs", "the", "unknown-word"],
    ["sleeps"],
]
SOURCE_IDS = [[4, 3, 2, 1], [7, 6, 0, 0], [10, 9, 8, 0]]
TARGET_IN = [[1, 3, 5, 9, 6, 9], [1, 9, 4, 2, 0, 0], [1, 3, 3, 9, 9, 4]]

# Runs on every backend: the teacher-forced logits, the greedy and beam
# outputs and the parses (as JSON bytes: `save` keeps arrays).
CODE = '''
from keras_ordered.models.gfl.inference import parse_sentences

model = keras.saving.load_model(ARGS["model"])
sentences = ARGS["sentences"]
source = np.array(ARGS["source_ids"], "int32")
logits = model([source, np.array(ARGS["target_in"], "int32")])
greedy = parse_sentences(model, sentences)
beam = parse_sentences(model, sentences, beam_size=3)
parses = {"greedy": [" ".join(str(t).split()) for t in greedy.trees],
          "beam": [" ".join(str(t).split()) for t in beam.trees],
          "greedy_symbols": greedy.symbols, "beam_symbols": beam.symbols}
save(logits=logits,
     beam_scores=model.beam_decode(source, beam_size=3)["beam_scores"],
     greedy_scores=model.greedy_decode(source)["scores"],
     parses=np.frombuffer(json.dumps(parses).encode("utf-8"), np.uint8))
'''


def outputs_here(model):
    """What CODE computes, here (TensorFlow)."""
    source = np.array(SOURCE_IDS, "int32")
    greedy = parse_sentences(model, SENTENCES)
    beam = parse_sentences(model, SENTENCES, beam_size=3)
    return {
        "logits": to_numpy(model([source, np.array(TARGET_IN, "int32")])),
        "beam_scores": model.beam_decode(source, beam_size=3)["beam_scores"],
        "greedy_scores": model.greedy_decode(source)["scores"],
        "parses": {
            "greedy": [" ".join(str(t).split()) for t in greedy.trees],
            "beam": [" ".join(str(t).split()) for t in beam.trees],
            "greedy_symbols": greedy.symbols,
            "beam_symbols": beam.symbols,
        },
    }


@pytest.fixture(scope="module")
def saved_parser(tmp_path_factory):
    keras.utils.set_random_seed(11)
    model = tiny_gfl_parser(seed=11)
    # Weights of a trained parser's scale (the initial ones give logits
    # of 1e-2, which a 1e-5 tolerance would not tell apart).
    rng = np.random.default_rng(11)
    for weight in model.weights:
        weight.assign(rng.normal(scale=0.5, size=weight.shape).astype("float32"))
    path = str(tmp_path_factory.mktemp("gfl_parity") / "tiny_gfl.keras")
    model.save(path)
    return model, path


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_tensorflow_parser_gives_the_same_outputs_on(backend, saved_parser):
    model, path = saved_parser
    expected = outputs_here(model)
    got = run_on_backend(
        backend, CODE, model=path, sentences=SENTENCES,
        source_ids=SOURCE_IDS, target_in=TARGET_IN)
    parses = json.loads(got["parses"].tobytes().decode("utf-8"))
    assert got["logits"].dtype == np.float32
    np.testing.assert_allclose(got["logits"], expected["logits"],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["greedy_scores"], expected["greedy_scores"],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["beam_scores"], expected["beam_scores"],
                               rtol=1e-5, atol=1e-5)
    assert parses == expected["parses"]
