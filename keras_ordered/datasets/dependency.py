"""Dependency trees in, generation order out: the data of the top-down
TreeLSTM (Zhang, Lu and Lapata, 2016).

Readers (each returns a list of `DependencyTree`):

- `read_malt(path)`: Malt-TAB, one token per line `word TAB POS TAB head`
  (head 0 = the root), a blank line between sentences; what
  `../shared/data/wsj_sample/dep` holds. Read with nltk's `DependencyGraph`.
- `read_conll(path)`: CoNLL-X (10 columns) and CoNLL-U (Universal
  Dependencies; multiword-token lines `1-2` and empty nodes `1.1` are left
  out), read with the `conllu` package.
- `read_stanford(path)`: Stanford-dependency tuples as the official MSR data
  holds them, `det(Etext-4, The-1) ... root(ROOT-0, Etext-4)`: one sentence
  per line, or one tuple per line with blank lines between sentences.
- `read_trees(path, format="auto")` picks one of them from the contents.

Every tree is checked (`check_heads`): a head out of range, a cycle, no
root, two roots or an empty sentence is a `ValueError` naming the file, the
sentence and its first line, never a crash deep in the model.

`generation_steps(heads)` gives the order in which the model generates the
words (the paper's dependency paths, in the official code's breadth-first
order), and `DependencyVocabulary` maps words to ids.

This module imports neither TensorFlow nor any model.

Reference:
    Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
    NAACL 2016.
"""

import collections
import glob
import os
import re
import warnings

from keras_ordered._tokens import decode_utf8_text
from keras_ordered.datasets.folders import data_dir
from keras_ordered._tokens import DEPENDENCY_SPECIALS
from keras_ordered._tokens import UNK
from keras_ordered._tokens import TokenVocabulary

GEN_L = "GEN-L"
GEN_R = "GEN-R"
GEN_NX_L = "GEN-NX-L"
GEN_NX_R = "GEN-NX-R"
ACTIONS = (GEN_L, GEN_R, GEN_NX_L, GEN_NX_R)
"""The four generation actions; a model's action ids are indices here."""


SAMPLE_SPLITS = {
    "train": ("wsj_00*.dp", "wsj_01[0-3]*.dp"),
    "valid": ("wsj_014*.dp",),
}
"""The splits of the WSJ sample's dependency trees: files wsj_0001-0139
train, wsj_0140-0149 validation."""


class DependencyTree(collections.namedtuple(
        "DependencyTree", ["words", "tags", "heads", "source", "index", "line"])):
    """One sentence with its dependency tree.

    Fields:
        words: tuple of str, the words in sentence order.
        tags: tuple of str (POS tags; `"_"` when the format has none).
        heads: tuple of int, `heads[i]` the head of word `i + 1` (words are
            numbered from 1; 0 is the root).
        source: str, the file it was read from (or `"<string>"`).
        index: int, its sentence number in that file (1 = the first).
        line: int, the line its first token is on (1-based).
    """

    __slots__ = ()

    def where(self):
        return describe(self.source, self.index, self.line)


def describe(source, index, line):
    """`"FILE, sentence I (line L)"` for error messages."""
    return f"{source}, sentence {index} (line {line})"


def check_heads(heads, where="the tree"):
    """Validates a head list; returns it as a tuple of ints.

    Args:
        heads: sequence of int, `heads[i]` the head of word `i + 1`.
        where: str, how error messages name the tree.

    Raises:
        ValueError: an empty sentence, a head out of range `0..n`, a word
            its own head, no word attached to the root, two or more, or a
            cycle (words not reachable from the root).
    """
    heads = tuple(heads)
    n = len(heads)
    if n == 0:
        raise ValueError(f"{where}: empty sentence (no word).")
    for i, head in enumerate(heads):
        if isinstance(head, bool) or not isinstance(head, int):
            raise ValueError(
                f"{where}: the head of word {i + 1} is {head!r}, not an integer."
            )
        if head < 0 or head > n:
            raise ValueError(
                f"{where}: the head of word {i + 1} is {head}, out of range "
                f"0..{n} (0 = the root)."
            )
        if head == i + 1:
            raise ValueError(f"{where}: word {i + 1} is its own head.")
    roots = [i + 1 for i, head in enumerate(heads) if head == 0]
    if not roots:
        raise ValueError(f"{where}: no root (no word has head 0).")
    if len(roots) > 1:
        raise ValueError(
            f"{where}: {len(roots)} roots (words {', '.join(map(str, roots))} "
            "have head 0); a tree has one."
        )
    children = _children(heads)
    seen = {0}
    stack = [0]
    while stack:
        node = stack.pop()
        for child in children[node]:
            seen.add(child)
            stack.append(child)
    if len(seen) != n + 1:
        cyclic = sorted(set(range(1, n + 1)) - seen)
        raise ValueError(
            f"{where}: a cycle: words {', '.join(map(str, cyclic))} are not "
            "reachable from the root."
        )
    return heads


