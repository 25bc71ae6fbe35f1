"""Backward language models (`direction="backward"`): trained on every
sentence reversed, they parse sentences given in their own order, their
distances in the forward convention, so that their trees join ensembles."""

import types

import numpy as np
import pytest

from conftest import require_data
from harness import tiny_onlstm_lm
from harness import tiny_prpn_lm
from keras_ordered.datasets import ptb
from keras_ordered.models.base import backward_to_forward

pytestmark = pytest.mark.backends

SENTENCES = [["w3", "w1", "w4", "w1", "w5", "w9", "w2"], ["w7", "w2"],
             ["w11"], ["w0", "w13", "w6", "w8", "w12"]]


def _reversed_sentences_reference(ids, eos):
    """Sentence by sentence, in plain Python."""
    out, sentence = [], []
    for token in ids:
        if token == eos:
            out += sentence[::-1] + [token]
            sentence = []
        else:
            sentence.append(token)
    return out + sentence[::-1]


@pytest.mark.parametrize("ends_with_eos", [True, False])
def test_reverse_sentences_reverses_each_sentence_in_place(ends_with_eos):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 6, size=400)  # 0 is <eos>: empty sentences too
    ids[-1] = 0 if ends_with_eos else 3
    reversed_ids = ptb.reverse_sentences(ids, 0)
    assert reversed_ids.dtype == ids.dtype
    assert reversed_ids.tolist() == _reversed_sentences_reference(
        ids.tolist(), 0)
    # Twice is the identity.
    np.testing.assert_array_equal(ptb.reverse_sentences(reversed_ids, 0), ids)


def test_backward_to_forward_puts_each_gap_before_its_word():
    # Read backward, "c b a": the distance computed at b (3.0) is the gap
    # between c and b, i.e. before c in the sentence "a b c".
    read = {"c": 7.0, "b": 3.0, "a": 5.0}  # in reading order c, b, a
    forward = backward_to_forward(np.array(list(read.values())))
    # Before a: the sentence boundary (the first word read, c); before b:
    # computed at a; before c: computed at b.
    np.testing.assert_array_equal(forward, [7.0, 5.0, 3.0])


def _mirror(model, **direction):
    twin = type(model).from_config({**model.get_config(), **direction})
    twin.set_weights(model.get_weights())
    return twin


@pytest.mark.parametrize("build", [tiny_onlstm_lm, tiny_prpn_lm],
                         ids=["onlstm", "prpn"])
def test_a_backward_model_reads_the_reversed_sentence(build):
    forward = build(seed=3)
    backward = _mirror(forward, direction="backward")
    assert backward.direction == "backward"
    got = backward.sentence_distances(SENTENCES)
    read = forward.sentence_distances([s[::-1] for s in SENTENCES])
    for name in forward.distance_names:
        for sentence, values, reading in zip(SENTENCES, got[name], read[name]):
            n = len(sentence)
            assert values.shape == (n,)
            # The gap before word k (k > 0) is the distance computed at
            # word k - 1, which the model read at position n - k.
            for k in range(1, n):
                assert values[k] == pytest.approx(reading[n - k], abs=1e-6)
            assert values[0] == pytest.approx(reading[0], abs=1e-6)
    # A forward model's distances are not these (the test can fail).
    plain = forward.sentence_distances(SENTENCES)[forward.default_distance]
    assert not np.allclose(plain[0], got[forward.default_distance][0])


def test_the_direction_survives_saving(tmp_path):
    import keras

    model = tiny_prpn_lm(seed=2, direction="backward")
    path = str(tmp_path / "backward.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.direction == "backward"
    for a, b in zip(model.sentence_distances(SENTENCES)["parser/distance"],
                    loaded.sentence_distances(SENTENCES)["parser/distance"]):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_an_unknown_direction_is_refused():
    with pytest.raises(ValueError, match="`direction` must be one of"):
        tiny_onlstm_lm(direction="sideways")


def test_the_recipes_data_step_reverses_every_split(capsys):
    from keras_ordered.training.tasks.language_model import _load_data

    def experiment(**model_args):
        return types.SimpleNamespace(
            treebank=None, exclude_treebank=None, max_lines=30,
            data=require_data("ptb"), model_args=model_args,
            training=types.SimpleNamespace(data="ptb",
                                           sentence_level=False))

    forward = _load_data(experiment())
    backward = _load_data(experiment(direction="backward"))
    assert "Reading every sentence backward" in capsys.readouterr().out
    eos = forward.vocabulary.index("<eos>")
    for split in ("train_ids", "valid_ids", "test_ids"):
        ids, reversed_ids = getattr(forward, split), getattr(backward, split)
        assert list(reversed_ids) == _reversed_sentences_reference(
            list(ids), eos)
        assert list(reversed_ids) != list(ids)


def test_export_refuses_a_backward_model(tmp_path):
    pytest.importorskip("tensorflow")
    import keras

    if keras.backend.backend() != "tensorflow":
        pytest.skip("SavedModel export runs on the TensorFlow backend")
    from keras_ordered.export import export_language_model

    model = tiny_onlstm_lm(direction="backward")
    with pytest.raises(ValueError, match="reads backward"):
        export_language_model(model, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
