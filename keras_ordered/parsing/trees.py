"""Unlabeled binary trees: from syntactic distances, to strings and span sets.

Plain Python and NumPy on top of `nltk.Tree`; nothing here imports a model or
TensorFlow, so the parsing evaluation stays cheap to import.

Conventions used throughout `keras_ordered.parsing`:

- a tree is an `nltk.Tree` whose leaves are the words (strings). Induced
  trees are unlabeled: every internal node carries the label
  `UNLABELED` (`"X"`). Gold trees keep their Treebank labels.
- a span is a pair `(start, end)` of leaf indices, end-exclusive: in
  `((the cat) sat)` the constituent `(the cat)` is the span `(0, 2)`.
- a bracketed string writes an unlabeled tree without labels:
  `"((the cat) (sat (on (the mat))))"`; `tree_to_brackets(tree,
  labels=True)` writes the Treebank's labelled format instead, which
  `nltk.Tree.fromstring` reads: `"(X (X (XX the) (XX cat)) (XX sat))"`.
- the trees built here are `UnlabeledTree`s: `nltk.Tree`s (equal to an
  `nltk.Tree` with the same labels and children) whose `pretty_print`
  draws the words in sentence order.
"""

from keras_ordered._nltk import nltk
import numpy as np

from keras_ordered_options import DECODERS  # noqa: F401 (the package's name)
from keras_ordered_options import WORD_DECODERS  # noqa: F401

from keras_ordered._tokens import check_token_list

UNLABELED = "X"
"""Label of every internal node of an induced (unlabeled) tree."""

WORD_TAG = "XX"
"""POS tag of every word in the labelled format (`tree_to_brackets(tree,
labels=True)`), as in the GFL parser's trees: the models induce no tags."""


class _UnlabeledTreeMethods:
    """An `nltk.Tree` whose `pretty_print` draws the words in sentence order.

    nltk's `Tree.pretty_print` numbers the words of a node that holds both
    words and constituents before those of its constituents, so it draws
    `(((The cat) sat) on)` as `sat on The cat`; every induced tree has
    such nodes. This class draws the words in their order, and is
    otherwise an `nltk.Tree`: it compares equal to an `nltk.Tree` with
    the same labels and children, and prints the same.

    Args:
        label: the node's label (`UNLABELED`).
        children: list of words (str) and subtrees.

    Example:

    ```python
    import io
    from keras_ordered.parsing import brackets_to_tree
    tree = brackets_to_tree("(((The cat) sat) on)")
    drawing = io.StringIO()
    tree.pretty_print(stream=drawing)
    assert drawing.getvalue().split()[-4:] == ["The", "cat", "sat", "on"]
    ```
    """

    def __eq__(self, other):
        if not isinstance(other, nltk.Tree):
            return False
        return (self._label, list(self)) == (other._label, list(other))

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def pretty_print(self, sentence=None, highlight=(), stream=None,
                     **kwargs):
        """Draws the tree as text, the words in sentence order.

        Args:
            sentence: as `nltk.Tree.pretty_print` (the words of a tree
                whose leaves are their indices); `None` draws this tree's
                own words.
            highlight: as `nltk.Tree.pretty_print`.
            stream: the file to write to (default: stdout).
            **kwargs: as `nltk.Tree.pretty_print`.
        """
        if sentence is not None:
            return super().pretty_print(sentence, highlight, stream, **kwargs)
        words = leaves(self)
        positions = iter(range(len(words)))
        numbered = fold_tree(
            self,
            leaf=lambda word: next(positions),
            branch=lambda node, values: nltk.Tree(node.label(), values),
        )
        return nltk.Tree.pretty_print(numbered, words, highlight, stream,
                                      **kwargs)

    # --- trees you can look at: nltk's labelled tree, a notebook's SVG ---

    def to_nltk(self, tags=True):
        """This tree as a plain `nltk.Tree`, in the Treebank's labelled form.

        Without recursion, so trees of any depth convert.

        Args:
            tags: whether every word gets the POS tag `WORD_TAG` (`XX`), as
                in `tree_to_brackets(tree, labels=True)`, which EVALB and
                `nltk.Tree.fromstring` read; `False` keeps the nodes as they
                are (words directly under `X` nodes).

        Returns:
            An `nltk.Tree` (not an `UnlabeledTree`) whose `str` is read
            back by `nltk.Tree.fromstring` when the words hold no
            parentheses or whitespace (the command line writes them as
            `-LRB-` / `-RRB-`).

        Example:

        >>> tree = brackets_to_tree("((The cat) sat)")
        >>> print(tree.to_nltk())
        (X (X (XX The) (XX cat)) (XX sat))
        >>> nltk.Tree.fromstring(str(tree.to_nltk())) == tree.to_nltk()
        True
        """
        return fold_tree(
            self,
            leaf=(lambda word: nltk.Tree(WORD_TAG, [word])) if tags
            else (lambda word: word),
            branch=lambda node, values: nltk.Tree(node.label(), values),
        )

    def _repr_svg_(self):
        """The tree drawn as SVG, for Jupyter; None without svgling.

        nltk's own `_repr_svg_` raises `ImportError` without svgling, which
        a notebook shows as a traceback: here the notebook falls back to
        the text `repr`. The words stay in sentence order (svgling lays out
        each node's children in order), all on the bottom row.

        Returns:
            An SVG document (str), or None when svgling is not installed
            (`pip install "keras-ordered[draw]"`) or the tree is too deep
            for its recursive layout.
        """
        try:
            import svgling
        except ImportError:
            return None
        try:
            return svgling.draw_tree(self, leaf_nodes_align=True)._repr_svg_()
        except RecursionError:
            return None