def _children(heads):
    children = [[] for _ in range(len(heads) + 1)]
    for i, head in enumerate(heads):
        children[head].append(i + 1)
    return children


def generation_steps(heads):
    """The generation steps of a dependency tree, in generation order.

    The order of the official code: each head's left dependents nearest
    first (descending position), its right dependents nearest first
    (ascending); nodes are visited breadth-first from the root, each
    pushing all its left dependents, then all its right dependents, onto
    the queue. A word is generated by `GEN-L` (the first left dependent of
    its head, conditioned on the head), `GEN-NX-L` (a further left
    dependent, conditioned on its right adjacent sibling), `GEN-R` or
    `GEN-NX-R` (likewise to the right): the paper's dependency path
    `D(w)` ends with `<w', LEFT / NX-LEFT / RIGHT / NX-RIGHT>` for the
    conditioning word `w'`. The root word is the first right dependent of
    the root (`GEN-R` from 0). n steps for n words; no end-of-children
    symbol (the tree is given).

    Args:
        heads: sequence of int, `heads[i]` the head of word `i + 1` (words
            numbered from 1, head 0 = the root).

    Returns:
        list of tuples `(word, action, source, left_context)`: `word` the
        generated word's number, `action` one of `ACTIONS`, `source` the
        number of the word whose state and embedding condition the step (0
        = the root), `left_context` for a `GEN-R` step the head's left
        dependents farthest-to-nearest (sentence order; what LdTreeLSTM
        reads), `()` otherwise.

    Raises:
        ValueError: when `heads` is not a tree (see `check_heads`).

    Example:

    >>> for step in generation_steps([2, 3, 0, 3, 6, 4]):  # the cat sat on the mat
    ...     print(step)
    (3, 'GEN-R', 0, ())
    (2, 'GEN-L', 3, ())
    (4, 'GEN-R', 3, (2,))
    (1, 'GEN-L', 2, ())
    (6, 'GEN-R', 4, ())
    (5, 'GEN-L', 6, ())
    """
    heads = check_heads(heads)
    children = _children(heads)
    steps = []
    queue = collections.deque([0])
    while queue:
        node = queue.popleft()
        left = sorted((c for c in children[node] if c < node), reverse=True)
        right = sorted(c for c in children[node] if c > node)
        for k, child in enumerate(left):
            if k == 0:
                steps.append((child, GEN_L, node, ()))
            else:
                steps.append((child, GEN_NX_L, left[k - 1], ()))
        for k, child in enumerate(right):
            if k == 0:
                steps.append((child, GEN_R, node, tuple(reversed(left))))
            else:
                steps.append((child, GEN_NX_R, right[k - 1], ()))
        queue.extend(left)
        queue.extend(right)
    return steps


def dependency_path(heads, word):
    """The paper's dependency path `D(w)` of word number `word`.

    Returns:
        tuple of `(word number, edge)` pairs from the root, edge one of
        `"LEFT"`, `"NX-LEFT"`, `"RIGHT"`, `"NX-RIGHT"`; `()` for the root
        (`word = 0`).

    Example:

    >>> dependency_path([2, 3, 0, 3, 6, 4], 1)
    ((0, 'RIGHT'), (3, 'LEFT'), (2, 'LEFT'))
    """
    steps = {w: (action, source) for w, action, source, _ in generation_steps(heads)}
    edge = {GEN_L: "LEFT", GEN_R: "RIGHT", GEN_NX_L: "NX-LEFT", GEN_NX_R: "NX-RIGHT"}
    path = []
    while word != 0:
        action, source = steps[word]
        path.append((source, edge[action]))
        word = source
    return tuple(reversed(path))


