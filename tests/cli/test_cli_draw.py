"""`keras-ordered parse --format text|svg|png [--distances]`.

Drawn trees: a Unicode drawing in the terminal, SVG and PNG files (the
`draw` extra), bars of the syntactic distances under the words, and bad
input (an empty or one-word sentence, 500 words, a path that cannot be
written, a missing extra) answered by a result or one line.
"""

import io
import os
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import keras_ordered_cli as cli
from keras_ordered._environment import install_hint
from keras_ordered_cli import _common

SENTENCE = "The cat sat on the mat."
TOKENS = ["The", "cat", "sat", "on", "the", "mat", "."]
RIGHT = ["parse", "--baseline", "right-branching"]


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def _leftovers(folder):
    return sorted(name for name in os.listdir(folder))


# --- the formats ------------------------------------------------------------


def test_default_format_stays_brackets(capsys):
    status, out, err = run(RIGHT + [SENTENCE], capsys)
    assert status == 0, err
    assert out == "(The (cat (sat (on (the (mat .))))))\n"
    assert run(RIGHT + ["--format", "brackets", SENTENCE], capsys)[1] == out


def test_text_format_is_the_unicode_drawing(capsys):
    from keras_ordered.parsing import right_branching_tree

    status, out, err = run(RIGHT + ["--format", "text", SENTENCE], capsys)
    assert status == 0, err
    drawn = io.StringIO()
    right_branching_tree(TOKENS).pretty_print(unicodelines=True, stream=drawn)
    expected = [line.rstrip()
                for line in drawn.getvalue().rstrip("\n").splitlines()]
    assert out.splitlines() == expected
    assert out.splitlines()[-1].split() == TOKENS


def test_text_format_names_each_line_of_several(tmp_path, capsys):
    path = tmp_path / "s.txt"
    path.write_text("The cat sat.\n\nA dog ran.\n")
    status, out, err = run(RIGHT + ["--format", "text", "--file", str(path)],
                           capsys)
    assert status == 0, err
    blocks = out.split("\n\n")
    assert blocks[0].startswith(f"{str(path)!r} line 1:\n")
    assert blocks[1].startswith(f"{str(path)!r} line 3:\n")
    assert blocks[1].rstrip("\n").splitlines()[-1].split() == [
        "A", "dog", "ran", "."]


def test_svg_and_png_files(tmp_path, capsys):
    pytest.importorskip("svgling")
    pytest.importorskip("cairosvg")
    svg = tmp_path / "cat.svg"
    status, out, err = run(RIGHT + ["--format", "svg", "--output", str(svg),
                                    SENTENCE], capsys)
    assert status == 0, err
    assert out == f"{svg}\n"
    root = ElementTree.fromstring(svg.read_text())
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert [t for t in texts if t != "X"] == TOKENS
    png = tmp_path / "cat.png"
    status, out, err = run(RIGHT + ["--format", "png", "--output", str(png),
                                    SENTENCE], capsys)
    assert status == 0, err
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert _leftovers(tmp_path) == ["cat.png", "cat.svg"]
    # The permissions of any new file (the temporary file's were 0600).
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(svg).st_mode & 0o777 == 0o666 & ~umask


def test_a_folder_gets_one_file_per_sentence_numbered_by_line(tmp_path,
                                                              capsys):
    pytest.importorskip("svgling")
    path = tmp_path / "s.txt"
    path.write_text("The cat sat.\n\nA dog ran.\n")
    folder = tmp_path / "trees"
    # Several sentences: the folder is made.
    status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                    str(folder), "--file", str(path)], capsys)
    assert status == 0, err
    assert _leftovers(folder) == ["tree_0001.svg", "tree_0003.svg"]
    assert out.splitlines() == [str(folder / "tree_0001.svg"),
                                str(folder / "tree_0003.svg")]
    # An existing folder takes even one sentence's file.
    status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                    str(folder), "One more."], capsys)
    assert status == 0, err
    assert out == f"{folder / 'tree_0001.svg'}\n"
    # Several sentences and a file name: one line.
    status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                    str(tmp_path / "x.svg"), "A b.", "C d."],
                           capsys)
    assert status == 2 and out == ""
    assert err == (
        "keras-ordered parse: error: 2 sentences give 2 drawings: --output "
        "takes a folder for them, not the file name "
        f"{str(tmp_path / 'x.svg')!r}.\n")
    assert "x.svg" not in _leftovers(tmp_path)


