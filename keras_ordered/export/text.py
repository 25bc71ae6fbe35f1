"""The in-graph text path: raw sentences -> Treebank tokens -> ids.

Everything here is built from core TensorFlow string and lookup ops
(`tf.strings.regex_replace`, `tf.strings.split`, `tf.strings.lower`,
`tf.strings.unicode_transcode`, `tf.lookup.StaticHashTable`), so it runs
inside a `tf.function`, inside a SavedModel, and in TF Serving's standard
model server, with unknown batch size. The same ops run eagerly for the
command line (`tokenize_python`), so served and offline results cannot
drift apart.

The pieces:

- `repair_utf8(sentences)`: invalid UTF-8 sequences -> U+FFFD, per
  sentence, with a validity flag;
- `tokenize(sentences)`: splits punctuation off the words the way the Penn
  Treebank does, a port of nltk's `TreebankWordTokenizer` (`"don't"` ->
  `do n't`, `"mat."` -> `mat .`, `"` -> `` `` `` / `''`); tokens as
  written, for the trees;
- `normalize(tokens)`: what a model reads, as
  `keras_ordered.datasets.treebank.normalize_word` (lower-casing, digits ->
  `N`);
- `VocabularyTable`: word -> id with `<unk>`, read from a vocabulary file
  that becomes a SavedModel asset;
- `check_sentences`: per-sentence validity flags and messages (empty,
  too long, invalid UTF-8), so that one bad sentence never breaks the
  others of a batch;
- `TextPreprocessor`: the whole path in one `tf.Module`.
"""

import os
import tempfile

import keras
import tensorflow as tf

from keras_ordered._tokens import CONTROL_CHARACTER_PATTERN
from keras_ordered._tokens import check_control_characters
from keras_ordered._tokens import check_utf8_lines
from keras_ordered._tokens import UNK

NUMBER_STYLES = ("digit-runs", "ptb", None)
"""Values of `numbers`: as `normalize_word`, or `None` to keep digits."""

# Character classes written out for RE2, whose \s, \d, \w and \b are ASCII
# only. nltk compiles most Treebank patterns with the `regex` module (its
# \s is the Unicode White_Space property, \d the decimal digits) and the
# contraction patterns with `re` (\w is str.isalnum() or "_"); the final
# `str.split()` splits at every character for which str.isspace() holds.
_REGEX_SPACE = (
    r"\t\n\x0b\x0c\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
    r"\x{202f}\x{205f}\x{3000}"
)
_SPLIT_SPACE = _REGEX_SPACE + r"\x1c-\x1f"
# `keras_ordered._tokens.CONTROL_CHARACTER_PATTERN` in RE2's spelling.
_RE2_CONTROL_CHARACTER = CONTROL_CHARACTER_PATTERN.replace(
    r"\x7f-\x9f", r"\x{7f}-\x{9f}"
)
_WORD = r"\p{L}\p{N}_"
_LETTER = r"\p{L}\p{Nl}\p{No}"