_UNLABELED_TREE = []


def _unlabeled_tree():
    """`UnlabeledTree`, the class, made on first use: it subclasses
    `nltk.Tree`, and nltk loads only when a tree is first made
    (`keras_ordered._nltk`)."""
    if not _UNLABELED_TREE:
        _UNLABELED_TREE.append(type(
            "UnlabeledTree", (_UnlabeledTreeMethods, nltk.Tree),
            {"__module__": __name__, "__qualname__": "UnlabeledTree",
             "__doc__": _UnlabeledTreeMethods.__doc__}))
    return _UNLABELED_TREE[0]


def __getattr__(name):
    if name == "UnlabeledTree":
        return _unlabeled_tree()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "UnlabeledTree"])


def _check_words(words):
    words = check_token_list(words, "words")
    if not words:
        raise ValueError(
            "Cannot build a tree over an empty sentence: pass at least one "
            "word."
        )
    for word in words:
        if not isinstance(word, str):
            raise ValueError(
                f"Words must be strings, got {word!r} of type "
                f"{type(word).__name__}: pass a list of word strings."
            )
    return words


def _tree_children(node):
    return list(node) if isinstance(node, nltk.Tree) else None


def fold_tree(tree, leaf, branch, children=None):
    """Evaluates a tree bottom-up, without recursion (any depth works).

    Visits the leaves left to right; every internal node is evaluated
    after all its children. Deep trees (a right-branching tree over 10,000
    words) need no recursion, unlike `nltk.Tree`'s own methods (`copy`,
    `leaves`, `treepositions`, `__str__`), which exceed Python's recursion
    limit at a depth of about 1,000.

    Args:
        tree: the root: an `nltk.Tree`, or a leaf (any other object).
        leaf: function `leaf(node) -> value` for a leaf.
        branch: function `branch(node, values) -> value` for an internal
            node, given the list of its children's values, in order.
        children: function `children(node) -> list or None` (None for a
            leaf). Default: an `nltk.Tree`'s children; anything else is a
            leaf.

    Returns:
        The root's value.

    Example:

    >>> tree = brackets_to_tree("((the cat) sat)")
    >>> fold_tree(tree, leaf=lambda word: 1, branch=lambda node, n: sum(n))
    3
    """
    if children is None:
        return _fold_nltk_tree(tree, leaf, branch)
    stack = [(tree, False)]
    values = []
    while stack:
        node, expanded = stack.pop()
        kids = children(node)
        if kids is None:
            values.append(leaf(node))
        elif expanded:
            first = len(values) - len(kids)
            results = values[first:]
            del values[first:]
            values.append(branch(node, results))
        else:
            stack.append((node, True))
            stack.extend((kid, False) for kid in reversed(kids))
    return values[0]


