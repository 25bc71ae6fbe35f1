"""Tree averaging: the binary tree that most members' trees agree on.

An ensemble of unsupervised parsers (Shayegh, Cao and Mou, 2024,
"Ensemble Distillation for Unsupervised Constituency Parsing") gives each
sentence the binary tree whose spans carry the most votes: every member
(a model, or one distance of a model: an ON-LSTM layer and gate) parses
the sentence, each span of a member's tree gets that member's weight,
and CKY dynamic programming finds, among all binary trees of the
sentence, the one whose spans' summed votes are the largest (the
ensemble's "hit count" tree).

The tie rule, stated: where two splits of a span give the same best score
(within a relative tolerance of 1e-9, so that float weights summed in
another order still tie), `tie="right"` takes the split nearest the
span's start (towards right-branching, `(a (b c))`), and `tie="left"`
the one nearest its end (towards left-branching, `((a b) c)`). Read
top-down, the tree is the optimum whose split points, in pre-order, come
first (or, for `"left"`, last) in lexicographic order. With integer
votes ties are common; report both rules, so that the right-branching
bias of the parsers (Dyer, Melis and Blunsom, 2019) cannot hide in the
tie rule.

Plain NumPy and Python, like the rest of `keras_ordered.parsing`: no
model is imported (members are duck-typed: `sentence_distances`,
`distance_names`, `default_distance`).

Example:

```python
from keras_ordered.parsing import average_tree, brackets_to_tree
trees = [brackets_to_tree(t) for t in (
    "((the cat) (sat down))", "((the cat) (sat down))", "(the (cat (sat down)))")]
averaged = average_tree(["the", "cat", "sat", "down"], trees)
print(averaged.brackets)  # ((the cat) (sat down))
print(averaged.votes[(0, 2)])  # 2.0
```

Reference:
    Shayegh, Cao and Mou, 2024, "Ensemble Distillation for Unsupervised
    Constituency Parsing", ICLR.
"""

import collections.abc
import dataclasses
import math
import numbers

import numpy as np

from keras_ordered.parsing import trees as trees_lib

TIE_RULES = ("right", "left")
"""How `average_tree` breaks ties between equally good splits: towards
right-branching (`"right"`, the default, as the top-down decoder's first
maximum) or left-branching (`"left"`)."""

_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class AveragedTree:
    """An ensemble's tree of one sentence, with the support of its spans.

    Attributes:
        tree: the binary `UnlabeledTree` over the sentence's words.
        votes: dict `(start, end)` -> the summed weight of the members
            whose trees hold that span, for every span of `tree` of two
            words or more (end-exclusive).
        total: the summed weight of all members (a span every member
            holds has `votes == total`).
        score: the summed votes of the tree's spans (what CKY maximised).
        splits: dict `(start, end)` -> the split point of that span.
    """

    tree: object
    votes: dict
    total: float
    score: float
    splits: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def brackets(self):
        """The tree as a bracketed string (`tree_to_brackets`)."""
        return trees_lib.tree_to_brackets(self.tree)

    def support(self, span):
        """The share of the members' weight behind `span`, in [0, 1]."""
        return self.votes.get(tuple(span), 0.0) / self.total

    def voted_tree(self, words=None):
        """The tree with every constituent labelled by its votes out of
        the total (`"2/3"`; smoothed votes to two decimals, `"2.56/3"`),
        for drawings and labelled brackets.

        Args:
            words: the leaves to use (None: the tree's own).
        """
        words = list(trees_lib.leaves(self.tree) if words is None else words)
        labels = {span: f"{round(self.votes[span], 2):g}/{self.total:g}"
                  for span in self.splits}
        return tree_from_splits(words, self.splits, labels)


def check_tie(tie):
    """Returns `tie` if it is one of `TIE_RULES`; else a one-line
    ValueError naming them."""
    if tie not in TIE_RULES:
        raise ValueError(f"Unknown tie rule {tie!r}: choose one of "
                         f"{', '.join(map(repr, TIE_RULES))}.")
    return tie


