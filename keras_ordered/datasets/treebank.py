"""Gold Penn Treebank trees, preprocessed as the unsupervised-parsing papers do.

Reads Treebank-II `.mrg` files (e.g. the WSJ sample shipped with NLTK, or the
full WSJ sections) with NLTK's `BracketParseCorpusReader`, and cleans every
tree the way the reference evaluations of PRPN / ON-LSTM do before comparing
it with an induced tree:

1. keep only the tokens whose POS tag is a word tag (`WORD_TAGS`): this
   drops punctuation, `-NONE-` empty elements and traces, `$`, `#` and
   brackets;
2. remove the constituents left without words;
3. lower-case the words and replace every run of digits by `N`, as the
   official ON-LSTM / PRPN evaluation code does (`normalize_word`; the
   option `numbers="ptb"` writes whole number tokens as `N` instead, the
   way the PTB language-modelling text does);
4. strip function tags and indices from labels (`NP-SBJ-1` -> `NP`).

This module imports neither TensorFlow nor any model.

Data: the files are never part of the package. Point `load_treebank` at
them, or set the environment variable `KERAS_ORDERED_DATA` to a folder that
holds `wsj_sample/mrg/` (the layout of the project's shared data).
"""

import collections
import dataclasses
import io
import itertools
import os
import re

from keras_ordered._checks import check_positive_int
from keras_ordered._nltk import nltk
import numpy as np

from keras_ordered_options import SPLIT_NAMES
from keras_ordered._tokens import check_token_list
from keras_ordered.datasets.folders import data_dir
from keras_ordered._tokens import decode_utf8_text
from keras_ordered.parsing import trees as trees_lib
from keras_ordered._tokens import BOS
from keras_ordered._tokens import EOS
from keras_ordered._tokens import UNK

WORD_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB "
    "RBR RBS RP SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB".split()
)
"""POS tags of the tokens the evaluation keeps (everything else is dropped)."""

DATA_ENV_VAR = "KERAS_ORDERED_DATA"
"""Environment variable naming the data root (`$KERAS_ORDERED_DATA/wsj_sample/mrg`)."""


_NUMBER = re.compile(r"[0-9]")
_DIGIT_RUN = re.compile(r"[0-9]+")
NUMBER_STYLES = ("digit-runs", "ptb")
_LETTER = re.compile(r"[^\W\d_]")
_FUNCTION_TAG = re.compile(r"[-=]")


WSJ_SAMPLE_SPLITS = {
    "dev": r"wsj_00(0[1-9]|[1-9][0-9])\.mrg",  # wsj_0001 .. wsj_0099
    "test": r"wsj_01[0-4][0-9]\.mrg",  # wsj_0100 .. wsj_0149
}
"""Development and test splits of the WSJ sample's files (`load_treebank`
`fileids`): choose anything (a checkpoint, a seed, a preset) on `dev`,
report `test` (benchmarks/parsing_quality.py, the shipped models' cards)."""


def normalize_word(word, numbers="digit-runs"):
    """Normalises one token for the parsing evaluation.

    Lower-cases the token and writes numbers as `N`:

    - `numbers="digit-runs"` (default): every run of digits becomes `N`
      (`61` -> `N`, `15,000` -> `N,N`, `1980s` -> `Ns`), as the official
      ON-LSTM and PRPN evaluation code does;
    - `numbers="ptb"`: a token with a digit and no letter (`61`, `15,000`,
      `3.5`, `3\\/4`, `1:30`, `1986-87`, `'82`), and the percent sign,
      become `N`, as in the PTB language-modelling text (`8.45 %` is `N N`
      there); tokens mixing digits and letters (`30-year`, `1980s`) stay as
      they are.

    Words do not change the baselines' scores, only what a model reads.

    Args:
        word: a token string.
        numbers: `"digit-runs"` or `"ptb"`.

    Returns:
        The normalised string.

    Example:

    >>> [normalize_word(w) for w in ["Pierre", "61", "15,000", "%", "1980s"]]
    ['pierre', 'N', 'N,N', '%', 'Ns']
    >>> [normalize_word(w, "ptb") for w in ["61", "15,000", "%", "1980s"]]
    ['N', 'N', 'N', '1980s']
    """
    word = word.lower()
    if numbers == "digit-runs":
        return _DIGIT_RUN.sub("N", word)
    if numbers == "ptb":
        if word == "%" or (_NUMBER.search(word) and not _LETTER.search(word)):
            return "N"
        return word
    raise ValueError(
        f"`numbers` must be one of {NUMBER_STYLES}. Received: {numbers!r}"
    )