# --- readers ------------------------------------------------------------------
def _blocks(lines):
    """`(first line number, [lines])` of the blank-line-separated blocks."""
    block, start = [], None
    for number, line in enumerate(lines, 1):
        if line.strip():
            if start is None:
                start = number
            block.append(line.rstrip("\r\n"))
        elif block:
            yield start, block
            block, start = [], None
    if block:
        yield start, block


def _read_lines(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No dependency file at {path!r}.")
    with open(path, "rb") as f:
        return decode_utf8_text(f.read(), repr(path)).splitlines()


def _one_line(message):
    return re.sub(r"\s+", " ", str(message)).strip().rstrip(".")


def parse_malt(text, source="<string>"):
    """Malt-TAB trees of a string (see `read_malt`)."""
    from nltk.parse import DependencyGraph

    trees = []
    for index, (start, block) in enumerate(_blocks(text.splitlines()), 1):
        where = describe(source, index, start)
        for offset, line in enumerate(block):
            fields = line.split("\t") if "\t" in line else line.split()
            if len(fields) not in (3, 4, 10):
                raise ValueError(
                    f"{where}: line {start + offset} has {len(fields)} "
                    "columns; Malt-TAB has `word TAB POS TAB head` (3 or 4 "
                    f"columns, or 10 for CoNLL): {line!r}"
                )
            head_field = fields[6] if len(fields) == 10 else fields[2]
            if not re.fullmatch(r"-?\d+", head_field.strip()):
                raise ValueError(
                    f"{where}: line {start + offset}: the head {head_field!r} "
                    "is not a number."
                )
        # nltk warns (UserWarning) about some bad trees before our check
        # says what is wrong: its warnings become our one-line error.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                graph = DependencyGraph(
                    "\n".join(block), top_relation_label="root"
                )
            except Exception as error:  # nltk's own message, with where
                raise ValueError(
                    f"{where}: unreadable ({_one_line(error)})."
                ) from None
        n = len(block)
        nodes = [graph.nodes[i] for i in range(1, n + 1)]
        words = tuple(node["word"] for node in nodes)
        tags = tuple(node["tag"] or "_" for node in nodes)
        heads = check_heads([int(node["head"]) for node in nodes], where)
        if caught:
            raise ValueError(
                f"{where}: unreadable ({_one_line(caught[0].message)})."
            )
        trees.append(DependencyTree(words, tags, heads, source, index, start))
    return trees


def read_malt(path):
    """Reads a Malt-TAB file (`word TAB POS TAB head`, blank line between
    sentences) with nltk's `DependencyGraph`.

    Args:
        path: str, the file.

    Returns:
        list of `DependencyTree`.

    Raises:
        FileNotFoundError, ValueError (naming the file, the sentence and its
        line).

    Example:

    >>> import tempfile
    >>> path = tempfile.mktemp(suffix=".dp")
    >>> _ = open(path, "w").write("the\\tDT\\t2\\ncat\\tNN\\t3\\nsat\\tVBD\\t0\\n")
    >>> read_malt(path)[0].heads
    (2, 3, 0)
    """
    return parse_malt("\n".join(_read_lines(path)), str(path))


