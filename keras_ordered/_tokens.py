"""The special tokens of every vocabulary, and checks of the token lists
the Python API takes.

The special tokens (`EOS`, `UNK`, `BOS`, `PAD`, `GO`) are defined here
only; the modules that use them import them from here.

A sentence is a list of token strings (`["the", "cat", "sat"]`). A plain
string where a list of tokens belongs would be read one character per
token (`"the cat"` as 7 "words"), silently; these checks turn that into a
`TypeError` that says what to pass. `TokenVocabulary` is the one base of
the vocabularies with fixed special ids. Standard library only.
"""

import collections
import collections.abc
import re

EOS = "<eos>"
"""The end of a sentence (PTB's `<eos>`; also GFL's end of output)."""
UNK = "<unk>"
"""A word the vocabulary does not hold."""
BOS = "<s>"
"""The start of a sentence, where a model reads one before the first word
(the official unsupervised-parsing setup)."""
PAD = "<pad>"
"""Padding, never predicted (GFL's and the TD-TreeLSTM's vocabularies)."""
GO = "<go>"
"""The first input of GFL's decoder."""
ROOT = "<root>"
"""The root of a dependency tree (the TD-TreeLSTM reads it first)."""

# The special tokens each family's vocabulary starts with, in id order:
# a token's id is its position here.
DEPENDENCY_SPECIALS = (PAD, UNK, ROOT)
"""The TD-TreeLSTM's words (`datasets.dependency.DependencyVocabulary`)."""
GFL_SOURCE_SPECIALS = (PAD, UNK)
"""The GFL parser's source words."""
GFL_TARGET_SPECIALS = (PAD, GO, EOS)
"""The GFL parser's target symbols (linearized trees)."""
ROOT_ID = DEPENDENCY_SPECIALS.index(ROOT)
"""The id of `<root>` in a dependency vocabulary (2)."""



class TokenVocabulary(collections.abc.Sequence):
    """A read-only list of tokens (index = id), its special tokens first.

    The one base of the package's vocabularies of fixed special ids: GFL's
    `SourceVocabulary` and `TargetVocabulary`
    (`keras_ordered.models.gfl`) and the TD-TreeLSTM's
    `DependencyVocabulary` (`keras_ordered.datasets.dependency`). A
    subclass names its `specials` (they take ids 0, 1, ...) and its
    `unknown` token (what a token it lacks is encoded as; None: such a
    token is an error). It compares equal to the list of its tokens.

    Args:
        tokens: iterable of str, in id order. The specials come first
            whether or not `tokens` holds them; a token listed twice is
            kept once.
        lowercase: lower-case the tokens (not the specials) when building
            and when looking up.

    Example:

    ```python
    from keras_ordered._tokens import TokenVocabulary

    class Words(TokenVocabulary):
        specials = ("<pad>", "<unk>")
        unknown = "<unk>"

    words = Words(["The", "cat"], lowercase=True)
    assert words == ["<pad>", "<unk>", "the", "cat"]
    assert words.encode(["the", "Cat", "dog"]) == [2, 3, 1]
    ```
    """

    specials = ()
    unknown = None

    def __init__(self, tokens, lowercase=False):
        if isinstance(tokens, (str, bytes)):
            raise ValueError(
                "Pass a list of tokens, not a single string. Received: "
                f"{tokens[:40]!r}"
            )
        self.lowercase = bool(lowercase)
        ordered = list(self.specials)
        seen = set(ordered)
        for token in tokens:
            token = self.normalise(str(token))
            if token not in seen:
                seen.add(token)
                ordered.append(token)
        self.tokens = tuple(ordered)
        self.ids = {token: i for i, token in enumerate(self.tokens)}

    def normalise(self, token):
        """`token` as looked up: lower-cased with `lowercase` (a special
        token stays as it is)."""
        if self.lowercase and token not in self.specials:
            return token.lower()
        return token

    @classmethod
    def most_frequent(cls, sequences, min_count=1, lowercase=False):
        """The tokens of `sequences` seen at least `min_count` times, most
        frequent first (ties alphabetical), the specials left out.

        Args:
            sequences: iterable of lists of tokens.
            min_count: int >= 1.
            lowercase: count the tokens lower-cased.

        Returns:
            A list of str.
        """
        if min_count < 1:
            raise ValueError(
                f"`min_count` must be >= 1. Received: {min_count}")
        counts = collections.Counter()
        for sequence in sequences:
            counts.update(t.lower() if lowercase else t for t in sequence)
        for special in cls.specials:
            counts.pop(special, None)
        return sorted((t for t, n in counts.items() if n >= min_count),
                      key=lambda t: (-counts[t], t))

    def encode(self, tokens):
        """The ids of `tokens`: the `unknown` token's for those the
        vocabulary lacks (a ValueError naming the first, without one)."""
        ids = self.ids
        if self.unknown is None:
            missing = [t for t in tokens if self.normalise(t) not in ids]
            if missing:
                raise ValueError(
                    f"The {type(self).__name__} has no token {missing[0]!r}.")
            return [ids[self.normalise(t)] for t in tokens]
        unknown = ids[self.unknown]
        return [ids.get(self.normalise(t), unknown) for t in tokens]

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, index):
        return self.tokens[index]

    def __iter__(self):
        return iter(self.tokens)

    def __contains__(self, token):
        return self.normalise(token) in self.ids

    def __eq__(self, other):
        if isinstance(other, TokenVocabulary):
            return type(self) is type(other) and self.tokens == other.tokens
        if isinstance(other, collections.abc.Sequence) and not isinstance(
                other, (str, bytes)):
            return list(self.tokens) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        head = ", ".join(self.tokens[: len(self.specials) + 3])
        return f"{type(self).__name__}({len(self)} tokens: {head}, ...)"