def _fold_nltk_tree(tree, leaf, branch):
    """`fold_tree` over an `nltk.Tree`'s own children: the same calls in
    the same order, walking each node's children with an iterator rather
    than a stack of copies (about twice as fast)."""
    if not isinstance(tree, nltk.Tree):
        return leaf(tree)
    tree_type = nltk.Tree
    nodes, walks, values = [tree], [iter(tree)], [[]]
    while True:
        for kid in walks[-1]:
            if isinstance(kid, tree_type):
                nodes.append(kid)
                walks.append(iter(kid))
                values.append([])
                break
            values[-1].append(leaf(kid))
        else:
            walks.pop()
            value = branch(nodes.pop(), values.pop())
            if not values:
                return value
            values[-1].append(value)


def leaves(tree):
    """The leaves of a tree, in order, without recursion.

    Args:
        tree: an `nltk.Tree`, or a single word string.

    Returns:
        A list of the leaves (as `tree.leaves()`, for trees of any depth).

    Example:

    >>> leaves(brackets_to_tree("((the cat) sat)"))
    ['the', 'cat', 'sat']
    """
    found = []
    fold_tree(tree, leaf=found.append, branch=lambda node, values: None)
    return found


def replace_leaves(tree, words):
    """A copy of `tree` whose leaves are `words`, in order, without recursion.

    Args:
        tree: an `nltk.Tree`.
        words: as many leaves as `tree` has.

    Returns:
        A new `nltk.Tree` with the labels of `tree`.

    Raises:
        ValueError: `words` does not hold one word per leaf.

    Example:

    >>> print(replace_leaves(brackets_to_tree("((a b) c)"), ["x", "y", "z"]))
    (X (X x y) z)
    """
    words = list(words)
    count = num_leaves(tree)
    if count != len(words):
        raise ValueError(
            f"The tree has {count} leaves but {len(words)} words were "
            "given: pass one word per leaf."
        )
    replacements = iter(words)
    return fold_tree(
        tree,
        leaf=lambda node: next(replacements),
        branch=lambda node, values: type(node)(node.label(), values),
    )


def _split_point(distances, start, end, decoder):
    """The split of `[start, end)`: the first maximum for the right
    decoder, the last maximum for the left one (the split word); for the
    gap decoder, the first word after the first maximal gap.

    `distances` is a list of Python floats: `max` over a range keeps the
    first of equal maxima, as `np.argmax` does, at a fraction of its cost
    on the short spans a sentence has."""
    if decoder == "right":
        return max(range(start, end), key=distances.__getitem__)
    if decoder == "gap":
        return max(range(start + 1, end), key=distances.__getitem__)
    return max(range(end - 1, start - 1, -1), key=distances.__getitem__)


def _splits(distances, decoder="right"):
    """The split of every span of two words or more of the greedy top-down
    parse, as `(start, end, split)`, each span before the spans inside it
    (read backwards, every span comes after its parts).

    The recursion of `distances_to_tree` unrolled with an explicit stack:
    no Python recursion, so any sentence length works. `distances_to_tree`
    assembles its tree from these splits and `distances_to_spans` its
    spans, so the two cannot disagree.
    """
    distances = [float(d) for d in distances]
    splits = []
    stack = [(0, len(distances))]
    while stack:
        start, end = stack.pop()
        if end - start < 2:
            continue
        split = _split_point(distances, start, end, decoder)
        splits.append((start, end, split))
        if decoder == "gap":
            # (left, right), split between words split - 1 and split.
            stack.append((split, end))
            stack.append((start, split))
        else:
            stack.append((split + 1, end))
            stack.append((start, split))
    return splits


