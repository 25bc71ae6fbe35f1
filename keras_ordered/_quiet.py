"""Quiet, lean start-up for the package's commands (standard library only).

TensorFlow 2.21 writes its C++ start-up log (`oneDNN custom operations are
on`, `Could not find cuda drivers`, `failed call to cuInit`, the CPU feature
banner, and absl's `All log messages before absl::InitializeLog() ...`,
twice) straight to the process's standard error while it is imported,
before `TF_CPP_MIN_LOG_LEVEL` is read. The `keras-ordered` command and the
recipes import TensorFlow through `import_tensorflow()`, which sends file
descriptor 2 to /dev/null while TensorFlow is imported and looks for GPUs
(the `failed call to cuInit` of a machine without one), and sets
`TF_CPP_MIN_LOG_LEVEL=3` for what follows (TensorFlow's C++ log off: its
"errors" on these paths are benign notices such as cuInit's or oneDNN's
`DT_BOOL` one; a real failure still raises a Python exception), unless the
user asks for the logs:

- the environment variable `KERAS_ORDERED_TF_LOGS=1`, or
- `--tf-logs` on a recipe's command line, `--verbose` on `keras-ordered`'s.

A `TF_CPP_MIN_LOG_LEVEL` the user set is kept as it is. Importing
`keras_ordered` as a library silences nothing unless a recipe asked for it
(`KERAS_ORDERED_QUIET=1`, which the recipe scripts and the `keras-ordered`
command set before they import it).

The same import leaves out optional integrations that Keras and
TensorFlow load whenever they are installed and that the commands never
use through them: scikit-learn, for Keras' `keras.wrappers` estimators;
matplotlib, for Keras' `keras.visualization` plots; and on the TensorFlow
backend JAX, which TensorFlow imports for TF Lite's converter of JAX
functions. Keras and TensorFlow take the path they take when those are
not installed, for that process (those features then say the package is
missing); the modules themselves import as usual afterwards (GFL's
attention maps import matplotlib when they draw). Likewise nltk, loaded
on a command's first tree (`keras_ordered._nltk`), loads without
scipy.stats and scikit-learn (`NLTK_UNUSED_INTEGRATIONS`): 0.1 s instead of
about 0.7 s. A command then imports
the package in about 70 % of a library import's time
(`benchmarks/start_time.py`). A module imported before is not affected:
a script that wants one of those features imports it, or Keras, before
`keras_ordered`. Nothing is left out on PyTorch, which asks
`importlib.util.find_spec` about scikit-learn while it is imported (a
refused module would break that).

A command's process also tunes Python's cyclic garbage collector
(`collector_tuned_for_commands`). Importing TensorFlow and Keras makes
about half a million long-lived objects, and building trees makes
hundreds of thousands of short-lived ones (`evaluate-parsing`'s
baselines, a treebank's records); with the default thresholds their
allocation runs full collections that walk everything and free almost
nothing. The package is imported with the collector paused, what the
imports made is moved to its permanent generation (`gc.freeze`), and
the youngest generation is collected every `COMMAND_GC_THRESHOLD`
allocations instead of every 700. On an idle AMX Xeon this takes about
0.3 s off the import and halves the scoring time of `evaluate-parsing`
on 500 sentences.
"""

import contextlib
import gc
import importlib.abc
import os
import sys

TF_LOGS_ENV = "KERAS_ORDERED_TF_LOGS"
QUIET_ENV = "KERAS_ORDERED_QUIET"


def _truthy(value):
    return str(value or "").strip().lower() not in ("", "0", "false", "no")


def tf_logs_wanted(argv=None):
    """Whether the user asked to see TensorFlow's own log."""
    argv = sys.argv if argv is None else argv
    return _truthy(os.environ.get(TF_LOGS_ENV)) or "--tf-logs" in argv


def quiet_requested():
    """Whether a recipe asked for a quiet start-up (`KERAS_ORDERED_QUIET`)."""
    return _truthy(os.environ.get(QUIET_ENV))


COMMAND_GC_THRESHOLD = 10_000
"""The collector's youngest-generation threshold in a command's process
(Python's default: 700)."""


