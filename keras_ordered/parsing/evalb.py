"""EVALB: labelled bracketing scores of parsed trees, as the C program gives them.

A Python implementation, written from the documentation of EVALB (Sekine &
Collins, 1997: its README and parameter files), of the scorer every
supervised constituency parsing paper reports. It reproduces the report of
the C program on EVALB's own sample (`sample.gld`, `sample.tst` with
`sample.prm` give the figures of `sample.rsl`, to the last digit).

The semantics:

- The gold and test files hold one tree per line (a line may hold several
  bracketings, which then form one sentence); line `i` of one is compared
  with line `i` of the other. An empty test line is a parse failure: the
  sentence is *skipped* (status 2).
- Function tags and indices are stripped from every label (`NP-SBJ-1`,
  `NP=2` -> `NP`; a label that begins with a dash, `-NONE-`, is kept).
- A node whose label is a `DELETE_LABEL` is removed: a preterminal with its
  word (punctuation, `-NONE-` traces), a constituent with its bracket only
  (its children stay). Constituents left dominating no word are removed
  too. An unlabelled bracket (the `( (S ...))` top of `.mrg` files) is
  removed like `TOP`.
- Preterminals (a tag over one word) are not brackets. Every other node is
  a bracket `(label, start, end)` over the words that are left; brackets
  are compared as multisets (a duplicated bracket matches only as many
  times as the other side has it), labels ignored when `LABELED 0`, and
  equal under `EQ_LABEL` (non-directional).
- A sentence whose gold and test words differ in number or (outside
  `EQ_WORD` pairs) in spelling is an *error* sentence (status 1); after
  `MAX_ERROR` of them the evaluation stops. Error and skipped sentences are
  left out of every total.
- A sentence's length counts its words whose tag is not a
  `DELETE_LABEL_FOR_LENGTH`; the second summary keeps the sentences of
  length <= `CUTOFF_LEN`.
- Crossing brackets: test brackets that cross a gold bracket (overlap it
  without either containing the other). Tagging accuracy: the words left
  whose test tag equals (`EQ_LABEL`) the gold tag.
- `QUOTE_LABEL` (the 2006 update, `new.prm`): when deleting labels leaves
  the two sides with different numbers of words only because one side
  tagged a word with a deleted label and the other did not, both tags being
  `QUOTE_LABEL`s, the word is kept on both sides.

Plain Python: nothing here imports nltk at module level, a model or
TensorFlow. `nltk.Tree` objects are accepted by `evaluate_trees`.

Reference:
    Sekine & Collins, 1997, EVALB, https://nlp.cs.nyu.edu/evalb/ ;
    Collins, 1997, "Three Generative, Lexicalised Models for Statistical
    Parsing", ACL.
"""

import collections
import dataclasses
import os
import re

