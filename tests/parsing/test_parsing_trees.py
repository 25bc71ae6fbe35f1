"""Distances to trees, bracketed strings, spans and depth."""

import re

import nltk
import numpy as np
import pytest
from conftest import recursive_brackets

from keras_ordered.parsing import trees as trees_lib
from keras_ordered.parsing.trees import brackets_to_tree
from keras_ordered.parsing.trees import distances_to_tree
from keras_ordered.parsing.trees import tree_depth
from keras_ordered.parsing.trees import tree_to_brackets
from keras_ordered.parsing.trees import tree_to_labeled_spans
from keras_ordered.parsing.trees import tree_to_spans

pytestmark = pytest.mark.backends

WORDS = ["the", "cat", "sat", "on", "the", "mat"]


def parse(words, distances):
    return tree_to_brackets(distances_to_tree(words, distances))


def test_split_at_the_maximum_with_split_word_heading_the_right_part():
    # argmax = "sat": ((the cat) (sat (on (the mat)))) once the parts recurse.
    distances = [0.0, 0.2, 0.9, 0.5, 0.1, 0.05]
    assert parse(WORDS, distances) == "((the cat) (sat (on (the mat))))"


def test_maximum_at_the_ends():
    # Maximum first: the left part is empty and dropped.
    assert parse(["a", "b", "c"], [3.0, 1.0, 2.0]) == "(a (b c))"
    # Maximum last: the right part is empty; split word alone is a leaf.
    assert parse(["a", "b", "c"], [1.0, 2.0, 3.0]) == "((a b) c)"
    # Maximum in the middle: (left, (split, right)).
    assert parse(["a", "b", "c"], [1.0, 3.0, 2.0]) == "(a (b c))"
    assert parse(["a", "b", "c", "d"], [1.0, 0.0, 3.0, 2.0]) == "((a b) (c d))"


def test_ties_pick_the_first_maximum():
    # Constant distances: the first word always wins -> right-branching.
    assert parse(["a", "b", "c", "d"], [1, 1, 1, 1]) == "(a (b (c d)))"
    # Two maxima: split at the first one (index 1); splitting at index 3
    # would give ((a (b c)) (d e)).
    assert parse(["a", "b", "c", "d", "e"], [0, 5, 0, 5, 0]) == (
        "(a (b (c (d e))))"
    )


def test_decreasing_and_increasing_distances():
    assert parse(list("abcd"), [4, 3, 2, 1]) == "(a (b (c d)))"
    assert parse(list("abcd"), [1, 2, 3, 4]) == "(((a b) c) d)"


def test_tree_is_binary_unlabeled_and_keeps_the_words():
    rng = np.random.default_rng(0)
    for length in range(1, 30):
        words = [f"w{i}" for i in range(length)]
        tree = distances_to_tree(words, rng.normal(size=length))
        assert tree.leaves() == words
        assert all(t.label() == trees_lib.UNLABELED for t in tree.subtrees())
        if length > 1:
            assert all(len(t) == 2 for t in tree.subtrees())
            # A binary tree over n words has n - 1 internal nodes.
            assert len(tree_to_spans(tree)) == length - 1


def test_single_word():
    tree = distances_to_tree(["hello"], [0.3])
    assert isinstance(tree, nltk.Tree)
    assert tree.leaves() == ["hello"]
    assert tree_to_brackets(tree) == "(hello)"
    assert tree_to_spans(tree) == set()
    assert tree_depth(tree) == 0