def _top_down(words, distances, decoder="right"):
    """The greedy top-down parse of `words`: its tree assembled from
    `_splits`, each span after its parts."""
    tree = _unlabeled_tree()
    built = {}

    def part(start, end):
        return words[start] if end - start == 1 else built.pop((start, end))

    for start, end, split in reversed(_splits(distances, decoder)):
        if decoder == "gap":
            built[start, end] = tree(
                UNLABELED, [part(start, split), part(split, end)])
            continue
        head = words[split]
        if decoder == "right":
            # (left, (x_k, right))
            if split + 1 < end:
                head = tree(UNLABELED, [head, part(split + 1, end)])
            if split > start:
                head = tree(UNLABELED, [part(start, split), head])
        else:
            # ((left, x_k), right)
            if split > start:
                head = tree(UNLABELED, [part(start, split), head])
            if split + 1 < end:
                head = tree(UNLABELED, [head, part(split + 1, end)])
        built[start, end] = head
    return part(0, len(words))


def _check_distances(distances, length=None):
    """`distances` as a 1-D float64 array, or a one-line ValueError: not
    one-dimensional, empty, not `length` long, NaN or infinite."""
    distances = np.asarray(distances, dtype="float64")
    if distances.ndim != 1:
        raise ValueError(
            "`distances` must be one-dimensional (one distance per word), "
            f"got shape {distances.shape}. For a batch, parse each "
            "sentence's distances on their own."
        )
    if length is not None and len(distances) != length:
        raise ValueError(
            f"Got {length} words but {len(distances)} distances: pass "
            "exactly one distance per word."
        )
    if not len(distances):
        raise ValueError(
            "Cannot parse an empty sentence: pass at least one distance.")
    if not np.all(np.isfinite(distances)):
        raise ValueError(
            "`distances` contains NaN or infinite values; check the model "
            f"that produced them. Got: {distances.tolist()}"
        )
    return distances


def distances_to_spans(distances, decoder="right"):
    """The spans of `distances_to_tree`'s tree, without building the tree.

    Equal to `tree_to_spans(distances_to_tree(words, distances, decoder))`
    (spans of two words or more, the whole sentence's included) for any
    words, at a fraction of its cost: what a scorer needs of many trees
    (the random baseline's, for one).

    Args:
        distances: 1-D array-like of finite floats, one per word.
        decoder: `"right"`, `"left"` or `"gap"`, as `distances_to_tree`.

    Returns:
        A set of `(start, end)` pairs, end-exclusive.

    Example:

    >>> sorted(distances_to_spans([0.0, 0.1, 0.9]))
    [(0, 2), (0, 3)]
    >>> sorted(distances_to_spans([1.0, 1.0, 1.0], decoder="left"))
    [(0, 2), (0, 3)]
    """
    check_decoder(decoder)
    spans = set()
    for start, end, split in _splits(_check_distances(distances), decoder):
        spans.add((start, end))
        if start < split < end - 1 and decoder != "gap":
            # The split word's node: (x_k, right), or (left, x_k).
            spans.add((split, end) if decoder == "right" else (start, split + 1))
    return spans


def model_decoder(model, decoder=None):
    """The decoder that parses `model`'s distances: `decoder`, or with
    `None` the model's own (`model.default_decoder`: `"gap"` for a
    `DistanceParser`; `"right"`, the published parser, for the language
    models, which declare none)."""
    if decoder is None:
        decoder = getattr(model, "default_decoder", None) or "right"
    return check_decoder(decoder)


def check_decoder(decoder):
    """Returns `decoder` if it is one of `DECODERS`; else a one-line
    ValueError naming them."""
    if decoder not in DECODERS:
        raise ValueError(
            f"Unknown decoder {decoder!r}: choose one of "
            f"{', '.join(map(repr, DECODERS))}."
        )
    return decoder


