"""The gap decoder (Shen et al., 2018) and its targets, `tree_to_distances`.

The decoder splits a span between two words, at its first maximal gap;
here an independent recursive reference decodes random distances with
many ties, every binary tree of up to 8 words comes back from its heights
(the decoder is complete, unlike the word decoders), and the in-graph
SavedModel parser gives the same brackets. Plain NumPy except the last
test (TensorFlow).
"""

import numpy as np
import pytest

from keras_ordered.parsing import DECODERS
from keras_ordered.parsing import WORD_DECODERS
from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.parsing import tree_to_distances
from keras_ordered.parsing import tree_to_spans
from keras_ordered.parsing.trees import model_decoder

pytestmark = pytest.mark.backends


def reference_gap_parse(words, gaps):
    """Nested lists: split at the first maximal gap, recursively."""
    if len(words) == 1:
        return words[0]
    inner = list(gaps[1:len(words)])
    k = 1 + inner.index(max(inner))
    return [reference_gap_parse(words[:k], gaps[:k]),
            reference_gap_parse(words[k:], gaps[k:])]


def as_brackets(nested):
    if isinstance(nested, str):
        return nested
    return "(" + " ".join(as_brackets(part) for part in nested) + ")"


def all_trees(words):
    """Every binary tree over `words`, as bracketed strings."""
    if len(words) == 1:
        return [words[0]]
    found = []
    for k in range(1, len(words)):
        for left in all_trees(words[:k]):
            for right in all_trees(words[k:]):
                found.append(f"({left} {right})")
    return found


def test_the_gap_decoder_is_one_of_the_decoders_but_not_a_word_decoder():
    assert "gap" in DECODERS and "gap" not in WORD_DECODERS
    assert set(WORD_DECODERS) == {"right", "left"}


@pytest.mark.parametrize("length", range(1, 13))
def test_gap_decoder_against_a_recursive_reference_with_ties(length):
    rng = np.random.default_rng(length)
    words = [f"w{i}" for i in range(length)]
    for _ in range(60):
        gaps = rng.integers(0, 3, size=length).astype(float)  # many ties
        tree = distances_to_tree(words, gaps, decoder="gap")
        expected = reference_gap_parse(words, list(gaps))
        if length == 1:
            assert tree_to_brackets(tree) == "(w0)"
        else:
            assert tree_to_brackets(tree) == as_brackets(expected)


def test_the_first_words_distance_is_not_read():
    words = ["a", "b", "c", "d"]
    trees = {tree_to_brackets(distances_to_tree(words, [first, 1, 3, 2],
                                                decoder="gap"))
             for first in (-5.0, 0.0, 2.5, 100.0)}
    assert trees == {"((a b) (c d))"}


@pytest.mark.parametrize("length", range(1, 9))
def test_every_binary_tree_comes_back_from_its_heights(length):
    # 429 trees at 8 words: the gap decoder is complete. The right decoder
    # is not: it cannot build ((a b) ((c d) e)), for one.
    words = [f"w{i}" for i in range(length)]
    trees = all_trees(words)
    assert len(trees) == [1, 1, 2, 5, 14, 42, 132, 429][length - 1]
    for brackets in trees:
        text = brackets if length > 1 else f"({brackets})"
        heights = tree_to_distances(brackets_to_tree(text))
        assert heights.shape == (length,) and heights[0] == 0.0
        back = distances_to_tree(words, heights, decoder="gap")
        assert tree_to_brackets(back) == text


def test_the_right_decoder_cannot_build_what_the_gap_decoder_can():
    tree = brackets_to_tree("((a b) ((c d) e))")
    heights = tree_to_distances(tree)
    assert heights.tolist() == [0.0, 1.0, 3.0, 1.0, 2.0]
    words = list("abcde")
    assert tree_to_brackets(distances_to_tree(words, heights, "gap")) == \
        "((a b) ((c d) e))"
    assert tree_to_brackets(distances_to_tree(words, heights, "right")) != \
        "((a b) ((c d) e))"


def test_constant_distances_give_the_right_branching_tree():
    words = list("abcde")
    assert tree_to_brackets(distances_to_tree(words, np.zeros(5), "gap")) == \
        "(a (b (c (d e))))"


def test_heights_of_a_gold_tree_with_preterminals_and_wide_nodes():
    import nltk

    gold = nltk.Tree.fromstring(
        "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
        "(NN mat)))) (. .))")
    heights = tree_to_distances(gold)
    # S (height 4) joins NP, VP and "." : both of its gaps have height 4.
    assert heights.tolist() == [0.0, 1.0, 4.0, 3.0, 2.0, 1.0, 4.0]
    back = distances_to_tree(gold.leaves(), heights, "gap")
    # Every constituent of the gold tree comes back; S's three children
    # are binarized to the right.
    assert tree_to_spans(gold) <= tree_to_spans(back)


def test_heights_need_no_recursion():
    words = [f"w{i}" for i in range(3000)]
    deep = distances_to_tree(words, np.zeros(3000), decoder="gap")
    heights = tree_to_distances(deep)
    assert heights[1] == 2999.0 and heights[-1] == 1.0


def test_a_model_parses_with_its_own_decoder_unless_told():
    class Student:
        default_decoder = "gap"

    class LanguageModel:
        pass

    assert model_decoder(Student()) == "gap"
    assert model_decoder(LanguageModel()) == "right"
    assert model_decoder(Student(), "left") == "left"
    with pytest.raises(ValueError, match="Unknown decoder 'middle'"):
        model_decoder(LanguageModel(), "middle")


@pytest.mark.tensorflow_only
def test_the_in_graph_gap_decoder_gives_the_same_brackets_and_spans():
    tf = pytest.importorskip("tensorflow")
    from keras_ordered.export.trees import distances_to_brackets

    rng = np.random.default_rng(7)
    sentences, rows = [], []
    for length in list(range(1, 12)) * 8:
        sentences.append([f"w{i}" for i in range(length)])
        rows.append(rng.integers(0, 3, size=length).astype("float32"))
    width = max(map(len, rows))
    padded = np.zeros((len(rows), width), "float32")
    for i, row in enumerate(rows):
        padded[i, :len(row)] = row
    out = distances_to_brackets(tf.ragged.constant(sentences),
                                tf.constant(padded), decoder="gap")
    for i, (words, row) in enumerate(zip(sentences, rows)):
        tree = distances_to_tree(words, row, decoder="gap")
        assert out["trees"].numpy()[i].decode() == tree_to_brackets(tree)
        assert {tuple(s) for s in out["spans"][i].numpy().tolist()} == \
            tree_to_spans(tree)
    with pytest.raises(ValueError, match="right and gap decoders"):
        distances_to_brackets(tf.ragged.constant([["a"]]), tf.zeros((1, 1)),
                              decoder="left")
