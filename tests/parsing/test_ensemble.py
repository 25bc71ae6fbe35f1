"""Tree averaging against a brute force over every binary tree.

`average_tree` finds by CKY the binary tree with the most member votes;
here an independent enumeration of every binary tree of sentences up to 8
words (429 trees at 8) finds the same score, and the tie rule picks the
same tree among the optimal ones. Plain NumPy: runs on every backend.
"""

import itertools
import random

import numpy as np
import pytest

from keras_ordered.parsing import TIE_RULES
from keras_ordered.parsing import TreeEnsemble
from keras_ordered.parsing import average_tree
from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import span_votes
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.parsing import tree_to_spans
from keras_ordered.parsing.ensemble import best_splits

pytestmark = pytest.mark.backends


def all_trees(start, end):
    """Every binary tree of [start, end) as nested (left, right) tuples of
    word indices, with its pre-order split points."""
    if end - start == 1:
        return [(start, ())]
    found = []
    for k in range(start + 1, end):
        for left, left_splits in all_trees(start, k):
            for right, right_splits in all_trees(k, end):
                found.append(((left, right), (k,) + left_splits + right_splits))
    return found


def spans_of(node, out=None):
    """The spans (length >= 2) of a nested-tuple tree; returns (start, end)."""
    out = [] if out is None else out

    def walk(n):
        if isinstance(n, int):
            return n, n + 1
        (a, _), (_, b) = walk(n[0]), walk(n[1])
        out.append((a, b))
        return a, b

    walk(node)
    return out


def to_brackets(node, words):
    if isinstance(node, int):
        return words[node]
    return f"({to_brackets(node[0], words)} {to_brackets(node[1], words)})"


def brute_force(words, members, weights, tie):
    """The optimal score, and the tree the tie rule picks, by enumeration."""
    votes = {}
    for tree, weight in zip(members, weights):
        for span in tree_to_spans(tree):
            votes[span] = votes.get(span, 0) + weight
    scored = [(sum(votes.get(s, 0) for s in spans_of(node)), splits, node)
              for node, splits in all_trees(0, len(words))]
    top = max(score for score, _, _ in scored)
    optimal = [(splits, node) for score, splits, node in scored
               if abs(score - top) <= 1e-9 * max(1, sum(votes.values()))]
    pick = min if tie == "right" else max
    _, node = pick(optimal, key=lambda item: item[0])
    return top, to_brackets(node, words), len(optimal)


def random_tree(words, rng):
    nodes = list(all_trees(0, len(words)))
    node, _ = nodes[rng.randrange(len(nodes))]
    return brackets_to_tree(to_brackets(node, words))


@pytest.mark.parametrize("tie", TIE_RULES)
@pytest.mark.parametrize("length", range(2, 9))
def test_cky_finds_the_brute_force_tree(length, tie):
    rng = random.Random(length * 10 + len(tie))
    words = [f"w{i}" for i in range(length)]
    ties_seen = 0
    for trial in range(25):
        if trial % 2:
            # Equal votes from an even number of members: ties are common.
            members = [random_tree(words, rng)
                       for _ in range(rng.choice((2, 4)))]
            weights = [1] * len(members)
        else:
            members = [random_tree(words, rng)
                       for _ in range(rng.randint(1, 6))]
            weights = [rng.random() + 0.1 for _ in members]
        averaged = average_tree(words, members, weights, tie=tie)
        score, expected, optimal = brute_force(words, members, weights, tie)
        ties_seen += optimal > 1
        assert averaged.score == pytest.approx(score)
        assert averaged.brackets == expected, (trial, weights)
        # The votes are those of the spans of the tree returned.
        assert set(averaged.votes) == set(tree_to_spans(averaged.tree))
        assert sum(averaged.votes.values()) == pytest.approx(score)
    if length >= 3:
        assert ties_seen, "no case with several optimal trees"


