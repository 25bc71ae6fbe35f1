"""`keras-ordered parse --file` reads, parses and prints a chunk of lines
at a time (`keras_ordered_cli._lines.CHUNK_LINES`), so a long file runs in
flat memory: the same output as in one chunk, line numbers that run on
across chunks, a bad line refused before anything is printed, and stdin
read the same way."""

import io

import pytest

import keras_ordered_cli as cli
from keras_ordered_cli import _lines

LINES = [
    "The cat sat.", "", "A dog ran home.", "It rained.", "",
    "We left early.", "They stayed.", "She read a book.", "He slept.",
    "Birds sing.", "", "The end.",
]


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def chunks_read(monkeypatch):
    """Chunks of 4 lines; records the size of every chunk read."""
    sizes = []
    chunks = _lines.FileLines.chunks

    def recording(self, size=_lines.CHUNK_LINES):
        for first, chunk in chunks(self, size):
            sizes.append(len(chunk))
            yield first, chunk

    monkeypatch.setattr(_lines, "CHUNK_LINES", 4)
    monkeypatch.setattr(_lines.FileLines, "chunks", recording)
    return sizes


def parse_file(tmp_path, capsys, lines, *options):
    path = tmp_path / "sentences.txt"
    path.write_bytes(lines)
    return run(["parse", "--baseline", "right-branching", *options,
                "--file", str(path)], capsys)


def test_chunks_give_the_output_of_one_pass(tmp_path, capsys, monkeypatch):
    data = ("\n".join(LINES) + "\n").encode()
    status, whole, _ = parse_file(tmp_path, capsys, data)
    assert status == 0
    assert len(whole.splitlines()) == len(LINES)
    sizes = []
    chunks = _lines.FileLines.chunks

    def recording(self, size=_lines.CHUNK_LINES):
        for first, chunk in chunks(self, size):
            sizes.append(len(chunk))
            yield first, chunk

    monkeypatch.setattr(_lines, "CHUNK_LINES", 4)
    monkeypatch.setattr(_lines.FileLines, "chunks", recording)
    status, chunked, _ = parse_file(tmp_path, capsys, data)
    assert status == 0
    assert chunked == whole
    # Never more than a chunk in hand: two chunks read to see that there
    # are several, then a first pass (3 chunks) and a second (3).
    assert max(sizes) == 4 and len(sizes) == 2 + 3 + 3


def test_a_bad_line_in_a_later_chunk_stops_before_any_output(
        tmp_path, capsys, chunks_read):
    bad = list(LINES)
    bad[9] = "Birds \x07sing."
    status, out, err = parse_file(tmp_path, capsys,
                                  ("\n".join(bad) + "\n").encode())
    assert status != 0
    assert out == ""
    assert "line 10" in err and "control character" in err


def test_skipped_lines_are_named_with_their_numbers_across_chunks(
        tmp_path, capsys, chunks_read):
    bad = list(LINES)
    bad[9] = "Birds \x07sing."
    status, out, err = parse_file(tmp_path, capsys,
                                  ("\n".join(bad) + "\n").encode(),
                                  "--on-error", "skip")
    assert status == 1
    printed = out.splitlines()
    assert len(printed) == len(LINES)
    assert printed[9] == "" and printed[11] == "(The (end .))"
    assert err.count("; skipped.") == 1 and "line 10 has a control" in err


def test_an_empty_long_input_is_refused(tmp_path, capsys, chunks_read):
    status, out, err = parse_file(tmp_path, capsys, b"\n" * 10)
    assert status != 0 and out == ""
    assert "the input is empty" in err


def test_stdin_is_read_in_chunks_too(tmp_path, capsys, monkeypatch,
                                     chunks_read):
    data = ("\n".join(LINES)).encode()  # no final line feed
    status, expected, _ = parse_file(tmp_path, capsys, data)
    chunks_read.clear()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    status, out, _ = run(["parse", "--baseline", "right-branching", "--file",
                          "-"], capsys)
    assert status == 0 and out == expected
    assert max(chunks_read) == 4