# (pattern, rewrite, passes). A `\b` of the contraction patterns is written
# as a consumed non-word character (or the text's end); two passes then
# catch a match whose left boundary the previous match consumed.
_TREEBANK_RULES = (
    # Starting quotes.
    (r'^"', "``", 1),
    (r"(``)", r" \1 ", 1),
    (r"([ (\[{<])(\"|'')", r"\1 `` ", 1),
    # Punctuation. Python's `$` also matches before a final newline.
    (r"([:,])([^\p{Nd}])", r" \1 \2", 1),
    (r"([:,])(\n?)\z", r" \1 \2", 1),
    (r"\.\.\.", " ... ", 1),
    (r"[;@#$%&]", r" \0 ", 1),
    (r"([^.])(\.)([\])}>\"']*)[" + _REGEX_SPACE + r"]*\z", r"\1 \2\3 ", 1),
    (r"[?!]", r" \0 ", 1),
    (r"([^'])' ", r"\1 ' ", 1),
    # Parentheses and brackets, double dashes.
    (r"[\]\[(){}<>]", r" \0 ", 1),
    (r"--", " -- ", 1),
    # Padding (a space at both ends), then ending quotes.
    (None, None, 1),
    (r"''", " '' ", 1),
    (r'"', " '' ", 1),
    (r"([^' ])('[sS]|'[mM]|'[dD]|') ", r"\1 \2 ", 1),
    (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1 \2 ", 1),
) + tuple(
    # Contractions (MacIntyre's list, as nltk uses it).
    (
        rf"(?i)(\A|[^{_WORD}])({first})({second})([^{_WORD}]|\z)",
        r"\1 \2 \3 \4",
        2,
    )
    for first, second in (
        ("can", "not"),
        ("d", "'ye"),
        ("gim", "me"),
        ("gon", "na"),
        ("got", "ta"),
        ("lem", "me"),
        ("more", "'n"),
    )
) + (
    (
        rf"(?i)(\A|[^{_WORD}])(wan)(na)([{_SPLIT_SPACE}])",
        r"\1 \2 \3 \4",
        2,
    ),
    (rf"(?i) ('t)(is)([^{_WORD}]|\z)", r" \1 \2 \3", 2),
    (rf"(?i) ('t)(was)([^{_WORD}]|\z)", r" \1 \2 \3", 2),
)


def _check_numbers(numbers):
    if numbers not in NUMBER_STYLES:
        raise ValueError(
            f"`numbers` must be one of {NUMBER_STYLES} (see "
            "`keras_ordered.datasets.treebank.normalize_word`). "
            f"Received: {numbers!r}"
        )


def _as_string_tensor(sentences, name="sentences"):
    sentences = tf.convert_to_tensor(sentences)
    if sentences.dtype != tf.string:
        raise ValueError(
            f"`{name}` must be a string tensor (a batch of UTF-8 "
            f"sentences), got dtype {sentences.dtype.name}."
        )
    if sentences.shape.rank is not None and sentences.shape.rank != 1:
        raise ValueError(
            f"`{name}` must have shape [batch] (one sentence per "
            f"element), got shape {sentences.shape}."
        )
    return sentences


def repair_utf8(sentences):
    """Replaces every invalid UTF-8 sequence of each sentence by U+FFFD.

    Works element by element: an invalid sentence never fails the batch
    (as `tf.strings.unicode_decode(..., errors="strict")` would).

    Args:
        sentences: string tensor of shape `[batch]`.

    Returns:
        A pair `(repaired, valid)`: the sentences with invalid sequences
        replaced (valid ones unchanged), and a boolean tensor `[batch]`,
        `True` where the sentence was valid UTF-8.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    repaired, valid = text.repair_utf8(tf.constant([b"ok", b"bad \\xff"]))
    assert valid.numpy().tolist() == [True, False]
    ```
    """
    sentences = _as_string_tensor(sentences)
    repaired = tf.strings.unicode_transcode(
        sentences,
        input_encoding="UTF-8",
        output_encoding="UTF-8",
        errors="replace",
        replacement_char=0xFFFD,
    )
    return repaired, tf.equal(repaired, sentences)


def tokenize(sentences, treebank=True):
    """Splits raw sentences into tokens, as nltk's `TreebankWordTokenizer`.

    Punctuation is split off the words the way the Penn Treebank is
    tokenized: `"The cat's mat."` -> `The cat 's mat .`; `"don't"` ->
    `do n't`; double quotes become `` `` `` (opening) and `''` (closing);
    commas, colons, `;@#$%&?!`, parentheses and brackets, `...` and `--`
    become tokens of their own; hyphenated words and numbers such as `3.5`
    and `1,000` stay whole. Tokens keep their case and digits (see
    `normalize`). Text that is already tokenized this way gives the same
    tokens back.

    A port of nltk 3.10's `TreebankWordTokenizer.tokenize` (without
    `convert_parentheses`) to RE2 with core TensorFlow ops. It gives
    nltk's tokens on every sentence of the WSJ sample and on random
    strings of quotes, punctuation, contractions and Unicode spaces
    (`tests/export/test_export_text.py`). Known differences: invalid UTF-8,
    which nltk never sees (repair it first, see `repair_utf8`), and the
    character classes RE2 spells out for Python's Unicode `\\s`, `\\d`
    and `\\w`, whose Unicode versions may differ on a few characters
    above U+0800 (none in Latin, Greek or Cyrillic text).

    Like nltk, it is not idempotent on every treebank token: tokenizing
    text that is already tokenized keeps the tokens, except a closing
    `''` after a space (read as an opening quote), `&` / `$` / `%` inside
    a token (`S&P`, `US$`), `Gotta`, and a sentence-final abbreviation
    (`D.C.` loses its period).

    Args:
        sentences: string tensor of shape `[batch]`, UTF-8 (invalid
            sequences should be repaired first, see `repair_utf8`).
        treebank: whether to split punctuation off; `False` splits at
            whitespace only.

    A byte-order mark (U+FEFF) that starts a sentence is dropped. Control
    characters are tokenized as nltk does (some kept in a word, others
    read as spaces): `check_sentences` and `tokenize_python` refuse them.

    Returns:
        A `tf.RaggedTensor` of strings, shape `[batch, None]`: the tokens
        as written. An empty or whitespace-only sentence has no tokens.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    tokens = text.tokenize(tf.constant(["Don't sit on the cat's mat."]))
    assert tokens.to_list() == [
        [b"Do", b"n't", b"sit", b"on", b"the", b"cat", b"'s", b"mat", b"."]]
    ```
    """
    text = tf.strings.regex_replace(
        _as_string_tensor(sentences), "^\\x{feff}", ""
    )
    if treebank:
        for pattern, rewrite, passes in _TREEBANK_RULES:
            if pattern is None:
                text = tf.strings.join([" ", text, " "])
                continue
            for _ in range(passes):
                text = tf.strings.regex_replace(text, pattern, rewrite)
    text = tf.strings.regex_replace(text, f"[{_SPLIT_SPACE}]", " ")
    return tf.strings.split(text)


def normalize(tokens, numbers="digit-runs", lowercase=True):
    """Normalises tokens as `keras_ordered.datasets.treebank.normalize_word`.

    Lower-cases every token (full Unicode lower-casing, as `str.lower`
    except for about 40 characters added in Unicode 14 that TensorFlow's
    ICU does not know), then writes numbers as `N`:

    - `numbers="digit-runs"`: every run of ASCII digits becomes `N`
      (`61` -> `N`, `15,000` -> `N,N`, `1980s` -> `Ns`);
    - `numbers="ptb"`: a token with a digit and no letter, and `%`,
      become `N`; tokens mixing digits and letters stay;
    - `numbers=None`: digits are kept.

    Args:
        tokens: string tensor or `tf.RaggedTensor` of tokens, any shape.
        numbers: `"digit-runs"`, `"ptb"` or `None`.
        lowercase: whether to lower-case (`normalize_word` always does).

    Returns:
        The normalised tokens, of the same shape (and raggedness).

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    words = text.normalize(tf.constant(["Pierre", "61", "15,000", "1980s"]))
    assert words.numpy().tolist() == [b"pierre", b"N", b"N,N", b"Ns"]
    ```
    """
    _check_numbers(numbers)
    if isinstance(tokens, tf.RaggedTensor):
        return tokens.with_flat_values(
            normalize(tokens.flat_values, numbers, lowercase)
        )
    tokens = tf.convert_to_tensor(tokens)
    if tokens.dtype != tf.string:
        raise ValueError(
            f"`tokens` must be strings, got dtype {tokens.dtype.name}."
        )
    if lowercase:
        tokens = tf.strings.lower(tokens, encoding="utf-8")
    if numbers == "digit-runs":
        tokens = tf.strings.regex_replace(tokens, "[0-9]+", "N")
    elif numbers == "ptb":
        is_number = tf.logical_or(
            tf.equal(tokens, "%"),
            tf.logical_and(
                tf.strings.regex_full_match(tokens, "(?s).*[0-9].*"),
                tf.logical_not(
                    tf.strings.regex_full_match(tokens, f"(?s).*[{_LETTER}].*")
                ),
            ),
        )
        tokens = tf.where(is_number, tf.constant("N"), tokens)
    return tokens


def check_sentences(sentences, tokens=None, max_length=None, valid_utf8=None):
    """Per-sentence validity flags and error messages.

    A sentence is refused when it is invalid UTF-8, holds a control
    character (category Cc other than tab, line feed and carriage return,
    as `keras_ordered._tokens.ControlCharacterError`), is empty or
    whitespace only, or is longer than `max_length` tokens. Each sentence gets its own
    flag and message; the others of the batch are unaffected.

    Args:
        sentences: string tensor `[batch]`, the raw sentences.
        tokens: their tokens (`tf.RaggedTensor [batch, None]`); computed
            with `tokenize` when `None`.
        max_length: the most tokens a sentence may have, or `None`.
        valid_utf8: boolean `[batch]` from `repair_utf8`, or `None` to
            compute it.

    Returns:
        A pair `(valid, message)`: a boolean tensor `[batch]`, and a string
        tensor `[batch]` that is empty for a valid sentence and says what
        is wrong otherwise.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    valid, message = text.check_sentences(
        tf.constant(["the cat", "   ", b"\\xff"]), max_length=10)
    assert valid.numpy().tolist() == [True, False, False]
    ```
    """
    if max_length is not None and (
        isinstance(max_length, bool) or not isinstance(max_length, int)
        or max_length < 1
    ):
        raise ValueError(
            f"`max_length` must be a positive int or None, got {max_length!r}."
        )
    sentences = _as_string_tensor(sentences)
    if valid_utf8 is None or tokens is None:
        repaired, checked = repair_utf8(sentences)
        if valid_utf8 is None:
            valid_utf8 = checked
        if tokens is None:
            tokens = tokenize(repaired)
    counts = tf.cast(tokens.row_lengths(), tf.int64)
    empty = tf.equal(counts, 0)
    message = tf.where(
        empty,
        tf.constant("empty sentence: give at least one word"),
        tf.constant(""),
    )
    if max_length is not None:
        too_long = counts > max_length
        message = tf.where(
            too_long,
            tf.strings.join([
                "sentence has ",
                tf.strings.as_string(counts),
                f" tokens, more than the limit of {max_length}: split it",
            ]),
            message,
        )
    message = tf.where(
        tf.strings.regex_full_match(
            sentences, "(?s).*" + _RE2_CONTROL_CHARACTER + ".*"
        ),
        tf.constant(
            "control character (U+0000-U+001F or U+007F-U+009F, other than "
            "tab, line feed and carriage return): remove it"
        ),
        message,
    )
    message = tf.where(
        valid_utf8,
        message,
        tf.constant("invalid UTF-8: send the sentence encoded as UTF-8"),
    )
    return tf.equal(message, ""), message


def write_vocabulary(words, path):
    """Writes a vocabulary file: one word per line, the id is the line number.

    Args:
        words: list of distinct, non-empty word strings without newlines.
        path: file to write.

    Returns:
        `path`.
    """
    words = [w.decode("utf-8") if isinstance(w, bytes) else w for w in words]
    if not words:
        raise ValueError("The vocabulary is empty: give at least one word.")
    seen = set()
    for position, word in enumerate(words):
        if not isinstance(word, str) or not word:
            raise ValueError(
                f"Vocabulary word {position} is {word!r}: every word must be "
                "a non-empty string."
            )
        if "\n" in word or "\r" in word:
            raise ValueError(
                f"Vocabulary word {position} ({word!r}) contains a line "
                "break; a vocabulary file holds one word per line."
            )
        if word in seen:
            raise ValueError(
                f"Vocabulary word {word!r} appears twice (again at "
                f"position {position}): the words must be distinct."
            )
        seen.add(word)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(words) + "\n")
    return path