def distances_to_tree(words, distances, decoder="right"):
    """Builds the binary tree induced by syntactic distances (top-down).

    The greedy top-down parser of PRPN and ON-LSTM (`decoder="right"`, the
    default): over words `x_i .. x_j`, find `k* = argmax(d_i .. d_j)` (the
    *first* maximum wins on ties, as `np.argmax`), and return

        (Parse(x_i .. x_{k*-1}), (x_{k*}, Parse(x_{k*+1} .. x_j)))

    dropping the parts that are empty, and a single word as itself (a leaf).
    The distance of a word thus measures how high the boundary *before* it
    lies.

    Note the asymmetry: the split word always opens the right part, so
    the parser is biased towards right-branching trees (constant distances
    give the fully right-branching tree, and decreasing distances too).
    English being mostly right-branching, this bias alone buys a lot of F1;
    it is kept on purpose, because it is what the published ON-LSTM / PRPN
    numbers measure. Compare a model against the right-branching baseline
    of `keras_ordered.parsing.baselines`, never against zero. Neither can
    it build every binary tree: never `((a b) ((c d) e))` (the right part
    of a split always starts with the split word alone), so 13 of the 14
    binary trees over 5 words, 97 of the 132 over 7.

    `decoder="left"` is its mirror image (Dyer et al., 2019): the split
    word is the *last* maximum and *closes* the left part,

        ((Parse(x_i .. x_{k*-1}), x_{k*}), Parse(x_{k*+1} .. x_j))

    so the distance of a word measures how high the boundary *after* it
    lies. It is the right decoder seen in a mirror: on the reversed words
    and distances it gives the mirror image of the right decoder's tree,
    ties included (the first maximum of the reversed distances is the last
    one of the distances). Constant distances give the fully
    left-branching tree; increasing distances give the left-branching
    tree and decreasing ones the right-branching tree under either
    decoder (a strict maximum at an end splits there either way).

    `decoder="gap"` is the parser of Shen et al. (2018): the distance of
    word `k > 0` is the height of the gap between words `k-1` and `k`
    (as for the right decoder, the boundary *before* the word; the first
    word's distance is not read), and a span splits at its first maximal
    gap into two parts, each parsed alike:

        (Parse(x_i .. x_{k*-1}), Parse(x_{k*} .. x_j)),  k* = argmax(d_{i+1} .. d_j)

    Every binary tree has distances that give it (`tree_to_distances`);
    constant distances give the right-branching tree, as the right
    decoder's do.

    Args:
        words: non-empty list of word strings.
        distances: 1-D array-like of floats, one per word.
        decoder: `"right"` (the published parser), `"left"` (its mirror
            image) or `"gap"` (splits between words); see `DECODERS`.

    Returns:
        An `UnlabeledTree` (an `nltk.Tree`) whose internal nodes are
        labeled `UNLABELED` (`"X"`)
        and whose leaves are `words` in order. Every internal node has two
        children, except for a one-word sentence, which gives
        `Tree("X", [word])`.

    Example:

    >>> print(distances_to_tree(["the", "cat", "sat"], [0.0, 0.1, 0.9]))
    (X (X the cat) sat)
    >>> print(distances_to_tree(["a", "b", "c"], [1.0, 1.0, 1.0]))
    (X a (X b c))
    >>> print(distances_to_tree(["a", "b", "c"], [1.0, 1.0, 1.0],
    ...                         decoder="left"))
    (X (X a b) c)
    >>> print(distances_to_tree(["a", "b", "c", "d"], [0.0, 0.9, 0.5, 0.0],
    ...                         decoder="left"))
    (X (X a b) (X c d))
    >>> print(distances_to_tree(["a", "b", "c", "d"], [0.0, 1.0, 0.5, 2.0],
    ...                         decoder="gap"))
    (X (X a (X b c)) d)

    Reference:
        - Shen et al., 2018, "Straight to the Tree: Constituency Parsing
          with Neural Syntactic Distance", ACL (the gap decoder).
        - Shen et al., 2018, "Neural Language Modeling by Jointly Learning
          Syntax and Lexicon" (PRPN), ICLR.
        - Shen et al., 2019, "Ordered Neurons: Integrating Tree Structures
          into Recurrent Neural Networks" (ON-LSTM), ICLR.
        - Dyer, Melis and Blunsom, 2019, "A Critical Analysis of Biased
          Parsers in Unsupervised Parsing", arXiv:1909.09428 (the parser's
          incompleteness and right-branching bias).
    """
    check_decoder(decoder)
    words = _check_words(words)
    distances = _check_distances(distances, len(words))
    tree = _top_down(words, distances, decoder)
    if isinstance(tree, str):
        tree = _unlabeled_tree()(UNLABELED, [tree])
    return tree