def normalize_words(words, numbers="digit-runs"):
    """Applies `normalize_word` to every token of a sentence.

    Args:
        words: iterable of token strings.
        numbers: `"digit-runs"` or `"ptb"` (see `normalize_word`).

    Returns:
        A list of normalised strings.

    Raises:
        TypeError: `words` is a string, not a list of tokens.
    """
    return [normalize_word(w, numbers) for w in check_token_list(words, "words")]


def strip_function_tags(label):
    """Removes function tags and indices from a Treebank label.

    Args:
        label: a label such as `"NP-SBJ-1"`, `"PP-LOC=2"` or `"NP"`.

    Returns:
        The bare category (`"NP"`, `"PP"`, `"NP"`). Labels starting with
        a dash (`-NONE-`, `-LRB-`) are returned unchanged.

    Example:

    >>> strip_function_tags("NP-SBJ-1")
    'NP'
    """
    if label.startswith("-"):
        return label
    return _FUNCTION_TAG.split(label)[0]


def _is_preterminal(node):
    return (
        isinstance(node, nltk.Tree)
        and len(node) == 1
        and isinstance(node[0], str)
    )


def clean_tree(tree, numbers="digit-runs"):
    """Cleans a gold Treebank tree for the parsing evaluation.

    Keeps the tokens whose POS is in `WORD_TAGS` (normalised with
    `normalize_word`), removes the constituents left empty, and strips
    function tags from the labels. POS preterminals and unary chains are
    kept (the span functions collapse them).

    Args:
        tree: an `nltk.Tree` as read from a `.mrg` file.
        numbers: how numbers are written (see `normalize_word`).

    Returns:
        A new `nltk.Tree`, or `None` when no word is left.

    Example:

    >>> gold = nltk.Tree.fromstring(
    ...     "(S (NP-SBJ (NNP Vinken)) (VP (VBZ is) (NP-PRD (CD 61))) (. .))")
    >>> print(clean_tree(gold))
    (S (NP (NNP vinken)) (VP (VBZ is) (NP (CD N))))
    """
    return _clean(tree, numbers, lambda tag: tag in WORD_TAGS)


def _clean(tree, numbers, keep_tag):
    """The recursion of `clean_tree`: tokens whose tag `keep_tag` accepts."""
    if isinstance(tree, str):
        raise ValueError(
            f"Expected an nltk.Tree with POS preterminals, got the bare "
            f"word {tree!r}: read trees with `load_treebank` or "
            "`nltk.Tree.fromstring`."
        )
    if _is_preterminal(tree):
        if keep_tag(tree.label()):
            return nltk.Tree(tree.label(), [normalize_word(tree[0], numbers)])
        return None
    children = []
    for child in tree:
        if isinstance(child, str):
            raise ValueError(
                f"Word {child!r} sits under {tree.label()!r} beside other "
                "children: expected Treebank trees where every word has its "
                "own POS preterminal."
            )
        cleaned = _clean(child, numbers, keep_tag)
        if cleaned is not None:
            children.append(cleaned)
    if not children:
        return None
    return nltk.Tree(strip_function_tags(tree.label()), children)


@dataclasses.dataclass
class TreebankSentence:
    """One gold sentence, preprocessed for the parsing evaluation.

    Attributes:
        words: list of normalised words (the leaves of `tree`).
        tree: the cleaned `nltk.Tree` (`clean_tree`), with POS preterminals.
        spans: frozenset of unlabeled gold spans `(start, end)`,
            end-exclusive, of length > 1, unary chains collapsed, the
            whole-sentence span included when the sentence has two words
            or more.
        labeled_spans: frozenset of `(label, start, end)` of length > 1,
            function tags stripped, whole-sentence constituents included.
        file_id: the file the tree comes from (e.g. `"wsj_0001.mrg"`).
        index: position of the sentence within its file (from 0).
    """

    words: list
    tree: "nltk.Tree"
    spans: frozenset
    labeled_spans: frozenset
    file_id: str
    index: int

    def __len__(self):
        return len(self.words)


def make_sentence(tree, file_id="", index=0, numbers="digit-runs"):
    """Builds a `TreebankSentence` from one raw gold tree.

    Args:
        tree: an `nltk.Tree` as read from a `.mrg` file (or
            `nltk.Tree.fromstring` of Treebank text).
        file_id: name of the source file, for reference.
        index: position of the sentence in its file.
        numbers: how numbers are written (see `normalize_word`).

    Returns:
        A `TreebankSentence`, or `None` when the tree has no word left
        after cleaning.
    """
    cleaned = clean_tree(tree, numbers)
    if cleaned is None:
        return None
    return _sentence_from_clean(cleaned, file_id, index)


