"""Diagnostics of induced trees over runs: distances read shifted, and the
agreement between runs (self-F1), against hand computations."""

import numpy as np
import pytest

from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import self_f1
from keras_ordered.parsing import shift_distances
from keras_ordered.parsing import tree_to_spans

pytestmark = pytest.mark.backends


def test_shift_distances_by_hand():
    d = [np.array([0.1, 0.9, 0.4, 0.3]), np.array([5.0]), np.array([])]
    assert [x.tolist() for x in shift_distances(d, 1)] == [
        [0.9, 0.4, 0.3, 0.1], [5.0], []]
    assert shift_distances(d, -1)[0].tolist() == [0.1, 0.1, 0.9, 0.4]
    assert shift_distances(d, 0)[0].tolist() == d[0].tolist()
    assert shift_distances(d, 7)[0].tolist() == [0.1] * 4


def test_one_word_late_distances_parse_right_when_shifted():
    words = ["the", "cat", "sat", "down"]
    # d_i splits before word i: the gold split ((the cat) (sat down)) is
    # before "sat" (position 2); a late model puts it one word later.
    late = np.array([0.0, 0.1, 0.2, 0.9])
    gold = {(0, 4), (0, 2), (2, 4)}
    assert set(tree_to_spans(distances_to_tree(words, late))) != gold
    fixed = shift_distances([late], 1)[0]
    assert set(tree_to_spans(distances_to_tree(words, fixed))) == gold


def test_self_f1_is_the_mean_pairwise_sentence_f1():
    # Two sentences of 4 words; the whole-sentence span and one-word spans
    # are left out, as in the sentence-level F1.
    a = [{(0, 4), (0, 2), (2, 4)}, {(0, 4), (1, 4), (2, 4)}]
    b = [{(0, 4), (0, 2), (2, 4)}, {(0, 4), (0, 3), (0, 2)}]
    c = [{(0, 4), (1, 4), (1, 3)}, {(0, 4), (1, 4), (2, 4)}]
    lengths = [4, 4]
    # a-b: 1.0 and 0.0; a-c: 0.0 and 1.0; b-c: 0.0 and 0.0.
    assert self_f1([a, b, c], lengths) == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert self_f1([a, a], lengths) == 1.0
    assert self_f1([a], lengths) is None


class _ConstantDistances:
    """The distance protocol: every distance constant (two names)."""

    distance_names = ["layer1/forget", "layer2/forget"]
    default_distance = "layer2/forget"

    def __init__(self):
        self.reads = 0

    def sentence_distances(self, sentences, batch_size=64):
        self.reads += 1
        return {name: [np.zeros(len(s)) for s in sentences]
                for name in self.distance_names}


def test_decoder_threads_through_the_model_evaluation():
    import nltk

    from keras_ordered.datasets.treebank import make_sentence
    from keras_ordered.parsing import distance_predictor
    from keras_ordered.parsing import evaluate_distances
    from keras_ordered.parsing import evaluate_model
    from keras_ordered.parsing import model_distances
    from keras_ordered.parsing import model_trees
    from keras_ordered.parsing import tree_to_brackets

    words = ["the", "cat", "sat", "down"]
    model = _ConstantDistances()
    as_text = lambda trees: [tree_to_brackets(t) for t in trees]  # noqa: E731
    # Constant distances: right-branching by default, left-branching with
    # the left decoder.
    right = "(the (cat (sat down)))"
    left = "(((the cat) sat) down)"
    assert as_text(model_trees([words], model)["layer1/forget"]) == [right]
    assert as_text(model_trees([words], model, decoder="left")[
        "layer2/forget"]) == [left]
    assert as_text(distance_predictor(model)([words])) == [right]
    assert as_text(distance_predictor(model, decoder="left")([words])) == [left]
    assert model_distances([words], model, names=["layer1/forget"])[
        "layer1/forget"][0].tolist() == [0.0] * 4
    gold = make_sentence(nltk.Tree.fromstring(
        "(S (NP (DT the) (NN cat)) (VP (VBD sat) (RP down)))"))
    # Gold spans below the root: (0, 2) and (2, 4); the left-branching
    # tree finds (0, 2) of its (0, 2), (0, 3); the right-branching one
    # finds (2, 4) of its (1, 4), (2, 4).
    for decoder in ("right", "left"):
        scores = evaluate_model([gold], model, decoder=decoder)
        assert scores["layer2/forget"]["sentence_f1"] == pytest.approx(50.0)
        assert scores["layer2/forget"]["label_recall"]["NP" if decoder == "left"
                                                       else "VP"] == 100.0
        assert evaluate_distances([gold], [np.zeros(4)], decoder=decoder)[
            "label_recall"]["NP"] == (100.0 if decoder == "left" else 0.0)
    with pytest.raises(ValueError, match="Unknown decoder 'both'"):
        model_trees([words], model, decoder="both")
    reads = model.reads
    with pytest.raises(ValueError, match="Unknown decoder"):
        evaluate_model([gold], model, decoder="up")
    assert model.reads == reads  # refused before the model reads anything