def check_weights(weights, count):
    """`weights` as a list of `count` floats (None: all 1.0).

    Raises:
        ValueError: a count that differs, a negative, infinite or NaN
            weight, or weights that are all 0 (one line).
    """
    if weights is None:
        return [1.0] * count
    weights = [float(w) for w in weights]
    if len(weights) != count:
        given = "1 weight" if len(weights) == 1 else f"{len(weights)} weights"
        raise ValueError(f"{given} for {count} members: give one weight per "
                         "member.")
    for weight in weights:
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"Weights must be finite and non-negative, got "
                             f"{weight!r}.")
    if not any(weights):
        raise ValueError("The weights are all 0: give some member a weight.")
    return weights


def span_votes(trees, weights=None):
    """The members' votes for every span of two words or more.

    Args:
        trees: the members' binary trees of one sentence (`nltk.Tree`s
            with the same number of leaves).
        weights: one non-negative weight per tree (None: 1 each).

    Returns:
        dict `(start, end)` -> summed weight of the trees holding it.
    """
    trees = list(trees)
    if not trees:
        raise ValueError("No trees to average: give at least one.")
    weights = check_weights(weights, len(trees))
    lengths = {trees_lib.num_leaves(tree) for tree in trees}
    if len(lengths) != 1:
        raise ValueError(f"The trees have different lengths "
                         f"({sorted(lengths)} words): they must parse the "
                         "same sentence.")
    return _summed_votes([trees_lib.tree_to_spans(t) for t in trees],
                         weights)


def _summed_votes(span_sets, weights):
    """dict span -> the summed weights of the sets holding it; a member
    given as a mapping span -> vote (`smoothed_votes`) adds its weight
    times the span's vote."""
    votes = {}
    for spans, weight in zip(span_sets, weights):
        if isinstance(spans, collections.abc.Mapping):
            for span, value in spans.items():
                votes[span] = votes.get(span, 0.0) + weight * value
        else:
            for span in spans:
                votes[span] = votes.get(span, 0.0) + weight
    return votes