def _word_in_brackets(node):
    if not isinstance(node, str) or not node or any(
        c in node for c in "() \t\n\r"
    ):
        raise ValueError(
            f"Word {node!r} cannot be written in a bracketed string: "
            "words must be non-empty strings with no whitespace or "
            "parentheses (escape them, e.g. as -LRB- / -RRB-)."
        )
    return node


def _labelled_branch(node, children):
    """A node in the labelled format; `children` are strings or `(word,)`."""
    if len(children) == 1 and isinstance(children[0], tuple) and (
        node.label() != UNLABELED
    ):  # a POS preterminal of a gold tree: its tag stays
        return f"({node.label()} {children[0][0]})"
    parts = [
        f"({WORD_TAG} {child[0]})" if isinstance(child, tuple) else child
        for child in children
    ]
    return f"({node.label()} " + " ".join(parts) + ")"


def tree_to_brackets(tree, labels=False):
    """Writes a tree as a bracketed string.

    Without labels (the literature's format, which `brackets_to_tree`
    reads), every internal node, the root included, becomes a pair of
    parentheses around its children separated by single spaces.

    With labels (the Treebank's format, which `nltk.Tree.fromstring` and
    EVALB read), every node writes its label (`X` in an induced tree) and
    every word its POS tag: `WORD_TAG` (`XX`), or its tag in a gold tree.
    nltk's default reader takes the first token after `(` for a label, so
    it misreads the unlabelled format: give it this one.

    Args:
        tree: an `nltk.Tree` (labeled or not), or a single word string.
        labels: whether to write the labelled format.

    Returns:
        A string such as `"((the cat) (sat (on (the mat))))"`, or with
        labels `"(X (X (XX the) (XX cat)) (X (XX sat) ...))"`.

    Example:

    >>> tree = distances_to_tree(["the", "cat", "sat"], [0.0, 0.1, 0.9])
    >>> tree_to_brackets(tree)
    '((the cat) sat)'
    >>> tree_to_brackets(tree, labels=True)
    '(X (X (XX the) (XX cat)) (XX sat))'
    >>> nltk.Tree.fromstring(tree_to_brackets(tree, labels=True)).leaves()
    ['the', 'cat', 'sat']
    """
    if labels:
        if isinstance(tree, str):
            tree = _unlabeled_tree()(UNLABELED, [tree])
        return fold_tree(
            tree,
            leaf=lambda word: (_word_in_brackets(word),),
            branch=_labelled_branch,
        )
    return fold_tree(
        tree,
        leaf=_word_in_brackets,
        branch=lambda node, children: "(" + " ".join(children) + ")",
    )


