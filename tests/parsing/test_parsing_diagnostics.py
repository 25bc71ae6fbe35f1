"""Diagnostics of induced trees over runs: distances read shifted, and the
agreement between runs (self-F1), against hand computations."""

import numpy as np
import pytest

from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import self_f1
from keras_ordered.parsing import shift_distances
from keras_ordered.parsing import tree_to_spans


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