def parse_conll(text, source="<string>"):
    """CoNLL-X / CoNLL-U trees of a string (see `read_conll`)."""
    import conllu

    trees = []
    for index, (start, block) in enumerate(_blocks(text.splitlines()), 1):
        where = describe(source, index, start)
        rows = [(start + k, line) for k, line in enumerate(block)
                if not line.startswith("#")]
        if not rows:
            continue
        for number, line in rows:
            if len(line.split("\t")) != 10:
                raise ValueError(
                    f"{where}: line {number} has {len(line.split(chr(9)))} "
                    "tab-separated columns; CoNLL-X and CoNLL-U have 10."
                )
        try:
            sentence = conllu.parse("\n".join(line for _, line in rows) + "\n\n")[0]
        except Exception as error:
            raise ValueError(f"{where}: unreadable CoNLL ({error}).") from None
        words, tags, heads = [], [], []
        for token, (number, _) in zip(sentence, rows):
            if not isinstance(token["id"], int):
                continue  # multiword token (1-2) or empty node (1.1)
            if token["id"] != len(words) + 1:
                raise ValueError(
                    f"{where}: line {number}: token id {token['id']} where "
                    f"{len(words) + 1} was expected."
                )
            head = token["head"]
            if not isinstance(head, int):
                raise ValueError(
                    f"{where}: line {number}: the head {head!r} is not a number."
                )
            words.append(token["form"])
            tag = token.get("upos") or token.get("xpos") or "_"
            tags.append(str(tag))
            heads.append(head)
        heads = check_heads(heads, where)
        trees.append(DependencyTree(tuple(words), tuple(tags), heads, source,
                                    index, start))
    return trees


def read_conll(path):
    """Reads a CoNLL-X or CoNLL-U file with the `conllu` package.

    Word = FORM (column 2), tag = UPOS / CPOSTAG (column 4, else column 5),
    head = HEAD (column 7). CoNLL-U multiword-token lines (`1-2`) and empty
    nodes (`1.1`) are left out; comment lines (`# ...`) are skipped.

    Returns:
        list of `DependencyTree`.
    """
    return parse_conll("\n".join(_read_lines(path)), str(path))


_TUPLE = re.compile(r"([^\s()]+)\((.+?)-(\d+)'*, (.+?)-(\d+)'*\)")


def parse_stanford(text, source="<string>"):
    """Stanford-dependency tuple trees of a string (see `read_stanford`)."""
    lines = text.splitlines()
    if any(not line.strip() for line in lines):
        blocks = list(_blocks(lines))
    else:
        blocks = [(k + 1, [line]) for k, line in enumerate(lines)]
    trees = []
    for index, (start, block) in enumerate(blocks, 1):
        where = describe(source, index, start)
        arcs = {}
        for offset, line in enumerate(block):
            found = _TUPLE.findall(line)
            rest = _TUPLE.sub("", line).strip()
            if not found or rest:
                raise ValueError(
                    f"{where}: line {start + offset} is not a list of "
                    f"`relation(head-i, dependent-j)` tuples: {line!r}"
                )
            for _, _, head, word, position in found:
                position, head = int(position), int(head)
                if position in arcs and arcs[position][1] != head:
                    raise ValueError(
                        f"{where}: word {position} ({word}) has two heads."
                    )
                arcs[position] = (word, head)
        n = max(arcs)
        missing = sorted(set(range(1, n + 1)) - set(arcs))
        if missing or 0 in arcs:
            raise ValueError(
                f"{where}: words {', '.join(map(str, missing or [0]))} have "
                "no tuple: the tuples must attach every word 1..n once."
            )
        words = tuple(arcs[i][0] for i in range(1, n + 1))
        heads = check_heads([arcs[i][1] for i in range(1, n + 1)], where)
        trees.append(DependencyTree(words, ("_",) * n, heads, source, index,
                                    start))
    return trees


def read_stanford(path):
    """Reads Stanford-dependency tuples (the official MSR data's format).

    `det(Etext-4, The-1) nsubj(...) ... root(ROOT-0, Etext-4)`: either one
    sentence per line, or one tuple per line with blank lines between
    sentences. Copy marks (`word-4'`) are dropped; each word 1..n must be
    the dependent of exactly one tuple.

    Returns:
        list of `DependencyTree` (tags `"_"`).
    """
    return parse_stanford("\n".join(_read_lines(path)), str(path))


FORMATS = ("malt", "conll", "stanford")


def guess_format(text):
    """`"malt"`, `"conll"` or `"stanford"` from a file's first lines."""
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if _TUPLE.match(line.strip()):
            return "stanford"
        columns = len(line.split("\t")) if "\t" in line else len(line.split())
        return "conll" if columns == 10 else "malt"
    return "malt"


