"""How the language models read words: as written, or exactly when the
words are normalised already (the evaluations' treebank records)."""

import numpy as np
import pytest

from keras_ordered.datasets.treebank import load_treebank
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.parsing.evaluate import model_trees

pytestmark = pytest.mark.backends

VOCABULARY = ["<eos>", "<unk>", "the", "n.", "N", "cat"]


def test_normalised_words_are_looked_up_exactly():
    model = ONLSTMLanguageModel.from_preset("tiny", VOCABULARY, seed=1)
    # "1." is "N." once normalised, and "n." if normalised again: the
    # official evaluations read the treebank's "N." as <unk>.
    assert model.token_ids(["The", "N.", "61"]) == [2, 3, 4]
    assert model.token_ids(["The", "N.", "N"], normalized=True) == [1, 1, 4]


def test_model_trees_read_treebank_records_exactly(tmp_path):
    (tmp_path / "wsj_0001.mrg").write_text(
        "( (S (NP (DT The) (NN cat)) (VP (VBD sat) (NP (CD 1.))) (. .)) )\n")
    (record,) = load_treebank(str(tmp_path))
    assert record.words[-1] == "N."
    model = ONLSTMLanguageModel.from_preset("tiny", VOCABULARY, seed=1)
    seen = []
    original = model.sentence_distances

    def spy(sentences, **kwargs):
        seen.append(kwargs.get("normalized", False))
        return original(sentences, **kwargs)

    model.sentence_distances = spy
    model_trees([record], model)
    model_trees([list(record.words)], model)
    assert seen == [True, False]
    exact = original([list(record.words)], normalized=True)["layer1/forget"][0]
    as_written = original([list(record.words)])["layer1/forget"][0]
    assert not np.allclose(exact, as_written)