def resolve_treebank_dir(directory=None):
    """Finds the folder of `.mrg` files.

    Args:
        directory: a folder holding `.mrg` files, or one holding
            `mrg/` (like `wsj_sample/`), or a data root holding
            `wsj_sample/mrg/`. When `None`, uses
            `$KERAS_ORDERED_DATA/wsj_sample/mrg`.

    Returns:
        The absolute path of the folder of `.mrg` files.

    Raises:
        ValueError: no folder at `directory` (`No treebank folder at ...`),
            or no `.mrg` file in it or its subfolders.
    """
    if directory is None:
        directory = data_dir(None, "wsj_sample/mrg", "--treebank",
                             "Treebank .mrg files")
        origin = f" (${DATA_ENV_VAR}/wsj_sample/mrg)"
    else:
        origin = ""
    directory = os.path.abspath(os.path.expanduser(str(directory)))
    if not os.path.exists(directory):
        raise ValueError(
            f"No treebank folder at {directory!r}{origin}. No .mrg files to "
            "read: pass the folder holding the Treebank .mrg files (e.g. "
            f"--treebank ../shared/data/wsj_sample/mrg), or set "
            f"{DATA_ENV_VAR} to a folder holding wsj_sample/mrg/."
        )
    if not os.path.isdir(directory):
        raise ValueError(
            f"{directory!r} is a file, not a treebank folder: pass the "
            "folder holding the Treebank .mrg files."
        )
    for candidate in (
        directory,
        os.path.join(directory, "mrg"),
        os.path.join(directory, "wsj_sample", "mrg"),
    ):
        if os.path.isdir(candidate) and any(
            name.endswith(".mrg") for name in os.listdir(candidate)
        ):
            return candidate
    raise ValueError(
        f"No .mrg files found in {directory} (nor in its mrg/ or "
        "wsj_sample/mrg/ subfolders): pass the folder holding the Treebank "
        f".mrg files, or set {DATA_ENV_VAR} to a folder holding "
        "wsj_sample/mrg/."
    )


def read_trees(reader, file_id):
    """The gold trees of one file of a `BracketParseCorpusReader`.

    Gives the same trees as `reader.parsed_sents(file_id)` (empty top
    bracketing removed), several times faster: the file's text is read
    at once and its trees built in one pass over it, instead of through
    NLTK's seekable stream reader (see `read_mrg_file`, whose errors name
    the file and line).

    Args:
        reader: an `nltk.corpus.reader.BracketParseCorpusReader`.
        file_id: one of `reader.fileids()`.

    Returns:
        A list of `nltk.Tree`.
    """
    pointer = reader.abspath(file_id)
    return read_mrg_file(getattr(pointer, "path", pointer))


def load_treebank(directory=None, fileids=r".*\.mrg", numbers="digit-runs",
                  max_sentences=None):
    """Reads and preprocesses gold trees from Treebank `.mrg` files.

    Sentences whose cleaned tree has no word (only punctuation or empty
    elements) are skipped; there are none in the WSJ sample.

    Args:
        directory: folder of `.mrg` files (see `resolve_treebank_dir`);
            `None` reads `$KERAS_ORDERED_DATA/wsj_sample/mrg`.
        fileids: regular expression selecting the files of the folder,
            or a list of file names.
        numbers: how numbers are written: `"digit-runs"` (the official
            evaluation code) or `"ptb"` (see `normalize_word`).
        max_sentences: `None` reads every sentence; a positive int reads
            only the first that many (the files after them are not read).

    Returns:
        A list of `TreebankSentence`, sorted by file name, then by the order
        of the sentences in the file.

    Example:

    >>> sentences = load_treebank("../shared/data/wsj_sample/mrg")
    >>> len(sentences)
    3253
    >>> " ".join(sentences[0].words)
    'pierre vinken N years old will join the board as a nonexecutive director nov. N'

    Reference:
        Marcus et al., 1993, "Building a Large Annotated Corpus of English:
        The Penn Treebank", Computational Linguistics.
    """
    if max_sentences is not None:
        check_positive_int("max_sentences", max_sentences)
    directory = resolve_treebank_dir(directory)
    records = list(itertools.islice(
        iter_treebank(directory, fileids=fileids, numbers=numbers),
        max_sentences))
    if not records:
        raise ValueError(
            f"The .mrg files of {directory} hold no sentence with words; "
            "check that they are Penn Treebank bracketed files."
        )
    return records