def test_options_that_do_not_go_together(capsys, tmp_path):
    for argv, message in (
        (["--format", "svg", SENTENCE], "--format svg writes files: give "
         "--output FILE (or a folder, for several sentences)"),
        (["--output", str(tmp_path / "t.txt"), SENTENCE], "--output "
         "applies to --format svg and png (the other formats print on "
         "stdout)"),
        (["--distances", SENTENCE], "--distances draws bars under the "
         "words: use it with --format text, svg or png"),
        (["--labels", "--format", "text", SENTENCE], "--labels applies to "
         "--format brackets"),
    ):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["parse", *argv])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert f"keras-ordered parse: error: {message}" in err
    assert _leftovers(tmp_path) == []


# --- distances --------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_onlstm(tmp_path_factory):
    from keras_ordered.models.onlstm import ONLSTMLanguageModel

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=vocabulary,
                                            seed=1)
    path = str(tmp_path_factory.mktemp("models") / "onlstm.keras")
    model.save(path)
    return model, path


def test_distances_with_a_baseline_is_one_line(capsys):
    status, out, err = run(RIGHT + ["--format", "text", "--distances",
                                    SENTENCE], capsys)
    assert status == 2 and out == ""
    assert err == (
        "keras-ordered parse: error: --distances draws a model's syntactic "
        "distances; a baseline has none: drop --distances, or parse with "
        "--model.\n")


def test_distances_of_a_gfl_parser_is_one_line(monkeypatch, capsys):
    from keras_ordered_cli import _gfl

    monkeypatch.setattr(_common, "load_model", lambda path: object())
    monkeypatch.setattr(_gfl, "is_gfl_parser", lambda model: True)
    status, out, err = run(["parse", "--model", "gfl.keras", "--format",
                            "text", "--distances", SENTENCE], capsys)
    assert status == 2 and out == ""
    assert err == (
        "keras-ordered parse: error: --distances draws a model's syntactic "
        "distances; gfl.keras is a GFL parser, which has none: drop "
        "--distances.\n")


@pytest.mark.parametrize("layer", ["1", "2"])
def test_distance_bars_are_the_picked_layers(tiny_onlstm, layer, capsys,
                                             tmp_path):
    from keras_ordered.parsing import distances_to_tree
    from keras_ordered.parsing import drawing

    model, path = tiny_onlstm
    name = f"layer{layer}/input"
    distances = model.sentence_distances([TOKENS])[name][0]
    status, out, err = run(["parse", "--model", path, "--format", "text",
                            "--distances", "--layer", layer, "--distance",
                            "input", SENTENCE], capsys)
    assert status == 0, err
    assert f"parsed with {name}" in err
    expected = drawing.draw_text(distances_to_tree(TOKENS, distances),
                                 distances)
    assert out == expected + "\n"
    assert any(c in out for c in drawing.BLOCKS[1:])
    if "svgling" in sys.modules or _importable("svgling"):
        svg = tmp_path / "t.svg"
        status, out, err = run(["parse", "--model", path, "--format", "svg",
                                "--output", str(svg), "--distances",
                                "--layer", layer, "--distance", "input",
                                SENTENCE], capsys)
        assert status == 0, err
        assert svg.read_text() == drawing.draw_svg(
            distances_to_tree(TOKENS, distances), distances)


def _importable(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None


# --- bad input ----------------------------------------------------------------


def test_an_empty_sentence_is_one_line(capsys, tmp_path):
    status, out, err = run(RIGHT + ["--format", "text", ""], capsys)
    assert status == 2 and out == ""
    assert err == ("keras-ordered parse: error: Argument 1 is empty: give one "
                   "non-empty sentence per argument.\n")
    status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                    str(tmp_path / "t.svg"), "  "], capsys)
    assert status == 2 and len(err.splitlines()) == 1
    assert _leftovers(tmp_path) == []