_SEQUENCE_HINT = (
    "pass a list of token strings, e.g. {example} (split a raw sentence "
    "with str.split() or keras_ordered.export.text.tokenize_python)"
)


def _example(text):
    words = text.split()[:3] or ["the", "cat", "sat"]
    return repr(words)


def check_token_list(tokens, name="tokens"):
    """A sentence's tokens as a list, refusing a string in their place.

    Args:
        tokens: a list (or other iterable) of token strings.
        name: what to call the argument in the message.

    Returns:
        The tokens, as a list.

    Raises:
        TypeError: `tokens` is a `str` or `bytes` (one sentence written as
            text), or is not iterable.

    Example:

    ```python
    from keras_ordered._tokens import check_token_list
    assert check_token_list(("the", "cat")) == ["the", "cat"]
    try:
        check_token_list("the cat")
    except TypeError as error:
        assert "list of token strings" in str(error)
    ```
    """
    if isinstance(tokens, (str, bytes)):
        text = tokens.decode("utf-8", "replace") if isinstance(tokens, bytes) else tokens
        raise TypeError(
            f"`{name}` is the string {text[:40]!r}, not a list of tokens: "
            + _SEQUENCE_HINT.format(example=_example(text))
            + "."
        )
    try:
        return list(tokens)
    except TypeError:
        raise TypeError(
            f"`{name}` must be a list of token strings, got "
            f"{type(tokens).__name__}."
        ) from None


def check_token_lists(sentences, name="sentences"):
    """A batch of sentences as a list of token lists (see `check_token_list`).

    Args:
        sentences: a list of sentences, each a list of token strings.
        name: what to call the argument in the message.

    Returns:
        A list of lists.

    Raises:
        TypeError: `sentences` is itself a string, or one of its sentences
            is a string instead of a list of tokens (the message gives its
            index).

    Example:

    ```python
    from keras_ordered._tokens import check_token_lists
    assert check_token_lists([["a", "b"]]) == [["a", "b"]]
    ```
    """
    if isinstance(sentences, (str, bytes)):
        raise TypeError(
            f"`{name}` is a string, not a list of sentences: pass a list of "
            "token lists, e.g. [['the', 'cat', 'sat']]."
        )
    sentences = check_token_list(sentences, name)
    return [
        check_token_list(sentence, f"{name}[{index}]")
        for index, sentence in enumerate(sentences)
    ]