def test_the_tie_rule_is_stated_and_flips():
    words = ["a", "b", "c"]
    members = [brackets_to_tree("((a b) c)"), brackets_to_tree("(a (b c))")]
    assert average_tree(words, members).brackets == "(a (b c))"
    assert average_tree(words, members, tie="right").brackets == "(a (b c))"
    assert average_tree(words, members, tie="left").brackets == "((a b) c)"
    # Float weights that tie up to rounding still tie.
    votes = {(0, 2): 0.1 + 0.2, (1, 3): 0.3, (0, 3): 1.0}
    assert best_splits(3, votes, "right")[0][0, 3] == 1
    assert best_splits(3, votes, "left")[0][0, 3] == 2


def test_agreeing_members_give_their_tree_with_every_vote():
    words = "the cat sat on the mat".split()
    tree = brackets_to_tree("((the cat) (sat (on (the mat))))")
    averaged = average_tree(words, [tree, tree, tree], weights=[1, 2, 0.5])
    assert averaged.brackets == tree_to_brackets(tree)
    assert averaged.total == 3.5
    assert all(v == 3.5 for v in averaged.votes.values())
    assert averaged.support((0, 2)) == 1.0
    # One word: the tree distances_to_tree gives it.
    one = average_tree(["x"], [distances_to_tree(["x"], [0.0])])
    assert one.tree == distances_to_tree(["x"], [0.0])
    assert one.votes == {}


def test_a_majority_span_wins_over_a_minority():
    words = "a b c d".split()
    members = [brackets_to_tree(t) for t in
               ("((a b) (c d))", "((a b) (c d))", "(a (b (c d)))")]
    averaged = average_tree(words, members)
    assert averaged.brackets == "((a b) (c d))"
    assert averaged.votes == {(0, 4): 3.0, (0, 2): 2.0, (2, 4): 3.0}
    # A weight can outvote the majority.
    heavy = average_tree(words, members, weights=[1, 1, 5])
    assert heavy.brackets == "(a (b (c d)))"


@pytest.mark.parametrize("weights, match", [
    ([1], "1 weight for 2 members"),
    ([1, -1], "non-negative"),
    ([1, float("nan")], "finite"),
    ([0, 0], "all 0"),
])
def test_bad_weights_are_one_line(weights, match):
    members = [brackets_to_tree("(a b)"), brackets_to_tree("(a b)")]
    with pytest.raises(ValueError, match=match) as error:
        average_tree(["a", "b"], members, weights)
    assert "\n" not in str(error.value)


def test_bad_trees_and_tie_rules_are_one_line():
    with pytest.raises(ValueError, match="different lengths"):
        span_votes([brackets_to_tree("(a b)"), brackets_to_tree("(a (b c))")])
    with pytest.raises(ValueError, match="Unknown tie rule 'middle'"):
        average_tree(["a", "b"], [brackets_to_tree("(a b)")], tie="middle")
    with pytest.raises(ValueError, match="leaves and the sentence 3 words"):
        average_tree(["a", "b", "c"], [brackets_to_tree("(a b)")])


class Distances:
    """A model of syntactic distances: `rising` parses left-branching,
    `flat` right-branching, `peak` splits after the first word pair."""

    distance_names = ["layer1/rising", "layer1/flat", "layer2/peak"]
    default_distance = "layer2/peak"

    def __init__(self, name="fake"):
        self.name = name
        self.reads = 0

    def sentence_distances(self, sentences, batch_size=64, progress=None):
        self.reads += 1
        out = {"layer1/rising": [], "layer1/flat": [], "layer2/peak": []}
        for s in sentences:
            out["layer1/rising"].append(np.arange(len(s), dtype=float))
            out["layer1/flat"].append(np.zeros(len(s)))
            peak = np.zeros(len(s))
            peak[min(2, len(s) - 1)] = 1.0
            out["layer2/peak"].append(peak)
        return out


