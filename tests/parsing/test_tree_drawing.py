"""Trees you can look at: `to_nltk`, `_repr_svg_` and the drawings of
`keras_ordered.parsing.drawing`."""

import io
import sys
import xml.etree.ElementTree as ElementTree

import nltk
import numpy as np
import pytest

from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_spans
from keras_ordered.parsing import trees as trees_lib

pytestmark = pytest.mark.backends

WORDS = ["The", "cat", "sat", "on", "the", "mat", "."]
DISTANCES = [0.0, 0.5, 3.0, 1.0, 0.2, 0.4, 2.0]
SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg):
    return [element.text for element in ElementTree.fromstring(svg).iter(
        f"{SVG}text")]


# --- to_nltk ----------------------------------------------------------------


def test_to_nltk_is_a_labelled_tree_that_nltk_reads_back():
    tree = distances_to_tree(WORDS, DISTANCES)
    plain = tree.to_nltk()
    assert type(plain) is nltk.Tree
    assert nltk.Tree.fromstring(str(plain)) == plain
    assert " ".join(str(plain).split()) == trees_lib.tree_to_brackets(
        tree, labels=True)
    assert plain.leaves() == WORDS
    assert {t.label() for t in plain.subtrees()} == {"X", "XX"}
    assert tree_to_spans(plain) == tree_to_spans(tree)
    # Without the tags: the same nodes as the induced tree.
    untagged = tree.to_nltk(tags=False)
    assert type(untagged) is nltk.Tree and untagged == tree
    assert nltk.Tree.fromstring(str(untagged)) == untagged


def test_to_nltk_of_a_one_word_tree_and_of_a_deep_tree():
    assert str(brackets_to_tree("word").to_nltk()) == "(X (XX word))"
    words = [f"w{i}" for i in range(3000)]
    deep = distances_to_tree(words, np.ones(3000)).to_nltk()
    assert trees_lib.leaves(deep) == words


# --- _repr_svg_ ---------------------------------------------------------------


def test_repr_svg_draws_the_words_in_sentence_order():
    pytest.importorskip("svgling")
    tree = brackets_to_tree("(((The cat) sat) on)")
    texts = _texts(tree._repr_svg_())
    assert [t for t in texts if t != "X"] == ["The", "cat", "sat", "on"]


def test_repr_svg_without_svgling_is_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "svgling", None)
    tree = brackets_to_tree("((The cat) sat)")
    # nltk's own raises, which a notebook shows as a traceback.
    with pytest.raises(ImportError):
        nltk.Tree._repr_svg_(tree)
    assert tree._repr_svg_() is None


# --- drawings ---------------------------------------------------------------


def test_text_drawing_is_nltks_unicode_drawing_in_sentence_order():
    from keras_ordered.parsing import drawing

    tree = brackets_to_tree("(((The cat) sat) on)")
    expected = io.StringIO()
    tree.pretty_print(unicodelines=True, stream=expected)
    text = drawing.draw_text(tree)
    assert text.splitlines() == [
        line.rstrip() for line in expected.getvalue().rstrip("\n").splitlines()
    ]
    assert text.splitlines()[-1].split() == ["The", "cat", "sat", "on"]
    assert "┌" in text


def test_text_drawing_puts_a_bar_under_each_word():
    from keras_ordered.parsing import drawing

    tree = distances_to_tree(WORDS, DISTANCES)
    lines = drawing.draw_text(tree, DISTANCES, bar_rows=2).splitlines()
    words_line, bars = lines[-3], lines[-2:]
    column = 0
    heights = []
    for word in WORDS:
        start = words_line.index(word, column)
        column = start + len(word)
        centre = start + (len(word) - 1) // 2
        cells = [row[centre] if centre < len(row) else " " for row in bars]
        heights.append(sum(drawing.BLOCKS.index(c) for c in cells))
    # Scaled to the sentence's largest distance: 2 rows of 8 eighths.
    assert heights == [round(16 * d / 3.0) or (1 if d else 0)
                       for d in DISTANCES]
    assert bars[0][words_line.index("sat") + 1] == "█"


def test_bar_heights_are_scaled_to_the_largest_distance():
    from keras_ordered.parsing import drawing

    np.testing.assert_allclose(drawing.bar_heights([0.0, 1.0, 4.0]),
                               [0.0, 0.25, 1.0])
    np.testing.assert_allclose(drawing.bar_heights([0.0, 0.0]), [0.0, 0.0])
    np.testing.assert_allclose(drawing.bar_heights([2.0, 2.0]), [1.0, 1.0])
    # Negative distances: from the smallest.
    np.testing.assert_allclose(drawing.bar_heights([-1.0, 1.0]), [0.0, 1.0])
    with pytest.raises(ValueError, match="one distance per word"):
        drawing.draw_text(brackets_to_tree("(a b)"), [1.0])


def test_svg_drawing_has_the_words_and_a_bar_under_each():
    pytest.importorskip("svgling")
    from keras_ordered.parsing import drawing

    tree = distances_to_tree(WORDS, DISTANCES)
    plain = drawing.draw_svg(tree)
    assert [t for t in _texts(plain) if t != "X"] == WORDS
    svg = drawing.draw_svg(tree, DISTANCES)
    root = ElementTree.fromstring(svg)
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "distance"]
    assert len(bars) == len(WORDS)
    heights = [float(r.get("height")) for r in bars]
    np.testing.assert_allclose(
        np.array(heights) / max(heights), np.array(DISTANCES) / 3.0, atol=1e-3
    )
    # Under the words, left to right.
    xs = [float(r.get("x")) for r in bars]
    assert xs == sorted(xs)
    assert min(float(r.get("y")) for r in bars) >= float(
        root.get("height").rstrip("px")) - drawing.SVG_BAR_HEIGHT - 20


def test_png_is_the_svg_rendered():
    pytest.importorskip("cairosvg")
    from keras_ordered.parsing import drawing

    svg = drawing.draw_svg(distances_to_tree(WORDS, DISTANCES), DISTANCES)
    png = drawing.svg_to_png(svg)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_deep_tree_draws_from_deep_in_the_stack():
    # A right-branching tree of 500 words has 499 levels, and the drawing
    # libraries recurse a few frames per level; a caller already deep in
    # the stack (a test runner's worker, a notebook) must not matter.
    from keras_ordered.parsing import drawing
    from keras_ordered.parsing.baselines import baseline_predictor

    import importlib.util

    has_svgling = importlib.util.find_spec("svgling") is not None
    words = [f"w{i}" for i in range(500)]
    (tree,) = baseline_predictor("right-branching")([words])

    def nested(depth):
        if depth:
            return nested(depth - 1)
        return drawing.draw_text(tree), (
            drawing.draw_svg(tree) if has_svgling else None)

    text, svg = nested(900)
    assert text.splitlines()[-1].split() == words
    if svg is not None:
        assert svg.count("<text") == 500 + 499
