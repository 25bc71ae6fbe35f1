"""keras-ordered: a Keras 3 model zoo for syntax-aware recurrent networks.

ON-LSTM (Shen et al., 2019), PRPN (Shen et al., 2018) and the top-down
parsing of their syntactic distances, as Keras layers, models and recipes.
Importing the package registers every layer and model with Keras, so that
`keras.saving.load_model` reads the `.keras` files it writes (or use
`keras_ordered.load_model`).

The `keras-ordered` command is the exception: it imports the sub-packages
(and TensorFlow) only when a subcommand needs them, so that `--help` and
`--version` answer at once. Every sub-package is also reachable lazily as
an attribute (`keras_ordered.layers`, ...).
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


if not _quiet.running_the_command():
    if _quiet.quiet_requested():
        _quiet.import_tensorflow()
    from keras_ordered import datasets  # noqa: F401,E402
    from keras_ordered import layers  # noqa: F401,E402
    from keras_ordered import models  # noqa: F401,E402
    from keras_ordered import parsing  # noqa: F401,E402
    from keras_ordered import training  # noqa: F401,E402
