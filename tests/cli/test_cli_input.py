"""`keras-ordered parse` on input as people have it.

Byte-order marks, blank lines, control characters, one bad line among
good ones (`--on-error skip`), capitalised words, and output that nltk
reads back.
"""

import io

import nltk
import numpy as np
import pytest

import keras_ordered_cli as cli
from keras_ordered_cli import _common


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def parse_file(tmp_path, capsys, data, *options):
    path = tmp_path / "sentences.txt"
    path.write_bytes(data)
    return (str(path),) + run(
        ["parse", "--baseline", "right-branching", *options,
         "--file", str(path)],
        capsys,
    )


# --- byte-order marks ---------------------------------------------------------


def test_byte_order_mark_is_stripped_from_files_stdin_and_arguments(
        tmp_path, capsys, monkeypatch):
    bom = "\ufeff"
    _, status, out, err = parse_file(
        tmp_path, capsys, (bom + "The cat sat.\nA dog ran.\n").encode()
    )
    assert status == 0, err
    assert out == "(The (cat (sat .)))\n(A (dog (ran .)))\n"

    monkeypatch.setattr(
        "sys.stdin", io.TextIOWrapper(io.BytesIO((bom + "The cat\n").encode()))
    )
    status, out, err = run(["parse", "--baseline", "right-branching"], capsys)
    assert status == 0 and out == "(The cat)\n"

    status, out, err = run(
        ["parse", "--baseline", "right-branching", bom + "The cat"], capsys
    )
    assert status == 0 and out == "(The cat)\n"


# --- blank lines ----------------------------------------------------------------


def test_blank_lines_are_skipped_and_still_count_in_line_numbers(
        tmp_path, capsys):
    # One line out per line in: a blank line gives a blank line, so that
    # the trees stay aligned with the input.
    data = b"The cat sat\n\n   \r\nA dog ran off\n"
    _, status, out, err = parse_file(tmp_path, capsys, data)
    assert status == 0, err
    assert out == "(The (cat sat))\n\n\n(A (dog (ran off)))\n"
    # A message names the line of the file, blank lines counted.
    path, status, out, err = parse_file(
        tmp_path, capsys, data, "--max-length", "3"
    )
    assert status == 2 and out == ""
    assert err == (
        f"keras-ordered parse: error: {path!r} line 4 has 4 tokens, more "
        "than --max-length 3: split it into sentences, or raise "
        "--max-length.\n"
    )
    # Only blank lines: nothing to parse.
    _, status, out, err = parse_file(tmp_path, capsys, b"\n  \n")
    assert status == 2 and "the input is empty" in err


# --- control characters -------------------------------------------------------


@pytest.mark.parametrize(
    "character", ["\x00", "\x07", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85"]
)
def test_control_characters_are_refused_naming_line_and_column(
        tmp_path, capsys, character):
    data = f"The cat sat\nA dog{character} ran\n".encode()
    path, status, out, err = parse_file(tmp_path, capsys, data)
    assert status == 2 and out == ""
    assert err == (
        f"keras-ordered parse: error: {path!r} line 2 has a control "
        f"character (U+{ord(character):04X} at column 6): remove it, or "
        "replace it with a space.\n"
    )


def test_tab_and_carriage_return_are_whitespace(tmp_path, capsys):
    _, status, out, err = parse_file(
        tmp_path, capsys, b"The\tcat sat\r\nA dog\r\n"
    )
    assert status == 0, err
    assert out == "(The (cat sat))\n(A dog)\n"


def test_control_characters_in_arguments_and_stdin(capsys, monkeypatch):
    status, out, err = run(
        ["parse", "--baseline", "right-branching", "ok", "x\x00y"], capsys
    )
    assert status == 2 and out == ""
    assert "error: Argument 2 has a control character (U+0000 at column 2)" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("a b\n\nc\x1bd\n"))
    status, out, err = run(["parse", "--baseline", "right-branching"], capsys)
    assert status == 2 and out == ""
    assert "error: <stdin> line 3 has a control character (U+001B at column 2)" in err


# --- --on-error skip ------------------------------------------------------------


def test_on_error_skip_parses_the_rest_and_marks_the_bad_lines(
        tmp_path, capsys):
    data = (
        b"The cat sat\n"
        b"caf\xe9 au lait\n"  # Latin-1
        b"\n"
        b"a b c d e f\n"  # over --max-length 5
        b"A dog\x07 ran\n"
        b"It rained\n"
    )
    path, status, out, err = parse_file(
        tmp_path, capsys, data, "--max-length", "5", "--on-error", "skip"
    )
    # Every input line has its output line: bad lines an empty one.
    assert out == "(The (cat sat))\n\n\n\n\n(It rained)\n"
    assert err.splitlines() == [
        f"{path!r} line 2 is not valid UTF-8 (byte 0xe9 at column 4): "
        "convert it to UTF-8 first (e.g. `iconv -f latin1 -t utf-8`); skipped.",
        f"{path!r} line 4 has 6 tokens, more than --max-length 5: split it "
        "into sentences, or raise --max-length; skipped.",
        f"{path!r} line 5 has a control character (U+0007 at column 6): "
        "remove it, or replace it with a space; skipped.",
    ]
    assert status == 1  # some lines were skipped

    # The default refuses the first bad line, naming it.
    path, status, out, err = parse_file(tmp_path, capsys, data)
    assert status == 2 and out == ""
    assert err.startswith(
        f"keras-ordered parse: error: {path!r} line 2 is not valid UTF-8"
    )
    assert len(err.splitlines()) == 1


