"""EVALB: labelled bracketing scores of parsed trees, as the C program gives them.

A Python implementation of the scorer every supervised constituency parsing
paper reports, written from the behaviour of EVALB's C program (Sekine &
Collins, 1997; `evalb.c`, the version with the F-measure lines). On every
input the C program accepts, `format_report` writes, character for
character, the report `evalb -p PRM GOLD TEST` prints; a differential test
(`tests/parsing/test_evalb_differential.py`) compiles `evalb.c` and compares the
two reports over thousands of perturbed WSJ and synthetic tree pairs with
`COLLINS.prm`, `new.prm` and `sample.prm`.

The semantics (those of `evalb.c`):

- The gold and test files hold one tree per line (a line may hold several
  bracketings, which then form one sentence); line `i` of one is compared
  with line `i` of the other.
- A preterminal is `(TAG word)`: a label, whitespace, one word, `)`. A tag
  that is a `DELETE_LABEL` (compared as written) removes its word
  (punctuation, `-NONE-` traces). Every other bracket is a constituent,
  an unlabelled one (the `( (S ...) )` top of `.mrg` files) included.
- A sentence whose test line has no word left is *skipped* (status 2: a
  parse failure). A sentence whose gold and test words differ in number or
  (outside `EQ_WORD` pairs) in spelling is an *error* sentence (status 1),
  and so is one with an unclosed bracket (it is still scored in its row).
  Error and skipped sentences print zeros and are left out of every total.
  The evaluation gives up (`TooManyErrors`) at the error after
  `MAX_ERROR + 1` errors, as the C program does (`MAX_ERROR 0`: no limit,
  where the C program gives up at the second error).
- `QUOTE_LABEL` (the 2006 update, `new.prm`): when the word counts differ,
  a quote word (`'`, `"` or `/`) under a `QUOTE_LABEL` tag that one side
  deleted and the other tagged with a kept label at the same position is
  put back on the deleting side.
- A constituent over no word is removed. The others lose their function
  tags and indices (everything from the first `-` or `=`: `NP-SBJ-1`,
  `NP=2` -> `NP`, `-NONE-` -> ``) and are removed when the label is, or is
  an `EQ_LABEL` of, a `DELETE_LABEL`. Brackets `(label, start, end)` are
  matched greedily, each gold bracket in order with the first unmatched
  test bracket of its span and an equal label (`EQ_LABEL` pairs are
  non-directional and not transitive; labels are ignored with `LABELED
  0`).
- A sentence's length counts its gold preterminals (deleted ones included)
  whose tag is not a `DELETE_LABEL_FOR_LENGTH`; the second summary keeps
  the sentences of length <= `CUTOFF_LEN`.
- Crossing brackets: test brackets that cross a gold bracket (overlap it
  without either containing the other). Tagging accuracy: the words left
  whose test tag is the gold tag (as written, or an `EQ_LABEL` of it).

Where the C program's behaviour is undefined (a `)` that closes nothing, a
word not alone under a tag, which sends it into a loop of errors, a line
that ends inside a bracket's label or words) or it splits a line (lines
longer than its 5000-character buffer), the functions here raise a
`ValueError` that names the sentence instead. The C program's fixed
arrays (200 words, 200 brackets, 20 quote words a sentence) are no limit
here. With `DEBUG` >= 1 the C program prints its internal tables; here
`format_report` adds the reason of each error or skipped sentence.

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
import platform
import re

STATUS_OK = 0
"""Status of a sentence that was scored."""
STATUS_ERROR = 1
"""Status of an error sentence: gold and test words differ (length or
spelling), or a bracket is left unclosed."""
STATUS_SKIPPED = 2
"""Status of a skipped sentence: no test word (a parse failure)."""

# The C program's whitespace (isspace in the C locale) and its reading of a
# bracket: "(" and a label, then, after whitespace, a word; see `_read`.
_SPACE = " \t\n\v\f\r"
_ITEM = re.compile(
    r"[ \t\n\v\f\r]*(?:"
    r"\(([^ \t\n\v\f\r()]*)(?:[ \t\n\v\f\r]+([^ \t\n\v\f\r()]*))?"
    r"|(\))"
    r"|([^ \t\n\v\f\r()]+))"
)
_FUNCTION_TAG = re.compile(r"[-=]")
_QUOTE_WORDS = frozenset(["'", '"', "/"])
_LINE_BUFFER = 5000  # the C program reads lines with fgets(buff, 5000, ...)
# 0.0 / 0.0 is a NaN with the sign bit set on x86 (printf: "-nan"), a
# positive one elsewhere: what the C program prints for an F-measure 0/0.
_C_NAN = (
    "-nan"
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
    else "nan"
)


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter (`.prm`) file.

    The defaults are those of `COLLINS.prm`, the standard labelled-bracket
    settings of WSJ parsing papers.

    Args:
        debug: int, `DEBUG` (0: none; 1 or more: `format_report` adds each
            error or skipped sentence's reason). Defaults to 0.
        max_error: int, `MAX_ERROR`: as in the C program, the evaluation
            gives up (`TooManyErrors`) at the error after `max_error + 1`
            errors (0: no limit). Defaults to 10.
        cutoff_len: int, `CUTOFF_LEN`: the second summary keeps sentences
            of at most this length. Defaults to 40.
        labeled: bool, `LABELED`: whether a bracket must have the gold
            label to match. Defaults to `True`.
        delete_labels: frozenset of str, `DELETE_LABEL` lines: tags as
            written, constituent labels once stripped (`strip_label`) or
            through an `EQ_LABEL` pair. Defaults to `TOP -NONE- , : `` ''
            .`.
        delete_labels_for_length: frozenset of str,
            `DELETE_LABEL_FOR_LENGTH` lines. Defaults to `-NONE-`.
        eq_labels: tuple of `(label, label)` pairs, `EQ_LABEL` lines
            (each pair non-directional; pairs do not chain). Defaults to
            `(("ADVP", "PRT"),)`.
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
    # needs: shared data (EVALB's parameter files)
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
    """A constituent label without its function tags and indices (EVALB's rule).

    As the C program does to every constituent label (never to a POS
    tag): the label is cut at its first `-` or `=`, so a label that begins
    with a dash becomes empty.

    Args:
        label: a Treebank label (`"NP-SBJ-1"`, `"NP=2"`, `"-NONE-"`).

    Returns:
        The part before the first `-` or `=` (`"NP"`; `""` for `-NONE-`).

    Example:

    ```python
    from keras_ordered.parsing import evalb
    assert evalb.strip_label("NP=2") == "NP"
    assert evalb.strip_label("PP-LOC-CLR") == "PP"
    ```
    """
    return _FUNCTION_TAG.split(label, 1)[0]


# ---------------------------------------------------------------------------
# Reading a line as the C program does (its read_line).


class _Quote:
    """A quote word under a `QUOTE_LABEL` tag, where the C program saw it.

    `index` is the number of kept words before it, `bracket` the number of
    constituents opened before it and `ends` those open around it: what
    `_reinsert` needs to put the word back.
    """

    __slots__ = ("word", "label", "index", "bracket", "ends")

    def __init__(self, word, label, index, bracket, ends):
        self.word, self.label, self.index = word, label, index
        self.bracket, self.ends = bracket, ends


class _Line:
    """One side of a sentence: kept words, constituents, quote words, length.

    `terminals` are `(word, tag)` pairs of the words whose tag is not a
    `DELETE_LABEL`; `brackets` are `[start, end, label]` lists in the order
    their `(` was read (`end` is -1 for one left unclosed, as in the C
    program).
    """

    __slots__ = ("terminals", "brackets", "quotes", "length", "unclosed")

    def __init__(self):
        self.terminals = []
        self.brackets = []
        self.quotes = []
        self.length = 0
        self.unclosed = 0


def _read(text, delete_labels, length_labels, quote_labels):
    """Reads a bracketed line the way `evalb.c`'s `read_line` does.

    `(` and the characters up to whitespace or a bracket are a label
    (possibly empty); when whitespace follows, a word ending at `)` makes
    the bracket a preterminal (an empty word too: `(X )`), and no word
    before a `(` makes it a constituent, as does a `(` or `)` right after
    the label.

    Raises:
        ValueError: input on which the C program's behaviour is undefined
            or which sends it into a loop of errors (the message says why).
    """
    line = _Line()
    terminals, brackets, stack = line.terminals, line.brackets, []
    position, size = 0, len(text)
    while True:
        item = _ITEM.match(text, position)
        if item is None:  # only whitespace is left
            break
        position = item.end()
        label, word, close, stray = item.groups()
        if close is not None:
            if not stack:
                raise ValueError(
                    "a ')' closes no bracket (the C program's behaviour is "
                    "undefined there)"
                )
            brackets[stack.pop()][1] = len(terminals)
            continue
        if stray is not None:
            raise ValueError(
                f"{stray!r} is outside any bracket or not alone under a POS "
                "tag (the C program loops on it until MAX_ERROR): every "
                "word needs its own preterminal, e.g. (NN word)"
            )
        following = text[position] if position < size else ""
        if word is not None and following == ")":  # a preterminal
            position += 1
            if label not in length_labels:
                line.length += 1
            if label in quote_labels and word in _QUOTE_WORDS:
                line.quotes.append(
                    _Quote(word, label, len(terminals), len(brackets), tuple(stack))
                )
            if label not in delete_labels:
                terminals.append((word, label))
            continue
        if not following:
            raise ValueError(
                f"the line ends inside the bracket ({label!r} (the C program "
                "reads past the end of the line there)"
            )
        if word:
            raise ValueError(
                f"the word {word!r} under {label!r} is followed by "
                f"{following!r}, not ')' (the C program loops on it until "
                "MAX_ERROR): every word needs its own preterminal, e.g. "
                "(NN word)"
            )
        stack.append(len(brackets))
        brackets.append([len(terminals), -1, label])
    line.unclosed = len(stack)
    return line


def parse_bracketed(text):
    """Reads one line of an EVALB file into `(words, tags, constituents)`.

    Reads as the C program does, with no label deleted.

    Args:
        text: a bracketed tree (`"(S (NP (DT the) (NN cat)) (VBD sat))"`),
            or several side by side; labels are kept as written.

    Returns:
        A tuple `(words, tags, constituents)`: the words, their POS tags,
        and the constituents as `(label, start, end)` over word indices
        (end exclusive), in the order of their opening brackets.

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
    try:
        line = _read(text, (), (), ())
    except ValueError as error:
        raise ValueError(f"{error} in {text.strip()!r}.") from None
    if line.unclosed:
        raise ValueError(
            f"Unbalanced brackets ({line.unclosed} left open) in {text.strip()!r}."
        )
    words = [word for word, _ in line.terminals]
    tags = [tag for _, tag in line.terminals]
    return words, tags, [(label, start, end) for start, end, label in line.brackets]


def _as_text(item, side, index):
    """A gold or test item of `evaluate_trees` as one bracketed line."""
    if item is None:
        return ""
    if isinstance(item, str):
        return item
    import nltk

    if isinstance(item, nltk.Tree):  # written on one line
        return item.pformat(margin=float("inf"))
    raise ValueError(
        f"{side} sentence {index}: expected a bracketed string, an nltk.Tree "
        f"or None, got {item!r}."
    )


# ---------------------------------------------------------------------------
# Scoring a sentence (the C program's calc_result).


def _reinsert(quote, line):
    """Puts a deleted quote word back where it was read (`reinsert_term`)."""
    line.terminals.insert(quote.index, (quote.word, quote.label))
    for number, bracket in enumerate(line.brackets):
        if number >= quote.bracket:  # opened after the word
            bracket[0] += 1
            bracket[1] += 1
    for number in quote.ends:  # open around the word
        line.brackets[number][1] += 1


class _Scorer:
    """Scores sentences with one `EvalbParams` as `evalb.c` does."""

    def __init__(self, params):
        self.params = params
        self.eq_labels = self._pairs(params.eq_labels)
        self.eq_words = self._pairs(params.eq_words)
        delete = params.delete_labels
        # Constituent labels that label_comp() finds equal to a DELETE_LABEL.
        self.deleted_constituents = set(delete) | {
            b for a, b in self.eq_labels if a in delete
        }

    @staticmethod
    def _pairs(pairs):
        return frozenset(pairs) | frozenset((b, a) for a, b in pairs)

    def same_label(self, a, b):
        """`label_comp`: equal, or an `EQ_LABEL` pair (not transitive)."""
        return a == b or (a, b) in self.eq_labels

    def same_word(self, a, b):
        """`word_comp`: equal, or an `EQ_WORD` pair (not transitive)."""
        return a == b or (a, b) in self.eq_words

    def read(self, text, side, index):
        params = self.params
        try:
            return _read(
                text, params.delete_labels, params.delete_labels_for_length,
                params.quote_labels,
            )
        except ValueError as error:
            raise ValueError(
                f"{side} sentence {index}: {error}, in {text.strip()!r}."
            ) from None

    def fix_quote(self, gold, test):
        """`fix_quote`: reinserts quote words one side deleted and the other kept.

        For each test quote word in order, each gold quote word read at the
        same position with a different tag: the one whose tag is a
        `DELETE_LABEL`, where the other's is not, goes back into its side
        (the quote words after it on that side move one place on).
        """
        deleted = self.params.delete_labels
        for i, test_quote in enumerate(test.quotes):
            position = test_quote.index
            for j, gold_quote in enumerate(gold.quotes):
                if gold_quote.index != position or gold_quote.label == test_quote.label:
                    continue
                if gold_quote.label in deleted and test_quote.label not in deleted:
                    _reinsert(gold_quote, gold)
                    for quote in gold.quotes[j:]:
                        quote.index += 1
                elif test_quote.label in deleted and gold_quote.label not in deleted:
                    _reinsert(test_quote, test)
                    for quote in test.quotes[i:]:
                        quote.index += 1

    def scored_brackets(self, line):
        """`massage_data`: `(start, end, label)` or None (removed) per bracket."""
        result = []
        for start, end, label in line.brackets:
            if start == end:  # a constituent over no word
                result.append(None)
                continue
            label = strip_label(label)
            result.append(
                None if label in self.deleted_constituents else (start, end, label)
            )
        return result

    def sentence(self, index, gold_text, test_text):
        """One report row and the number of errors the C program counts in it."""
        gold = self.read(gold_text, "gold", index)
        test = self.read(test_text, "test", index)
        reasons = [
            f"{side} brackets unbalanced ({line.unclosed} left open)"
            for side, line in (("gold", gold), ("test", test))
            if line.unclosed
        ]
        row = SentenceResult(
            id=index, length=gold.length,
            status=STATUS_ERROR if reasons else STATUS_OK,
            recall=0.0, precision=0.0, matched_brackets=0, gold_brackets=0,
            test_brackets=0, crossing_brackets=0, words=0, correct_tags=0,
            tag_accuracy=0.0,
        )
        errors = len(reasons)
        if not test.terminals:
            row.status = STATUS_SKIPPED
            reasons.append(
                "no test tree" if not test_text.strip() else "no test word left"
            )
        else:
            if len(gold.terminals) != len(test.terminals):
                self.fix_quote(gold, test)
            mismatch = self.word_mismatch(gold.terminals, test.terminals)
            if mismatch:
                row.status = STATUS_ERROR
                reasons.append(mismatch)
                errors += 1
            else:
                self.score(row, gold, test)
        row.reason = "; ".join(reasons)
        return row, errors

    def word_mismatch(self, gold, test):
        """Why the words differ (`""` when they agree)."""
        if len(gold) != len(test):
            return f"length mismatch: {len(gold)} gold words, {len(test)} test words"
        for position, ((g, _), (t, _)) in enumerate(zip(gold, test), 1):
            if not self.same_word(g, t):
                return f"word mismatch at word {position}: gold {g!r}, test {t!r}"
        return ""

    def score(self, row, gold, test):
        """Fills a row's brackets, crossings and tags (words agree)."""
        gold_brackets = self.scored_brackets(gold)
        test_brackets = self.scored_brackets(test)
        by_span = collections.defaultdict(list)
        for j, bracket in enumerate(test_brackets):
            if bracket is not None:
                by_span[bracket[:2]].append(j)
        matched = set()
        labeled = self.params.labeled
        gold_spans = []
        for bracket in gold_brackets:
            if bracket is None:
                continue
            gold_spans.append(bracket[:2])
            for j in by_span.get(bracket[:2], ()):
                if j not in matched and (
                    not labeled or self.same_label(bracket[2], test_brackets[j][2])
                ):
                    matched.add(j)
                    break
        test_spans = [b[:2] for b in test_brackets if b is not None]
        row.matched_brackets = len(matched)
        row.gold_brackets = len(gold_spans)
        row.test_brackets = len(test_spans)
        row.crossing_brackets = sum(
            1
            for start, end in test_spans
            if any(s < start < e < end or start < s < end < e for s, e in gold_spans)
        )
        row.words = len(gold.terminals)
        row.correct_tags = sum(
            1
            for (_, g), (_, t) in zip(gold.terminals, test.terminals)
            if self.same_label(g, t)
        )
        row.recall = _percent(row.matched_brackets, row.gold_brackets)
        row.precision = _percent(row.matched_brackets, row.test_brackets)
        row.tag_accuracy = _percent(row.correct_tags, row.words)


def _percent(numerator, denominator):
    return 100.0 * numerator / denominator if denominator else 0.0


@dataclasses.dataclass
class SentenceResult:
    """One row of the EVALB report.

    Attributes:
        id: the sentence's number, from 1.
        length: its length (gold preterminals whose tag is not a
            `DELETE_LABEL_FOR_LENGTH`): the `Len.` column.
        status: `STATUS_OK` (0), `STATUS_ERROR` (1: words differ, or a
            bracket left unclosed) or `STATUS_SKIPPED` (2: no test word).
            The figures below are zeros where the words differ or the
            sentence is skipped, as the C program prints them.
        recall: bracketing recall in percent (0.0 without gold brackets).
        precision: bracketing precision in percent (0.0 without test
            brackets).
        matched_brackets: test brackets that match a gold bracket.
        gold_brackets: brackets of the gold tree.
        test_brackets: brackets of the test tree.
        crossing_brackets: test brackets crossing a gold bracket.
        words: words scored (gold words left after `DELETE_LABEL`, with
            the quote words `QUOTE_LABEL` puts back).
        correct_tags: words whose test tag is the gold tag.
        tag_accuracy: `correct_tags / words` in percent.
        reason: why a sentence is an error or skipped (`""` for a valid
            one).
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
        f_measure: their harmonic mean (0.0 where there is no matched
            bracket; the C program prints `nan` there).
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
        summary.f_measure = (  # the C program's 2*p*r/(p+r)
            2 * summary.precision * summary.recall
            / (summary.precision + summary.recall)
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
    """The evaluation gave up, as the C program does after `MAX_ERROR + 1` errors.

    The C program counts an error for each length or word mismatch, each
    side of a sentence left with an unclosed bracket, and a gold file
    longer or shorter than the test file; at the error after `MAX_ERROR +
    1` of them it exits without its totals.

    Attributes:
        sentences: the `SentenceResult` rows of the sentences before the
            one it gave up at (those the C program printed).
    """

    def __init__(self, message, sentences):
        super().__init__(message)
        self.sentences = sentences


def _too_many_errors(errors, params):
    """Whether the C program has exited once `errors` errors are counted."""
    return params.max_error != 0 and errors > params.max_error + 1


def _give_up(errors, params, where, rows):
    return TooManyErrors(
        f"Gave up at error {errors}, {where}: EVALB stops at the error after "
        f"MAX_ERROR + 1 = {params.max_error + 1} (MAX_ERROR "
        f"{params.max_error}). The gold and test sentences do not line up; "
        "check the tokenization and the order of the trees, or raise "
        "MAX_ERROR (-e).",
        rows,
    )


def _evaluate(gold_lines, test_lines, params, extra_lines=False):
    """Scores paired lines; `extra_lines`: one file had more (blank) lines."""
    scorer = _Scorer(params)
    rows = []
    errors = 0
    for index, (gold, test) in enumerate(zip(gold_lines, test_lines), 1):
        row, count = scorer.sentence(index, gold, test)
        errors += count
        if count and _too_many_errors(errors, params):
            raise _give_up(errors, params, f"sentence {index} ({row.reason})", rows)
        rows.append(row)
    if extra_lines:
        errors += 1
        if _too_many_errors(errors, params):
            raise _give_up(errors, params, "the files' numbers of lines", rows)
    cutoff = [row for row in rows if row.length <= params.cutoff_len]
    return EvalbResult(
        sentences=rows,
        summary=summarize(rows),
        cutoff_summary=summarize(cutoff),
        params=params,
    )


def evaluate_trees(gold_trees, test_trees, params=None):
    """Scores test trees against gold trees with EVALB's semantics.

    Each tree is scored as the C program scores a line holding it.

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
        ValueError: different numbers of gold and test trees, or a tree
            the C program cannot read (the message names the sentence).
        TooManyErrors: the C program would have given up (`MAX_ERROR`).

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
    gold = [_as_text(tree, "gold", i) for i, tree in enumerate(gold_trees, 1)]
    test = [_as_text(tree, "test", i) for i, tree in enumerate(test_trees, 1)]
    return _evaluate(gold, test, params)


def read_lines(path, side="gold"):
    """The lines of an EVALB file, as the C program reads them.

    Lines end at `\\n` only; a last line without one counts, and so do
    blank lines (a blank test line is a skipped sentence). Bytes that are
    not UTF-8 are kept apart (`surrogateescape`), so that words compare as
    the C program compares them.

    Args:
        path: path of a file of bracketed trees, one per line.
        side: `"gold"` or `"test"`, for the error message.

    Returns:
        A list of strings without their `\\n`.

    Raises:
        ValueError: no file at `path`, or a line too long for the C
            program's 5000-character buffer (it would read it as several).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(
            f"No {side} file at {path!r}: pass a file of bracketed trees, "
            "one per line."
        )
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the end of the last line, not a line
    for number, line in enumerate(lines, 1):
        newline = number < len(lines) or data.endswith(b"\n")
        if len(line) + newline > _LINE_BUFFER - 1:
            raise ValueError(
                f"Line {number} of the {side} file {path!r} has {len(line)} "
                f"bytes: EVALB's C program reads at most {_LINE_BUFFER - 1} "
                "a line, newline included, and would score its pieces as "
                "separate sentences."
            )
    return [line.decode("utf-8", "surrogateescape") for line in lines]


def evaluate_files(gold_path, test_path, params=None):
    """Scores a file of test trees against a file of gold trees (EVALB).

    Both files hold one bracketed tree per line, in the same order; an
    empty test line is a parse failure (the sentence is skipped). Blank
    lines at the end of one file only are ignored, as the C program
    ignores them (it counts them as one error).

    Args:
        gold_path: path of the gold file.
        test_path: path of the test file.
        params: an `EvalbParams`, the path of a `.prm` file, or `None` for
            `COLLINS_PARAMS`.

    Returns:
        An `EvalbResult`.

    Raises:
        ValueError: a missing file, files of different numbers of
            non-blank lines (the C program would score the lines they have
            in common), or a line the C program cannot read (the message
            names it).
        TooManyErrors: the C program would have given up (`MAX_ERROR`).

    Example:

    ```python
    # needs: shared data (EVALB's sample files)
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
    common = min(len(gold), len(test))
    if any(line.strip(_SPACE) for line in gold[common:] + test[common:]):
        raise ValueError(
            f"The gold file {os.fspath(gold_path)!r} has {len(gold)} lines but "
            f"the test file {os.fspath(test_path)!r} has {len(test)}: EVALB "
            "compares them line by line (leave an empty test line for a "
            "sentence the parser failed on)."
        )
    return _evaluate(
        gold[:common], test[:common], params, extra_lines=len(gold) != len(test)
    )


# ---------------------------------------------------------------------------
# The report: the C program's printf formats.

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
        lines.append("%-26s= %6d" % (name, value))
    f_measure = (
        "%6.2f" % summary.f_measure
        if summary.recall + summary.precision > 0
        else "%6s" % _C_NAN  # the C program's 0.0 / 0.0
    )
    figures = (
        ("Bracketing Recall", "%6.2f" % summary.recall),
        ("Bracketing Precision", "%6.2f" % summary.precision),
        ("Bracketing FMeasure", f_measure),
        ("Complete match", "%6.2f" % summary.complete_match),
        ("Average crossing", "%6.2f" % summary.average_crossing),
        ("No crossing", "%6.2f" % summary.no_crossing),
        ("2 or less crossing", "%6.2f" % summary.two_or_less_crossing),
        ("Tagging accuracy", "%6.2f" % summary.tagging_accuracy),
    )
    for name, value in figures:
        lines.append("%-26s= %s" % (name, value))
    return lines


def format_report(result):
    """Writes an `EvalbResult` as the report of the C program.

    The per-sentence table, its totals line (whose bracket figures the C
    program leaves out when there is no gold or no test bracket), and the
    `=== Summary ===` for all sentences and for length <= `CUTOFF_LEN`,
    with the `Bracketing FMeasure` lines (`nan` without a matched
    bracket, as the C program prints it). With `DEBUG` >= 1 in the
    parameters, the reason of each error or skipped sentence follows its
    row (the C program prints its internal tables instead).

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
            "%4d  %3d    %d  " % (row.id, row.length, row.status)
            + "%6.2f %6.2f   %3d    %3d  %3d    %3d" % (
                row.recall, row.precision, row.matched_brackets,
                row.gold_brackets, row.test_brackets, row.crossing_brackets,
            )
            + "   %4d  %4d   %6.2f" % (row.words, row.correct_tags, row.tag_accuracy)
        )
        if result.params.debug and row.reason:
            lines.append(f"     {row.reason}")
    total = result.summary
    lines.append(_RULE)
    brackets = ""
    if total.gold_brackets > 0 and total.test_brackets > 0:
        brackets = "                %6.2f %6.2f %6d %5d %5d  %5d" % (
            total.recall, total.precision, total.matched_brackets,
            total.gold_brackets, total.test_brackets, total.crossing_brackets,
        )
    lines.append(
        brackets
        + "  %5d %5d   %6.2f" % (total.words, total.correct_tags, total.tagging_accuracy)
    )
    lines.append("=== Summary ===")
    lines.append("")
    lines.extend(_summary_block("All", result.summary))
    lines.append("")
    lines.extend(
        _summary_block(f"len<={result.params.cutoff_len}", result.cutoff_summary)
    )
    return "\n".join(lines) + "\n"