def test_input_errors():
    with pytest.raises(ValueError, match="empty sentence"):
        distances_to_tree([], [])
    with pytest.raises(ValueError, match="one distance per word"):
        distances_to_tree(["a", "b"], [1.0])
    with pytest.raises(ValueError, match="one-dimensional"):
        distances_to_tree(["a", "b"], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        distances_to_tree(["a", "b"], [1.0, float("nan")])
    with pytest.raises(ValueError, match="strings"):
        distances_to_tree(["a", 3], [1.0, 2.0])


def test_brackets_round_trip():
    text = "((the cat) (sat (on (the mat))))"
    tree = brackets_to_tree(text)
    assert tree.leaves() == WORDS
    assert tree_to_brackets(tree) == text
    assert tree_to_brackets(brackets_to_tree("  ( (a b)c ) ")) == "((a b) c)"
    assert tree_to_brackets(brackets_to_tree("word")) == "(word)"
    # Labeled trees lose their labels.
    gold = nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")
    assert tree_to_brackets(gold) == "(((the) (cat)) ((sat)))"


@pytest.mark.parametrize(
    "text", ["", "(a b", "(a b))", "(a ()) ", "(a) b", "a b"]
)
def test_malformed_brackets(text):
    with pytest.raises(ValueError):
        brackets_to_tree(text)


def test_words_with_parentheses_cannot_be_written():
    tree = nltk.Tree("X", ["a", "b(c"])
    with pytest.raises(ValueError, match="-LRB-"):
        tree_to_brackets(tree)


def test_span_options():
    tree = brackets_to_tree("((the cat) (sat (on (the mat))))")
    assert tree_to_spans(tree) == {(0, 6), (0, 2), (2, 6), (3, 6), (4, 6)}
    assert tree_to_spans(tree, include_whole=False) == {
        (0, 2), (2, 6), (3, 6), (4, 6)
    }
    # Leaves are not spans; unary nodes over one word are, on request.
    unary = nltk.Tree.fromstring("(S (NP (NN it)) (VP (VBZ is) (ADJP (JJ ok))))")
    assert tree_to_spans(unary) == {(0, 3), (1, 3)}
    assert tree_to_spans(unary, include_length_one=True) == {
        (0, 3), (0, 1), (1, 3), (1, 2), (2, 3)
    }


def test_unary_chains_collapse_in_span_sets():
    tree = nltk.Tree.fromstring(
        "(S (S (VP (VB go) (NP (NP (NNS home)) (ADVP (RB now))))))"
    )
    assert tree_to_spans(tree) == {(0, 3), (1, 3)}
    assert tree_to_labeled_spans(tree) == {
        ("S", 0, 3), ("VP", 0, 3), ("NP", 1, 3)
    }
    assert tree_to_labeled_spans(tree, include_whole=False) == {("NP", 1, 3)}


def test_depth():
    assert tree_depth(brackets_to_tree("(a (b (c d)))")) == 3
    assert tree_depth(brackets_to_tree("((a b) (c d))")) == 2
    assert tree_depth(brackets_to_tree("((the cat) (sat (on (the mat))))")) == 4
    # POS preterminals and unary chains do not add depth.
    gold = nltk.Tree.fromstring("(S (S (NP (DT the) (NN cat)) (VP (VBD sat))))")
    assert tree_depth(gold) == 2
    assert trees_lib.spans_depth([], 0) == 0


# --- no recursion: any sentence length -------------------------------------


def random_sentences(seed, trials=300):
    """`(words, distances)` of 1 to 39 words; half of the sentences draw
    their distances from few values, so that ties are common."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        length = int(rng.integers(1, 40))
        if trial % 2:
            distances = rng.integers(0, 3, length).astype(float)
        else:
            distances = rng.normal(size=length)
        yield [f"w{i}" for i in range(length)], distances


def test_iterative_parser_matches_the_recursive_reference():
    # Ties must pick the first maximum.
    for words, distances in random_sentences(25):
        expected = recursive_brackets(words, list(distances))
        if len(words) == 1:
            expected = f"({expected})"
        assert parse(words, distances) == expected


def test_ten_thousand_words_parse_write_and_score():
    # Rising distances give the deepest (left-branching) tree, falling
    # ones the deepest right-branching one: depth 9,999 either way, ten
    # times Python's recursion limit.
    n = 10_000
    words = ["w"] * n
    left = distances_to_tree(words, np.arange(n, dtype=float))
    right = distances_to_tree(words, -np.arange(n, dtype=float))
    assert tree_to_brackets(left) == "(" * (n - 1) + "w w" + ") w" * (n - 2) + ")"
    assert tree_to_brackets(right) == "(w " * (n - 2) + "(w w" + ")" * (n - 1)
    assert trees_lib.num_leaves(left) == n
    assert tree_depth(left) == tree_depth(right) == n - 1
    assert (0, 2) in tree_to_spans(left) and (n - 2, n) in tree_to_spans(right)
    assert trees_lib.leaves(
        trees_lib.replace_leaves(right, [str(i) for i in range(n)])
    )[-3:] == ["9997", "9998", "9999"]
    text = tree_to_brackets(right)
    assert tree_to_brackets(brackets_to_tree(text)) == text


def test_deep_baselines_binarized_gold_and_delinearized_trees():
    from keras_ordered.parsing import baselines
    from keras_ordered.parsing import linearize

    n = 5_000
    words = [f"w{i}" for i in range(n)]
    for build in (baselines.right_branching_tree, baselines.left_branching_tree,
                  baselines.balanced_tree):
        assert trees_lib.leaves(build(words)) == words
    deep = brackets_to_tree(tree_to_brackets(baselines.right_branching_tree(words)))
    assert tree_to_spans(baselines.binarized_gold_tree(deep)) == tree_to_spans(deep)
    tokens = ["(NP"] * n + ["XX"] * n + [")NP"] * n
    tree, repairs = linearize.delinearize(tokens, words)
    assert not repairs.malformed and trees_lib.num_leaves(tree) == n


def test_fold_tree_and_token_lists():
    tree = brackets_to_tree("((the cat) sat)")
    assert trees_lib.fold_tree(
        tree, leaf=len, branch=lambda node, sizes: sum(sizes)
    ) == 9
    with pytest.raises(TypeError, match="not a list of tokens"):
        distances_to_tree("the cat sat", [0.0] * 11)


def _random_nltk_tree(rng, depth=0):
    """A random labelled tree: unary chains, empty nodes and words."""
    kids = []
    for _ in range(int(rng.integers(0, 4))):
        if depth < 4 and rng.random() < 0.5:
            kids.append(_random_nltk_tree(rng, depth + 1))
        else:
            kids.append(f"w{int(rng.integers(100))}")
    return nltk.Tree(f"L{depth}", kids)


def _recursive_calls(tree):
    """fold_tree's calls by plain recursion: leaves in order, each node
    after its children, with its children's values."""
    calls = []

    def visit(node):
        if not isinstance(node, nltk.Tree):
            calls.append(("leaf", node))
            return node
        values = [visit(kid) for kid in node]
        calls.append(("branch", node.label(), tuple(values)))
        return f"{node.label()}{len(values)}"

    return visit(tree), calls


def test_fold_tree_calls_leaf_and_branch_as_a_recursion_does():
    rng = np.random.default_rng(0)
    trees = [_random_nltk_tree(rng) for _ in range(300)] + ["bare"]
    for tree in trees:
        calls = []

        def leaf(node):
            calls.append(("leaf", node))
            return node

        def branch(node, values):
            calls.append(("branch", node.label(), tuple(values)))
            return f"{node.label()}{len(values)}"

        value = trees_lib.fold_tree(tree, leaf, branch)
        assert (value, calls) == _recursive_calls(tree)
        # The same through an explicit `children` (the generic walk).
        calls.clear()
        value = trees_lib.fold_tree(
            tree, leaf, branch,
            children=lambda n: list(n) if isinstance(n, nltk.Tree) else None)
        assert (value, calls) == _recursive_calls(tree)


# --- the left decoder: the parser's mirror image ----------------------------


def recursive_left_brackets(words, distances):
    """The mirror image of conftest's `recursive_brackets`, written on its
    own: split at the *last* maximum, the split word ending the left part,
    `((left x_k) right)`. Returns the bracketed string ("w" for one word)."""
    if len(words) == 1:
        return words[0]
    split = max(range(len(words)), key=lambda i: (distances[i], i))
    left = words[split]
    if split > 0:
        left = (f"({recursive_left_brackets(words[:split], distances[:split])}"
                f" {left})")
    if split + 1 == len(words):
        return left
    rest = recursive_left_brackets(words[split + 1:], distances[split + 1:])
    return f"({left} {rest})"


def parse_left(words, distances):
    return tree_to_brackets(distances_to_tree(words, distances, decoder="left"))


def mirror(text):
    """The mirror image of a bracketed tree: children and words reversed."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    swap = {"(": ")", ")": "("}
    return " ".join(swap.get(t, t) for t in reversed(tokens)).replace(
        "( ", "(").replace(" )", ")")


def test_left_decoder_splits_at_the_maximum_with_split_word_ending_the_left_part():
    # argmax = "sat": (((the cat) sat) ...) once the parts recurse.
    distances = [0.0, 0.2, 0.9, 0.5, 0.1, 0.05]
    assert parse_left(WORDS, distances) == "(((the cat) sat) (on (the mat)))"
    assert parse_left(["a", "b", "c"], [3.0, 1.0, 2.0]) == "(a (b c))"
    assert parse_left(["a", "b", "c"], [1.0, 2.0, 3.0]) == "((a b) c)"
    assert parse_left(["a", "b", "c"], [1.0, 3.0, 2.0]) == "((a b) c)"
    assert parse_left(list("abcd"), [0.0, 0.9, 0.5, 0.0]) == "((a b) (c d))"
    assert parse_left(["a"], [0.5]) == "(a)"


def test_left_decoder_ties_pick_the_last_maximum():
    # Constant distances: the last word always wins -> left-branching,
    # the mirror of the right decoder's right-branching tree.
    assert parse_left(list("abcd"), [1, 1, 1, 1]) == "(((a b) c) d)"
    assert parse(list("abcd"), [1, 1, 1, 1]) == "(a (b (c d)))"
    # Two maxima: split at the last one (index 3); the first (index 1)
    # would give ((a b) (c (d e))).
    assert parse_left(list("abcde"), [0, 5, 0, 5, 0]) == "((((a b) c) d) e)"


def test_monotone_distances_give_the_same_tree_under_both_decoders():
    # A strict maximum at an end splits there whichever part it joins.
    for distances in ([4, 3, 2, 1], [1, 2, 3, 4]):
        assert parse_left(list("abcd"), distances) == parse(list("abcd"),
                                                            distances)
    assert parse_left(list("abcd"), [1, 2, 3, 4]) == "(((a b) c) d)"
    assert parse_left(list("abcd"), [4, 3, 2, 1]) == "(a (b (c d)))"


def test_left_decoder_matches_its_recursive_reference():
    # Ties must pick the last maximum.
    for words, distances in random_sentences(46):
        expected = recursive_left_brackets(words, list(distances))
        if len(words) == 1:
            expected = f"({expected})"
        assert parse_left(words, distances) == expected


def test_left_decoder_on_reversed_inputs_is_the_mirror_of_the_right_decoder():
    # Holds exactly, ties included: the first maximum of the distances is
    # the last maximum of the reversed distances.
    rng = np.random.default_rng(1946)
    for trial in range(300):
        length = int(rng.integers(1, 30))
        if trial % 2:
            distances = rng.integers(0, 3, length).astype(float)
        else:
            distances = rng.normal(size=length)
        words = [f"w{i}" for i in range(length)]
        right = parse(words, distances)
        left = parse_left(words[::-1], distances[::-1])
        assert left == mirror(right)
        assert parse(words[::-1], distances[::-1]) == mirror(
            parse_left(words, distances))


def test_left_decoder_goes_deep_without_recursion():
    n = 10_000
    words = ["w"] * n
    tree = distances_to_tree(words, np.zeros(n), decoder="left")
    assert tree_to_brackets(tree) == "(" * (n - 1) + "w w" + ") w" * (n - 2) + ")"


def test_neither_decoder_builds_every_binary_tree():
    # Dyer et al. (2019): the parser is incomplete. Over every order of
    # distinct distances (ties add no tree: a tie-break is an order), the
    # right decoder builds 13 of the 14 binary trees over 5 words, 35 of
    # 42 over 6 and 97 of 132 over 7; the left decoder as many, the mirror
    # images.
    import itertools
    from math import comb

    for length, built in ((4, 5), (5, 13), (6, 35), (7, 97)):
        words = [f"w{i}" for i in range(length)]
        right, left = set(), set()
        for order in itertools.permutations(range(length)):
            right.add(parse(words, order))
            left.add(parse_left(words, order))
        catalan = comb(2 * (length - 1), length - 1) // length
        assert len(right) == len(left) == built <= catalan
        rename = dict(zip(words, reversed(words)))
        assert left == {
            re.sub(r"[^() ]+", lambda word: rename[word.group()], mirror(t))
            for t in right
        }
    five = list("abcde")
    assert "((a b) ((c d) e))" not in {
        parse(five, o) for o in itertools.permutations(range(5))}
    assert "((a (b c)) (d e))" not in {
        parse_left(five, o) for o in itertools.permutations(range(5))}


def test_unknown_decoder():
    with pytest.raises(ValueError, match="Unknown decoder 'up'"):
        distances_to_tree(["a", "b"], [0.0, 1.0], decoder="up")


def test_distances_to_spans_are_the_recursive_references_spans():
    # Against the recursive references (right and left decoders: written
    # apart from the package) and the gap decoder's tree, with ties.
    references = {
        "right": recursive_brackets,
        "left": recursive_left_brackets,
        "gap": lambda words, distances: tree_to_brackets(
            distances_to_tree(words, distances, decoder="gap")),
    }
    for words, distances in random_sentences(58):
        for decoder, reference in references.items():
            text = reference(words, list(distances))
            expected = (tree_to_spans(brackets_to_tree(text))
                        if len(words) > 1 else set())
            assert trees_lib.distances_to_spans(
                distances, decoder=decoder) == expected, (decoder, text)


def test_distances_to_spans_input_errors_and_depth():
    spans = trees_lib.distances_to_spans
    with pytest.raises(ValueError, match="empty sentence"):
        spans([])
    with pytest.raises(ValueError, match="one-dimensional"):
        spans([[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        spans([1.0, float("inf")])
    with pytest.raises(ValueError, match="Unknown decoder"):
        spans([1.0, 2.0], decoder="middle")
    # No recursion: 3,000 falling distances (deeper than Python's
    # recursion limit), the right-branching spans.
    assert spans(np.arange(3_000, 0, -1.0)) == {
        (start, 3_000) for start in range(2_999)}