# --- UTF-8: one policy for the command line, the API and the SavedModels ----

UTF8_HINT = "convert it to UTF-8 first (e.g. `iconv -f latin1 -t utf-8`)"
"""What to do with text that is not valid UTF-8, for the messages."""


class InvalidUTF8Error(ValueError):
    """Text that is not valid UTF-8: refused, with where it is.

    The package's one policy: invalid UTF-8 is refused, never repaired
    silently. `keras-ordered parse` stops with a line naming the file (or
    `<stdin>`, or the argument) and the line; `tokenize_python` raises this
    error naming the sentence; a SavedModel's signatures answer that
    sentence with `valid` false and `"invalid UTF-8: ..."`.
    """


def _first_invalid(text):
    """`(offset, what)` of the first invalid UTF-8 in `text`, or None.

    `text` is bytes, or a str whose undecodable bytes are lone surrogates
    (as Python decodes `sys.argv` and `surrogateescape` streams).
    """
    try:
        if isinstance(text, bytes):
            text.decode("utf-8")
        else:
            text.encode("utf-8")
        return None
    except UnicodeDecodeError as error:
        return error.start, f"byte 0x{text[error.start]:02x}"
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, escaped
            return error.start, f"byte 0x{code - 0xDC00:02x}"
        return error.start, f"lone surrogate U+{code:04X}"


def decode_utf8_text(data, source):
    """Decodes a whole input (a file, stdin) as UTF-8, strictly.

    Args:
        data: `bytes`, or a `str` that may hold escaped undecodable bytes.
        source: what to call the input in the message (`"'f.txt'"`,
            `"<stdin>"`).

    Returns:
        The text, as a `str`.

    Raises:
        InvalidUTF8Error: naming `source`, the line and the column of the
            first invalid byte.

    Example:

    ```python
    from keras_ordered._tokens import InvalidUTF8Error, decode_utf8_text
    assert decode_utf8_text(b"the cat\\n", "<stdin>") == "the cat\\n"
    try:
        decode_utf8_text(b"ok\\nbad \\xff\\n", "<stdin>")
    except InvalidUTF8Error as error:
        assert str(error).startswith("<stdin> line 2 is not valid UTF-8")
    ```
    """
    problem = _first_invalid(data)
    if problem is None:
        return data if isinstance(data, str) else data.decode("utf-8")
    offset, what = problem
    newline = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    column = offset - (data.rfind(newline, 0, offset) + 1) + 1
    raise InvalidUTF8Error(
        f"{source} line {line} is not valid UTF-8 ({what} at column "
        f"{column}): {UTF8_HINT}."
    )


def check_utf8_lines(lines, what="sentence"):
    """Checks that every line is valid UTF-8; returns them as `str`.

    Args:
        lines: iterable of `str` or `bytes`, one sentence each.
        what: what to call a line in the message (`"sentence"`,
            `"argument"`).

    Returns:
        A list of `str`.

    Raises:
        InvalidUTF8Error: naming the first invalid line (1-based) and
            column.
        TypeError: a line is neither `str` nor `bytes`.

    Example:

    ```python
    from keras_ordered._tokens import check_utf8_lines
    assert check_utf8_lines([b"caf\\xc3\\xa9", "ok"]) == ["café", "ok"]
    ```
    """
    checked = []
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, (str, bytes)):
            raise TypeError(
                f"{what.capitalize()} {number} is a {type(line).__name__}: "
                "pass each sentence as a str (or UTF-8 bytes)."
            )
        problem = _first_invalid(line)
        if problem is not None:
            offset, found = problem
            raise InvalidUTF8Error(
                f"{what.capitalize()} {number} is not valid UTF-8 ({found} "
                f"at column {offset + 1}): {UTF8_HINT}."
            )
        checked.append(line.decode("utf-8") if isinstance(line, bytes) else line)
    return checked


