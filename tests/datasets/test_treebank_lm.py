"""The official unsupervised-parsing data: a treebank's own sentences as
language-modelling text (`load_lm_sentences`), read as `<s> w .. </s>`."""

import collections

import numpy as np
import pytest

from conftest import require_data
from keras_ordered.datasets.treebank import load_lm_sentences
from keras_ordered.training import SentenceBatches


def test_wsj10_sentences_vocabulary_and_ids():
    folder = require_data("wsj_sample", "mrg")
    ids, vocabulary, records = load_lm_sentences(folder, max_length=10,
                                                 min_count=3)
    assert vocabulary[:3] == ["<eos>", "<unk>", "<s>"]
    assert 400 < len(records) < 500  # WSJ10 of the sample: 472 sentences
    assert all(len(r.words) <= 10 for r in records)
    # Punctuation removed by POS, lower case, digit runs as N.
    words = [w for r in records for w in r.words]
    assert not any(w in (",", ".", "``", "''") for w in words)
    assert all(w.replace("N", "") == w.replace("N", "").lower() for w in words)
    assert not any(c.isdigit() for w in words for c in w)
    counts = collections.Counter(words)
    kept = set(vocabulary[3:])
    assert kept == {w for w, n in counts.items() if n >= 3}
    # One <eos> after each sentence, in the treebank's order, rare -> <unk>.
    ends = np.flatnonzero(ids == 0)
    assert len(ends) == len(records)
    first = ids[: ends[0]]
    assert [vocabulary[i] for i in first] == [
        w if w in kept else "<unk>" for w in records[0].words
    ]


def test_sentence_batches_read_the_start_symbol_first():
    ids = np.array([5, 6, 0, 7, 0], "int32")
    batches = SentenceBatches(ids, 2, eos_id=0, shuffle=False, bos_id=2)
    (x, y), = list(batches.windows(0))
    np.testing.assert_array_equal(x["token_ids"], [[2, 5, 6], [2, 7, 0]])
    np.testing.assert_array_equal(y, [[5, 6, 0], [7, 0, 0]])
    np.testing.assert_array_equal(x["loss_mask"], [[1, 1, 1], [1, 1, 0]])


def test_no_sentence_short_enough_is_an_error(tmp_path):
    (tmp_path / "a.mrg").write_text(
        "( (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)) )\n")
    assert len(load_lm_sentences(tmp_path, max_length=3, min_count=1)[2]) == 1
    with pytest.raises(ValueError, match="at most 2 words"):
        load_lm_sentences(tmp_path, max_length=2)


@pytest.mark.parametrize("kind", ["sentences", "windows"])
@pytest.mark.parametrize("method", ["dataset", "stream"])
def test_batches_handed_to_tf_data_own_their_memory(monkeypatch, kind, method):
    # tf.data may take a generator's numpy arrays without copying them and
    # TensorFlow may then write a result into an input buffer it thinks no
    # other tensor holds: had a sentence batch's `reset` and `lr_scale`
    # been one array, under 2 replicas `lr_scale` could read 0 on one
    # replica (its gradients lost for the step). Every array must be its own.
    import tensorflow as tf

    from keras_ordered.training import BPTTBatches

    generators = []
    original = tf.data.Dataset.from_generator

    def capture(generator, **kwargs):
        generators.append(generator)
        return original(generator, **kwargs)

    monkeypatch.setattr(tf.data.Dataset, "from_generator", capture)
    ids = np.arange(1, 200, dtype="int32") % 13
    if kind == "sentences":
        batches = SentenceBatches(ids, 4, eos_id=0, shuffle=False)
        sources = [ids]
    else:
        batches = BPTTBatches(ids, 4, 8, variable_length=False)
        sources = [batches.streams]
    if method == "dataset":
        batches.dataset(0)
    else:
        batches.stream(0)
    batch = next(iter(generators[-1]()))
    arrays = tf.nest.flatten(batch)
    assert len(arrays) == 5
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:] + sources:
            assert not np.shares_memory(a, b)
