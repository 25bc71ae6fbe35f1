"""Sentence-level and corpus-level F1 against hand-computed values."""

import nltk
import numpy as np
import pytest

from conftest import HAND_SCORED_GOLD
from keras_ordered.datasets.treebank import make_sentence
from keras_ordered.parsing import metrics
from keras_ordered.parsing.baselines import right_branching_tree
from keras_ordered.parsing.evaluate import distance_predictor
from keras_ordered.parsing.evaluate import evaluate_distances
from keras_ordered.parsing.evaluate import evaluate_parsing
from keras_ordered.parsing.trees import brackets_to_tree

pytestmark = pytest.mark.backends

# Hand-scored gold sentences (conftest.HAND_SCORED_GOLD).
GOLD = HAND_SCORED_GOLD


@pytest.fixture
def records():
    return [make_sentence(nltk.Tree.fromstring(text)) for text in GOLD]


def predict(sentences):
    """Left-branching for the 6-word sentence, right-branching otherwise."""
    trees = []
    for words in sentences:
        if len(words) == 6:
            trees.append(brackets_to_tree(
                "(((((the cat) sat) on) the) mat)"
            ))
        else:
            trees.append(right_branching_tree(words))
    return trees


def test_sentence_scores_reference_rules():
    assert metrics.sentence_scores({(0, 2)}, {(0, 2), (2, 4)}) == (1.0, 0.5, 2 / 3)
    # No gold span: recall 1; precision 1 only if the prediction is empty.
    assert metrics.sentence_scores(set(), set()) == (1.0, 1.0, 1.0)
    assert metrics.sentence_scores({(1, 3)}, set()) == (0.0, 1.0, 0.0)
    # Nothing predicted against gold spans: all zero, no division error.
    assert metrics.sentence_scores(set(), {(0, 2)}) == (0.0, 0.0, 0.0)
    assert metrics.sentence_scores({(1, 3)}, {(0, 2)}) == (0.0, 0.0, 0.0)


def test_span_filters():
    spans = {(0, 5), (0, 1), (0, 2), (2, 5)}
    assert metrics.sentence_spans(spans, 5) == {(0, 2), (2, 5)}
    assert metrics.corpus_spans(spans) == {(0, 5), (0, 2), (2, 5)}


def test_both_f1_on_hand_computed_trees(records):
    scores = evaluate_parsing(records, predict)
    # Sentence level: 6 words: pred {02,03,04,05} vs gold {02,26,36,46}:
    # p = r = f1 = 1/4. 2 words: both empty -> 1. Flat 3 words: gold empty,
    # pred {13} -> p 0, r 1, f1 0. 1 word -> 1. Mean: 2.25 / 4.
    assert scores["sentences"] == 4
    assert scores["sentence_f1"] == pytest.approx(100 * 2.25 / 4)
    # Corpus level (whole span kept): matched 2 + 1 + 1 + 0 = 4,
    # predicted 5 + 1 + 2 + 0 = 8, gold 5 + 1 + 1 + 0 = 7.
    assert scores["corpus_precision"] == pytest.approx(50.0)
    assert scores["corpus_recall"] == pytest.approx(100 * 4 / 7)
    assert scores["corpus_f1"] == pytest.approx(100 * 8 / 15)
    assert scores["wsj10_sentences"] == 4
    assert scores["wsj10_sentence_f1"] == pytest.approx(scores["sentence_f1"])
    # NP: (0,2) found, (4,6) not, flat NP (0,3) is the whole span: 2 / 3.
    assert scores["label_recall"]["NP"] == pytest.approx(100 * 2 / 3)
    assert scores["label_recall"]["VP"] == 0.0
    assert scores["label_recall"]["PP"] == 0.0
    assert scores["label_recall"]["SBAR"] is None
    # Depths: 5, 1, 2, 0 predicted; 4, 1, 1, 0 gold.
    assert scores["depth"] == pytest.approx(2.0)
    assert scores["gold_depth"] == pytest.approx(1.5)


def test_functional_f1s_agree_with_the_scorer(records):
    predicted = [
        {(0, 6), (0, 2), (0, 3), (0, 4), (0, 5)}, {(0, 2)}, {(0, 3), (1, 3)},
        set(),
    ]
    gold = [r.spans for r in records]
    lengths = [len(r) for r in records]
    assert metrics.sentence_f1(predicted, gold, lengths) == pytest.approx(2.25 / 4)
    assert metrics.corpus_f1(predicted, gold) == pytest.approx((0.5, 4 / 7, 8 / 15))
    with pytest.raises(ValueError, match="one of each"):
        metrics.corpus_f1(predicted, gold[:2])


def test_perfect_trees_score_100(records):
    def gold_trees(sentences):
        return [r.tree for r in records]

    scores = evaluate_parsing(records, gold_trees)
    # Flat gold constituents cannot be matched by binary trees, but the gold
    # trees themselves are perfect.
    assert scores["sentence_f1"] == pytest.approx(100.0)
    assert scores["corpus_f1"] == pytest.approx(100.0)


def test_wsj10_keeps_sentences_of_at_most_10_words():
    long_gold = "(S " + " ".join(f"(NN w{i})" for i in range(11)) + ")"
    ten_gold = "(S " + " ".join(f"(NN w{i})" for i in range(10)) + " (. .))"
    records = [make_sentence(nltk.Tree.fromstring(t)) for t in (long_gold, ten_gold)]
    scores = evaluate_parsing(records, lambda s: [right_branching_tree(w) for w in s])
    assert scores["sentences"] == 2
    assert scores["wsj10_sentences"] == 1


def test_evaluate_distances_and_predictor(records):
    constant = [np.zeros(len(r)) for r in records]
    scores = evaluate_distances(records, constant)
    right = evaluate_parsing(records, lambda s: [right_branching_tree(w) for w in s])
    assert scores == right
    with pytest.raises(ValueError, match="one array per sentence"):
        evaluate_distances(records, constant[:1])

    class FakeModel:
        distance_names = ["layer1/forget", "layer1/input"]
        default_distance = "layer1/input"

        def sentence_distances(self, sentences, batch_size=64):
            return {
                "layer1/forget": [np.zeros(len(s)) for s in sentences],
                "layer1/input": [np.arange(len(s), dtype=float) for s in sentences],
            }

    trees = distance_predictor(FakeModel())([["a", "b", "c"]])
    assert str(trees[0]) == "(X (X a b) c)"  # default: increasing distances
    with pytest.raises(ValueError, match="available: layer1/forget"):
        distance_predictor(FakeModel(), "layer2/forget")
    with pytest.raises(ValueError, match="no syntactic distances"):
        distance_predictor(object())


def test_prediction_errors(records):
    with pytest.raises(ValueError, match="one tree per sentence"):
        evaluate_parsing(records, lambda s: [])
    with pytest.raises(ValueError, match="one leaf per word"):
        evaluate_parsing(records, lambda s: [brackets_to_tree("(a b)")] * len(s))
    with pytest.raises(ValueError, match="nltk.Tree"):
        evaluate_parsing(records, lambda s: [1] * len(s))