# --- Control characters and byte-order marks: the same policy ---------------

BYTE_ORDER_MARK = "\ufeff"
"""U+FEFF, which editors write at the start of a UTF-8 file: stripped."""

CONTROL_CHARACTER_PATTERN = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
"""The characters refused: Unicode category Cc (U+0000-U+001F, U+007F-U+009F)
except tab, line feed and carriage return, which are whitespace."""

_CONTROL = re.compile(CONTROL_CHARACTER_PATTERN)

CONTROL_HINT = "remove it, or replace it with a space"
"""What to do with a control character, for the messages."""


class ControlCharacterError(ValueError):
    """Text holding a control character: refused, with where it is.

    Control characters (`\\x00`, `\\x07`, `\\x1c`, `\\x7f`, `\\x85`, ...) are
    invisible, and the Treebank tokenizer would keep some in a word and
    read others as spaces: the package refuses them, as it refuses
    invalid UTF-8. Tab, line feed and carriage return are whitespace, not
    refused. `keras-ordered parse` names the line and the column;
    `tokenize_python` raises this error naming the sentence; a
    SavedModel's signatures answer the sentence with `valid` false and
    `"control character: ..."`.
    """


def strip_byte_order_mark(text):
    """`text` without a leading byte-order mark (U+FEFF).

    Args:
        text: a `str`.

    Returns:
        The `str`, its first character removed when it is U+FEFF.

    Example:

    ```python
    from keras_ordered._tokens import strip_byte_order_mark
    assert strip_byte_order_mark("\\ufeffThe cat") == "The cat"
    ```
    """
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text


def control_character_problem(text):
    """What is wrong with `text` as to control characters, or None.

    Args:
        text: a `str`, one sentence.

    Returns:
        `None` when `text` holds no control character; else a phrase such
        as `"has a control character (U+0007 at column 6): remove it, or
        replace it with a space"` (the column counts characters from 1),
        to follow the name of the line in a message.

    Example:

    ```python
    from keras_ordered._tokens import control_character_problem
    assert control_character_problem("a\\tb") is None
    assert "U+0007 at column 2" in control_character_problem("a\\x07b")
    ```
    """
    found = _CONTROL.search(text)
    if found is None:
        return None
    return (
        f"has a control character (U+{ord(found.group()):04X} at column "
        f"{found.start() + 1}): {CONTROL_HINT}"
    )


def utf8_problem(line):
    """What is wrong with one line as UTF-8, or None.

    Args:
        line: `bytes`, or a `str` that may hold escaped undecodable bytes.

    Returns:
        `None` when `line` is valid UTF-8; else a phrase such as
        `"is not valid UTF-8 (byte 0xff at column 1): convert it to UTF-8
        first (e.g. ...)"` (the column counts bytes of `bytes`, characters
        of a `str`), to follow the name of the line in a message.

    Example:

    ```python
    from keras_ordered._tokens import utf8_problem
    assert utf8_problem(b"caf\\xc3\\xa9") is None
    assert "byte 0xe9 at column 4" in utf8_problem(b"caf\\xe9")
    ```
    """
    problem = _first_invalid(line)
    if problem is None:
        return None
    offset, found = problem
    return f"is not valid UTF-8 ({found} at column {offset + 1}): {UTF8_HINT}"


def check_control_characters(lines, what="sentence"):
    """Refuses lines that hold control characters.

    Args:
        lines: iterable of `str`, one sentence each.
        what: what to call a line in the message.

    Returns:
        The lines, as a list.

    Raises:
        ControlCharacterError: naming the first such line (1-based), the
            character and its column.

    Example:

    ```python
    from keras_ordered._tokens import check_control_characters
    assert check_control_characters(["a b"]) == ["a b"]
    ```
    """
    lines = list(lines)
    for number, line in enumerate(lines, start=1):
        problem = control_character_problem(line)
        if problem is not None:
            raise ControlCharacterError(
                f"{what.capitalize()} {number} {problem}."
            )
    return lines