def brackets_to_tree(text, label=UNLABELED):
    """Reads an unlabeled bracketed string back into an `nltk.Tree`.

    Every token between parentheses is a leaf (a word); there are no labels.
    (`nltk.Tree.fromstring` would read the first word after each `(` as a
    label.) For labeled Treebank strings, such as those of
    `tree_to_brackets(tree, labels=True)`, use `nltk.Tree.fromstring`.

    Args:
        text: a string such as `"((the cat) sat)"`; a bare word gives a
            one-word tree.
        label: label given to every internal node.

    Returns:
        An `UnlabeledTree` (an `nltk.Tree` whose `pretty_print` draws the
        words in sentence order).

    Example:

    >>> print(brackets_to_tree("((the cat) sat)"))
    (X (X the cat) sat)
    """
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    if not tokens:
        raise ValueError("Cannot read a tree from an empty string.")
    if tokens[0] == ")":
        raise ValueError(
            f"Malformed bracketed string {text!r}: unbalanced ')' at token 0."
        )
    if tokens[0] != "(":
        if len(tokens) != 1:
            raise ValueError(
                f"Malformed bracketed string {text!r}: several words must be "
                "enclosed in parentheses, e.g. '(the cat)'."
            )
        return _unlabeled_tree()(label, [tokens[0]])
    stack = []
    root = None
    for position, token in enumerate(tokens):
        if root is not None:
            raise ValueError(
                f"Malformed bracketed string {text!r}: text after the closing "
                f"parenthesis of the root (token {position}: {token!r})."
            )
        if token == "(":
            stack.append([])
        elif token == ")":
            if not stack:
                raise ValueError(
                    f"Malformed bracketed string {text!r}: unbalanced ')' at "
                    f"token {position}."
                )
            children = stack.pop()
            if not children:
                raise ValueError(
                    f"Malformed bracketed string {text!r}: empty brackets "
                    f"'()' at token {position}; every constituent needs at "
                    "least one word."
                )
            node = _unlabeled_tree()(label, children)
            if stack:
                stack[-1].append(node)
            else:
                root = node
        else:
            stack[-1].append(token)
    if stack:
        raise ValueError(
            f"Malformed bracketed string {text!r}: {len(stack)} unclosed "
            "'(' at the end."
        )
    return root


def _collect_spans(tree, out, labeled):
    """Appends the spans of `tree` to `out`; returns its number of leaves."""
    position = [0]

    def leaf(node):
        position[0] += 1
        return position[0] - 1, position[0]

    def branch(node, children):
        start = children[0][0] if children else position[0]
        end = children[-1][1] if children else position[0]
        if end == start:
            raise ValueError(
                f"Constituent {node.label()!r} at leaf {start} has no words; "
                "remove empty constituents first (see "
                "`keras_ordered.datasets.treebank.clean_tree`)."
            )
        out.append((node.label(), start, end) if labeled else (start, end))
        return start, end

    return fold_tree(tree, leaf, branch)[1]


def num_leaves(tree):
    """Number of words of a tree (1 for a bare word string)."""
    if isinstance(tree, str):
        return 1
    return len(leaves(tree))


def tree_to_spans(tree, include_length_one=False, include_whole=True):
    """Unlabeled spans of a tree, as a set.

    Unary chains (a node with a single child) give the same span several
    times: as a set they count once ("collapsed").

    Args:
        tree: an `nltk.Tree` whose leaves are words.
        include_length_one: whether to keep spans over a single word (POS
            preterminals, unary constituents over one word). The
            evaluations never do.
        include_whole: whether to keep the span of the whole sentence.
            The sentence-level F1 drops it, the corpus-level F1 keeps it.

    Returns:
        A set of `(start, end)` pairs, end-exclusive.

    Example:

    >>> tree = brackets_to_tree("((the cat) (sat (on (the mat))))")
    >>> sorted(tree_to_spans(tree, include_whole=False))
    [(0, 2), (2, 6), (3, 6), (4, 6)]
    """
    if isinstance(tree, str):
        return {(0, 1)} if include_length_one and include_whole else set()
    spans = []
    length = _collect_spans(tree, spans, labeled=False)
    return {
        (start, end)
        for start, end in spans
        if (include_length_one or end - start > 1)
        and (include_whole or (start, end) != (0, length))
    }


