"""Drawn trees: text for a terminal, SVG and PNG files, distances as bars.

`draw_text` is nltk's Unicode drawing (`nltk.Tree.pretty_print(
unicodelines=True)`) with the words in sentence order
(`keras_ordered.parsing.UnlabeledTree`); `draw_svg` is svgling's drawing;
`svg_to_png` renders an SVG with cairosvg. With a sentence's syntactic
distances, each word gets a bar under it, as in the figures of the ON-LSTM
and PRPN papers: a column of block characters in text, a rectangle in SVG,
scaled to the sentence's largest distance.

svgling and cairosvg are the optional `draw` extra (`pip install
"keras-ordered[draw]"`), imported only by the functions that need them.

Example:

```python
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import drawing

words = ["The", "cat", "sat", "on", "the", "mat", "."]
distances = [0.0, 0.5, 3.0, 1.0, 0.2, 0.4, 2.0]
print(drawing.draw_text(distances_to_tree(words, distances), distances))
```
"""

import contextlib
import io
import sys
from xml.sax.saxutils import escape

import numpy as np

from keras_ordered._environment import install_hint
from keras_ordered.parsing import trees as trees_lib

BLOCKS = " ▁▂▃▄▅▆▇█"
"""A text bar's cells, from empty to full in eighths."""

TEXT_BAR_ROWS = 2
"""Rows of block characters of a text bar at its tallest."""

SVG_BAR_HEIGHT = 40
"""Height of an SVG bar at its tallest, in pixels."""

SVG_BAR_COLOR = "#4a6fa5"

_SVG_GAP = 6  # pixels between the words and the tallest bar


def bar_heights(distances):
    """Each word's bar height, from 0 to 1, scaled to the largest distance.

    Bars start at 0, or at the smallest distance when one is negative, and
    the largest distance gives a full bar. Equal distances give full bars,
    unless they are all 0.

    Args:
        distances: 1-D array-like of floats, one per word.

    Returns:
        A float array of the same length, in [0, 1].

    Example:

    >>> bar_heights([0.0, 1.0, 4.0]).tolist()
    [0.0, 0.25, 1.0]
    """
    distances = np.asarray(distances, dtype="float64").reshape(-1)
    if distances.size == 0:
        return distances
    low = min(0.0, float(distances.min()))
    high = float(distances.max())
    if high == low:
        return np.full(distances.shape, 0.0 if high == 0 else 1.0)
    return (distances - low) / (high - low)


def _as_drawable(tree):
    """`tree` as an `UnlabeledTree` (its `pretty_print` keeps word order)."""
    if isinstance(tree, str):
        return trees_lib.UnlabeledTree(trees_lib.UNLABELED, [tree])
    return trees_lib.fold_tree(
        tree,
        leaf=lambda word: word,
        branch=lambda node, values: trees_lib.UnlabeledTree(node.label(),
                                                            values),
    )


@contextlib.contextmanager
def _recursion_for(tree):
    """Room on Python's stack for drawing `tree`.

    nltk's and svgling's drawings recurse a few frames per level of the
    tree, and a right-branching tree of n words has n levels: the limit
    rises with the depth while drawing (both are pure Python), and comes
    back after.
    """
    needed = 1000 + 10 * trees_lib.tree_depth(tree)
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, needed))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _checked_distances(tree, distances):
    words = trees_lib.leaves(tree)
    distances = np.asarray(distances, dtype="float64").reshape(-1)
    if len(distances) != len(words):
        raise ValueError(
            f"The tree has {len(words)} words but {len(distances)} "
            "distances were given: pass one distance per word."
        )
    return words, distances


