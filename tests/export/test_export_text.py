"""The in-graph text path against nltk's TreebankWordTokenizer and normalize_word."""

import glob
import os
import unicodedata

import numpy as np
import pytest
import tensorflow as tf
from nltk.tokenize import TreebankWordTokenizer

from conftest import require_data
from keras_ordered.datasets.treebank import normalize_word
from keras_ordered.export import graph_op_types
from keras_ordered.export import serving_op_allowlist
from keras_ordered.export import text

SENTENCES = [
    "The cat sat on the mat.",
    "I don't know what you're saying.",
    "The cat's toy, and the dogs' bone.",
    'He said "hello" to me.',
    '"Quoted at the start," she said.',
    "It costs $3.50, or 1,000 yen; that's 50% off!",
    "A well-known, state-of-the-art, hand-made thing.",
    "Is it? Yes! No... Maybe.",
    "Wait -- what?",
    "'Tis the season, 'twas the night.",
    "I cannot go, gimme that, we're gonna win, wanna see, gotta go.",
    "Lemme know, more'n once, d'ye hear?",
    "cannot cannot cannot",
    "He'll, they're, I've, I'm, she'd, we'd've.",
    "DON'T CAN'T WON'T SHOULDN'T",
    "Meet at 3:30, not 4:00: ok?",
    "Ends with a comma,",
    "Ends with a colon:\n",
    "(a) [b] {c} <d>",
    "Mr. Smith went to Washington D.C. today.",
    "The U.S. economy grew 3.5 % in 1999.",
    "Pierre Vinken, 61 years old, will join the board as a nonexecutive "
    "director Nov. 29.",
    "``Tick quotes'' and ''double'' ones.",
    "tab\tseparated  and   spaced\nlines",
    "It's 'quoted' text.",
    "rock 'n' roll",
    "The 1980s and the '90s.",
    "née, café, façade's charm.",
    "non\u00a0breaking\u2003spaces",
    "Email me @ home & work #1;",
    "He asked (again): why?",
    "She wrote: \"Don't!\"",
    "A 30-year-old man bought 15,000 shares at $ 8.45 each.",
    "The ratio is 3\\/4 .",
    "He sold 62%-owned units.",
    "Go!!! Now???",
    "one.two.three",
    "Final quote.'",
    'Final double quote."',
    "I'd like more'n that.",
    "Wanna\tgo?",
    "WANNA GO?",
]


@pytest.fixture(scope="module")
def treebank():
    return TreebankWordTokenizer()


def test_tokenize_matches_nltk_on_hand_written_sentences(treebank):
    got = text.tokenize_python(SENTENCES)
    for sentence, tokens in zip(SENTENCES, got):
        assert tokens == treebank.tokenize(sentence), sentence


def test_tokenize_examples():
    got = text.tokenize_python([
        "The cat sat on the mat.",
        "don't",
        "the cat's",
        'say "hi"',
        "3.5 and 1,000 well-known",
    ])
    assert got == [
        ["The", "cat", "sat", "on", "the", "mat", "."],
        ["do", "n't"],
        ["the", "cat", "'s"],
        ["say", "``", "hi", "''"],
        ["3.5", "and", "1,000", "well-known"],
    ]


def test_tokenize_matches_nltk_on_random_strings(treebank):
    import random

    pieces = list("_xé²٣abcdnNtTsS'\"`.,:;?!-$%&()[]{}<>@#0129 ") + [
        " ", "  ", "\t", "\n", "\x0b", "\x1c", "\xa0", "can", "not",
        "wanna", "'t", "is", "was", "gim", "me", "d'ye", "more'n", "n't",
        "'ll", "'re", "...", "--", "''", "``", "'s", "3.5", "1,000",
    ]
    rng = random.Random(20261123)
    lines = [
        "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        for _ in range(2000)
    ]
    # The op itself, as nltk, on control characters too (`\x0b`, `\x1c`):
    # `tokenize_python` and `check_sentences` refuse those.
    tokenized = text.tokenize(tf.constant([line.encode() for line in lines]))
    for line, tokens in zip(lines, tokenized.to_list()):
        tokens = [token.decode() for token in tokens]
        assert tokens == treebank.tokenize(line), repr(line)
    plain = [line for line in lines if "\x0b" not in line and "\x1c" not in line]
    assert len(plain) > 1000
    for line, tokens in zip(plain, text.tokenize_python(plain)):
        assert tokens == treebank.tokenize(line), repr(line)


def _wsj_sentences():
    from keras_ordered.datasets.treebank_files import read_mrg_trees

    folder = require_data("wsj_sample", "mrg")
    sentences = []
    for path in sorted(glob.glob(os.path.join(folder, "*.mrg"))):
        for tree in read_mrg_trees(path):
            words = [w for w, tag in tree.pos() if tag != "-NONE-"]
            if words:
                sentences.append(words)
    return sentences


