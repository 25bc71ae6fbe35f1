"""Trivial trees every induced tree must be compared with.

Right-branching trees are the baseline that matters for English (and for the
right-biased top-down parser of `distances_to_tree`): a model that does not
beat them has learned nothing the parser does not already assume.
"""

from keras_ordered._nltk import nltk  # noqa: F401  (the doctests use it)
import numpy as np

from keras_ordered_options import BASELINE_NAMES
from keras_ordered.parsing import trees as trees_lib

UNLABELED = trees_lib.UNLABELED

RIGHT_BRANCHING_MARGIN = 2.0
"""Sentence-F1 points above right-branching, on the same sentences, by
which this project counts a model as a parser: the seed studies'
"beats right-branching" (`benchmarks/parsing_quality.py`), the shipped
models' cards, and the recipes' warning after `--parse-eval`."""


def _wrap(tree):
    if isinstance(tree, str):
        return trees_lib.UnlabeledTree(UNLABELED, [tree])
    return tree


def right_branching_tree(words):
    """The right-branching tree `(w1 (w2 (w3 ... wn)))`.

    Args:
        words: non-empty list of word strings.

    Returns:
        An unlabeled `nltk.Tree`.

    Example:

    >>> trees_lib.tree_to_brackets(right_branching_tree(["a", "b", "c"]))
    '(a (b c))'
    """
    words = trees_lib._check_words(words)
    tree = words[-1]
    for word in reversed(words[:-1]):
        tree = trees_lib.UnlabeledTree(UNLABELED, [word, tree])
    return _wrap(tree)


def left_branching_tree(words):
    """The left-branching tree `(((w1 w2) w3) ... wn)`.

    Args:
        words: non-empty list of word strings.

    Returns:
        An unlabeled `nltk.Tree`.

    Example:

    >>> trees_lib.tree_to_brackets(left_branching_tree(["a", "b", "c"]))
    '((a b) c)'
    """
    words = trees_lib._check_words(words)
    tree = words[0]
    for word in words[1:]:
        tree = trees_lib.UnlabeledTree(UNLABELED, [tree, word])
    return _wrap(tree)


def _balanced(words):
    # The halves as (start, end) spans, folded bottom-up without recursion.
    def children(span):
        start, end = span
        if end - start == 1:
            return None
        middle = start + (end - start + 1) // 2
        return [(start, middle), (middle, end)]

    return trees_lib.fold_tree(
        (0, len(words)),
        leaf=lambda span: words[span[0]],
        branch=lambda span, halves: trees_lib.UnlabeledTree(UNLABELED, halves),
        children=children,
    )


def balanced_tree(words):
    """The balanced binary tree, split in halves recursively.

    An odd number of words puts the extra word in the left half:
    `((a b) c)` for three words, `((a b c) (d e))` split as
    `(((a b) c) (d e))` for five.

    Args:
        words: non-empty list of word strings.

    Returns:
        An unlabeled `nltk.Tree`.

    Example:

    >>> trees_lib.tree_to_brackets(balanced_tree(["a", "b", "c", "d"]))
    '((a b) (c d))'
    """
    words = trees_lib._check_words(words)
    return _wrap(_balanced(words))


def random_tree(words, rng=None):
    """A random binary tree from random distances.

    Draws one uniform distance per word and parses them with
    `distances_to_tree`, so the random baseline goes through the same
    (right-biased) parser as the models: it tells what the parser gives
    with uninformative distances.

    Args:
        words: non-empty list of word strings.
        rng: a `numpy.random.Generator`, an int seed, or `None` (fresh
            entropy; pass a seed for reproducible trees).

    Returns:
        An unlabeled `nltk.Tree`.

    Example:

    >>> tree = random_tree(["a", "b", "c"], rng=0)
    >>> sorted(tree.leaves())
    ['a', 'b', 'c']
    """
    words = trees_lib._check_words(words)
    rng = np.random.default_rng(rng)
    return trees_lib.distances_to_tree(words, rng.random(len(words)))


BASELINES = dict(zip(BASELINE_NAMES, (right_branching_tree,
                                      left_branching_tree, balanced_tree,
                                      random_tree)))
"""Baseline tree builders by name (`keras_ordered_options.BASELINE_NAMES`,
which the command's options name without importing the package)."""


def baseline_predictor(name, seed=0, spans=False):
    """A `predict` function for `evaluate_parsing` that builds baseline trees.

    Args:
        name: one of `BASELINES` (`"right-branching"`, `"left-branching"`,
            `"balanced"`, `"random"`).
        seed: int seed of the random baseline (ignored by the others).
            The same seed gives the same trees for the same sentences.
        spans: bool; true for each tree's spans instead of the tree
            (`trees.tree_to_spans`'s set, which
            `keras_ordered.parsing.evaluate.evaluate_protocol` scores as a
            tree), the random baseline's without building its trees
            (`trees.distances_to_spans`, a fraction of the cost). Same
            seed, same spans as the trees'.

    Returns:
        A function mapping a list of word lists to a list of trees (or of
        span sets).

    Example:

    >>> predict = baseline_predictor("right-branching")
    >>> [trees_lib.tree_to_brackets(t) for t in predict([["a", "b", "c"]])]
    ['(a (b c))']
    >>> sorted(baseline_predictor("right-branching", spans=True)(
    ...     [["a", "b", "c"]])[0])
    [(0, 3), (1, 3)]
    """
    if name not in BASELINES:
        raise ValueError(
            f"Unknown baseline {name!r}: choose one of "
            f"{', '.join(sorted(BASELINES))}."
        )
    if name == "random":

        def predict(sentences):
            rng = np.random.default_rng(seed)
            if spans:
                return [trees_lib.distances_to_spans(
                            rng.random(len(trees_lib._check_words(words))))
                        for words in sentences]
            return [random_tree(words, rng) for words in sentences]

    else:
        build = BASELINES[name]

        def predict(sentences):
            if spans:
                return [trees_lib.tree_to_spans(build(words))
                        for words in sentences]
            return [build(words) for words in sentences]

    return predict


def binarized_gold_tree(tree):
    """The gold tree made binary: every gold constituent kept, each node of
    more than two children split right-branching, unary chains collapsed.

    No binary tree can score higher against the gold tree, under any
    protocol of `keras_ordered.parsing.evaluate.PROTOCOLS`: it holds every
    gold span, and every binary tree of `n` words has the same number of
    spans (`n - 1`). Its score is the upper bound of a binary parser (such
    as `distances_to_tree`) on flat gold trees.

    Args:
        tree: a gold `nltk.Tree` (POS preterminals allowed) or a word.

    Returns:
        An unlabeled binary `nltk.Tree` over the same words.

    Example:

    >>> gold = nltk.Tree.fromstring("(NP (DT the) (JJ big) (JJ red) (NN dog))")
    >>> trees_lib.tree_to_brackets(binarized_gold_tree(gold))
    '(the (big (red dog)))'
    """
    return _wrap(_binarize(tree))


def _binarize(node):
    return trees_lib.fold_tree(node, leaf=lambda word: word, branch=_binary)


def _binary(node, children):
    if len(children) == 1:
        return children[0]
    result = children[-1]
    for child in reversed(children[:-1]):
        result = trees_lib.UnlabeledTree(UNLABELED, [child, result])
    return result