def test_an_ensemble_of_model_distances_reads_each_model_once():
    model = Distances()
    ensemble = TreeEnsemble([(model, "all")], names=["fake"])
    assert [m.name for m in ensemble.members] == [
        "fake:layer1/rising", "fake:layer1/flat", "fake:layer2/peak"]
    (parsed,) = ensemble.parse([["a", "b", "c", "d"]])
    assert model.reads == 1
    # Every member's spans, counted: the winner has the most votes.
    members = [t[0] for t in ensemble.member_trees([["a", "b", "c", "d"]])]
    expected = average_tree(list("abcd"), members)
    assert parsed.brackets == expected.brackets
    assert parsed.votes == expected.votes


class RandomDistances:
    """Integer distances (many ties), seeded by the sentence; `gap=True`
    declares the gap decoder, as a `DistanceParser` does."""

    distance_names = ["a", "b"]
    default_distance = "a"

    def __init__(self, seed, gap=False):
        self.seed = seed
        if gap:
            self.default_decoder = "gap"

    def sentence_distances(self, sentences, batch_size=64, progress=None):
        out = {"a": [], "b": []}
        for s in sentences:
            rng = np.random.default_rng([self.seed, len(s), hash(s[0]) % 97])
            out["a"].append(rng.integers(0, 3, len(s)).astype(float))
            out["b"].append(rng.integers(0, 5, len(s)).astype(float))
        return out


@pytest.mark.parametrize("decoder", ["right", "left"])
@pytest.mark.parametrize("tie", ["right", "left"])
def test_parse_votes_the_spans_of_the_members_trees(decoder, tie):
    # `parse` reads each member's spans from its distances, without its
    # tree: the same votes, trees and scores as averaging the trees.
    ensemble = TreeEnsemble(
        [(RandomDistances(1), "all"), RandomDistances(2, gap=True),
         (RandomDistances(3), "b")], weights=[1, 0.5, 2, 1],
        decoder=decoder, tie=tie, names=["one", "gap", "three"])
    rng = np.random.default_rng(0)
    sentences = [[f"w{rng.integers(9)}" for _ in range(n)]
                 for n in list(range(1, 13)) * 3]
    parsed = ensemble.parse(sentences)
    expected = ensemble.averaged(sentences, ensemble.member_trees(sentences))
    for got, want in zip(parsed, expected):
        assert got.brackets == want.brackets
        assert got.votes == want.votes
        assert (got.score, got.total, got.splits) == (
            want.score, want.total, want.splits)


def test_ensemble_bad_input_is_one_line():
    model = Distances()
    with pytest.raises(ValueError, match="two members or more, got 1") as e:
        TreeEnsemble([model])
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="no distance 'layer9/forget'"):
        TreeEnsemble([(model, "layer9/forget"), model], names=["m", "n"])
    with pytest.raises(ValueError, match="1 weight for 2 members"):
        TreeEnsemble([model, (model, "layer1/flat")], weights=[1])
    with pytest.raises(ValueError, match="Unknown decoder"):
        TreeEnsemble([model, model], decoder="middle")


def test_brute_force_enumerates_catalan_many_trees():
    # The reference itself: C(n-1) binary trees of n words.
    assert [len(all_trees(0, n)) for n in range(1, 9)] == [
        1, 1, 2, 5, 14, 42, 132, 429]
    assert len({splits for _, splits in all_trees(0, 6)}) == 42
    assert list(itertools.islice(all_trees(0, 3), 2))[0][1] == (1, 2)


# --- weights fitted on gold trees ------------------------------------------
def _fitting_problem(count=40):
    """The first dev sentences of the WSJ sample, a member that parses them
    well (a binary tree holding every gold span), and two right-branching
    members that outvote it at weight 1."""
    from conftest import require_data
    from keras_ordered.datasets.treebank import load_treebank_split
    from keras_ordered.parsing import baseline_predictor
    from keras_ordered.parsing.ensemble import tree_from_splits

    records = load_treebank_split(require_data("wsj_sample", "mrg"),
                                  "dev")[0][:count]
    sentences = [list(r.words) for r in records]
    good = [tree_from_splits(words, best_splits(
        len(words), {tuple(span): 1.0 for span in r.spans})[0])
        for words, r in zip(sentences, records)]
    right = baseline_predictor("right-branching")(sentences)
    return records, [good, right, list(right)]