def test_a_one_word_sentence_is_drawn(capsys, tmp_path):
    status, out, err = run(RIGHT + ["--format", "text", "Hello"], capsys)
    assert status == 0, err
    assert out.split() == ["X", "│", "Hello"]
    if _importable("svgling"):
        status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                        str(tmp_path / "t.svg"), "Hello"],
                               capsys)
        assert status == 0, err
        assert "Hello" in (tmp_path / "t.svg").read_text()


def test_a_one_word_sentence_has_one_bar(monkeypatch, capsys):
    from keras_ordered.parsing import drawing

    class OneDistance:
        distance_names = ["parser/distance"]
        default_distance = "parser/distance"

        def sentence_distances(self, sentences, batch_size=64):
            return {"parser/distance": [np.ones(len(s)) for s in sentences]}

    monkeypatch.setattr(_common, "load_model", lambda path: OneDistance())
    status, out, err = run(["parse", "--model", "m.keras", "--format", "text",
                            "--distances", "Hello"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[-3:] == ["Hello"] + ["  " + drawing.BLOCKS[-1]] * 2


def test_five_hundred_words_are_drawn(capsys, tmp_path):
    sentence = " ".join(f"w{i}" for i in range(500))
    status, out, err = run(RIGHT + ["--format", "text", "--max-length",
                                    "600", sentence], capsys)
    assert status == 0, err
    assert out.splitlines()[-1].split() == sentence.split()
    if _importable("svgling"):
        svg = tmp_path / "long.svg"
        status, out, err = run(RIGHT + ["--format", "svg", "--max-length",
                                        "600", "--output", str(svg),
                                        sentence], capsys)
        assert status == 0, err
        assert svg.read_text().count("<text") == 500 + 499


def test_a_path_that_cannot_be_written_is_one_line(tmp_path, capsys):
    pytest.importorskip("svgling")
    afile = tmp_path / "afile"
    afile.write_text("")
    for target in (tmp_path / "missing" / "t.svg", afile / "t.svg"):
        status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                        str(target), SENTENCE], capsys)
        assert status == 2 and out == ""
        assert err.startswith(
            f"keras-ordered parse: error: Cannot write {str(target)!r}: ")
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert _leftovers(tmp_path) == ["afile"]


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch,
                                               capsys):
    pytest.importorskip("svgling")
    target = tmp_path / "t.svg"
    target.write_text("before")
    real = os.fdopen
    opened = []

    class FullDisk:
        # The second file's write stops half way: the disk is full.
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")

    def fdopen(descriptor, *args, **kwargs):
        opened.append(descriptor)
        f = real(descriptor, *args, **kwargs)
        return FullDisk(f) if len(opened) == 2 else f

    monkeypatch.setattr(os, "fdopen", fdopen)
    folder = tmp_path / "trees"
    status, out, err = run(RIGHT + ["--format", "svg", "--output",
                                    str(folder), "A b.", "C d."], capsys)
    assert status == 2
    assert "No space left on device" in err and len(err.splitlines()) == 1
    # The first file is whole; no temporary file is left.
    assert _leftovers(folder) == ["tree_0001.svg"]
    assert target.read_text() == "before"
    monkeypatch.setattr(os, "fdopen", real)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    monkeypatch.setattr(_common, "interrupted", lambda command: None)
    run(RIGHT + ["--format", "svg", "--output", str(target), SENTENCE],
        capsys)
    assert target.read_text() == "before"
    assert _leftovers(tmp_path) == ["t.svg", "trees"]


@pytest.mark.parametrize("fmt, module, needs", [
    ("svg", "svgling", "svgling"),
    ("png", "svgling", "svgling"),
    ("png", "cairosvg", "cairosvg"),
])
def test_a_missing_extra_is_one_line(fmt, module, needs, tmp_path,
                                     monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, module, None)
    target = tmp_path / f"t.{fmt}"
    status, out, err = run(RIGHT + ["--format", fmt, "--output", str(target),
                                    SENTENCE], capsys)
    assert status == 2 and out == ""
    assert err == (f"keras-ordered parse: error: --format {fmt} needs "
                   f"{needs}: {install_hint('draw')}\n")
    assert "[draw]" in err
    assert _leftovers(tmp_path) == []


def test_text_needs_no_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "svgling", None)
    monkeypatch.setitem(sys.modules, "cairosvg", None)
    status, out, err = run(RIGHT + ["--format", "text", SENTENCE], capsys)
    assert status == 0, err