def test_on_error_skip_with_arguments_and_every_line_bad(capsys):
    status, out, err = run(
        ["parse", "--baseline", "right-branching", "--on-error", "skip",
         "a b", "  ", "c\x00"],
        capsys,
    )
    assert status == 1
    assert out == "(a b)\n\n\n"
    assert err.splitlines() == [
        "Argument 2 is empty: give one non-empty sentence per argument; "
        "skipped.",
        "Argument 3 has a control character (U+0000 at column 2): remove "
        "it, or replace it with a space; skipped.",
    ]


# --- one text path: the model reads words as the PTB text writes them --------


class FakeDistanceModel:
    distance_names = ["parser/distance"]
    default_distance = "parser/distance"

    def __init__(self):
        self.seen = []

    def sentence_distances(self, sentences, batch_size=64):
        self.seen.append([list(s) for s in sentences])
        return {"parser/distance": [np.arange(len(s), dtype=float)
                                    for s in sentences]}


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from keras_ordered.models.onlstm import ONLSTMLanguageModel
    from keras_ordered.models.prpn import PRPNLanguageModel

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "N",
                  "1980s"]
    folder = tmp_path_factory.mktemp("models")
    models = {}
    for name, cls, seed in (("onlstm", ONLSTMLanguageModel, 1),
                            ("prpn", PRPNLanguageModel, 3)):
        model = cls.from_preset("tiny", vocabulary=vocabulary, seed=seed)
        path = str(folder / f"{name}.keras")
        model.save(path)
        models[name] = (model, path)
    return models


@pytest.mark.parametrize("family", ["onlstm", "prpn"])
def test_sentence_distances_read_words_whatever_their_case(tiny_models,
                                                           family):
    model, _ = tiny_models[family]
    assert model.token_ids(["The", "CAT", "sat", "61", "1980s", "dog"]) == (
        model.token_ids(["the", "cat", "sat", "N", "1980s", "<unk>"])
    )
    written = model.sentence_distances([["The", "Cat", "sat", "on", "The",
                                         "MAT", "in", "1987"]])
    lower = model.sentence_distances([["the", "cat", "sat", "on", "the",
                                       "mat", "in", "1987"]])
    for name in model.distance_names:
        np.testing.assert_array_equal(written[name][0], lower[name][0])


@pytest.mark.parametrize("family", ["onlstm", "prpn"])
def test_normalised_words_are_read_as_before(tiny_models, family):
    # The evaluation gives the model words normalised already
    # (`clean_tree`). `normalize_word` is not idempotent (`N` -> `n`,
    # `Ns` -> `ns`), so the model must not normalise a word its vocabulary
    # knows: it reads such a word as itself, and the evaluation's words as
    # it read them before the model normalised anything.
    from keras_ordered.datasets.treebank import normalize_words

    model, _ = tiny_models[family]
    assert normalize_words(["N", "Ns"]) == ["n", "ns"]
    assert model.token_ids(model.vocabulary) == list(
        range(len(model.vocabulary))
    )
    index = {word: i for i, word in enumerate(model.vocabulary)}
    words = ["The", "Cat", "sat", "61", "15,000", "1980s", "N", "on", "%"]
    for numbers in ("digit-runs", "ptb"):
        once = normalize_words(words, numbers)
        known = [word for word in once if word in index]
        assert model.token_ids(known) == [index[word] for word in known]


def test_parse_command_and_python_give_the_same_tree(tiny_models, capsys):
    from keras_ordered.parsing import distance_predictor
    from keras_ordered.parsing import tree_to_brackets

    sentence = "The Cat sat On The Mat In 1987 The Cat sat On The Mat"
    for family in ("onlstm", "prpn"):
        model, path = tiny_models[family]
        status, out, err = run(["parse", "--model", path, sentence], capsys)
        assert status == 0, err
        (written,) = distance_predictor(model)([sentence.split()])
        (lower,) = distance_predictor(model)([sentence.lower().split()])
        assert out == tree_to_brackets(written) + "\n"
        assert tree_to_brackets(lower) == tree_to_brackets(written).lower()


def test_parse_gives_the_model_the_tokens_as_written(monkeypatch, capsys):
    # The model normalises the words (one place, `token_ids`): the command
    # passes them as written.
    model = FakeDistanceModel()
    monkeypatch.setattr(_common, "load_model", lambda path, args=None: model)
    status, out, err = run(["parse", "--model", "m.keras", "The 61 cats."],
                           capsys)
    assert status == 0, err
    assert model.seen == [[["The", "61", "cats", "."]]]
    assert out == "(((The 61) cats) .)\n"


# --- output that nltk reads back ----------------------------------------------


def test_labels_output_reads_back_with_plain_nltk(capsys):
    from keras_ordered.parsing import brackets_to_tree
    from keras_ordered.parsing import tree_to_spans

    status, plain, err = run(
        ["parse", "--baseline", "balanced", "The cat sat on the mat."], capsys
    )
    assert status == 0, err
    status, labelled, err = run(
        ["parse", "--baseline", "balanced", "--labels",
         "The cat sat on the mat."],
        capsys,
    )
    assert status == 0, err
    read = nltk.Tree.fromstring(labelled)
    expected = brackets_to_tree(plain)
    assert read.leaves() == expected.leaves() == [
        "The", "cat", "sat", "on", "the", "mat", "."
    ]
    assert tree_to_spans(read) == tree_to_spans(expected)
    drawn = io.StringIO()
    read.pretty_print(stream=drawn)
    assert drawn.getvalue().split()[-7:] == read.leaves()