def iter_treebank(directory=None, fileids=r".*\.mrg", numbers="digit-runs"):
    """The sentences of `load_treebank`, in its order, each read and
    preprocessed when it is asked for: a caller that needs the first few
    sentences of some kind (two words or more, say) reads only the files
    that hold them.

    Args:
        directory, fileids, numbers: as `load_treebank`.

    Yields:
        `TreebankSentence` records.

    Example:

    ```python
    from keras_ordered.datasets.treebank import iter_treebank

    # The WSJ sample of $KERAS_ORDERED_DATA: its first file only is read.
    records = iter_treebank()
    first = next(r for r in records if len(r.words) > 1)
    print(first.words[:2])  # ['pierre', 'vinken']
    ```
    """
    from nltk.corpus.reader import BracketParseCorpusReader

    directory = resolve_treebank_dir(directory)
    # NLTK >= 3.9 refuses to read corpora outside `nltk.data.path`.
    if directory not in nltk.data.path:
        nltk.data.path.append(directory)
    reader = BracketParseCorpusReader(directory, fileids)
    for file_id in sorted(reader.fileids()):
        for index, tree in enumerate(read_trees(reader, file_id)):
            record = make_sentence(tree, file_id=file_id, index=index,
                                   numbers=numbers)
            if record is not None:
                yield record


def map_to_vocabulary(words, vocabulary, unk=UNK):
    """Replaces the words a language model does not know by `<unk>`.

    Args:
        words: list of (normalised) words.
        vocabulary: the model's words: a list (index = id), set or dict.
            It must contain `unk`.
        unk: the unknown-word token.

    Returns:
        A list of words, each in `vocabulary`.

    Example:

    >>> map_to_vocabulary(["the", "zyzzyva"], ["<unk>", "the"])
    ['the', '<unk>']
    """
    if not isinstance(vocabulary, (set, frozenset, dict)):
        vocabulary = set(vocabulary)
    if unk not in vocabulary:
        raise ValueError(
            f"The vocabulary has no {unk!r} token to stand for unknown "
            f"words: add {unk!r} to it (the PTB 10k vocabulary has it)."
        )
    return [w if w in vocabulary else unk for w in words]


def load_lm_sentences(directory=None, max_length=None, min_count=3,
                      numbers="digit-runs"):
    """The sentences of a treebank as language-modelling data.

    The official PRPN unsupervised-parsing setup trains its language model
    on the sentences of the treebank it then parses: punctuation removed by
    POS, lower-cased, every digit run written `N` (the evaluation's
    preprocessing, `clean_tree`), words seen fewer than `min_count` times
    written `<unk>`, each sentence read as `<s> w_1 .. w_n </s>` (here
    `</s>` is the package's `<eos>`), in the treebank's order.

    Args:
        directory: folder of `.mrg` files (see `resolve_treebank_dir`).
        max_length: int or None, keep only sentences of at most this many
            words (10: the WSJ10 setting of the paper).
        min_count: int, words seen fewer times are `<unk>`.
        numbers: how numbers are written (see `normalize_word`).

    Returns:
        `(ids, vocabulary, records)`: a 1-D int32 array of the word ids with
        `<eos>` after every sentence (for `SentenceBatches(...,
        bos_id=vocabulary.index("<s>"))`), the vocabulary (`<eos>`,
        `<unk>`, `<s>`, then the words by decreasing count, ties by first
        occurrence), and the `TreebankSentence` records kept.

    Example:

    ```python
    # needs: shared data (the WSJ sample)
    from keras_ordered.datasets.treebank import load_lm_sentences
    ids, vocabulary, records = load_lm_sentences(
        "../shared/data/wsj_sample/mrg", max_length=10
    )
    ```
    """

    records = load_treebank(directory, numbers=numbers)
    if max_length is not None:
        records = [r for r in records if len(r.words) <= max_length]
    if not records:
        raise ValueError(
            f"No sentence of at most {max_length} words in the treebank."
        )
    counts = collections.Counter(w for r in records for w in r.words)
    kept = [w for w, n in counts.most_common() if n >= min_count
            and w not in (EOS, UNK, BOS)]
    vocabulary = [EOS, UNK, BOS] + kept
    index = {w: i for i, w in enumerate(vocabulary)}
    ids = []
    for record in records:
        ids.extend(index.get(w, 1) for w in record.words)
        ids.append(0)
    return np.asarray(ids, dtype="int32"), vocabulary, records


# --- punctuation kept, and the LDC layout of the full WSJ --------------------

PUNCTUATION_TAGS = frozenset(
    [",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$"]
)
"""POS tags that `clean_tree(..., punctuation=True)` keeps besides
`WORD_TAGS`: punctuation, brackets and the currency symbols (everything
but `-NONE-` empty elements)."""