STATUS_OK = 0
"""Status of a sentence that was scored."""
STATUS_ERROR = 1
"""Status of an error sentence: gold and test words differ (length or spelling)."""
STATUS_SKIPPED = 2
"""Status of a skipped sentence: no test tree (a parse failure)."""

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_FUNCTION_TAG = re.compile(r"[-=]")


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter (`.prm`) file.

    The defaults are those of `COLLINS.prm`, the standard labelled-bracket
    settings of WSJ parsing papers.

    Args:
        debug: int, `DEBUG` (0: none; 1 or more: `format_report` adds each
            error sentence's reason). Defaults to 0.
        max_error: int, `MAX_ERROR`: the evaluation stops when this many
            error sentences are counted (0: no limit). Defaults to 10.
        cutoff_len: int, `CUTOFF_LEN`: the second summary keeps sentences
            of at most this length. Defaults to 40.
        labeled: bool, `LABELED`: whether a bracket must have the gold
            label to match. Defaults to `True`.
        delete_labels: frozenset of str, `DELETE_LABEL` lines. Defaults to
            `TOP -NONE- , : `` '' .`.
        delete_labels_for_length: frozenset of str,
            `DELETE_LABEL_FOR_LENGTH` lines. Defaults to `-NONE-`.
        eq_labels: tuple of `(label, label)` pairs, `EQ_LABEL` lines.
            Defaults to `(("ADVP", "PRT"),)`.
        eq_words: tuple of `(word, word)` pairs, `EQ_WORD` lines. Defaults
            to none.
        quote_labels: frozenset of str, `QUOTE_LABEL` lines. Defaults to
            none.

    Example:

    ```python
    from keras_ordered.parsing import evalb
    unlabeled = evalb.EvalbParams(labeled=False)
    assert "TOP" in unlabeled.delete_labels
    ```
    """

    debug: int = 0
    max_error: int = 10
    cutoff_len: int = 40
    labeled: bool = True
    delete_labels: frozenset = frozenset(
        ["TOP", "-NONE-", ",", ":", "``", "''", "."]
    )
    delete_labels_for_length: frozenset = frozenset(["-NONE-"])
    eq_labels: tuple = (("ADVP", "PRT"),)
    eq_words: tuple = ()
    quote_labels: frozenset = frozenset()

    def __post_init__(self):
        for name in ("debug", "max_error", "cutoff_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(
                    f"`{name}` must be an integer, got {value!r}."
                )
        for name in ("delete_labels", "delete_labels_for_length", "quote_labels"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(
                    f"`{name}` must be a collection of labels, got the string "
                    f"{value!r}: pass e.g. [{value!r}]."
                )
            object.__setattr__(self, name, frozenset(value))
        for name in ("eq_labels", "eq_words"):
            pairs = tuple(tuple(pair) for pair in getattr(self, name))
            for pair in pairs:
                if len(pair) != 2:
                    raise ValueError(
                        f"`{name}` must hold pairs, got {pair!r}."
                    )
            object.__setattr__(self, name, pairs)
        object.__setattr__(self, "labeled", bool(self.labeled))


COLLINS_PARAMS = EvalbParams()
"""The parameters of EVALB's `COLLINS.prm` (the default)."""

_INT_KEYS = {"DEBUG": "debug", "MAX_ERROR": "max_error", "CUTOFF_LEN": "cutoff_len"}
_LABEL_KEYS = {
    "DELETE_LABEL": "delete_labels",
    "DELETE_LABEL_FOR_LENGTH": "delete_labels_for_length",
    "QUOTE_LABEL": "quote_labels",
}
_PAIR_KEYS = {"EQ_LABEL": "eq_labels", "EQ_WORD": "eq_words"}


def load_params(path):
    """Reads an EVALB parameter (`.prm`) file.

    Lines are `KEY VALUE...`; blank lines and lines starting with `#` are
    comments. Keys: `DEBUG`, `MAX_ERROR`, `CUTOFF_LEN`, `LABELED` (0 or 1),
    `DELETE_LABEL`, `DELETE_LABEL_FOR_LENGTH`, `QUOTE_LABEL` (one label per
    line, repeated), `EQ_LABEL` and `EQ_WORD` (two per line). A key the file
    does not set keeps the default of `EvalbParams` (`COLLINS.prm`'s),
    except the label lists and pairs, which are empty when the file has
    none of their lines.

    Args:
        path: path of the `.prm` file.

    Returns:
        An `EvalbParams`.

    Raises:
        ValueError: the file is missing, or a line is not a known
            parameter with valid values (the message names the line).

    Example:

    ```python
    # needs: the EVALB parameter files of the shared data
    from keras_ordered.parsing import evalb
    params = evalb.load_params("../shared/data/evalb/COLLINS.prm")
    assert params == evalb.COLLINS_PARAMS
    ```
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(
            f"No EVALB parameter file at {path!r}: pass the path of a .prm "
            "file such as COLLINS.prm."
        )
    values = {}
    lists = {name: [] for name in list(_LABEL_KEYS.values()) + list(_PAIR_KEYS.values())}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            key, args = fields[0], fields[1:]
            where = f"{path}, line {number}"
            if key in _INT_KEYS or key == "LABELED":
                if len(args) != 1 or not re.fullmatch(r"-?\d+", args[0]):
                    raise ValueError(
                        f"{where}: {key} takes one integer, got {line.strip()!r}."
                    )
                value = int(args[0])
                if key == "LABELED":
                    if value not in (0, 1):
                        raise ValueError(
                            f"{where}: LABELED is 0 (unlabelled) or 1 "
                            f"(labelled), got {value}."
                        )
                    values["labeled"] = bool(value)
                else:
                    values[_INT_KEYS[key]] = value
            elif key in _LABEL_KEYS:
                if len(args) != 1:
                    raise ValueError(
                        f"{where}: {key} takes one label, got {line.strip()!r}."
                    )
                lists[_LABEL_KEYS[key]].append(args[0])
            elif key in _PAIR_KEYS:
                if len(args) != 2:
                    raise ValueError(
                        f"{where}: {key} takes two values, got {line.strip()!r}."
                    )
                lists[_PAIR_KEYS[key]].append(tuple(args))
            else:
                known = sorted(list(_INT_KEYS) + ["LABELED"] + list(_LABEL_KEYS) + list(_PAIR_KEYS))
                raise ValueError(
                    f"{where}: unknown parameter {key!r}; known: "
                    f"{', '.join(known)}."
                )
    return EvalbParams(**values, **lists)


def _resolve_params(params):
    if params is None:
        return COLLINS_PARAMS
    if isinstance(params, EvalbParams):
        return params
    if isinstance(params, (str, os.PathLike)):
        return load_params(params)
    raise ValueError(
        f"`params` must be an EvalbParams, the path of a .prm file or None "
        f"(COLLINS.prm), got {params!r}."
    )


def strip_label(label):
    """A label without its function tags and indices (EVALB's rule).

    Args:
        label: a Treebank label (`"NP-SBJ-1"`, `"NP=2"`, `"-NONE-"`).

    Returns:
        The part before the first `-` or `=` (`"NP"`), or the label itself
        when it begins with a dash.

    Example:

    ```python
    from keras_ordered.parsing import evalb
    assert evalb.strip_label("NP=2") == "NP"
    ```
    """
    if label.startswith("-"):
        return label
    return _FUNCTION_TAG.split(label)[0]


# ---------------------------------------------------------------------------
# Reading trees.


class _Tree:
    """A sentence as EVALB sees it: its leaves and its constituents."""

    __slots__ = ("words", "tags", "nodes")

    def __init__(self):
        self.words = []
        self.tags = []
        self.nodes = []  # (label, first leaf, end leaf), preorder


def parse_bracketed(text):
    """Reads one line of an EVALB file into `(words, tags, constituents)`.

    Args:
        text: a bracketed tree (`"(S (NP (DT the) (NN cat)) (VBD sat))"`),
            or several side by side; labels are kept as written.

    Returns:
        A tuple `(words, tags, constituents)`: the words, their POS tags,
        and the non-preterminal nodes as `(label, start, end)` over word
        indices (end exclusive), in depth-first order.

    Raises:
        ValueError: unbalanced brackets, or a word that is not alone under
            a POS tag.

    Example:

    ```python
    from keras_ordered.parsing import evalb
    words, tags, nodes = evalb.parse_bracketed("(S (NP (DT the) (NN cat)) (VBD sat))")
    assert nodes == [("S", 0, 3), ("NP", 0, 2)]
    ```
    """
    tree = _parse(text)
    return list(tree.words), list(tree.tags), list(tree.nodes)


def _parse(text):
    tokens = _TOKEN.findall(text)
    tree = _Tree()
    stack = []  # [label, first word, words under it, has subtrees, slot]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "(":
            label = ""
            if i + 1 < len(tokens) and tokens[i + 1] not in ("(", ")"):
                label = tokens[i + 1]
                i += 1
            stack.append([label, len(tree.words), [], False, len(tree.nodes)])
            tree.nodes.append(None)  # filled when closed: preorder
        elif token == ")":
            if not stack:
                raise ValueError(
                    f"Unbalanced brackets (a ')' closes nothing) in {text.strip()!r}."
                )
            label, start, atoms, has_subtrees, slot = stack.pop()
            if atoms:
                if has_subtrees or len(atoms) != 1:
                    raise ValueError(
                        f"Word(s) {' '.join(atoms)!r} under {label!r} are not "
                        "alone under a POS tag in "
                        f"{text.strip()!r}: every word needs its own "
                        "preterminal, e.g. (NN word)."
                    )
                tree.words.append(atoms[0])
                tree.tags.append(label)
            else:
                tree.nodes[slot] = (label, start, len(tree.words))
            if stack:
                stack[-1][3] = True
        else:
            if not stack:
                raise ValueError(
                    f"Word {token!r} outside any bracket in {text.strip()!r}."
                )
            stack[-1][2].append(token)
        i += 1
    if stack:
        raise ValueError(
            f"Unbalanced brackets ({len(stack)} left open) in {text.strip()!r}."
        )
    tree.nodes = [node for node in tree.nodes if node is not None]
    return tree


def _from_nltk(tree):
    import nltk

    result = _Tree()

    def visit(node):
        if isinstance(node, str):
            raise ValueError(
                f"Word {node!r} is not under a POS tag: every word of a tree "
                "passed to EVALB needs its own preterminal, e.g. (NN word)."
            )
        if len(node) == 1 and isinstance(node[0], str):
            result.words.append(node[0])
            result.tags.append(node.label())
            return
        start = len(result.words)
        index = len(result.nodes)
        result.nodes.append(None)
        for child in node:
            if isinstance(child, str):
                raise ValueError(
                    f"Word {child!r} sits under {node.label()!r} beside other "
                    "children: every word needs its own preterminal."
                )
            visit(child)
        result.nodes[index] = (node.label(), start, len(result.words))

    if not isinstance(tree, nltk.Tree):
        raise ValueError(f"Expected an nltk.Tree, got {tree!r}.")
    visit(tree)
    return result


def _as_tree(item, side, index):
    if item is None:
        return None
    if isinstance(item, str):
        if not item.strip():
            return None
        try:
            return _parse(item)
        except ValueError as error:
            raise ValueError(f"{side} sentence {index}: {error}") from None
    try:
        return _from_nltk(item)
    except ValueError as error:
        raise ValueError(f"{side} sentence {index}: {error}") from None


# ---------------------------------------------------------------------------
# Scoring.


def _equivalence(pairs):
    """Union-find over the pairs: maps each member to a representative."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


class _Scorer:
    def __init__(self, params):
        self.params = params
        self.labels = _equivalence(params.eq_labels)
        self.words = _equivalence(params.eq_words)

    def label(self, label):
        label = strip_label(label)
        return self.labels.get(label, label)

    def word(self, word):
        return self.words.get(word, word)

    def deleted(self, label):
        delete = self.params.delete_labels
        return label == "" or label in delete or strip_label(label) in delete

    def length(self, tree):
        drop = self.params.delete_labels_for_length
        return sum(
            1
            for tag in tree.tags
            if tag not in drop and strip_label(tag) not in drop
        )

    def keep_mask(self, tree):
        return [not self.deleted(tag) for tag in tree.tags]

    def quote_fix(self, gold, test, gold_keep, test_keep):
        """Keeps the words one side deletes only through a QUOTE_LABEL tag."""
        quote = self.params.quote_labels

        def quoted(tag):
            return tag in quote or strip_label(tag) in quote

        def soft(tree, keep):
            # Positions kept, or deleted only through a quote label.
            return [
                i for i, tag in enumerate(tree.tags) if keep[i] or quoted(tag)
            ]

        gold_soft, test_soft = soft(gold, gold_keep), soft(test, test_keep)
        if len(gold_soft) != len(test_soft):
            return gold_keep, test_keep
        gold_keep, test_keep = list(gold_keep), list(test_keep)
        for g, t in zip(gold_soft, test_soft):
            if gold_keep[g] != test_keep[t] and quoted(gold.tags[g]) and quoted(test.tags[t]):
                gold_keep[g] = test_keep[t] = True
        return gold_keep, test_keep

    def brackets(self, tree, keep):
        position = [0]
        for kept in keep:
            position.append(position[-1] + kept)
        result = []
        for label, start, end in tree.nodes:
            if self.deleted(label):
                continue
            start, end = position[start], position[end]
            if start == end:  # dominates no word once labels are deleted
                continue
            result.append((self.label(label) if self.params.labeled else None, start, end))
        return result

    def sentence(self, index, gold, test):
        length = self.length(gold)
        gold_keep = self.keep_mask(gold)
        gold_words = [w for w, k in zip(gold.words, gold_keep) if k]
        row = SentenceResult(
            id=index,
            length=length,
            status=STATUS_OK,
            recall=0.0,
            precision=0.0,
            matched_brackets=0,
            gold_brackets=0,
            test_brackets=0,
            crossing_brackets=0,
            words=len(gold_words),
            correct_tags=0,
            tag_accuracy=0.0,
        )
        if test is None or not test.words and not test.nodes:
            row.status = STATUS_SKIPPED
            row.reason = "no test tree"
            return row
        test_keep = self.keep_mask(test)
        if sum(gold_keep) != sum(test_keep) and self.params.quote_labels:
            gold_keep, test_keep = self.quote_fix(gold, test, gold_keep, test_keep)
            gold_words = [w for w, k in zip(gold.words, gold_keep) if k]
            row.words = len(gold_words)
        test_words = [w for w, k in zip(test.words, test_keep) if k]
        if len(gold_words) != len(test_words):
            row.status = STATUS_ERROR
            row.reason = (
                f"length mismatch: {len(gold_words)} gold words, "
                f"{len(test_words)} test words"
            )
            return row
        for position, (g, t) in enumerate(zip(gold_words, test_words)):
            if g != t and self.word(g) != self.word(t):
                row.status = STATUS_ERROR
                row.reason = (
                    f"word mismatch at word {position + 1}: gold {g!r}, "
                    f"test {t!r}"
                )
                return row
        gold_tags = [tag for tag, k in zip(gold.tags, gold_keep) if k]
        test_tags = [tag for tag, k in zip(test.tags, test_keep) if k]
        row.correct_tags = sum(
            1 for g, t in zip(gold_tags, test_tags) if self.label(g) == self.label(t)
        )
        gold_brackets = self.brackets(gold, gold_keep)
        test_brackets = self.brackets(test, test_keep)
        gold_counts = collections.Counter(gold_brackets)
        test_counts = collections.Counter(test_brackets)
        row.matched_brackets = sum(
            min(count, gold_counts[bracket]) for bracket, count in test_counts.items()
        )
        row.gold_brackets = len(gold_brackets)
        row.test_brackets = len(test_brackets)
        gold_spans = {(start, end) for _, start, end in gold_brackets}
        row.crossing_brackets = sum(
            1
            for _, start, end in test_brackets
            if any(
                s < start < e < end or start < s < end < e for s, e in gold_spans
            )
        )
        row.recall = _percent(row.matched_brackets, row.gold_brackets)
        row.precision = _percent(row.matched_brackets, row.test_brackets)
        row.tag_accuracy = _percent(row.correct_tags, row.words)
        return row


def _percent(numerator, denominator):
    return 100.0 * numerator / denominator if denominator else 0.0


@dataclasses.dataclass
class SentenceResult:
    """One row of the EVALB report.

    Attributes:
        id: the sentence's number, from 1.
        length: its length (gold words whose tag is not a
            `DELETE_LABEL_FOR_LENGTH`): the `Len.` column.
        status: `STATUS_OK` (0), `STATUS_ERROR` (1: words differ) or
            `STATUS_SKIPPED` (2: no test tree).
        recall: bracketing recall in percent (0.0 without gold brackets).
        precision: bracketing precision in percent (0.0 without test
            brackets).
        matched_brackets: test brackets that match a gold bracket.
        gold_brackets: brackets of the gold tree.
        test_brackets: brackets of the test tree.
        crossing_brackets: test brackets crossing a gold bracket.
        words: words scored (gold words left after `DELETE_LABEL`).
        correct_tags: words whose test tag is the gold tag.
        tag_accuracy: `correct_tags / words` in percent.
        reason: why an error or skipped sentence was not scored (`""` for
            a scored one).
    """

    id: int
    length: int
    status: int
    recall: float
    precision: float
    matched_brackets: int
    gold_brackets: int
    test_brackets: int
    crossing_brackets: int
    words: int
    correct_tags: int
    tag_accuracy: float
    reason: str = ""

    @property
    def complete_match(self):
        """Whether the test brackets are exactly the gold ones."""
        return (
            self.status == STATUS_OK
            and self.matched_brackets == self.gold_brackets
            and self.matched_brackets == self.test_brackets
        )


@dataclasses.dataclass
class Summary:
    """An EVALB summary block (all sentences, or those of length <= cutoff).

    Percentages are in [0, 100]; every total counts the valid (status 0)
    sentences only.

    Attributes:
        sentences: number of sentences.
        error_sentences: sentences with status 1.
        skipped_sentences: sentences with status 2.
        valid_sentences: the others, which the figures below cover.
        recall: bracketing recall (matched / gold brackets).
        precision: bracketing precision (matched / test brackets).
        f_measure: their harmonic mean.
        complete_match: percentage of sentences whose recall and precision
            are both 100%.
        average_crossing: crossing brackets per sentence.
        no_crossing: percentage of sentences without crossing brackets.
        two_or_less_crossing: percentage with at most 2.
        tagging_accuracy: percentage of correct POS tags.
        matched_brackets, gold_brackets, test_brackets, crossing_brackets,
        words, correct_tags, complete_matches, no_crossing_sentences,
        two_or_less_crossing_sentences: the totals behind them.
    """

    sentences: int = 0
    error_sentences: int = 0
    skipped_sentences: int = 0
    valid_sentences: int = 0
    recall: float = 0.0
    precision: float = 0.0
    f_measure: float = 0.0
    complete_match: float = 0.0
    average_crossing: float = 0.0
    no_crossing: float = 0.0
    two_or_less_crossing: float = 0.0
    tagging_accuracy: float = 0.0
    matched_brackets: int = 0
    gold_brackets: int = 0
    test_brackets: int = 0
    crossing_brackets: int = 0
    words: int = 0
    correct_tags: int = 0
    complete_matches: int = 0
    no_crossing_sentences: int = 0
    two_or_less_crossing_sentences: int = 0


def summarize(rows):
    """The summary block of a list of `SentenceResult`.

    Args:
        rows: iterable of `SentenceResult`.

    Returns:
        A `Summary`.
    """
    summary = Summary()
    for row in rows:
        summary.sentences += 1
        if row.status == STATUS_ERROR:
            summary.error_sentences += 1
            continue
        if row.status == STATUS_SKIPPED:
            summary.skipped_sentences += 1
            continue
        summary.valid_sentences += 1
        summary.matched_brackets += row.matched_brackets
        summary.gold_brackets += row.gold_brackets
        summary.test_brackets += row.test_brackets
        summary.crossing_brackets += row.crossing_brackets
        summary.words += row.words
        summary.correct_tags += row.correct_tags
        summary.complete_matches += row.complete_match
        summary.no_crossing_sentences += row.crossing_brackets == 0
        summary.two_or_less_crossing_sentences += row.crossing_brackets <= 2
    valid = summary.valid_sentences
    summary.recall = _percent(summary.matched_brackets, summary.gold_brackets)
    summary.precision = _percent(summary.matched_brackets, summary.test_brackets)
    if summary.recall + summary.precision > 0:
        summary.f_measure = (
            2 * summary.recall * summary.precision
            / (summary.recall + summary.precision)
        )
    summary.complete_match = _percent(summary.complete_matches, valid)
    summary.average_crossing = summary.crossing_brackets / valid if valid else 0.0
    summary.no_crossing = _percent(summary.no_crossing_sentences, valid)
    summary.two_or_less_crossing = _percent(
        summary.two_or_less_crossing_sentences, valid
    )
    summary.tagging_accuracy = _percent(summary.correct_tags, summary.words)
    return summary


@dataclasses.dataclass
class EvalbResult:
    """What `evaluate_trees` / `evaluate_files` return.

    Attributes:
        sentences: list of `SentenceResult`, one per sentence.
        summary: `Summary` of all sentences.
        cutoff_summary: `Summary` of the sentences of length <=
            `params.cutoff_len`.
        params: the `EvalbParams` used.
    """

    sentences: list
    summary: Summary
    cutoff_summary: Summary
    params: EvalbParams


class TooManyErrors(ValueError):
    """The evaluation stopped after `MAX_ERROR` error sentences.

    Attributes:
        sentences: the `SentenceResult` rows scored before it stopped.
    """

    def __init__(self, message, sentences):
        super().__init__(message)
        self.sentences = sentences


def evaluate_trees(gold_trees, test_trees, params=None):
    """Scores test trees against gold trees with EVALB's semantics.

    Args:
        gold_trees: list of gold trees: `nltk.Tree` objects or bracketed
            strings (one sentence each).
        test_trees: list of test trees, as many: `nltk.Tree`, bracketed
            strings, or `None` / `""` for a sentence the parser failed on
            (skipped, status 2).
        params: an `EvalbParams`, the path of a `.prm` file, or `None` for
            `COLLINS_PARAMS` (`COLLINS.prm`).

    Returns:
        An `EvalbResult` (per-sentence rows, the summary of all sentences
        and that of sentences of length <= `CUTOFF_LEN`); `format_report`
        writes it as the C program does.

    Raises:
        ValueError: different numbers of gold and test trees, or a
            malformed tree (the message names the sentence).
        TooManyErrors: `MAX_ERROR` error sentences were reached.

    Example:

    ```python
    from keras_ordered.parsing import evalb
    gold = ["(S (NP (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down))) (. .))"]
    test = ["(S (NP (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down))) (. .))"]
    result = evalb.evaluate_trees(gold, test)
    # ADVP = PRT (EQ_LABEL), the period is not scored; one tag is wrong
    assert result.summary.recall == result.summary.precision == 100.0
    assert result.sentences[0].words == 4
    assert result.summary.tagging_accuracy == 75.0
    ```
    """
    params = _resolve_params(params)
    gold_trees, test_trees = list(gold_trees), list(test_trees)
    if len(gold_trees) != len(test_trees):
        raise ValueError(
            f"Got {len(gold_trees)} gold trees but {len(test_trees)} test "
            "trees: pass one test tree per gold tree (None for a sentence "
            "the parser failed on)."
        )
    scorer = _Scorer(params)
    rows = []
    errors = 0
    for index, (gold, test) in enumerate(zip(gold_trees, test_trees), 1):
        gold_tree = _as_tree(gold, "gold", index) or _Tree()
        test_tree = _as_tree(test, "test", index)
        row = scorer.sentence(index, gold_tree, test_tree)
        rows.append(row)
        if row.status == STATUS_ERROR:
            errors += 1
            if params.max_error > 0 and errors >= params.max_error:
                raise TooManyErrors(
                    f"Stopped after {errors} error sentences (MAX_ERROR "
                    f"{params.max_error}), the last at sentence {index} "
                    f"({row.reason}): the gold and test sentences do not "
                    "line up; check the tokenization and the order of the "
                    "trees, or raise MAX_ERROR.",
                    rows,
                )
    cutoff = [row for row in rows if row.length <= params.cutoff_len]
    return EvalbResult(
        sentences=rows,
        summary=summarize(rows),
        cutoff_summary=summarize(cutoff),
        params=params,
    )


def read_lines(path, side="gold"):
    """The sentences of an EVALB file: one per line, trailing blank lines dropped.

    Args:
        path: path of a file of bracketed trees, one per line.
        side: `"gold"` or `"test"`, for the error message.

    Returns:
        A list of strings (an empty string for an empty line).

    Raises:
        ValueError: no file at `path`.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(
            f"No {side} file at {path!r}: pass a file of bracketed trees, "
            "one per line."
        )
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def evaluate_files(gold_path, test_path, params=None):
    """Scores a file of test trees against a file of gold trees (EVALB).

    Both files hold one bracketed tree per line, in the same order; an
    empty test line is a parse failure (the sentence is skipped).

    Args:
        gold_path: path of the gold file.
        test_path: path of the test file.
        params: an `EvalbParams`, the path of a `.prm` file, or `None` for
            `COLLINS_PARAMS`.

    Returns:
        An `EvalbResult`.

    Raises:
        ValueError: a missing file, files of different numbers of lines,
            or a malformed line (the message names it).
        TooManyErrors: `MAX_ERROR` error sentences were reached.

    Example:

    ```python
    # needs: EVALB's sample files (../shared/data/evalb)
    from keras_ordered.parsing import evalb
    folder = "../shared/data/evalb"
    result = evalb.evaluate_files(
        f"{folder}/sample.gld", f"{folder}/sample.tst",
        params=f"{folder}/sample.prm")
    print(evalb.format_report(result))
    ```
    """
    params = _resolve_params(params)
    gold = read_lines(gold_path, "gold")
    test = read_lines(test_path, "test")
    if len(gold) != len(test):
        raise ValueError(
            f"The gold file {os.fspath(gold_path)!r} has {len(gold)} lines but "
            f"the test file {os.fspath(test_path)!r} has {len(test)}: EVALB "
            "compares them line by line (leave an empty test line for a "
            "sentence the parser failed on)."
        )
    return evaluate_trees(gold, test, params)


# ---------------------------------------------------------------------------
# The report.

_HEADER = (
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n"
)
_RULE = "=" * 76


def _summary_block(title, summary):
    lines = [f"-- {title} --"]
    counts = (
        ("Number of sentence", summary.sentences),
        ("Number of Error sentence", summary.error_sentences),
        ("Number of Skip  sentence", summary.skipped_sentences),
        ("Number of Valid sentence", summary.valid_sentences),
    )
    for name, value in counts:
        lines.append(f"{name:<26}= {value:6d}")
    figures = (
        ("Bracketing Recall", summary.recall),
        ("Bracketing Precision", summary.precision),
        ("Bracketing FMeasure", summary.f_measure),
        ("Complete match", summary.complete_match),
        ("Average crossing", summary.average_crossing),
        ("No crossing", summary.no_crossing),
        ("2 or less crossing", summary.two_or_less_crossing),
        ("Tagging accuracy", summary.tagging_accuracy),
    )
    for name, value in figures:
        lines.append(f"{name:<26}= {value:6.2f}")
    return lines


def format_report(result):
    """Writes an `EvalbResult` as the report of the C program.

    The per-sentence table, its totals line, and the `=== Summary ===` for
    all sentences and for length <= `CUTOFF_LEN`, with the
    `Bracketing FMeasure` line of the 2006 EVALB. As in the C program, the
    `Cross` column of the totals line counts the valid sentences without a
    crossing bracket. With `DEBUG` >= 1 in the parameters, the reason of
    each error or skipped sentence follows its row.

    Args:
        result: an `EvalbResult`.

    Returns:
        The report, a string ending with a newline.

    Example:

    ```python
    from keras_ordered.parsing import evalb
    result = evalb.evaluate_trees(["(S (NP (NN it)) (VP (VBZ works)))"],
                                  ["(S (NP (NN it)) (VP (VBZ works)))"])
    report = evalb.format_report(result)
    assert "Bracketing FMeasure       = 100.00" in report
    ```
    """
    lines = [_HEADER + _RULE]
    for row in result.sentences:
        lines.append(
            f"{row.id:4d} {row.length:4d} {row.status:4d}  {row.recall:6.2f} "
            f"{row.precision:6.2f} {row.matched_brackets:5d} "
            f"{row.gold_brackets:6d} {row.test_brackets:4d} "
            f"{row.crossing_brackets:6d} {row.words:6d} {row.correct_tags:5d} "
            f"{row.tag_accuracy:8.2f}"
        )
        if result.params.debug and row.reason:
            lines.append(f"     {row.reason}")
    total = result.summary
    lines.append(_RULE)
    lines.append(
        " " * 16
        + f"{total.recall:6.2f} {total.precision:6.2f} "
        f"{total.matched_brackets:6d} {total.gold_brackets:6d} "
        f"{total.test_brackets:4d} {total.no_crossing_sentences:6d} "
        f"{total.words:6d} {total.correct_tags:5d} {total.tagging_accuracy:8.2f}"
    )
    lines.append("=== Summary ===")
    lines.append("")
    lines.extend(_summary_block("All", result.summary))
    lines.append("")
    lines.extend(
        _summary_block(f"len<={result.params.cutoff_len}", result.cutoff_summary)
    )
    return "\n".join(lines) + "\n"