def _read_vocabulary(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


class VocabularyTable(tf.Module):
    """Word -> id lookup with `<unk>`, from a vocabulary file (an asset).

    Word `i` of the file (0-based line number) has id `i`; a word not in
    the file gets the id of `unk_token`. The table reads the file through
    `tf.lookup.TextFileInitializer`, so when a `VocabularyTable` is tracked
    by a `tf.Module` that `tf.saved_model.save` writes, the file is copied
    into the SavedModel's `assets/` folder and the table is rebuilt from
    there on load (no Python, no path to the original file needed).

    Args:
        vocabulary_file: path of a file with one word per line (see
            `write_vocabulary`).
        unk_token: the unknown-word token; must be in the file.
        name: module name.

    Call arguments:
        words: string tensor or `tf.RaggedTensor` of words, any shape.

    Returns (of a call):
        int64 ids, same shape (and raggedness) as `words`.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    table = text.VocabularyTable.from_words(["<unk>", "the", "cat"])
    assert table(tf.constant(["the", "dog"])).numpy().tolist() == [1, 0]
    ```
    """

    def __init__(self, vocabulary_file, unk_token=UNK, name=None):
        super().__init__(name=name)
        vocabulary_file = os.fspath(vocabulary_file)
        if not os.path.isfile(vocabulary_file):
            raise ValueError(
                f"Vocabulary file {vocabulary_file!r} does not exist: write "
                "one with `write_vocabulary(words, path)`."
            )
        words = _read_vocabulary(vocabulary_file)
        if unk_token not in words:
            raise ValueError(
                f"The unknown-word token {unk_token!r} is not in "
                f"{vocabulary_file!r}: add it to the vocabulary, or pass the "
                "`unk_token` the vocabulary uses."
            )
        if len(set(words)) != len(words):
            raise ValueError(
                f"{vocabulary_file!r} holds a word twice: the words of a "
                "vocabulary file must be distinct."
            )
        self.vocabulary_file = vocabulary_file
        self.unk_token = unk_token
        self.unk_id = words.index(unk_token)
        self.vocabulary_size = len(words)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                vocabulary_file,
                key_dtype=tf.string,
                key_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                value_dtype=tf.int64,
                value_index=tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
            default_value=tf.constant(self.unk_id, tf.int64),
        )

    @classmethod
    def from_words(cls, words, directory=None, filename="vocabulary.txt",
                   unk_token=UNK):
        """Writes `words` to `directory/filename` and builds the table on it.

        Args:
            words: list of distinct word strings, `unk_token` among them.
            directory: an existing folder for the vocabulary file; a new
                temporary folder when `None` (the file must stay there
                until the SavedModel is written, which copies it).
            filename: the file's name (also its name under `assets/`).
            unk_token: the unknown-word token.

        Returns:
            A `VocabularyTable`.
        """
        if directory is None:
            directory = tempfile.mkdtemp(prefix="keras_ordered_vocabulary_")
        path = write_vocabulary(words, os.path.join(directory, filename))
        return cls(path, unk_token=unk_token)

    def __call__(self, words):
        if isinstance(words, tf.RaggedTensor):
            return words.with_flat_values(self(words.flat_values))
        return self.table.lookup(tf.convert_to_tensor(words, tf.string))