def clean_tree_with_punctuation(tree, numbers="digit-runs"):
    """`clean_tree`, but punctuation tokens are kept as words.

    Only `-NONE-` empty elements (traces, null complementisers) are
    removed; every other token is kept and normalised with
    `normalize_word`. This is the "with punctuation" setting of the
    evaluation (`keras_ordered.parsing.evaluate.PROTOCOLS`).

    Args:
        tree: an `nltk.Tree` as read from a `.mrg` file.
        numbers: how numbers are written (see `normalize_word`).

    Returns:
        A new `nltk.Tree`, or `None` when no token is left.

    Example:

    >>> gold = nltk.Tree.fromstring(
    ...     "(S (NP-SBJ (NNP Vinken)) (VP (VBZ is) (NP-PRD (CD 61))) (. .))")
    >>> print(clean_tree_with_punctuation(gold))
    (S (NP (NNP vinken)) (VP (VBZ is) (NP (CD N))) (. .))
    """
    return _clean(tree, numbers, lambda tag: tag != "-NONE-")


def _sentence_from_clean(cleaned, file_id, index):
    # The unlabeled spans are the labeled ones without their labels (both
    # keep every constituent over 2 words or more): one walk of the tree.
    labeled_spans = frozenset(trees_lib.tree_to_labeled_spans(cleaned))
    return TreebankSentence(
        words=list(cleaned.leaves()),
        tree=cleaned,
        spans=frozenset((start, end) for _, start, end in labeled_spans),
        labeled_spans=labeled_spans,
        file_id=file_id,
        index=index,
    )


def make_sentence_pair(tree, file_id="", index=0, numbers="digit-runs"):
    """The sentence without and with punctuation, from one raw gold tree.

    Returns:
        `(plain, with_punctuation)`: two `TreebankSentence`s (`plain` is
        `make_sentence`'s), or `None` when the tree has no word left once
        punctuation is removed (such sentences are skipped in both
        settings, so that both score the same sentences).
    """
    plain = make_sentence(tree, file_id=file_id, index=index, numbers=numbers)
    if plain is None:
        return None
    cleaned = clean_tree_with_punctuation(tree, numbers)
    return plain, _sentence_from_clean(cleaned, file_id, index)


LM_TEXT_TAGS = WORD_TAGS | {"$", "#"}
"""POS tags of the tokens the PTB language-modelling text keeps: the words
and the currency symbols (`$ N billion`), not the other punctuation."""


def lm_text_sentences(directory=None):
    """A treebank's sentences as the PTB language-modelling text writes them.

    Mikolov's PTB text was made from the WSJ trees: words and currency
    symbols kept (`LM_TEXT_TAGS`), other punctuation dropped, lower-cased,
    numbers as `N` (`normalize_word(..., "ptb")`). Words the text's
    vocabulary lacks are still written as they are: map them with
    `map_to_vocabulary` before comparing with a line of the text.

    Args:
        directory: a treebank folder (`treebank_split_files`: the WSJ
            sample's layout or the LDC one), every file of it.

    Returns:
        A list of word lists, one per tree with a word, in file order.

    Example:

    ```python
    # needs: shared data (the WSJ sample)
    from keras_ordered.datasets.treebank import lm_text_sentences
    sentences = lm_text_sentences("../shared/data/wsj_sample/mrg")
    ```
    """
    files, _ = treebank_split_files(directory)
    sentences = []
    for _, with_punctuation in load_treebank_files(files, numbers="ptb",
                                                   punctuation=True):
        words = [word for word, tag in with_punctuation.tree.pos()
                 if tag in LM_TEXT_TAGS]
        if words:
            sentences.append(words)
    return sentences


def _tree_problem(error):
    """NLTK's reading error, on one line, without its picture of the text."""
    message = re.sub(r"\s+", " ", str(error)).strip()
    return re.sub(r"(at index \d+)\..*$", r"\1", message).rstrip(".")


def read_mrg_file(path):
    """The trees of one Penn Treebank bracketed (`.mrg`) file.

    The s-expressions of the file, as `nltk.Tree.fromstring` reads each
    (empty top bracketing removed) and NLTK's `BracketParseCorpusReader`
    reads them, built in one pass over the text; a text that is not
    well-formed is read by NLTK, whose error names the line. The file
    must be UTF-8 (the package's one policy: invalid UTF-8 is refused,
    never repaired).

    Args:
        path: the file.

    Returns:
        A list of `nltk.Tree`, in the file's order.

    Raises:
        ValueError: one line naming the file, the line where the bad tree
            starts and NLTK's reason (a truncated or hand-edited file, or
            a file of another format), or the first invalid UTF-8 byte.

    Example:

    ```python
    import tempfile, os
    from keras_ordered.datasets.treebank import read_mrg_file
    path = os.path.join(tempfile.mkdtemp(), "a.mrg")
    with open(path, "w") as f:
        f.write("( (S (NP (DT The) (NN cat)) (VP (VBD sat))) )\\n")
    assert read_mrg_file(path)[0].leaves() == ["The", "cat", "sat"]
    ```
    """
    return _trees_of_text(_mrg_text(path), path)