# Tokenizing the already-tokenized WSJ sample differs from its tokens only
# where nltk's TreebankWordTokenizer itself does (it gives the same tokens as
# ours on every one of these sentences, see the test below):
# - a closing `''` written after a space reads as an opening quote (the
#   tokenizer can only tell quotes apart by what precedes them);
# - `&`, `$` and `%` are always split off, also inside `S&P`, `US$`,
#   `62%-owned`;
# - `Gotta` is a contraction (`Got ta`), `CREATOR'S` ends with `'S`;
# - a sentence-final abbreviation (`D.C.` with no period token after it)
#   loses its final period, as a sentence-final period would.
WSJ_RETOKENIZE_EXCEPTIONS = {
    ("''",): ("``",),
    ("S&P",): ("S", "&", "P"),
    ("AT&T",): ("AT", "&", "T"),
    ("S&L",): ("S", "&", "L"),
    ("US$",): ("US", "$"),
    ("C$",): ("C", "$"),
    ("Gotta",): ("Got", "ta"),
    ("62%-owned",): ("62", "%", "-owned"),
    ("CREATOR'S",): ("CREATOR", "'S"),
    ("D.C.",): ("D.C", "."),
}


def test_tokenize_wsj_sample_agrees_with_nltk_and_is_stable(treebank):
    import difflib

    sentences = _wsj_sentences()
    lines = [" ".join(words) for words in sentences]
    got = text.tokenize_python(lines)
    assert [treebank.tokenize(line) for line in lines] == got
    unchanged = 0
    for words, tokens in zip(sentences, got):
        if words == tokens:
            unchanged += 1
            continue
        matcher = difflib.SequenceMatcher(a=words, b=tokens, autojunk=False)
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag != "equal":
                before, after = tuple(words[a0:a1]), tuple(tokens[b0:b1])
                assert WSJ_RETOKENIZE_EXCEPTIONS.get(before) == after, (
                    before, after, words)
    assert unchanged / len(sentences) > 0.8


@pytest.mark.parametrize("numbers", ["digit-runs", "ptb"])
def test_normalize_matches_normalize_word(numbers):
    tokens = [t for s in text.tokenize_python(SENTENCES) for t in s] + [
        "61", "15,000", "%", "1980s", "3\\/4", "1:30", "1986-87", "'82",
        "30-year", "ÉCLAIR", "İstanbul", "ΣΟΦΙΑ", "x²", "½", "٣", "Straße",
        "ǅ", "N", "n't", "",
    ]
    got = text.normalize(tf.constant(tokens), numbers=numbers)
    assert [t.decode("utf-8") for t in got.numpy()] == [
        normalize_word(t, numbers) for t in tokens
    ]


def test_normalize_keeps_raggedness_and_options():
    tokens = tf.ragged.constant([["The", "61"], []])
    assert text.normalize(tokens).to_list() == [[b"the", b"N"], []]
    assert text.normalize(tokens, numbers=None).to_list() == [
        [b"the", b"61"], []]
    assert text.normalize(tokens, lowercase=False).to_list() == [
        [b"The", b"N"], []]
    with pytest.raises(ValueError, match="numbers"):
        text.normalize(tokens, numbers="words")


def _codepoints():
    # The BMP and the supplementary letters/digits, assigned in Python's
    # Unicode tables (RE2 may know newer characters).
    return [
        c for c in list(range(0x1, 0xD800)) + list(range(0xE000, 0x20000))
        if unicodedata.category(chr(c)) != "Cn"
    ]


def test_character_classes_match_python():
    """The RE2 classes that replace Python's Unicode \\s, \\d, \\w."""
    import re

    from nltk import redos

    chars = [chr(c) for c in _codepoints()]
    encoded = tf.constant([c.encode("utf-8", "surrogatepass") for c in chars])

    def tf_match(cls):
        return tf.strings.regex_full_match(encoded, f"[{cls}]").numpy()

    checks = {
        text._REGEX_SPACE: redos.compile(r"\s"),
        text._SPLIT_SPACE: re.compile(r"\s"),  # str.isspace, str.split()
        r"\p{Nd}": redos.compile(r"\d"),
        text._WORD: re.compile(r"\w"),
        text._LETTER: re.compile(r"[^\W\d_]"),
    }
    for cls, pattern in checks.items():
        expected = np.array([bool(pattern.match(c)) for c in chars])
        differ = [hex(ord(c)) for c, e, g in zip(chars, expected, tf_match(cls))
                  if e != g]
        # Unicode versions of RE2 and Python may disagree on a handful of
        # rare characters; none below U+0800 (Latin, Greek, Cyrillic, ...).
        assert len(differ) < 40, (cls, differ[:40])
        assert all(int(d, 16) >= 0x800 for d in differ), (cls, differ)


