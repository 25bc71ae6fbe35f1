"""`keras-ordered parse --format text|svg|png`: drawn trees.

Standard library only at import time (see `keras_ordered_cli`): the
drawings come from `keras_ordered.parsing.drawing`, and svgling / cairosvg
(the `draw` extra) are imported once a drawing format is asked for.

Files are written whole or not at all: each goes to a temporary file in
its folder first, renamed over the target once complete, so an error or
Ctrl-C leaves no partial file and an existing file as it was.
"""

import importlib
import os
import tempfile

from keras_ordered_cli._common import CommandError

FORMATS = ("brackets", "text", "svg", "png")
"""What `parse --format` takes; `brackets` is the default."""

FILE_FORMATS = ("svg", "png")
"""Formats written to files (`--output`), not printed."""


_NEEDS = {"svg": ("svgling",), "png": ("svgling", "cairosvg")}


def check_extras(fmt):
    """Raises a one-line `CommandError` when `fmt` needs a missing package.

    Args:
        fmt: the `--format` value.

    Raises:
        CommandError: e.g. `--format svg needs svgling: pip install
            "keras-ordered[draw]"`, or, when cairosvg cannot load the
            cairo library, what to install.

    Example:

    ```python
    check_extras("text")  # needs nothing beyond nltk
    ```
    """
    for module in _NEEDS.get(fmt, ()):
        try:
            importlib.import_module(module)
        except ImportError:
            from keras_ordered._environment import install_hint

            raise CommandError(
                f"--format {fmt} needs {module}: {install_hint('draw')}"
            ) from None
        except OSError:
            # cairocffi raises OSError when the cairo library is missing.
            raise CommandError(
                f"--format {fmt} needs the cairo library, which {module} "
                "could not load: install it (apt-get install libcairo2, or "
                "brew install cairo)."
            ) from None


def _folder_problem(folder):
    """Why files cannot be written in `folder`, or None."""
    folder = folder or "."
    if not os.path.exists(folder):
        return f"there is no folder {folder!r}"
    if not os.path.isdir(folder):
        return f"{folder!r} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder!r} is not writable"
    return None


def output_paths(output, line_numbers, fmt):
    """The file of each drawing, checked before anything is parsed.

    An existing folder gets one file per sentence, `tree_NNNN.<fmt>`
    numbered by input line; so does a path that does not exist yet when
    there are several sentences (the folder is made when the files are
    written). One sentence and a path that is not a folder: that file.

    Args:
        output: the `--output` value.
        line_numbers: the input line number of each sentence, in order.
        fmt: `"svg"` or `"png"`.

    Returns:
        A pair `(paths, folder_to_make)`: one path per sentence, and the
        folder to create before writing (None when none is needed).

    Raises:
        CommandError: several sentences and a file name, or a place that
            cannot be written (its folder missing, not a folder, or not
            writable).

    Example:

    ```python
    output_paths("trees", [1, 3], "svg")
    # (['trees/tree_0001.svg', 'trees/tree_0003.svg'], 'trees')
    ```
    """
    def in_folder(folder):
        return [os.path.join(folder, f"tree_{number:04d}.{fmt}")
                for number in line_numbers]

    if os.path.isdir(output):
        problem = _folder_problem(output)
        if problem:
            raise CommandError(f"Cannot write {output!r}: {problem}.")
        return in_folder(output), None
    parent = os.path.dirname(os.path.abspath(output))
    problem = _folder_problem(parent)
    if problem:
        raise CommandError(f"Cannot write {output!r}: {problem}.")
    if len(line_numbers) == 1:
        return [output], None
    if os.path.exists(output) or os.path.splitext(output)[1].lower() in (
            ".svg", ".png"):
        count = len(line_numbers)
        raise CommandError(
            f"{count} sentences give {count} drawings: --output takes a "
            f"folder for them, not the file name {output!r}."
        )
    return in_folder(output), output


def _file_mode(path):
    """The permissions of a new file (those of `path` if it exists).

    `tempfile.mkstemp` makes its file readable by its owner only; a
    drawing gets the permissions any new file gets (the umask's).
    """
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_file(path, data):
    """Writes `data` (str or bytes) to `path` whole, or not at all.

    Args:
        path: the file to write (replaced if it exists).
        data: its content; `str` is written as UTF-8.

    Raises:
        CommandError: the file cannot be written (one line naming it).
            Nothing is left behind: the temporary file is removed, and an
            existing `path` stays as it was, also on Ctrl-C.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = os.path.dirname(os.path.abspath(path))
    temporary = None
    try:
        descriptor, temporary = tempfile.mkstemp(
            dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".partial"
        )
        with os.fdopen(descriptor, "wb") as f:
            f.write(data)
        os.chmod(temporary, _file_mode(path))
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise CommandError(
            f"Cannot write {path!r}: {error.strerror or error}."
        ) from None
    finally:
        if temporary is not None:
            try:
                os.remove(temporary)
            except OSError:
                pass


def render(tree, distances, fmt, name):
    """One sentence's drawing in `fmt`: `str` (text, svg) or PNG `bytes`.

    Args:
        tree: the sentence's tree (its leaves the words as written).
        distances: None, or the distances to draw as bars.
        fmt: `"text"`, `"svg"` or `"png"`.
        name: what to call the sentence in a message (`"Argument 1"`).

    Raises:
        CommandError: a tree too deep for the drawing libraries'
            recursion.
    """
    from keras_ordered.parsing import drawing

    try:
        if fmt == "text":
            return drawing.draw_text(tree, distances)
        svg = drawing.draw_svg(tree, distances)
        if fmt == "svg":
            return svg
        return drawing.svg_to_png(svg)
    except RecursionError:
        raise CommandError(
            f"{name}'s tree is too deep to draw as {fmt}: parse shorter "
            "sentences, or use --format brackets."
        ) from None


def write_drawings(items, fmt, paths, folder_to_make, written=None):
    """Writes each drawing to its file, in order.

    Args:
        items: `(tree, distances, name)` per sentence, as `render` takes.
        fmt: `"svg"` or `"png"`.
        paths: one path per item (`output_paths`).
        folder_to_make: a folder to create first, or None.
        written: None, or a function called with each path once its file
            is complete.

    Returns:
        The list of paths, each written whole (`write_file`).

    Raises:
        CommandError: a file that cannot be written; the files before it
            are complete, and it is left as it was.
    """
    if folder_to_make is not None:
        try:
            os.makedirs(folder_to_make, exist_ok=True)
        except OSError as error:
            raise CommandError(
                f"Cannot write {folder_to_make!r}: "
                f"{error.strerror or error}."
            ) from None
    done = []
    for (tree, distances, name), path in zip(items, paths):
        write_file(path, render(tree, distances, fmt, name))
        done.append(path)
        if written is not None:
            written(path)
    return done