def _mrg_text(path):
    """The text of the `.mrg` file at `path` (UTF-8, refused otherwise)."""
    with open(path, "rb") as f:
        return decode_utf8_text(f.read(), repr(os.fspath(path)))


def _trees_of_text(content, path):
    trees = _read_well_formed(content)
    if trees is not None:
        return trees
    return _read_with_nltk(content, path)


_SEXPR_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _read_well_formed(content):
    """The trees of a well-formed `.mrg` text in one pass, or `None`.

    Builds what `nltk.Tree.fromstring(text, remove_empty_top_bracketing=True)`
    builds for each top-level s-expression (a word right after `(` is the
    label, any other word a leaf), from one tokenisation of the whole text,
    about 2.4 times as fast as NLTK's reader on the WSJ sample. Returns
    `None` on anything unbalanced or outside brackets, which
    `_read_with_nltk` then reads (or names, with its line).
    """
    Tree = nltk.Tree
    trees = []
    stack = []  # [label, children] of the open brackets
    label_next = False
    for token in _SEXPR_TOKEN.findall(content):
        if token == "(":
            stack.append(["", []])
            label_next = True
        elif token == ")":
            if not stack:
                return None
            label, children = stack.pop()
            label_next = False
            node = Tree(label, children)
            if stack:
                stack[-1][1].append(node)
            elif label == "" and len(children) == 1:
                trees.append(children[0])  # the empty top bracketing
            else:
                trees.append(node)
        elif not stack:
            return None
        elif label_next:
            stack[-1][0] = token
            label_next = False
        else:
            stack[-1][1].append(token)
    return None if stack else trees


def _read_with_nltk(content, path):
    """`read_mrg_file` through NLTK's s-expression reader, naming errors."""
    from nltk.corpus.reader.util import read_sexpr_block

    stream = io.StringIO(content)
    trees = []
    cursor = 0
    while True:
        try:
            block = read_sexpr_block(stream)
        except ValueError as error:  # e.g. an unbalanced ')'
            line = content.count("\n", 0, cursor) + 1
            raise ValueError(
                f"{os.fspath(path)!r} line {line}: cannot split the trees "
                f"({_tree_problem(error)}): is it a Penn Treebank .mrg file?"
            ) from None
        if not block:
            return trees
        for text in block:
            found = content.find(text, cursor)
            start = found if found >= 0 else cursor
            cursor = start + len(text)
            try:
                trees.append(
                    nltk.Tree.fromstring(text, remove_empty_top_bracketing=True)
                )
            except ValueError as error:
                line = content.count("\n", 0, start) + 1
                raise ValueError(
                    f"{os.fspath(path)!r} line {line}: cannot read tree "
                    f"{len(trees) + 1} ({_tree_problem(error)}): the file is "
                    "truncated or damaged, or not a Penn Treebank .mrg file."
                ) from None


WSJ_SECTIONS = tuple(f"{n:02d}" for n in range(25))
"""The 25 sections of the WSJ part of the Penn Treebank (00 .. 24)."""

LDC_SPLITS = {
    "train": tuple(f"{n:02d}" for n in range(2, 22)),
    "dev": ("22",),
    "test": ("23",),
    "wsj10": WSJ_SECTIONS,
}
"""Sections of each split of the full WSJ: the standard 02-21 / 22 / 23,
and WSJ10 (every section, then only the sentences of at most 10 words once
punctuation is removed; Klein and Manning, 2002; PRPN; ON-LSTM)."""


_SECTION = re.compile(r"^[0-9]{2}$")


def find_ldc_wsj_dir(directory):
    """The folder of WSJ section folders (`00/` .. `24/`), or `None`.

    Accepts that folder itself (`.../parsed/mrg/wsj`), or a folder above it
    in the LDC layout (`treebank_3/`, `parsed/`, `parsed/mrg/`, `mrg/`).

    Args:
        directory: an existing folder.

    Returns:
        The absolute path of the folder holding the two-digit section
        folders, or `None` when `directory` is not in the LDC layout.
    """
    directory = os.path.abspath(os.path.expanduser(str(directory)))
    for candidate in (
        directory,
        os.path.join(directory, "wsj"),
        os.path.join(directory, "mrg", "wsj"),
        os.path.join(directory, "parsed", "mrg", "wsj"),
    ):
        if os.path.isdir(candidate) and any(
            _SECTION.match(name) and os.path.isdir(os.path.join(candidate, name))
            for name in os.listdir(candidate)
        ):
            return candidate
    return None