def test_fit_weights_raises_the_member_that_parses_well():
    from keras_ordered.parsing import evaluate_trees
    from keras_ordered.parsing import fit_weights

    records, members = _fitting_problem()
    words = [list(r.words) for r in records]

    def f1(weights):
        return evaluate_trees(records, [
            average_tree(w, [m[i] for m in members], weights).tree
            for i, w in enumerate(words)])["sentence_f1"]

    uniform, alone = f1(None), evaluate_trees(records, members[0])[
        "sentence_f1"]
    assert alone > uniform + 20  # the two right-branching votes win
    turns = []
    weights, fitted = fit_weights(records, members,
                                  progress=lambda *a: turns.append(a))
    # The figure is the averaged trees' with the returned weights...
    assert fitted == pytest.approx(f1(weights))
    # ...the good member now outweighs the two others together, and the
    # averaged trees are its own.
    assert weights[0] > sum(weights[1:])
    assert fitted == pytest.approx(alone)
    assert len(turns) >= len(members)
    # Starting where nothing can move keeps the start.
    assert fit_weights(records, members, start=weights)[0] == weights


def test_fit_weights_bad_input_is_one_line():
    from keras_ordered.parsing import fit_weights

    records, members = _fitting_problem(count=3)
    with pytest.raises(ValueError, match="two members or more, got 1"):
        fit_weights(records, members[:1])
    with pytest.raises(ValueError, match="Member 1 has 2 trees for 3"):
        fit_weights(records, [members[0], members[1][:2]])
    with pytest.raises(ValueError, match="finite and non-negative"):
        fit_weights(records, members, grid=(1, -1))


# --- smoothed votes ----------------------------------------------------------
def _normal_cdf(x):
    from math import erf, sqrt
    return 0.5 * (1.0 + np.vectorize(erf)(np.asarray(x) / sqrt(2.0)))


def test_smoothed_votes_are_the_share_of_noisy_trees_that_hold_a_span():
    # Three words, right decoder: the tree is ((a b) c) exactly when the
    # last distance is the largest (the first maximum wins), else
    # (a (b c)). Under noise of standard deviation s, by a numerical
    # integral independent of the sampler:
    #   P(((a b) c)) = E_z[Phi((d2 - d0)/s + z) Phi((d2 - d1)/s + z)].
    from keras_ordered.parsing import smoothed_votes

    distances = np.array([0.2, 0.9, 0.7])
    smoothing = 0.8
    scale = smoothing * distances.std()
    z = np.linspace(-8, 8, 4001)
    density = np.exp(-z ** 2 / 2) / np.sqrt(2 * np.pi)
    left = float(np.sum(
        density * _normal_cdf((distances[2] - distances[0]) / scale + z)
        * _normal_cdf((distances[2] - distances[1]) / scale + z)) * (z[1] - z[0]))
    votes = smoothed_votes(distances, smoothing=smoothing, samples=20000)
    assert votes[(0, 3)] == 1.0
    assert votes[(0, 2)] == pytest.approx(left, abs=0.015)
    assert votes[(1, 3)] == pytest.approx(1 - left, abs=0.015)
    assert 0.1 < left < 0.5  # a real share, not a sure tree


@pytest.mark.parametrize("decoder", ["right", "left", "gap"])
def test_no_smoothing_gives_the_members_tree_at_one_vote(decoder):
    from keras_ordered.parsing import smoothed_votes
    from keras_ordered.parsing.trees import distances_to_spans

    rng = np.random.default_rng(3)
    for n in range(1, 12):
        d = rng.integers(0, 4, n).astype(float)
        assert smoothed_votes(d, decoder) == {
            span: 1.0 for span in distances_to_spans(d, decoder)}
        # Constant distances have no spread: the noise cannot move them.
        flat = np.ones(n)
        assert smoothed_votes(flat, decoder, smoothing=1.0) == smoothed_votes(
            flat, decoder)