def _whole_number(value, what, least):
    """`value` as an int; else a one-line ValueError naming `what` (a
    bool, a fraction, a non-number or a number under `least`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or (
            int(value) != value or value < least):
        raise ValueError(f"{what} must be a whole number of {least} or "
                         f"more, got {value!r}.")
    return int(value)


def check_smoothing(smoothing, samples):
    """`(smoothing, samples)` as `(float, int)`; else a one-line
    ValueError (a negative or non-finite smoothing, fewer than one
    sample)."""
    smoothing = float(smoothing)
    if not math.isfinite(smoothing) or smoothing < 0:
        raise ValueError(f"The smoothing must be finite and non-negative, "
                         f"got {smoothing!r}.")
    return smoothing, _whole_number(samples, "samples", 1)


def smoothed_votes(distances, decoder="right", smoothing=0.0, samples=16,
                   seed=0):
    """One member's votes for the spans of one sentence.

    With `smoothing=0` (hit counts, as Shayegh et al.), each span of the
    member's tree gets 1. Otherwise the member's distances are decoded
    `samples` times, each time with Gaussian noise of standard deviation
    `smoothing` times the standard deviation of the sentence's distances,
    and each span gets the share of those trees that hold it: a member
    whose tree hangs on a near tie votes less for it. The noise depends
    only on `seed` and the sentence's length, so a sentence gets the
    same votes whatever else is parsed with it.

    Args:
        distances: 1-D array-like of finite floats, one per word.
        decoder: the member's top-down decoder (`distances_to_spans`).
        smoothing: the noise's scale, relative to the distances' spread.
        samples: the noisy decodings averaged (with `smoothing > 0`).
        seed: an int, or a tuple of ints (a member's index beside the
            ensemble's seed).

    Returns:
        dict `(start, end)` -> vote in (0, 1], for spans of two words or
        more (the whole sentence's included).

    Example:

    >>> smoothed_votes([0.0, 0.1, 0.9])
    {(0, 2): 1.0, (0, 3): 1.0}
    >>> votes = smoothed_votes([0.0, 0.5, 0.5], smoothing=1.0, samples=8)
    >>> sorted(votes)  # both trees of three words, each in a share
    [(0, 2), (0, 3), (1, 3)]
    """
    smoothing, samples = check_smoothing(smoothing, samples)
    values = np.asarray(distances, dtype="float64")
    if smoothing == 0.0:
        return dict.fromkeys(sorted(trees_lib.distances_to_spans(
            values, decoder=decoder)), 1.0)
    rng = np.random.default_rng((*np.atleast_1d(seed).tolist(), len(values)))
    noise = rng.standard_normal((samples, len(values)))
    scale = smoothing * float(values.std())
    votes = {}
    for row in noise:
        for span in trees_lib.distances_to_spans(values + scale * row,
                                                 decoder=decoder):
            votes[span] = votes.get(span, 0) + 1
    return {span: count / samples for span, count in sorted(votes.items())}


def best_splits(length, votes, tie="right"):
    """CKY over the spans of a sentence: the best tree's split points.

    Args:
        length: the number of words.
        votes: dict `(start, end)` -> vote (spans absent: 0).
        tie: `"right"` or `"left"` (see the module's docstring).

    Returns:
        `(splits, score)`: dict `(start, end)` -> the split `k` of that
        span in the best tree (its parts `[start, k)` and `[k, end)`), for
        every span of the best tree of two words or more; and the tree's
        summed votes.
    """
    check_tie(tie)
    n = length
    vote = np.zeros((n + 1, n + 1))
    for (start, end), value in votes.items():
        vote[start, end] = value
    tolerance = _TOLERANCE * max(1.0, float(np.abs(vote).sum()))
    best = np.zeros((n + 1, n + 1))
    choice = np.zeros((n + 1, n + 1), dtype=np.int64)
    for width in range(2, n + 1):
        starts = np.arange(0, n - width + 1)
        ends = starts + width
        # split[s, m] = starts[s] + 1 + m, for m in 0 .. width - 2
        splits = starts[:, None] + np.arange(1, width)[None, :]
        totals = best[starts[:, None], splits] + best[splits, ends[:, None]]
        top = totals.max(axis=1)
        near = totals >= (top - tolerance)[:, None]
        if tie == "right":
            pick = near.argmax(axis=1)
        else:
            pick = width - 2 - near[:, ::-1].argmax(axis=1)
        choice[starts, ends] = splits[np.arange(len(starts)), pick]
        best[starts, ends] = vote[starts, ends] + top
    splits, stack = {}, [(0, n)] if n > 1 else []
    while stack:
        start, end = stack.pop()
        k = int(choice[start, end])
        splits[start, end] = k
        for part in ((start, k), (k, end)):
            if part[1] - part[0] > 1:
                stack.append(part)
    return splits, float(best[0, n])


def tree_from_splits(words, splits, labels=None):
    """The binary `UnlabeledTree` of `words` with the given split points
    (`best_splits`), built without recursion; `labels` (dict span ->
    label) replaces the label `X` of some constituents."""
    n = len(words)
    make = trees_lib.UnlabeledTree
    if n == 1:
        return make(trees_lib.UNLABELED, [words[0]])  # as distances_to_tree
    built = {}
    for start, end in sorted(splits, key=lambda span: span[1] - span[0]):
        k = splits[start, end]
        parts = [built.pop(part) if part in built else words[part[0]]
                 for part in ((start, k), (k, end))]
        label = (labels or {}).get((start, end), trees_lib.UNLABELED)
        built[start, end] = make(label, parts)
    return built[0, n]


def average_tree(words, trees, weights=None, tie="right"):
    """The binary tree of `words` with the most member votes (CKY).

    Args:
        words: the sentence's words (its leaves).
        trees: the members' binary trees of the sentence, one per member.
        weights: one non-negative weight per member (None: 1 each).
        tie: `"right"` (the default) or `"left"`: how equally good splits
            are chosen (see the module's docstring).

    Returns:
        An `AveragedTree`: the tree, and each of its spans' votes.

    Example:

    ```python
    from keras_ordered.parsing import average_tree, brackets_to_tree
    members = [brackets_to_tree("((a b) c)"), brackets_to_tree("(a (b c))")]
    assert average_tree(["a", "b", "c"], members).brackets == "(a (b c))"
    assert average_tree(["a", "b", "c"], members, tie="left").brackets == \\
        "((a b) c)"
    ```
    """
    words = trees_lib._check_words(words)
    trees = list(trees)
    votes = span_votes(trees, weights)
    if trees_lib.num_leaves(trees[0]) != len(words):
        raise ValueError(f"The trees have {trees_lib.num_leaves(trees[0])} "
                         f"leaves and the sentence {len(words)} words.")
    return _voted_tree(words, votes, check_weights(weights, len(trees)), tie)


def _voted_tree(words, votes, weights, tie):
    """The `AveragedTree` of `words` from the members' summed `votes`."""
    splits, score = best_splits(len(words), votes, tie)
    return AveragedTree(
        tree=tree_from_splits(list(words), splits),
        votes={span: votes.get(span, 0.0) for span in splits},
        total=float(sum(weights)), score=score, splits=splits)


WEIGHT_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
"""The weights `fit_weights` tries for each member."""


def fit_weights(records, member_trees, grid=WEIGHT_GRID, rounds=3,
                tie="right", start=None, min_gain=0.05, progress=None):
    """Member weights chosen on gold trees, by coordinate ascent on
    sentence F1.

    Each round visits the members in order; for each, every weight of
    `grid` is tried with the others held, and the best is kept if it
    raises the averaged trees' sentence F1 by `min_gain` points or more.
    It stops after `rounds` rounds, or after a round that kept nothing.
    A local optimum, not the global one. Fit on the development split and
    report on another: the weights have seen the gold trees of `records`.

    Args:
        records: the gold sentences (`TreebankSentence`s) to fit on.
        member_trees: one list of trees per member, one tree per record
            (`TreeEnsemble.member_trees`); or of vote dicts, span -> vote
            (`TreeEnsemble.member_votes`, for a smoothed ensemble).
        grid: the weights tried, non-negative.
        rounds: the most rounds over the members.
        tie: the tie rule of the averaged trees.
        start: the weights to start from (None: 1 each).
        min_gain: the least gain in sentence F1 (points) that moves a
            weight.
        progress: optional function called with `(member, weights,
            sentence_f1)` after each member's turn.

    Returns:
        `(weights, sentence_f1)`: the weights (a list of floats) and the
        averaged trees' sentence F1 on `records` with them.

    Raises:
        ValueError: fewer than two members, a member without one tree per
            record, or a negative or non-finite weight in `grid` (one
            line each).

    Example:

    ```python
    # needs: shared data (the WSJ sample)
    from keras_ordered.datasets.treebank import load_treebank_split
    from keras_ordered.parsing import baseline_predictor, fit_weights
    dev, _, _ = load_treebank_split("../shared/data/wsj_sample/mrg", "dev")
    words = [list(r.words) for r in dev[:100]]
    members = [baseline_predictor(name)(words)  # or a TreeEnsemble's
               for name in ("left-branching", "balanced", "right-branching")]
    weights, f1 = fit_weights(dev[:100], members)  # member_trees(dev)
    assert weights[2] > weights[0]  # English branches to the right
    ```
    """
    from keras_ordered.parsing.evaluate import evaluate_trees

    check_tie(tie)
    records = list(records)
    member_trees = [list(trees) for trees in member_trees]
    count = len(member_trees)
    if count < 2:
        raise ValueError(f"Fitting weights needs two members or more, got "
                         f"{count}.")
    for member, trees in enumerate(member_trees):
        if len(trees) != len(records):
            raise ValueError(f"Member {member} has {len(trees)} trees for "
                             f"{len(records)} sentences: give one per "
                             "sentence.")
    grid = sorted({float(value) for value in grid})
    for value in grid:
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"Weights must be finite and non-negative, got "
                             f"{value!r} in the grid.")
    weights = check_weights(start, count)
    words = [list(record.words) for record in records]
    spans = [[entry if isinstance(entry, collections.abc.Mapping)
              else trees_lib.tree_to_spans(entry) for entry in trees]
             for trees in member_trees]

    def score(candidate):
        trees = []
        for i, sentence in enumerate(words):
            votes = _summed_votes([spans[m][i] for m in range(count)],
                                  candidate)
            splits, _ = best_splits(len(sentence), votes, tie)
            trees.append(tree_from_splits(sentence, splits))
        return evaluate_trees(records, trees)["sentence_f1"]

    best = score(weights)
    for _ in range(rounds):
        moved = False
        for member in range(count):
            tried = {}
            for value in grid:
                candidate = list(weights)
                candidate[member] = value
                if value != weights[member] and any(candidate):
                    tried[value] = score(candidate)
            if tried:
                value = max(tried, key=lambda v: (tried[v], -abs(v - 1)))
                if tried[value] >= best + min_gain:
                    weights[member], best, moved = value, tried[value], True
            if progress is not None:
                progress(member, list(weights), best)
        if not moved:
            break
    return weights, best


def split_member(spec):
    """`"MODEL[:DISTANCE]"` -> `(model, distance or None)`.

    A member of an ensemble named as text: a model (a `.keras` path or a
    shipped name) and one of its distances (`"onlstm_ptb_small:
    layer2/forget"`), or `"all"` of them (`"onlstm_ptb_small:all"`).

    Example:

    >>> split_member("onlstm_ptb_small:layer2/forget")
    ('onlstm_ptb_small', 'layer2/forget')
    >>> split_member("runs/prpn/model.keras")
    ('runs/prpn/model.keras', None)
    """
    name, sep, distance = str(spec).rpartition(":")
    if sep and name and distance:
        return name, distance
    return str(spec), None


@dataclasses.dataclass(frozen=True)
class Member:
    """One member of a `TreeEnsemble`: a model and one of its distances.

    Attributes:
        model: a model of syntactic distances (`sentence_distances`).
        distance: the distance's name (`"layer2/forget"`).
        name: what to call the member in messages (`"onlstm_ptb_small:
            layer2/forget"`).
    """

    model: object
    distance: str
    name: str


class TreeEnsemble:
    """Parses with several members and averages their trees (CKY).

    Members are models of syntactic distances, or pairs `(model,
    distance)`: one distance of a model (an ON-LSTM layer and gate), or
    `"all"` for every distance of the model. Each member reads the words
    its own way (its own vocabulary), parses with the top-down decoder,
    and votes for its tree's spans with its weight.

    Args:
        members: list of models, `(model, distance)` pairs or `Member`s
            (at least two members in all, once `"all"` is expanded).
        weights: one non-negative weight per member (None: 1 each).
        decoder: the top-down decoder of the language-model members,
            `"right"` or `"left"`; a member whose model has a decoder of
            its own (`default_decoder`: a `DistanceParser`'s `"gap"`)
            always parses with it.
        tie: the tie rule of the averaging, `"right"` or `"left"`.
        names: optional name per entry of `members`, for messages.
        smoothing: 0 (the default: hit counts, as Shayegh et al.) or the
            scale of the noise under which each member votes for a span
            with the share of its noisy trees that hold it
            (`smoothed_votes`).
        samples: the noisy decodings per member and sentence (with
            `smoothing > 0`).
        seed: the noise's seed; member `i` draws from `(seed, i)`.

    Example:

    ```python
    ensemble = keras_ordered.parsing.TreeEnsemble([
        keras_ordered.saving.load_shipped("prpn_ptb_quick"),
        (keras_ordered.saving.load_shipped("onlstm_ptb_small"), "layer2/forget"),
    ])
    (parsed,) = ensemble.parse([["The", "cat", "sat", "on", "the", "mat", "."]])
    print(parsed.brackets, parsed.votes)
    ```

    Reference:
        Shayegh, Cao and Mou, 2024, "Ensemble Distillation for Unsupervised
        Constituency Parsing", ICLR.
    """

    def __init__(self, members, weights=None, decoder="right", tie="right",
                 names=None, smoothing=0.0, samples=16, seed=0):
        from keras_ordered.parsing.evaluate import check_distance_model

        trees_lib.check_decoder(decoder)
        check_tie(tie)
        members = list(members)
        names = list(names) if names is not None else [None] * len(members)
        if len(names) != len(members):
            raise ValueError("Give one name per member.")
        expanded = []
        for entry, label in zip(members, names):
            if isinstance(entry, Member):
                expanded.append(entry)
                continue
            model, distance = (entry if isinstance(entry, tuple)
                               else (entry, None))
            label = label or getattr(model, "name", type(model).__name__)
            available = check_distance_model(model)
            if distance == "all":
                chosen = list(available)
            else:
                if distance is None:
                    distance = (getattr(model, "default_distance", None)
                                or available[0])
                if distance not in available:
                    raise ValueError(
                        f"{label} has no distance {distance!r}; available: "
                        f"{', '.join(available)} (or 'all').")
                chosen = [distance]
            expanded.extend(Member(model, name, f"{label}:{name}")
                            for name in chosen)
        if len(expanded) < 2:
            raise ValueError(
                f"An ensemble needs two members or more, got "
                f"{len(expanded)}: add a model, or a distance of one "
                "(MODEL:DISTANCE, MODEL:all).")
        self.members = expanded
        self.weights = check_weights(weights, len(expanded))
        self.decoder = decoder
        self.tie = tie
        self.smoothing, self.samples = check_smoothing(smoothing, samples)
        self.seed = _whole_number(seed, "The seed", 0)

    def member_distances(self, sentences, batch_size=64, progress=None):
        """Every member's distances: a list (one per member) of lists of
        1-D arrays, one per sentence. Each model reads the sentences once,
        for all its distances. `sentences` are word lists (read as
        written) or treebank records (`TreebankSentence`, looked up
        exactly), as `model_distances`."""
        from keras_ordered.parsing.evaluate import model_distances

        records = list(sentences)
        by_model = {}
        for member in self.members:
            by_model.setdefault(id(member.model), (member.model, []))[1].append(
                member.distance)
        distances = {}
        for key, (model, names) in by_model.items():
            distances[key] = model_distances(
                records, model, names=sorted(set(names)),
                batch_size=batch_size, progress=progress)
        return [distances[id(member.model)][member.distance]
                for member in self.members]

    def member_trees(self, sentences, batch_size=64, progress=None,
                     decoder=None, distances=None):
        """Every member's trees: a list (one per member) of lists of trees.

        Args:
            sentences: word lists or treebank records (`member_distances`).
            batch_size, progress: as `member_distances`.
            decoder: the language-model members' decoder (None: the
                ensemble's); see `member_decoder`.
            distances: the result of `member_distances`, to decode the
                same pass again (None: the members read the sentences).
        """
        words = [list(r.words) if hasattr(r, "words") else list(r)
                 for r in sentences]
        if distances is None:
            distances = self.member_distances(sentences, batch_size, progress)
        return [[trees_lib.distances_to_tree(
                    w, d, decoder=self.member_decoder(member, decoder))
                 for w, d in zip(words, values)]
                for member, values in zip(self.members, distances)]

    def member_votes(self, sentences, batch_size=64, progress=None,
                     decoder=None, distances=None):
        """Every member's votes: a list (one per member) of lists (one per
        sentence) of dicts span -> vote (`smoothed_votes`, with the
        ensemble's smoothing). Arguments as `member_trees`."""
        if distances is None:
            distances = self.member_distances(sentences, batch_size, progress)
        return [[smoothed_votes(d, self.member_decoder(member, decoder),
                                self.smoothing, self.samples,
                                (self.seed, index))
                 for d in values]
                for index, (member, values) in enumerate(
                    zip(self.members, distances))]

    def averaged(self, words, member_trees, tie=None):
        """The averaged tree of each sentence (`average_tree`) from the
        members' trees (`member_trees`), with tie rule `tie` (None: the
        ensemble's): hit counts, whatever the ensemble's smoothing."""
        return [average_tree(w, [trees[i] for trees in member_trees],
                             self.weights, tie or self.tie)
                for i, w in enumerate(words)]

    def rows(self, sentences, decoders=None, ties=None, batch_size=64,
             progress=None, distances=None):
        """The trees of each member and of the ensemble, per decoder and
        tie rule, from one reading of the sentences.

        What `keras-ordered evaluate-parsing --ensemble` and
        `benchmarks/ensemble_trees.py` score, so that the bias of the
        language models' decoder and of the tie rule shows (Dyer et al.,
        2019).

        Args:
            sentences: word lists or treebank records.
            decoders: the language-model members' decoders (None: the
                ensemble's).
            ties: the tie rules (None: the ensemble's).
            batch_size, progress: as `member_distances`.
            distances: the result of `member_distances`, to score the same
                pass again (None: the members read the sentences).

        Returns:
            A list of `(decoder, tie, member_trees, averaged_trees)`, one
            per decoder and tie rule: `member_trees` one list per member,
            `averaged_trees` the ensemble's trees (`nltk.Tree`s, from the
            members' votes with the ensemble's smoothing).
        """
        words = [list(r.words) if hasattr(r, "words") else list(r)
                 for r in sentences]
        if distances is None:
            distances = self.member_distances(sentences, batch_size,
                                              progress)
        rows = []
        for decoder in decoders or [self.decoder]:
            trees = self.member_trees(sentences, decoder=decoder,
                                      distances=distances)
            votes = self.member_votes(sentences, decoder=decoder,
                                      distances=distances)
            for tie in ties or [self.tie]:
                rows.append((decoder, tie, trees, [
                    parsed.tree for parsed in self._averaged_votes(
                        words, votes, tie)]))
        return rows

    def _averaged_votes(self, words, member_votes, tie):
        """The `AveragedTree` of each sentence from the members' votes."""
        return [_voted_tree(w, _summed_votes([v[i] for v in member_votes],
                                             self.weights),
                            self.weights, tie)
                for i, w in enumerate(words)]

    def member_decoder(self, member, decoder=None):
        """The decoder of a member: its model's own (`default_decoder`),
        else `decoder` (None: the ensemble's)."""
        return (getattr(member.model, "default_decoder", None)
                or decoder or self.decoder)

    def parse(self, sentences, batch_size=64, progress=None):
        """The averaged tree of each sentence.

        Args:
            sentences: list of word lists (or treebank records).
            batch_size: sentences per forward pass of each model.
            progress: optional function called with the sentences of each
                forward pass (of every model).

        Returns:
            A list of `AveragedTree`, one per sentence.
        """
        words = [list(r.words) if hasattr(r, "words") else list(r)
                 for r in sentences]
        # Each member's votes straight from its distances (with no
        # smoothing, the spans of its trees, without building them).
        votes = self.member_votes(sentences, batch_size, progress)
        return self._averaged_votes(words, votes, self.tie)

    def predictor(self, batch_size=64, progress=None):
        """A `predict` function (word lists -> trees), as
        `distance_predictor`'s, for `evaluate_trees` and the baselines'
        table."""
        def predict(sentences):
            return [parsed.tree for parsed in
                    self.parse(sentences, batch_size, progress)]

        return predict