@contextlib.contextmanager
def collector_tuned_for_commands():
    """The package's import in a command's process: the cyclic garbage
    collector paused while it runs; afterwards what it made frozen
    (`gc.freeze`), the youngest generation's threshold raised to
    `COMMAND_GC_THRESHOLD` (never lowered), and collection resumed if it
    was on.

    Only the commands (`quiet_requested()`) use it: a library import
    leaves the user's collector as it is.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        youngest, *older = gc.get_threshold()
        gc.set_threshold(max(youngest, COMMAND_GC_THRESHOLD), *older)
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _stderr_silenced():
    """Sends file descriptor 2 (C++ and Python writes alike) to /dev/null."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr: nothing to silence
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def configured_backend():
    """The Keras backend this process will use, read as Keras reads it
    (`KERAS_BACKEND`, else the "backend" of `$KERAS_HOME/keras.json` or
    `~/.keras/keras.json`, else TensorFlow), without importing Keras."""
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"]
    home = os.environ.get("KERAS_HOME") or os.path.join(
        os.path.expanduser("~"), ".keras")
    try:
        import json

        with open(os.path.join(home, "keras.json"), encoding="utf-8") as f:
            return json.load(f).get("backend", "tensorflow")
    except (OSError, ValueError, AttributeError):
        return "tensorflow"


# Optional integrations Keras and TensorFlow import when installed, which
# the commands never use through them: the module and what imports it.
UNUSED_INTEGRATIONS = {
    "jax": "TF Lite's converter of JAX functions (tensorflow.lite)",
    "sklearn": "Keras' scikit-learn estimators (keras.wrappers)",
    "matplotlib": "Keras' image plots (keras.visualization)",
}


class _Refused(importlib.abc.MetaPathFinder):
    """A finder that answers "not installed" for some packages (and their
    submodules)."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, name, path=None, target=None):
        if any(name == refused or name.startswith(refused + ".")
               for refused in self.names):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


# Optional integrations nltk imports when installed, for modules of its own
# that this package never uses (nltk loads on the first tree:
# `keras_ordered._nltk`): the module and what imports it.
NLTK_UNUSED_INTEGRATIONS = {
    "scipy.stats": "nltk.collocations' association measures (Fisher's exact "
                   "test)",
    "sklearn": "nltk.classify's scikit-learn classifier",
}


def refused_integrations(backend):
    """The integrations of `UNUSED_INTEGRATIONS` a command leaves out on
    `backend`: all three on TensorFlow, all but JAX on JAX, none on
    PyTorch."""
    if backend == "tensorflow":
        return list(UNUSED_INTEGRATIONS)
    if backend == "jax":
        return [name for name in UNUSED_INTEGRATIONS if name != "jax"]
    return []


@contextlib.contextmanager
def unused_integrations_refused(backend=None, names=None):
    """While Keras (and TensorFlow), or nltk, are imported: the
    integrations of `refused_integrations(backend)`, or `names`, not
    imported yet read as not installed. Afterwards they import as usual.

    Args:
        backend: the Keras backend name (None: `configured_backend()`).
        names: the top-level modules to refuse instead (e.g.
            `NLTK_UNUSED_INTEGRATIONS`); the backend is then not read.
    """
    if names is None:
        backend = configured_backend() if backend is None else backend
        names = refused_integrations(backend)
    names = [name for name in names if name not in sys.modules]
    if not names:
        yield
        return
    finder = _Refused(names)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def import_tensorflow(show=None, lean=True):
    """Imports TensorFlow and Keras, silencing their start-up log, without
    the integrations `refused_integrations` names for the configured
    backend.

    Args:
        show: bool or None, show the log; None asks `tf_logs_wanted()`.
        lean: bool, leave out the integrations (False: a library import,
            where a user's own code may use them through Keras).

    Returns:
        The `tensorflow` module.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    if show is None:
        show = tf_logs_wanted()
    refused = (unused_integrations_refused() if lean
               else contextlib.nullcontext())
    if show:
        with refused:
            import keras  # noqa: F401
            import tensorflow as tf

        return tf
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with _stderr_silenced(), refused:
        import keras  # noqa: F401
        import tensorflow as tf

        # Looking for GPUs calls cuInit, which logs `E0000 ... failed call
        # to cuInit` on a machine without one. (Physical devices only: the
        # logical ones can still be configured afterwards.)
        tf.config.list_physical_devices("GPU")
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
    except ImportError:  # absl comes with TensorFlow; be safe anyway
        pass
    tf.get_logger().setLevel("ERROR")
    return tf
