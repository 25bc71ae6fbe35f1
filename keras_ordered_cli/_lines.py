"""The lines of `parse`'s input, read in chunks.

A file (or stdin) of any size is read a chunk of lines at a time, so that
`keras-ordered parse --file` holds one chunk in memory, never the whole
input. The input is read twice: a first pass checks every line (a bad
line stops the command before anything is printed, as for a short input)
and counts the sentences (the progress bar's total); the second parses.
Stdin, which cannot be read twice, is copied to a temporary file as it is
read (on disk, not in memory).
"""

import os
import sys
import tempfile

CHUNK_LINES = 10000
"""Lines read, tokenized and parsed together; the output of a chunk is
printed before the next is read."""

_BLOCK = 1 << 20  # bytes copied from stdin at a time


class ArgumentLines:
    """Sentences given as arguments: one chunk, already in memory.

    Args:
        sentences: list of str, one sentence each.
    """

    source = "argument"

    def __init__(self, sentences):
        self._lines = list(sentences)

    def chunks(self, size=CHUNK_LINES):
        """Yields one pair `(first_line_number, lines)`: all of them."""
        del size  # arguments are few: one chunk
        yield 1, self._lines

    def close(self):
        """Nothing to release."""


class FileLines:
    """The lines of a file, or of stdin, read a chunk at a time.

    Args:
        path: the file's path, or `"-"` for stdin (copied to a temporary
            file, which `close` removes).
        name: what messages call the input (`"'f.txt'"`, `"<stdin>"`).

    Raises:
        OSError: the file cannot be opened.

    Example:

    ```python
    lines = FileLines("sentences.txt", "'sentences.txt'")
    try:
        for first, chunk in lines.chunks(1000):
            ...  # chunk: up to 1000 lines (bytes), line feeds removed
    finally:
        lines.close()
    ```
    """

    def __init__(self, path, name):
        self.source = name
        self._spool = None
        if path == "-":
            self._spool = _spool_stdin()
            self._path = self._spool
        else:
            with open(path, "rb"):
                pass  # a missing or unreadable file fails here, at once
            self._path = path

    def chunks(self, size=CHUNK_LINES):
        """Yields `(first_line_number, lines)`: consecutive lists of at
        most `size` lines (`bytes`, each without its line feed), in
        order; an input that ends without a line feed keeps its last
        line, and a final line feed gives no empty line after it."""
        number, chunk = 1, []
        with open(self._path, "rb") as f:
            for line in f:
                chunk.append(line[:-1] if line.endswith(b"\n") else line)
                if len(chunk) == size:
                    yield number, chunk
                    number, chunk = number + size, []
        if chunk:
            yield number, chunk

    def close(self):
        """Removes stdin's temporary copy, if any."""
        if self._spool is not None:
            try:
                os.remove(self._spool)
            except OSError:
                pass
            self._spool = None


def _spool_stdin():
    """Copies stdin (bytes) to a temporary file; returns its path."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    handle, path = tempfile.mkstemp(prefix="keras_ordered_stdin_")
    with os.fdopen(handle, "wb") as out:
        while True:
            block = stream.read(_BLOCK)
            if not block:
                break
            out.write(block if isinstance(block, bytes)
                      else block.encode("utf-8", "surrogateescape"))
    return path