def draw_text(tree, distances=None, bar_rows=TEXT_BAR_ROWS):
    """Draws a tree in Unicode box-drawing characters, words in order.

    Args:
        tree: an `nltk.Tree` (an induced `UnlabeledTree`, or a labelled
            tree), or a single word.
        distances: None, or one syntactic distance per word: each word
            then gets a bar of block characters (`BLOCKS`) under its
            middle letter, `bar_rows` rows at its tallest (see
            `bar_heights`). A bar above 0 shows at least one eighth.
        bar_rows: rows of the tallest bar.

    Returns:
        The drawing (str, lines without trailing spaces, no final line
        feed): nltk's `pretty_print(unicodelines=True)`, the words on its
        last line, then the bars' rows.

    Example:

    >>> from keras_ordered.parsing import brackets_to_tree
    >>> print(draw_text(brackets_to_tree("((The cat) sat)"), [0, 1, 2]))
             X
         ┌───┴───┐
         X       │
     ┌───┴───┐   │
    The     cat sat
                 █
             █   █
    """
    tree = _as_drawable(tree)
    drawn = io.StringIO()
    with _recursion_for(tree):
        tree.pretty_print(unicodelines=True, stream=drawn)
    lines = [line.rstrip() for line in drawn.getvalue().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if distances is None:
        return "\n".join(lines)
    words, distances = _checked_distances(tree, distances)
    heights = bar_heights(distances)
    words_line = lines[-1]
    rows = [[" "] * len(words_line) for _ in range(bar_rows)]
    column = 0
    for word, height in zip(words, heights):
        start = words_line.index(word, column)
        column = start + len(word)
        centre = start + (len(word) - 1) // 2
        eighths = int(round(height * 8 * bar_rows))
        if height > 0:
            eighths = max(eighths, 1)
        # Rows from the top: the bar grows up from the last row.
        for row in range(bar_rows):
            filled = eighths - 8 * (bar_rows - 1 - row)
            rows[row][centre] = BLOCKS[min(max(filled, 0), 8)]
    return "\n".join(lines + ["".join(row).rstrip() for row in rows])


def _leaf_paths(tree):
    """The path (child indices) of each leaf, in order, without recursion."""
    paths = []
    stack = [(tree, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            paths.append(path)
            continue
        stack.extend((child, path + (i,))
                     for i, child in reversed(list(enumerate(node))))
    return paths


def _import_svgling():
    try:
        import svgling
    except ImportError:
        raise ImportError(
            f"Drawing trees as SVG needs svgling: {install_hint('draw')}"
        ) from None
    return svgling


def draw_svg(tree, distances=None):
    """Draws a tree as an SVG document (svgling), words on the bottom row.

    Args:
        tree: an `nltk.Tree`, or a single word.
        distances: None, or one syntactic distance per word: each word then
            gets a bar under it (`<rect class="distance">`, whose `<title>`
            holds the word and its distance), `SVG_BAR_HEIGHT` pixels at
            its tallest (see `bar_heights`).

    Returns:
        The SVG document (str).

    Raises:
        ImportError: svgling is not installed.

    Example:

    ```python
    from keras_ordered.parsing import brackets_to_tree, drawing

    svg = drawing.draw_svg(brackets_to_tree("((The cat) sat)"), [0, 1, 2])
    with open("tree.svg", "w") as f:
        f.write(svg)
    ```
    """
    svgling = _import_svgling()
    tree = _as_drawable(tree)
    with _recursion_for(tree):
        layout = svgling.draw_tree(tree, leaf_nodes_align=True)
        drawn = layout.get_svg().tostring()
    if distances is None:
        return drawn
    words, distances = _checked_distances(tree, distances)
    width, height = float(layout.width()), float(layout.height())
    baseline = height + _SVG_GAP + SVG_BAR_HEIGHT
    total = baseline + _SVG_GAP
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" '
        f'width="{width:g}px" height="{total:g}px" '
        f'viewBox="0 0 {width:g} {total:g}">',
        drawn,
        f'<line x1="0" y1="{baseline:g}" x2="{width:g}" y2="{baseline:g}" '
        'stroke="#bbbbbb" stroke-width="1" />',
    ]
    for word, value, bar, path in zip(words, distances,
                                      bar_heights(distances),
                                      _leaf_paths(tree)):
        left, span = layout.node_x_vals(list(path))  # in % of the width
        centre = (left + span / 2) * width / 100
        bar_width = min(span * width / 100 * 0.5, 14.0)
        bar_height = bar * SVG_BAR_HEIGHT
        parts.append(
            f'<rect class="distance" x="{centre - bar_width / 2:.2f}" '
            f'y="{baseline - bar_height:.2f}" width="{bar_width:.2f}" '
            f'height="{bar_height:.2f}" fill="{SVG_BAR_COLOR}">'
            f"<title>{escape(word)}: {value:.4g}</title></rect>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def svg_to_png(svg, scale=2.0):
    """Renders an SVG document as PNG (cairosvg).

    Args:
        svg: the SVG document (str), e.g. from `draw_svg`.
        scale: pixels of the PNG per pixel of the SVG.

    Returns:
        The PNG file's bytes.

    Raises:
        ImportError: cairosvg is not installed.
        OSError: the cairo library, which cairosvg loads, is missing.
    """
    try:
        import cairosvg
    except ImportError:
        raise ImportError(
            f"Drawing trees as PNG needs cairosvg: {install_hint('draw')}"
        ) from None
    return cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale,
                            background_color="white")