def test_a_smoothed_ensemble_trusts_members_far_from_a_tie():
    # Member "sure" parses ((a b) (c d)) by a wide margin; two members
    # "unsure" parse (a (b (c d))) on a near tie of their distances at
    # "b" and "c" (the other side of the tie is the sure member's tree).
    # Hit counts: the two outvote the one. Smoothed: their votes split
    # between their two near-tied trees, and the sure member's tree wins.
    class Fixed:
        distance_names = ["d"]

        def __init__(self, values):
            self.values = np.asarray(values, dtype=float)

        def sentence_distances(self, sentences, batch_size=64, progress=None):
            return {"d": [self.values for _ in sentences]}

    sure, unsure = Fixed([0.0, 0.0, 5.0, 0.0]), Fixed([0.0, 1.01, 1.0, 0.0])
    members = [sure, unsure, unsure]
    words = [["a", "b", "c", "d"]]
    hard = TreeEnsemble(members, names=["sure", "u1", "u2"])
    soft = TreeEnsemble(members, names=["sure", "u1", "u2"], smoothing=0.5,
                        samples=64)
    assert hard.parse(words)[0].brackets == "(a (b (c d)))"
    (parsed,) = soft.parse(words)
    assert parsed.brackets == "((a b) (c d))"
    # Each unsure member splits its vote between its two trees.
    votes = soft.member_votes(words)
    assert 0.2 < votes[1][0][(1, 4)] < 0.8
    assert votes[0][0] == {(0, 2): 1.0, (0, 4): 1.0, (2, 4): 1.0}
    # The averaged rows (what evaluate-parsing scores) use the same votes.
    (row,) = soft.rows(words)
    assert tree_to_brackets(row[3][0]) == "((a b) (c d))"


def test_smoothed_votes_do_not_depend_on_the_other_sentences():
    ensemble = TreeEnsemble([(RandomDistances(1), "all"), RandomDistances(2)],
                            names=["one", "two"], smoothing=0.3, seed=7)
    rng = np.random.default_rng(1)
    sentences = [[f"w{rng.integers(9)}" for _ in range(n)]
                 for n in (5, 9, 5, 12, 3)]
    together = ensemble.parse(sentences)
    for sentence, parsed in zip(sentences, together):
        (alone,) = ensemble.parse([sentence])
        assert (alone.brackets, alone.votes) == (parsed.brackets, parsed.votes)
    # Members draw different noise: their votes differ on the same values.
    twins = TreeEnsemble([RandomDistances(1), RandomDistances(1)],
                         names=["x", "y"], smoothing=0.5, samples=8)
    a, b = twins.member_votes(sentences)
    assert a != b


def test_fit_weights_takes_votes_as_it_takes_trees():
    from keras_ordered.parsing import fit_weights

    records, members = _fitting_problem(count=12)
    votes = [[{span: 1.0 for span in tree_to_spans(tree)} for tree in trees]
             for trees in members]
    assert fit_weights(records, votes) == fit_weights(records, members)


@pytest.mark.parametrize("kwargs, match", [
    ({"smoothing": -0.1}, "smoothing must be finite and non-negative"),
    ({"smoothing": float("nan")}, "smoothing must be finite"),
    ({"smoothing": 0.2, "samples": 0}, "samples must be a whole number"),
    ({"smoothing": 0.2, "samples": 2.5}, "samples must be a whole number"),
    ({"smoothing": 0.2, "seed": -1}, "seed must be a whole number of 0"),
    ({"seed": 1.5}, "seed must be a whole number of 0"),
    ({"seed": "1"}, "seed must be a whole number of 0"),
])
def test_bad_smoothing_is_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match) as error:
        TreeEnsemble([Distances(), Distances()], **kwargs)
    assert "\n" not in str(error.value)