@keras.saving.register_keras_serializable(package="keras_ordered")
class TextPreprocessor(keras.layers.Layer):
    """The whole text path: raw sentences -> tokens, words, ids, flags.

    Repairs invalid UTF-8 (and flags it), tokenizes with `tokenize`,
    reads each token as the Python models do (`token_ids` of
    `keras_ordered.models.base.SyntacticDistanceMixin`: as written when
    the vocabulary holds it, else normalised with `normalize`), looks the
    words up in a `VocabularyTable` and checks every sentence with
    `check_sentences`. A Keras layer whose
    config holds the vocabulary (it saves in a `.keras` file); track it in
    the `tf.Module` that holds a serving signature and its vocabulary file
    becomes an asset of the SavedModel.

    Args:
        vocabulary: list of distinct words (`unk_token` among them), or
            the path of a vocabulary file (one word per line). A list is
            written to a file in a new temporary folder.
        unk_token: the unknown-word token.
        numbers: `"digit-runs"`, `"ptb"` or `None` (see `normalize`).
        lowercase: whether to lower-case the words.
        treebank: whether to split punctuation off (see `tokenize`).
        max_length: the most tokens a sentence may have, or `None`.
        **kwargs: base layer arguments (`name`, ...).

    Call arguments:
        sentences: string tensor `[batch]` of raw UTF-8 sentences.

    Returns (of a call):
        A dict: `tokens` (ragged `[batch, None]` strings, as written),
        `words` (ragged: what the model reads, each token as written when
        the vocabulary holds it, else normalised), `ids` (ragged int64), `lengths`
        (int64 `[batch]`), `valid` (bool `[batch]`) and `message`
        (string `[batch]`, empty when valid). The tokens of an invalid
        sentence are still returned; a server should answer its
        `message` instead of a result.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import text
    pre = text.TextPreprocessor(["<unk>", "the", "cat", "."], max_length=5)
    out = pre(tf.constant(["The cat.", ""]))
    assert out["ids"].to_list() == [[1, 2, 3], []]
    assert out["valid"].numpy().tolist() == [True, False]
    same = text.TextPreprocessor.from_config(pre.get_config())
    ```
    """

    def __init__(self, vocabulary, unk_token=UNK, numbers="digit-runs",
                 lowercase=True, treebank=True, max_length=None, **kwargs):
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        _check_numbers(numbers)
        if max_length is not None and (
            isinstance(max_length, bool) or not isinstance(max_length, int)
            or max_length < 1
        ):
            raise ValueError(
                f"`max_length` must be a positive int or None, got "
                f"{max_length!r}."
            )
        if isinstance(vocabulary, (str, os.PathLike)):
            self.vocabulary_table = VocabularyTable(vocabulary, unk_token)
            vocabulary = _read_vocabulary(vocabulary)
        else:
            self.vocabulary_table = VocabularyTable.from_words(
                list(vocabulary), unk_token=unk_token
            )
        self.vocabulary = [
            w.decode("utf-8") if isinstance(w, bytes) else w
            for w in vocabulary
        ]
        self.unk_token = unk_token
        self.numbers = numbers
        self.lowercase = bool(lowercase)
        self.treebank = bool(treebank)
        self.max_length = max_length
        # No weights: built from the start (keras.export.ExportArchive
        # tracks built layers only).
        self.built = True

    def call(self, sentences):
        sentences = _as_string_tensor(sentences)
        repaired, valid_utf8 = repair_utf8(sentences)
        tokens = tokenize(repaired, treebank=self.treebank)
        # A token the vocabulary holds as written is read as itself; any
        # other is normalised (the lookup of the Python models, `token_ids`).
        written_ids = self.vocabulary_table(tokens.flat_values)
        known = tf.not_equal(written_ids, self.vocabulary_table.unk_id)
        normalized = normalize(tokens.flat_values, self.numbers, self.lowercase)
        words = tokens.with_flat_values(
            tf.where(known, tokens.flat_values, normalized)
        )
        ids = tokens.with_flat_values(
            tf.where(known, written_ids, self.vocabulary_table(normalized))
        )
        valid, message = check_sentences(
            sentences, tokens, self.max_length, valid_utf8
        )
        return {
            "tokens": tokens,
            "words": words,
            "ids": ids,
            "lengths": tokens.row_lengths(),
            "valid": valid,
            "message": message,
        }

    def get_config(self):
        config = super().get_config()
        config.update({
            "vocabulary": list(self.vocabulary),
            "unk_token": self.unk_token,
            "numbers": self.numbers,
            "lowercase": self.lowercase,
            "treebank": self.treebank,
            "max_length": self.max_length,
        })
        return config