def parse_trees(text, format="auto", source="<string>"):
    """Trees of a string in `format` (`"auto"`, or one of `FORMATS`)."""
    if format == "auto":
        format = guess_format(text)
    readers = {"malt": parse_malt, "conll": parse_conll,
               "stanford": parse_stanford}
    if format not in readers:
        raise ValueError(
            f"Unknown dependency format {format!r}: use 'auto', "
            f"{', '.join(repr(f) for f in FORMATS)}."
        )
    return readers[format](text, source)


def read_trees(path, format="auto"):
    """Reads a dependency file; `format="auto"` guesses it from the columns.

    Args:
        path: str, a Malt-TAB, CoNLL-X, CoNLL-U or Stanford-tuple file.
        format: `"auto"`, `"malt"`, `"conll"` or `"stanford"`.

    Returns:
        list of `DependencyTree`.
    """
    return parse_trees("\n".join(_read_lines(path)), format, str(path))


def resolve_files(directory, patterns, split="split"):
    """Files of a split: shell patterns relative to `directory` (or absolute);
    a pattern matching a folder takes its files recursively. Sorted."""
    if isinstance(patterns, str):
        patterns = [patterns]
    files = []
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else os.path.join(directory, pattern)
        for match in sorted(glob.glob(full)):
            if os.path.isdir(match):
                for root, _, names in os.walk(match):
                    files += [os.path.join(root, name) for name in sorted(names)
                              if not name.startswith(".")]
            else:
                files.append(match)
    files = sorted(dict.fromkeys(files))
    if not files:
        raise ValueError(
            f"The {split} split is empty: no file matches "
            f"{', '.join(repr(p) for p in patterns)} under {directory!r}."
        )
    return files


def load_split(directory, patterns, split="split", format="auto",
               max_sentences=None):
    """`(trees, files)` of a split given by file patterns (see `resolve_files`)."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"No dependency folder at {directory!r}.")
    files = resolve_files(directory, patterns, split)
    trees = []
    for path in files:
        trees += read_trees(path, format)
        if max_sentences and len(trees) >= max_sentences:
            return trees[:max_sentences], files
    return trees, files


def default_dependency_dir():
    """`$KERAS_ORDERED_DATA/wsj_sample/dep` (`keras_ordered.datasets.
    folders.data_dir`); a ValueError naming both ways when unset."""
    return data_dir(None, "wsj_sample/dep", "--data",
                    "dependency trees (Malt-TAB or CoNLL files)")


# --- vocabulary ---------------------------------------------------------------
class DependencyVocabulary(TokenVocabulary):
    """Words of the TD-TreeLSTM: ids 0 = `<pad>`, 1 = `<unk>`, 2 = `<root>`.

    Args:
        words: list of str, the words after the three specials (or the whole
            list, specials first).
        lowercase: bool, whether words are lower-cased before lookup.

    Example:

    >>> vocabulary = DependencyVocabulary.from_sentences(
    ...     [["The", "cat"], ["the", "dog"]], lowercase=True, min_count=2)
    >>> list(vocabulary)
    ['<pad>', '<unk>', '<root>', 'the']
    >>> vocabulary.encode(["The", "cat"])
    [3, 1]
    """

    specials = DEPENDENCY_SPECIALS
    unknown = UNK

    def __init__(self, words, lowercase=False):
        words = [str(w) for w in words]
        if tuple(words[:3]) != self.specials:
            words = list(self.specials) + [w for w in words if w not in self.specials]
        if len(set(words)) != len(words):
            raise ValueError("The vocabulary lists a word twice.")
        super().__init__(words, lowercase=lowercase)

    @property
    def words(self):
        """The tokens, specials first (`tokens`)."""
        return self.tokens

    @property
    def index(self):
        """Token -> id (`ids`)."""
        return self.ids

    @classmethod
    def from_sentences(cls, sentences, lowercase=False, min_count=1,
                       max_size=None):
        """Words seen at least `min_count` times (the official MSR setup
        keeps words seen more than 5 times: `min_count=6`), most frequent
        first (ties alphabetically), at most `max_size` of them."""
        kept = cls.most_frequent(sentences, min_count=min_count,
                                 lowercase=lowercase)
        return cls(kept[:max_size], lowercase=lowercase)
