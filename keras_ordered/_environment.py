"""The environment a run starts in, checked before it starts (standard
library only).

Where the package meets the user's machine, every fault is one line that
says what to do:

- the Keras backend: `check_backend()` runs first thing in
  `keras_ordered/__init__.py`, before Keras is imported, and raises
  `BackendError` (an `ImportError` whose message is one line) when no
  backend is installed, when `KERAS_BACKEND` names a backend that is not
  installed, or one that does not exist (the message lists the valid
  names);
- what to install: `install_hint(extra)` names the package's extra in the
  form that fits where the package runs from (`pip install -e
  "<clone>[jax]"` in a clone, else `pip install "keras-ordered[jax]"`);
- output folders: `check_output_dir(path)` raises `OutputPathError` (a
  `ValueError`, one line) when a run could not write there: a file in the
  way, a folder without write permission, a read-only file system, or
  less than `MIN_FREE_BYTES` free. The recipes, the searches, the
  `Runner`, `keras-ordered export` and `keras_ordered.export` call it
  before any work.

Example:

```python
from keras_ordered import _environment

_environment.check_output_dir("runs/example")  # None: writable
print(_environment.install_hint("draw"))
```
"""

import importlib.util
import os
import sys

BACKEND_MODULES = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}
"""The Keras backends keras-ordered runs on, and the module each needs."""

OTHER_KERAS_BACKENDS = ("numpy", "openvino")
"""Keras backends keras-ordered does not run on (no recurrent training
there); Keras itself reports what they lack."""

MIN_FREE_BYTES = 1 << 20
"""An output folder on a file system with less free space than this
(1 MiB, less than the smallest model file) is refused before a run."""

DISTRIBUTION = "keras-ordered"


class BackendError(ImportError):
    """The Keras backend cannot be imported: its message is one line that
    names what to install or set. The command and the recipes print it as
    it is."""

    one_line = True


class OutputPathError(ValueError):
    """An output path a run cannot write: one line, the path and why."""


def _editable_clone():
    """The clone the package runs from, or None: the package's parent
    folder when it is a source tree (`setup.cfg` and `saved_models/` beside
    the package, as in a clone and its editable install), not an installed
    wheel."""
    package = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(package)
    if (os.path.isfile(os.path.join(root, "setup.cfg"))
            and os.path.isdir(os.path.join(root, "saved_models"))):
        return root
    return None


def install_hint(extra):
    """The pip command that installs the package's `extra`, in the form
    that fits this installation.

    Args:
        extra: str, an extra of keras-ordered ("tensorflow", "jax",
            "torch", "draw", "dev"), or several joined by commas.

    Returns:
        str, e.g. `pip install "keras-ordered[draw]"`, or `pip install -e
        "/path/to/clone[draw]"` when the package runs from a clone
        (where `pip install "keras-ordered[...]"` would replace the clone
        with a release from the index).
    """
    clone = _editable_clone()
    if clone:
        return f'pip install -e "{clone}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def configured_backend():
    """The backend Keras will use, read as Keras reads it, without
    importing Keras (see `keras_ordered._quiet.configured_backend`)."""
    from keras_ordered import _quiet

    return _quiet.configured_backend()


def _installed(module):
    if module in sys.modules:
        return sys.modules[module] is not None  # None: blocked (tests)
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def backend_problem(backend=None):
    """Why the Keras backend `backend` cannot run keras-ordered, or None.

    Args:
        backend: str, a backend name (None: the configured one).

    Returns:
        A one-line message, or None when the backend is installed (or is
        one of Keras' own others, `OTHER_KERAS_BACKENDS`, left to Keras).
    """
    chosen = configured_backend() if backend is None else backend
    explicit = bool(os.environ.get("KERAS_BACKEND")) or backend is not None
    name = str(chosen).strip().lower()
    valid = ", ".join(BACKEND_MODULES)
    if name in OTHER_KERAS_BACKENDS:
        return None
    if name not in BACKEND_MODULES:
        return (f"KERAS_BACKEND={chosen!r} is not a Keras backend "
                f"keras-ordered runs on: set it to one of {valid}.")
    if _installed(BACKEND_MODULES[name]):
        return None
    installed = [other for other, module in BACKEND_MODULES.items()
                 if other != name and _installed(module)]
    if installed:
        switch = (f", or run on the installed one with "
                  f"KERAS_BACKEND={installed[0]}")
    else:
        switch = ""
    if not explicit and not installed:
        return (f"keras-ordered needs a Keras backend, and none is "
                f"installed: {install_hint('tensorflow')} (the default), "
                f"or the jax or torch extra with KERAS_BACKEND=jax|torch "
                f"({valid}).")
    source = (f"KERAS_BACKEND={name} asks for" if explicit
              else "The default Keras backend is")
    return (f"{source} {BACKEND_MODULES[name]}, which is not installed: "
            f"{install_hint(name)}{switch}.")


def check_backend(backend=None):
    """Raises `BackendError` (one line) when `backend_problem` finds one.

    Args:
        backend: str, a backend name (None: the configured one).
    """
    problem = backend_problem(backend)
    if problem:
        raise BackendError(problem)


def _one_line_hook(previous):
    def hook(kind, error, traceback):
        if getattr(error, "one_line", False):
            print(f"error: {error}", file=sys.stderr)
            return
        previous(kind, error, traceback)

    hook.one_line = True
    return hook


def report_in_one_line():
    """Makes an uncaught error whose class says `one_line` (a missing
    backend, a TensorFlow-only feature without TensorFlow) print as one
    line on stderr, `error: <message>`, instead of a traceback.

    For scripts that promise one-line errors and import the package at
    their top, where no `try` can catch it: the recipes (which set
    `KERAS_ORDERED_QUIET=1`, and `keras_ordered/__init__.py` then calls
    this). Other errors keep their traceback.
    """
    if not getattr(sys.excepthook, "one_line", False):
        sys.excepthook = _one_line_hook(sys.excepthook)


def output_problem(path):
    """Why a run could not create or write the folder `path`, or None.

    Looks, without creating anything, at `path` and its nearest existing
    ancestor: a file where a folder must be, a folder without write
    permission or on a read-only file system, less than `MIN_FREE_BYTES`
    free there.

    Args:
        path: str, the output folder (it may not exist yet).

    Returns:
        str (the reason, to follow "cannot write ...: "), or None.
    """
    path = os.path.abspath(os.path.expanduser(str(path)))
    existing = path
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        if existing == path:
            return f"{path!r} is a file, not a folder"
        return f"{existing!r} is a file, so no folder can be made below it"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the folder {existing!r} is not writable (permission or a " \
               "read-only file system)"
    try:
        stats = os.statvfs(existing)
    except (OSError, AttributeError):  # no statvfs (Windows): not detected
        return None
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        return f"no space left on the device of {existing!r} ({free} bytes free)"
    return None


def check_output_dir(path, option="--output"):
    """Raises `OutputPathError` (one line) when `output_problem` finds one.

    Args:
        path: str, the output folder.
        option: str, what the user gave it as, for the message.
    """
    problem = output_problem(path)
    if problem:
        raise OutputPathError(f"Cannot write {option} {path}: {problem}.")
