"""The served models' signatures: `parse` of the Python path (the JAX and
PyTorch installs, without TensorFlow) answers as the exported signature
does, and the tracing of the export's signature functions for a `.keras`
model gives the same tokens, distances and trees."""

import numpy as np
import pytest

from keras_ordered_cli._serving import models

pytestmark = pytest.mark.backends

SENTENCES = ["the cat sat on the mat .", "", "a\x07b", "the cat " * 4,
             "dogs ran"]


@pytest.fixture(scope="module")
def tiny():
    from harness import tiny_prpn_lm

    return tiny_prpn_lm()


def test_python_parse_answers_row_by_row(tiny):
    from keras_ordered.parsing import distances_to_tree
    from keras_ordered.parsing import tree_to_brackets

    signature = models._python_parse_signature(
        tiny, tiny.default_distance, max_length=7)["parse"]
    out = signature.run(SENTENCES)
    assert out["valid"].tolist() == [True, False, False, False, True]
    assert out["error"][1] == b"empty sentence: give at least one word"
    assert out["error"][2].startswith(b"control character")
    assert out["error"][3] == (b"sentence has 8 tokens, more than the limit "
                               b"of 7: split it")
    assert out["length"].tolist() == [7, 0, 0, 0, 2]
    assert out["tokens"].shape == (5, 7)
    words = SENTENCES[0].split()
    distances = tiny.sentence_distances([words])[tiny.default_distance][0]
    np.testing.assert_allclose(out["distance"][0], distances, atol=1e-6)
    assert out["tree"][0].decode() == tree_to_brackets(
        distances_to_tree(words, distances))
    assert set(out) == set(signature.outputs)
    for key in out:
        assert out[key].shape[0] == len(SENTENCES), key


@pytest.mark.tensorflow_only
def test_traced_export_signature_answers_as_the_python_path(tiny):
    import keras

    if keras.backend.backend() != "tensorflow":
        pytest.skip("the export's signatures run on TensorFlow")
    import tensorflow as tf

    traced = models._language_model_signatures(
        tiny, tiny.default_distance, 7, tf)["parse"]
    python = models._python_parse_signature(
        tiny, tiny.default_distance, 7)["parse"]
    a, b = traced.run(SENTENCES), python.run(SENTENCES)
    assert set(a) == set(b) == set(traced.outputs)
    assert a["valid"].tolist() == b["valid"].tolist()
    assert a["tree"].tolist() == b["tree"].tolist()
    assert a["tokens"].tolist() == b["tokens"].tolist()
    np.testing.assert_allclose(a["distance"], b["distance"], atol=1e-5)
    assert traced.batchable and traced.outputs["tokens"] == ("string", [-1, -1])


def test_served_names_keep_colons_out_of_urls(tmp_path):
    assert models.served_name("prpn_ptb_quick") == "prpn_ptb_quick"
    assert models.served_name("runs/x/model.keras") == "model"
    assert models.served_name("onlstm_ptb_small:layer2/forget") == (
        "onlstm_ptb_small_layer2_forget")
    version = tmp_path / "prpn" / "3"
    version.mkdir(parents=True)
    (version / "saved_model.pb").write_bytes(b"")
    assert models.served_name(str(version)) == "prpn"
    assert models.saved_model_version(str(tmp_path / "prpn")) == (
        str(version), 3)
    assert models.saved_model_version(str(tmp_path)) is None