def test_lowercasing_matches_python():
    chars = [chr(c) for c in _codepoints()]
    got = tf.strings.lower(
        tf.constant([c.encode("utf-8") for c in chars]), encoding="utf-8")
    differ = [hex(ord(c)) for c, g in zip(chars, got.numpy())
              if c.lower() != g.decode("utf-8")]
    # TensorFlow's ICU predates a few case pairs of Unicode 14 (Glagolitic,
    # Latin Extended-D, Vithkuqi): nothing a treebank holds.
    assert len(differ) < 50 and all(int(d, 16) >= 0x2C00 for d in differ), (
        differ)


def test_repair_utf8_and_check_sentences():
    sentences = tf.constant([
        b"The cat sat.",
        b"",
        b"   \t ",
        b"bad \xff bytes",
        b"one two three four five six",
        "caf\u00e9 \ufffd ok".encode("utf-8"),
        b"\xc3\x28 truncated",
    ])
    repaired, valid_utf8 = text.repair_utf8(sentences)
    assert valid_utf8.numpy().tolist() == [
        True, True, True, False, True, True, False]
    assert repaired.numpy()[3] == "bad \ufffd bytes".encode("utf-8")
    valid, message = text.check_sentences(sentences, max_length=5)
    assert valid.numpy().tolist() == [
        True, False, False, False, False, True, False]
    message = [m.decode() for m in message.numpy()]
    assert message[0] == message[5] == ""
    assert "empty" in message[1] and "empty" in message[2]
    assert "invalid UTF-8" in message[3] and "invalid UTF-8" in message[6]
    assert message[4] == (
        "sentence has 6 tokens, more than the limit of 5: split it")
    with pytest.raises(ValueError, match="max_length"):
        text.check_sentences(sentences, max_length=0)


def test_bad_sentences_do_not_change_the_others(tmp_path):
    pre = text.TextPreprocessor(
        text.write_vocabulary(
            ["<unk>", "the", "cat", "sat", "."], tmp_path / "vocab.txt"),
        max_length=4,
    )
    good = tf.constant([b"The cat sat.", b"The dog sat."])
    alone = pre(good)
    mixed = pre(tf.constant([
        b"", b"The cat sat.", b"\xff\xfe", b"a b c d e f", b"The dog sat.",
        b" "]))
    assert mixed["valid"].numpy().tolist() == [
        False, True, False, False, True, False]
    for key in ("tokens", "words", "ids"):
        rows = mixed[key].to_list()
        assert [rows[1], rows[4]] == alone[key].to_list()
    assert alone["ids"].to_list() == [[1, 2, 3, 4], [1, 0, 3, 4]]
    assert alone["words"].to_list()[0] == [b"the", b"cat", b"sat", b"."]
    assert alone["tokens"].to_list()[0] == [b"The", b"cat", b"sat", b"."]


def test_vocabulary_table(tmp_path):
    table = text.VocabularyTable.from_words(
        ["<unk>", "the", "cat", "N"], str(tmp_path))
    assert table.unk_id == 0 and table.vocabulary_size == 4
    ids = table(tf.ragged.constant([["the", "dog", "N"], ["cat"]]))
    assert ids.to_list() == [[1, 0, 3], [2]]
    assert table(tf.constant([["cat", "<unk>"]])).numpy().tolist() == [[2, 0]]
    other = text.VocabularyTable.from_words(["a", "[UNK]"], unk_token="[UNK]")
    assert os.path.basename(other.vocabulary_file) == "vocabulary.txt"
    assert other(tf.constant(["b", "a"])).numpy().tolist() == [1, 0]


