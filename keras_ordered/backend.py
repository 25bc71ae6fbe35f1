"""Which Keras backend runs, and TensorFlow where only TensorFlow will do.

keras-ordered runs on every Keras 3 backend (TensorFlow, the default and
the serving path; JAX; PyTorch). A few things are TensorFlow's alone:
SavedModel export for TF Serving, `tf.distribute`, the TF-tuned CPU
recurrences and the `tf.data` pipelines. Those modules import TensorFlow
through `require_tensorflow`, when they are used, so that the package
imports and runs without TensorFlow installed; without it, they stop with
one line that names what to install.

Example:

    from keras_ordered import backend

    if backend.is_tensorflow():
        tf = backend.require_tensorflow("the TF-tuned ON-LSTM loop")
"""

import importlib

import keras

INSTALL_HINT = "pip install 'tensorflow>=2.21,<2.22'"


class TensorFlowMissingError(ImportError):
    """Raised when a TensorFlow-only feature is used without TensorFlow."""


def name():
    """The running Keras backend's name: "tensorflow", "jax" or "torch"."""
    return keras.backend.backend()


def is_tensorflow():
    """Whether Keras runs on TensorFlow."""
    return keras.backend.backend() == "tensorflow"


def require_tensorflow(feature):
    """Imports and returns the `tensorflow` module for `feature`.

    Args:
        feature: str, what needs TensorFlow, for the message
            (e.g. "SavedModel export").

    Returns:
        The `tensorflow` module.

    Raises:
        TensorFlowMissingError: TensorFlow is not installed. Its message is
            one line: the feature, and the command that installs it.
    """
    try:
        return importlib.import_module("tensorflow")
    except ImportError as error:
        if getattr(error, "name", None) not in (None, "tensorflow"):
            raise
        raise TensorFlowMissingError(
            f"{feature} needs TensorFlow, which is not installed "
            f"(Keras backend: {name()}); install it with: {INSTALL_HINT}"
        ) from None