def ldc_split_files(wsj_dir, split=None):
    """The `.mrg` files of a split of the full WSJ in the LDC layout.

    Args:
        wsj_dir: the folder of section folders (`find_ldc_wsj_dir`).
        split: one of `LDC_SPLITS`, or `None` for every section present.

    Returns:
        A sorted list of paths (`SS/wsj_SSNN.mrg`).

    Raises:
        ValueError: a section of the split is missing or holds no `.mrg`
            file; the message names the sections expected, and where.
    """
    if split is None:
        sections = sorted(
            name for name in os.listdir(wsj_dir)
            if _SECTION.match(name) and os.path.isdir(os.path.join(wsj_dir, name))
        )
    elif split not in LDC_SPLITS:
        raise ValueError(
            f"Unknown split {split!r}: choose one of {', '.join(SPLIT_NAMES)}."
        )
    else:
        sections = LDC_SPLITS[split]
    files, missing, empty = [], [], []
    for section in sections:
        folder = os.path.join(wsj_dir, section)
        if not os.path.isdir(folder):
            missing.append(section)
            continue
        found = sorted(
            os.path.join(folder, name) for name in os.listdir(folder)
            if name.endswith(".mrg")
        )
        if not found:
            empty.append(section)
        files.extend(found)
    if missing or empty:
        expected = (
            f"sections {sections[0]}-{sections[-1]}" if len(sections) > 1
            else f"section {sections[0]}"
        )
        problems = []
        if missing:
            problems.append(f"no folder for section(s) {', '.join(missing)}")
        if empty:
            problems.append(
                f"no .mrg file in section(s) {', '.join(empty)}"
            )
        raise ValueError(
            f"The {split or 'treebank'} split expects {expected} as folders "
            f"{os.path.join(wsj_dir, 'SS')}{os.sep} holding wsj_SSNN.mrg files "
            f"(the LDC layout parsed/mrg/wsj/SS/wsj_SSNN.mrg), but there is "
            f"{'; '.join(problems)} in {wsj_dir}."
        )
    return files


def _sample_split_files(directory, split):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".mrg"))
    if split in (None, "wsj10"):
        chosen = names
    elif split in WSJ_SAMPLE_SPLITS:
        pattern = re.compile(WSJ_SAMPLE_SPLITS[split])
        chosen = [n for n in names if pattern.fullmatch(n)]
    elif split in LDC_SPLITS:
        raise ValueError(
            f"{directory} is a folder of .mrg files, not the LDC layout "
            f"(parsed/mrg/wsj/SS/wsj_SSNN.mrg): its files have no {split!r} "
            f"split. The WSJ sample has the splits "
            f"{', '.join(WSJ_SAMPLE_SPLITS)} (WSJ_SAMPLE_SPLITS) and wsj10."
        )
    else:
        raise ValueError(
            f"Unknown split {split!r}: choose one of {', '.join(SPLIT_NAMES)}."
        )
    if not chosen:
        raise ValueError(
            f"The {split} split is empty: no file of {directory} matches "
            f"{WSJ_SAMPLE_SPLITS.get(split)!r}."
        )
    return [os.path.join(directory, n) for n in chosen]


def treebank_split_files(directory=None, split=None):
    """The `.mrg` files of a treebank folder, optionally one split of it.

    Two layouts:

    - the LDC layout of the full WSJ (`parsed/mrg/wsj/SS/wsj_SSNN.mrg`, or
      any folder `find_ldc_wsj_dir` accepts): splits by `LDC_SPLITS`;
    - a folder of `.mrg` files such as the WSJ sample
      (`resolve_treebank_dir`): `dev` and `test` by `WSJ_SAMPLE_SPLITS`,
      `wsj10` from every file; it has no `train` split.

    Args:
        directory: the folder (`None`: `$KERAS_ORDERED_DATA/wsj_sample/mrg`).
        split: `None` (every file), or one of `SPLIT_NAMES`.

    Returns:
        `(files, layout)`: sorted paths, and `"ldc"` or `"folder"`.
    """
    if directory is not None:
        path = os.path.abspath(os.path.expanduser(str(directory)))
        if os.path.isdir(path):
            wsj_dir = find_ldc_wsj_dir(path)
            if wsj_dir is not None:
                return ldc_split_files(wsj_dir, split), "ldc"
    folder = resolve_treebank_dir(directory)
    return _sample_split_files(folder, split), "folder"


