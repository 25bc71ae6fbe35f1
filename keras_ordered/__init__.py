"""keras-ordered: a Keras 3 model zoo for syntax-aware recurrent networks.

ON-LSTM (Shen et al., 2019), PRPN (Shen et al., 2018) and the top-down
parsing of their syntactic distances, as Keras layers, models and recipes.
Importing the package registers every layer and model with Keras, so that
`keras.saving.load_model` reads the `.keras` files it writes (or use
`keras_ordered.load_model`), whoever imports it: a script, a notebook or
the `keras-ordered` command (the separate package `keras_ordered_cli`,
which imports this one only when a subcommand needs it, so that `--help`
answers at once).

Before Keras is imported, the backend is checked: without one, or with a
`KERAS_BACKEND` that is not installed or does not exist, the import stops
with one line naming the extra to install (`keras_ordered._environment`).

On TensorFlow, importing the package first keeps TensorFlow's C++
start-up log (`oneDNN custom operations ...`, `failed call to cuInit`, the
CPU banner) off the terminal, as the command line does, unless the user
set `TF_CPP_MIN_LOG_LEVEL` or `KERAS_ORDERED_TF_LOGS=1`
(`keras_ordered._quiet`). `KERAS_ORDERED_QUIET=1` (which the recipes and
the command set) also leaves out Keras' unused integrations. On JAX or
PyTorch (`KERAS_BACKEND=jax|torch`) the package imports without
TensorFlow (`keras_ordered.backend`).
The recipes and the command also ask TensorFlow for its pooled CPU
allocator (`keras_ordered._cpu_memory`) and import Keras without the
optional integrations they never use, with the garbage collector tuned
for a command (`keras_ordered._quiet`).
"""

import contextlib
import importlib
import os
import sys

from keras_ordered import _environment
from keras_ordered import _quiet

if _quiet.quiet_requested():
    # A recipe or the command: an environment fault is one line, even
    # where nothing catches it.
    _environment.report_in_one_line()
if sys.modules.get("keras") is None:
    _environment.check_backend()

__version__ = "0.2.0.dev0"
"""The release the CHANGELOG's "Unreleased" section prepares, as a
development version (PEP 440)."""

_SUBPACKAGES = (
    "datasets", "export", "layers", "models", "parsing", "saving", "shipped",
    "training", "tuning",
)


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"keras_ordered.{name}")
    if name == "load_model":
        from keras_ordered.saving import load_model

        return load_model
    raise AttributeError(f"module 'keras_ordered' has no attribute {name!r}")


_imports = (_quiet.collector_tuned_for_commands()
            if _quiet.quiet_requested() else contextlib.nullcontext())
with _imports:
    if _quiet.quiet_requested():
        # A command of the package (a recipe, `keras-ordered`): Keras imported
        # without the integrations it never uses (`keras_ordered._quiet`) and,
        # on TensorFlow, TensorFlow's pooled CPU allocator
        # (`keras_ordered._cpu_memory`), asked for before its first tensor.
        if _quiet.configured_backend() == "tensorflow":
            from keras_ordered import _cpu_memory

            _cpu_memory.request_pooled_allocator()
            _quiet.import_tensorflow()
        else:
            with _quiet.unused_integrations_refused():
                import keras  # noqa: F401
    elif (_quiet.configured_backend() == "tensorflow"
          and "tensorflow" not in sys.modules
          and "TF_CPP_MIN_LOG_LEVEL" not in os.environ
          and not _quiet.tf_logs_wanted()):
        # A library import: TensorFlow's C++ start-up log silenced, Keras'
        # integrations left as they are.
        _quiet.import_tensorflow(lean=False)
    from keras_ordered import datasets  # noqa: F401
    from keras_ordered import layers  # noqa: F401
    from keras_ordered import models  # noqa: F401
    from keras_ordered import parsing  # noqa: F401
    from keras_ordered import training  # noqa: F401
del _imports
