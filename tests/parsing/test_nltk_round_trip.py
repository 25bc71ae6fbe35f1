"""Bracketed trees that nltk reads back, and draws with the words in order."""

import io

import nltk
import numpy as np
import pytest

from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.parsing import tree_to_spans

pytestmark = pytest.mark.backends

SENTENCE = "(((The cat) sat) (on ((the mat) .)))"
WORDS = ["The", "cat", "sat", "on", "the", "mat", "."]


def drawn_leaves(tree):
    """The words of `tree.pretty_print()`'s last line, left to right."""
    stream = io.StringIO()
    tree.pretty_print(stream=stream)
    lines = [line for line in stream.getvalue().splitlines() if line.strip()]
    return lines[-1].split()


def test_pretty_print_draws_the_words_in_sentence_order():
    # nltk numbered the words of a node that mixes words and constituents
    # before those of its constituents: `sat The cat on . the mat`.
    tree = brackets_to_tree(SENTENCE)
    assert drawn_leaves(tree) == WORDS
    induced = distances_to_tree(WORDS, [0, 1, 2, 3, 0, 1, 2])
    assert drawn_leaves(induced) == WORDS


def test_induced_trees_equal_plain_nltk_trees():
    tree = brackets_to_tree("((the cat) sat)")
    plain = nltk.Tree("X", [nltk.Tree("X", ["the", "cat"]), "sat"])
    assert tree == plain and plain == tree
    assert not (tree != plain) and not (plain != tree)
    assert tree != nltk.Tree("X", [nltk.Tree("X", ["the", "dog"]), "sat"])
    assert str(tree) == str(plain) == "(X (X the cat) sat)"


@pytest.mark.parametrize("seed", range(5))
def test_labelled_brackets_read_back_with_plain_nltk(seed):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(1 + seed * 4)]
    tree = distances_to_tree(words, rng.normal(size=len(words)))
    text = tree_to_brackets(tree, labels=True)
    read = nltk.Tree.fromstring(text)
    assert read.leaves() == words
    assert tree_to_spans(read) == tree_to_spans(tree)
    assert drawn_leaves(read) == words


def test_labelled_brackets_of_an_example():
    tree = brackets_to_tree(SENTENCE)
    assert tree_to_brackets(tree, labels=True) == (
        "(X (X (X (XX The) (XX cat)) (XX sat)) (X (XX on) (X (X (XX the) "
        "(XX mat)) (XX .))))"
    )
    assert tree_to_brackets(brackets_to_tree("cat"), labels=True) == (
        "(X (XX cat))"
    )