def load_treebank_files(files, numbers="digit-runs", punctuation=False,
                        max_length=None, max_sentences=None):
    """Reads and preprocesses the gold trees of given `.mrg` files.

    Args:
        files: list of paths, read in this order.
        numbers: how numbers are written (see `normalize_word`).
        punctuation: `False` for the records of `load_treebank`
            (punctuation removed); `True` for pairs `(plain,
            with_punctuation)` of `make_sentence_pair`.
        max_length: keep only the sentences of at most this many words
            once punctuation is removed (10: WSJ10); `None` keeps all.
        max_sentences: `None` reads every sentence kept; a positive int
            only the first that many (the files after them are not read).

    Returns:
        A list of `TreebankSentence` (or of pairs with `punctuation=True`);
        `file_id` is the path relative to the files' section folder's
        parent (`23/wsj_2300.mrg`) or the file name.
    """
    if max_sentences is not None:
        check_positive_int("max_sentences", max_sentences)
    records = []
    for path in files:
        if max_sentences is not None and len(records) >= max_sentences:
            break
        parent = os.path.basename(os.path.dirname(path))
        file_id = (
            f"{parent}/{os.path.basename(path)}" if _SECTION.match(parent)
            else os.path.basename(path)
        )
        trees = (enumerate(read_mrg_file(path)) if max_length is None
                 else _short_trees(path, max_length))
        for index, tree in trees:
            pair = make_sentence_pair(tree, file_id, index, numbers)
            if pair is None:
                continue
            if max_length is not None and len(pair[0].words) > max_length:
                continue
            records.append(pair if punctuation else pair[0])
    if max_sentences is not None:
        del records[max_sentences:]
    if not records:
        raise ValueError(
            f"The {len(files)} .mrg file(s) (first: {files[0] if files else '-'}) "
            "hold no sentence with words"
            + (f" of at most {max_length} words" if max_length else "")
            + "; check that they are Penn Treebank bracketed files."
        )
    return records


_PRETERMINAL = re.compile(r"\(([^\s()]+)\s+[^\s()]+\s*\)")
"""A node of one word, `(TAG word)`: its tag is the first group."""


def _short_trees(path, max_length):
    """`(index in the file, tree)` of the trees of the `.mrg` file at
    `path` with at most `max_length` words once cleaned (`_word_count`).

    Only those trees are built: the top-level brackets and the one-word
    nodes are found in the text (NumPy over its characters, and one
    regular expression), and a tree is read only if its words are few
    enough. A text that is not a sequence of balanced trees is read whole,
    as `read_mrg_file` reads it (which then names its error)."""
    content = _mrg_text(path)
    spans = _top_level_spans(content)
    if spans is not None:
        kept = []
        for index, (start, end) in enumerate(spans):
            tags = _PRETERMINAL.findall(content, start, end)
            if sum(map(WORD_TAGS.__contains__, tags)) > max_length:
                continue  # longer without its punctuation too: not read
            trees = _read_well_formed(content[start:end])
            if trees is None or len(trees) != 1:
                break
            kept.append((index, trees[0]))
        else:
            return kept
    return [(index, tree)
            for index, tree in enumerate(_trees_of_text(content, path))
            if _word_count(tree) <= max_length]


def _top_level_spans(content):
    """The `(start, end)` character offsets of each top-level bracketed
    expression of `content`, or `None` if its brackets do not balance or
    anything but white space lies between them."""
    codes = np.frombuffer(content.encode("utf-32-le"), dtype=np.uint32)
    positions = np.flatnonzero((codes == ord("(")) | (codes == ord(")")))
    if not len(positions):
        return None
    steps = np.where(codes[positions] == ord("("), 1, -1)
    depth = np.cumsum(steps)
    if depth.min() < 0 or depth[-1] != 0:
        return None
    starts = positions[(steps == 1) & (depth == 1)]
    ends = positions[depth == 0] + 1
    spans = list(zip(starts.tolist(), ends.tolist()))
    gaps = zip([0] + [end for _, end in spans],
               [start for start, _ in spans] + [len(content)])
    if any(content[a:b].strip() for a, b in gaps):
        return None
    return spans


def _word_count(tree):
    """The number of words `clean_tree` keeps (preterminals whose tag is
    in `WORD_TAGS`), counted without building the cleaned tree."""
    count = 0
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_preterminal(node):
            count += node.label() in WORD_TAGS
        else:
            stack.extend(child for child in node
                         if not isinstance(child, str))
    return count


def load_treebank_split(directory=None, split=None, numbers="digit-runs",
                        punctuation=False):
    """Gold sentences of a treebank split, in either layout.

    `split="wsj10"` keeps the sentences of at most 10 words once
    punctuation is removed, from every section (the papers' WSJ10).

    Args:
        directory, split: as `treebank_split_files`.
        numbers, punctuation: as `load_treebank_files`.

    Returns:
        `(records, files, layout)`.

    Example:

    ```python
    # needs: the full WSJ from the LDC
    records, files, _ = load_treebank_split("treebank_3/parsed/mrg/wsj", "test")
    len(files)  # 100 files of section 23
    ```
    """
    files, layout = treebank_split_files(directory, split)
    records = load_treebank_files(
        files, numbers=numbers, punctuation=punctuation,
        max_length=10 if split == "wsj10" else None,
    )
    return records, files, layout
