"""keras-ordered: a Keras 3 model zoo for syntax-aware recurrent networks.

ON-LSTM (Shen et al., 2019), PRPN (Shen et al., 2018) and the top-down
parsing of their syntactic distances, as Keras layers, models and recipes.
Importing the package registers every layer and model with Keras, so that
`keras.saving.load_model` reads the `.keras` files it writes (or use
`keras_ordered.load_model`), whoever imports it: a script, a notebook or
the `keras-ordered` command (the separate package `keras_ordered_cli`,
which imports this one only when a subcommand needs it, so that `--help`
answers at once).

TensorFlow's start-up log is left alone, unless `KERAS_ORDERED_QUIET=1`
asks for a quiet start-up (the recipes and the command set it; see
`keras_ordered._quiet`). On JAX or PyTorch (`KERAS_BACKEND=jax|torch`)
the package imports without TensorFlow (`keras_ordered.backend`).
The recipes and the command also ask TensorFlow for its pooled CPU
allocator (`keras_ordered._cpu_memory`) and import Keras without the
optional integrations they never use (`keras_ordered._quiet`).
"""

import importlib

from keras_ordered import _quiet

__version__ = "0.1.0"

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
from keras_ordered import datasets  # noqa: F401,E402
from keras_ordered import layers  # noqa: F401,E402
from keras_ordered import models  # noqa: F401,E402
from keras_ordered import parsing  # noqa: F401,E402
from keras_ordered import training  # noqa: F401,E402