def tokenize_python(lines, treebank=True):
    """Tokenizes Python strings with the in-graph ops, run eagerly.

    The command line's tokenizer: the same ops as the SavedModels, so a
    sentence gets the same tokens offline and served.

    Args:
        lines: iterable of `str` (or UTF-8 `bytes`), one sentence each.
        treebank: whether to split punctuation off (see `tokenize`).

    Returns:
        A list (one per line) of lists of `str` tokens.

    Raises:
        keras_ordered._tokens.InvalidUTF8Error: (a `ValueError`) a line is
            not valid UTF-8 (bytes that do not decode, or a `str` holding
            lone surrogates, as `sys.argv` carries undecodable bytes); the
            message names the line. Invalid UTF-8 is refused everywhere,
            never repaired: a SavedModel answers such a sentence with
            `valid` false.
        keras_ordered._tokens.ControlCharacterError: (a `ValueError`) a
            line holds a control character (`check_sentences` flags the
            same sentences); the message names the line and the column.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export.text import tokenize_python
    assert tokenize_python(['He said "hi" (twice).']) == [
        ["He", "said", "``", "hi", "''", "(", "twice", ")", "."]]
    ```
    """
    lines = check_control_characters(check_utf8_lines(lines))
    encoded = [line.encode("utf-8") for line in lines]
    if not encoded:
        return []
    repaired, _ = repair_utf8(tf.constant(encoded, dtype=tf.string))
    tokens = tokenize(repaired, treebank=treebank)
    return [
        [token.decode("utf-8") for token in sentence]
        for sentence in tokens.to_list()
    ]


__all__ = [
    "UNK",
    "NUMBER_STYLES",
    "repair_utf8",
    "tokenize",
    "normalize",
    "check_sentences",
    "write_vocabulary",
    "VocabularyTable",
    "TextPreprocessor",
    "tokenize_python",
]