def test_vocabulary_errors(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        text.write_vocabulary(["a", "b", "a"], tmp_path / "v.txt")
    with pytest.raises(ValueError, match="line break"):
        text.write_vocabulary(["a", "b\nc"], tmp_path / "v.txt")
    with pytest.raises(ValueError, match="empty"):
        text.write_vocabulary([], tmp_path / "v.txt")
    path = text.write_vocabulary(["a", "b"], tmp_path / "v.txt")
    with pytest.raises(ValueError, match="<unk>"):
        text.VocabularyTable(path)
    with pytest.raises(ValueError, match="does not exist"):
        text.VocabularyTable(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="numbers"):
        text.TextPreprocessor(path, unk_token="a", numbers="all")


class _Serving(tf.Module):
    def __init__(self, vocabulary_file):
        super().__init__()
        self.preprocessor = text.TextPreprocessor(
            vocabulary_file, max_length=10)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def preprocess(self, sentences):
        out = self.preprocessor(sentences)
        return {
            "tokens": out["tokens"].to_tensor(""),
            "ids": out["ids"].to_tensor(-1),
            "lengths": out["lengths"],
            "valid": out["valid"],
            "message": out["message"],
        }


@pytest.mark.slow
def test_tf_function_and_saved_model_round_trip(tmp_path):
    vocab_dir = tmp_path / "vocab"
    vocab_dir.mkdir()
    path = text.write_vocabulary(
        ["<unk>", "the", "cat", "sat", "on", "mat", ".", "n't", "N"],
        vocab_dir / "words.txt",
    )
    module = _Serving(path)
    batch = tf.constant([
        b"The cat didn't sit on the mat.", b"", b"N 61 cats \xff",
        b"the cat sat on the mat and then on the cat.", b"The cat sat 3 times",
    ])
    before = module.preprocess(batch)
    export_dir = str(tmp_path / "saved")
    tf.saved_model.save(
        module, export_dir,
        signatures={"preprocess": module.preprocess.get_concrete_function()},
    )
    assert os.listdir(os.path.join(export_dir, "assets")) == ["words.txt"]
    os.remove(path)  # the SavedModel must use its own copy
    loaded = tf.saved_model.load(export_dir)
    after = loaded.signatures["preprocess"](sentences=batch)
    for key, value in before.items():
        np.testing.assert_array_equal(value.numpy(), after[key].numpy(), key)
    assert before["valid"].numpy().tolist() == [
        True, False, False, False, True]
    assert before["ids"].numpy()[4].tolist()[:4] == [1, 2, 3, 8]
    assert module.preprocessor.vocabulary[7] == "n't"
    # A fresh process with TensorFlow only. (`import tensorflow` 2.21
    # itself imports parts of keras: check that loading adds none.)
    import subprocess
    import sys

    script = (
        "import sys, tensorflow as tf\n"
        "modules = set(sys.modules)\n"
        f"loaded = tf.saved_model.load({export_dir!r})\n"
        "out = loaded.signatures['preprocess'](sentences=tf.constant("
        "[b'The cat didn\\'t sit on the mat.']))\n"
        "new = [m for m in set(sys.modules) - modules if 'keras' in m]\n"
        "assert not new, new\n"
        "print(out['ids'].numpy()[0].tolist())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == str(
        [i for i in before["ids"].numpy()[0].tolist() if i >= 0])
    op_types = graph_op_types(loaded.signatures["preprocess"])
    assert "LookupTableFindV2" in op_types
    assert set(op_types) <= serving_op_allowlist()
    assert set(graph_op_types(export_dir)) <= serving_op_allowlist()


def test_text_preprocessor_is_a_serializable_keras_layer(tmp_path):
    import keras

    pre = text.TextPreprocessor(
        ["<unk>", "the", "cat", "N"], numbers="ptb", max_length=3,
        name="pre")
    assert pre.built
    config = pre.get_config()
    assert config["vocabulary"] == ["<unk>", "the", "cat", "N"]
    assert config["numbers"] == "ptb" and config["max_length"] == 3
    again = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(pre))
    assert isinstance(again, text.TextPreprocessor)
    batch = tf.constant(["The cat 3.5", "the 10 cats sat"])
    first, second = pre(batch), again(batch)
    for key in ("ids", "words", "tokens"):
        assert first[key].to_list() == second[key].to_list()
    assert first["ids"].to_list() == [[1, 2, 3], [1, 3, 0, 0]]
    assert first["valid"].numpy().tolist() == [True, False]
    with pytest.raises(ValueError, match="max_length"):
        text.TextPreprocessor(["<unk>"], max_length=0)
    with pytest.raises(ValueError, match="<unk>"):
        text.TextPreprocessor(["a", "b"])


def test_tokenize_python_and_validation():
    assert text.tokenize_python([]) == []
    assert text.tokenize_python(["", "a  b"]) == [[], ["a", "b"]]
    assert text.tokenize_python([b"caf\xc3\xa9 ."]) == [["café", "."]]
    # Invalid UTF-8 is refused, naming the sentence and column: bytes,
    # an undecodable byte as sys.argv escapes it, a lone surrogate.
    for lines, message in (
        ([b"ok", b"caf\xc3\xa9 \xff."], "Sentence 2 is not valid UTF-8 "
         "(byte 0xff at column 7)"),
        (["a \udcff b"], "Sentence 1 is not valid UTF-8 (byte 0xff at column 3)"),
        (["ok", "ok", "c \ud800"], "Sentence 3 is not valid UTF-8 (lone "
         "surrogate U+D800 at column 3)"),
    ):
        with pytest.raises(ValueError) as error:
            text.tokenize_python(lines)
        assert str(error.value).startswith(message), str(error.value)
        assert "iconv" in str(error.value)
    assert text.tokenize_python(["don't (x)"], treebank=False) == [
        ["don't", "(x)"]]
    with pytest.raises(ValueError, match="string"):
        text.tokenize(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="shape"):
        text.tokenize(tf.constant([["a"]]))
