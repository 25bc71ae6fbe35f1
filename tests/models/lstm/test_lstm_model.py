"""The conventional LSTM language model (the parsing control): its gate
distances against NumPy, gradients, serialisation, presets, the recipe."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import command_server
from conftest import require_data
from harness import to_numpy
from harness import LM_VOCAB as VOCAB
from harness import gradients
from keras_ordered.models import LSTMLanguageModel
from keras_ordered.models.lstm import PRESETS
from keras_ordered.models.lstm import get_preset

pytestmark = pytest.mark.backends


def tiny_model(**overrides):
    return LSTMLanguageModel.from_preset("tiny", VOCAB, seed=3, **overrides)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def numpy_gate_distances(model, ids):
    """Every layer's `1 - mean(f_t)` and `mean(i_t)`, from the weights by an
    LSTM written here (gates in Keras' order i, f, c, o), from zero states."""
    x = model.embedding.embeddings.numpy()[ids]
    distances = {}
    for index, layer in enumerate(model.rnn_layers):
        kernel, recurrent, bias = [w.numpy() for w in layer.cell.weights]
        units = layer.cell.units
        h = np.zeros((ids.shape[0], units))
        c = np.zeros_like(h)
        forget, inputs, outputs = [], [], []
        for t in range(ids.shape[1]):
            z = x[:, t] @ kernel + h @ recurrent + bias
            i = _sigmoid(z[:, :units])
            f = _sigmoid(z[:, units:2 * units])
            g = np.tanh(z[:, 2 * units:3 * units])
            o = _sigmoid(z[:, 3 * units:])
            c = f * c + i * g
            h = o * np.tanh(c)
            forget.append(1.0 - f.mean(-1))
            inputs.append(i.mean(-1))
            outputs.append(h)
        distances[f"layer{index + 1}/forget"] = np.stack(forget, 1)
        distances[f"layer{index + 1}/input"] = np.stack(inputs, 1)
        x = np.stack(outputs, 1)
    return distances


def test_gate_distances_equal_a_numpy_lstm():
    model = tiny_model()
    ids = np.random.default_rng(2).integers(0, len(VOCAB), (3, 7))
    computed = model.syntactic_distances(ids)
    expected = numpy_gate_distances(model, ids)
    assert sorted(computed) == sorted(expected) == sorted(model.distance_names)
    for name in model.distance_names:
        np.testing.assert_allclose(computed[name], expected[name], atol=1e-5)
    assert model.default_distance == "layer2/forget"


def test_sentence_distances_and_trees():
    model = tiny_model()
    result = model.sentence_distances([["w1", "w2", "w3"], ["w4"], ["w5", "w6"]])
    for values in result.values():
        assert [len(v) for v in values] == [3, 1, 2]
        assert all(np.all((v > 0) & (v < 1)) for v in values)
    alone = model.sentence_distances([["w5", "w6"]])
    np.testing.assert_allclose(alone["layer1/forget"][0],
                               result["layer1/forget"][2], atol=1e-6)


def test_gradients_reach_every_weight():
    model = tiny_model()
    ids = np.random.default_rng(5).integers(0, len(VOCAB), (2, 9))

    def loss():
        logits, *_ = model([ids[:, :-1], *model.initial_state(2)],
                           training=True)
        return model._token_loss(ids[:, 1:], logits) + sum(model.losses)

    grads = gradients(loss, model.trainable_weights)
    names = [w.path for w in model.trainable_weights]
    assert sum("lstm" in n for n in names) == 6  # 2 layers x 3 weights
    for name, grad in zip(names, grads):
        assert grad is not None, name
        assert float(np.linalg.norm(grad)) > 0, name


def test_keras_file_round_trip(harness):
    model = tiny_model()
    ids = np.random.default_rng(7).integers(0, len(VOCAB), (2, 6))
    restored = harness.run_model_saving_test(
        model, [ids, *model.initial_state(2)], filename="lstm.keras")
    assert isinstance(restored, LSTMLanguageModel)
    assert restored.vocabulary == VOCAB
    for name in model.distance_names:
        np.testing.assert_array_equal(model.syntactic_distances(ids)[name],
                                      restored.syntactic_distances(ids)[name])
    assert LSTMLanguageModel.from_config(model.get_config()).count_params() == \
        model.count_params()


def test_presets_sizes_and_errors():
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9998)]
    for name, preset in PRESETS.items():
        model = LSTMLanguageModel.from_preset(name, vocabulary)
        assert model.count_params() == preset["parameters"], name
    with pytest.raises(ValueError, match="Unknown LSTM preset"):
        get_preset("huge")
    with pytest.raises(ValueError, match="tie_weights"):
        LSTMLanguageModel(VOCAB, embedding_dim=8, hidden_dims=[12, 10])


@pytest.mark.slow
def test_recipe_trains_and_parses(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    data = os.path.dirname(require_data("ptb", "train.txt"))
    treebank = require_data("wsj_sample", "mrg")
    result = subprocess.run(
        command_server.argv([
         sys.executable, os.path.join(REPO, "recipes", "ptb_lstm.py"),
         "--preset", "tiny", "--data", data, "--max-lines", "300",
         "--steps-per-epoch", "3", "--eval-steps", "2", "--epochs", "1",
         "--parse-eval", treebank, "--parse-eval-sentences", "20",
         "--skip-test", "--output", str(tmp_path), "--verbose", "0"]),
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.load(open(tmp_path / "results.json"))
    assert np.isfinite(results["valid_perplexity"])
    assert set(results["parse_f1"]) == {"layer1/forget", "layer1/input",
                                        "layer2/forget", "layer2/input"}
    restored = keras.saving.load_model(tmp_path / "model.keras")
    assert isinstance(restored, LSTMLanguageModel)