def tree_to_labeled_spans(tree, include_length_one=False, include_whole=True):
    """Labeled spans of a tree, as a set of `(label, start, end)`.

    Labels are taken as they are: strip function tags beforehand (the
    gold trees of `keras_ordered.datasets.treebank` already are).

    Args:
        tree: an `nltk.Tree` whose leaves are words.
        include_length_one: whether to keep constituents over one word
            (POS preterminals included).
        include_whole: whether to keep the constituents spanning the whole
            sentence.

    Returns:
        A set of `(label, start, end)` triples, end-exclusive.

    Example:

    >>> tree = nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")
    >>> sorted(tree_to_labeled_spans(tree))
    [('NP', 0, 2), ('S', 0, 3)]
    """
    if isinstance(tree, str):
        return set()
    spans = []
    length = _collect_spans(tree, spans, labeled=True)
    return {
        (label, start, end)
        for label, start, end in spans
        if (include_length_one or end - start > 1)
        and (include_whole or (start, end) != (0, length))
    }


def spans_depth(spans, length):
    """Depth of a set of spans: the most spans containing any one word.

    Args:
        spans: iterable of `(start, end)` spans over `length` words.
        length: number of words.

    Returns:
        An int, 0 when `spans` is empty.
    """
    if length <= 0:
        return 0
    counts = np.zeros(length + 1, dtype="int64")
    for start, end in set(spans):
        counts[start] += 1
        counts[end] -= 1
    return int(np.max(np.cumsum(counts[:-1])))


def tree_depth(tree):
    """Depth of the bracketing of a tree.

    The largest number of distinct constituents of two words or more that
    contain a single word. Labels, POS preterminals and unary chains do
    not count, so gold Treebank trees and induced binary trees compare
    fairly: a fully right- or left-branching tree over `n` words has depth
    `n - 1`, a balanced one about `log2(n)`, a one-word tree 0.

    Args:
        tree: an `nltk.Tree` (or a single word string).

    Returns:
        An int.

    Example:

    >>> tree_depth(brackets_to_tree("((the cat) (sat (on (the mat))))"))
    4
    """
    return spans_depth(tree_to_spans(tree), num_leaves(tree))


def tree_to_distances(tree):
    """The gap decoder's distances of a tree: the height of each gap.

    The distance of word `k > 0` is the height of the smallest constituent
    that holds both words `k-1` and `k` (a constituent over two words has
    height 1; each level above adds one), as the targets of Shen et al.
    (2018); the first word's distance is 0 (the gap decoder does not read
    it). `distances_to_tree(words, tree_to_distances(tree), "gap")` gives
    back `tree` for every binary tree; a constituent of three children or
    more comes back right-branching. Any depth works (no recursion).

    Args:
        tree: an `nltk.Tree` (a gold tree with preterminals, or an
            induced one), or a single word.

    Returns:
        A float64 array, one distance per leaf.

    Example:

    >>> tree_to_distances(brackets_to_tree("((the cat) (sat down))")).tolist()
    [0.0, 1.0, 2.0, 1.0]

    Reference:
        Shen et al., 2018, "Straight to the Tree: Constituency Parsing with
        Neural Syntactic Distance", ACL.
    """
    def branch(node, values):
        # values: (height, gaps) of each child; a preterminal is a leaf.
        if len(values) == 1:
            return values[0]
        height = 1 + max(h for h, _ in values)
        gaps = list(values[0][1])
        for _, child_gaps in values[1:]:
            gaps.append(height)
            gaps.extend(child_gaps)
        return height, gaps

    def children(node):
        kids = _tree_children(node)
        if kids is not None and len(kids) == 1 and not isinstance(
                kids[0], nltk.Tree):
            return None  # a preterminal: one word
        return kids

    _, gaps = fold_tree(tree, leaf=lambda node: (0, []), branch=branch,
                        children=children)
    return np.asarray([0.0] + [float(g) for g in gaps], dtype="float64")
