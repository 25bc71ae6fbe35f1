"""Loading saved keras_ordered models, with one-line errors.

A model of the package saves like any Keras model
(`model.save("model.keras")`), and `keras.saving.load_model` reads it back
once `keras_ordered` is imported (the import registers the package's
layers, models and optimizer with Keras). `load_model` here checks the
file first, so that a wrong path, a folder, a truncated download or a file
of another format gives one line that names the file and the problem
instead of Keras' messages (which, for a class Keras cannot find, print the
model's whole configuration).
"""

import os
import re
import zipfile

from keras_ordered import shipped

CONFIG_FILENAME = "config.json"
"""The member of a `.keras` archive that holds the model's configuration."""

_LEGACY_EXTENSIONS = (".h5", ".hdf5")
_WEIGHTS_EXTENSIONS = (".weights.h5", ".weights.json")
_MAX_MESSAGE = 400


def _one_line(message, limit=_MAX_MESSAGE):
    """`message` on one line, cut before Keras' `Full object config`."""
    message = str(message)
    cut = re.search(r"\s*Full object config", message)
    if cut:
        message = message[: cut.start()]
    message = re.sub(r"\s+", " ", message).strip()
    if len(message) > limit:
        message = message[: limit - 3].rstrip() + "..."
    return message


def _weights_only(path):
    """The message for a file of weights (no model) given as a model."""
    folder = os.path.dirname(path) or "."
    try:
        beside = sorted(n for n in os.listdir(folder) if n.endswith(".keras"))
    except OSError:
        beside = []
    if beside:
        where = " beside it: " + ", ".join(
            repr(os.path.join(os.path.dirname(path), n)) for n in beside
        )
    else:
        where = " (a training run writes it beside the weights, e.g. model.keras)"
    return (
        f"{path!r} holds weights only (a checkpoint, from save_weights), not "
        f"a model: pass the `.keras` model file{where}. (Weights load into a "
        "built model with `model.load_weights(...)`.)"
    )


def check_model_file(filepath):
    """Checks that `filepath` can be a saved Keras model, before loading it.

    Reads only the zip directory of the file (no TensorFlow needed).

    Args:
        filepath: str or path-like, a `.keras` file (legacy `.h5` files are
            passed on to Keras unchecked; `.weights.h5` files are refused).

    Returns:
        The path, as a string.

    Raises:
        FileNotFoundError: nothing exists at `filepath` (the message
            suggests the closest shipped model names).
        ValueError: `filepath` is a folder, a file of weights only
            (`*.weights.h5`: the message names the `.keras` files beside
            it), or not a readable `.keras`
            archive (not a zip file, a truncated one, no `config.json`, or
            a zip whose name does not end in `.keras`). The message is one
            line naming the file.
    """
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"No model at {path!r}: pass the path of a model saved with "
            "`model.save('model.keras')`, or the name of a shipped model."
            + shipped.suggestion(path)
        )
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "saved_model.pb")):
            raise ValueError(
                f"{path!r} is a TensorFlow SavedModel folder (for TF "
                "Serving, from `model.export()`), not a Keras model file: "
                "pass the `.keras` file saved with `model.save('model.keras')`."
            )
        raise ValueError(
            f"{path!r} is a folder, not a Keras model file: pass the `.keras` "
            "file saved with `model.save('model.keras')`."
        )
    if path.lower().endswith(_WEIGHTS_EXTENSIONS):
        raise ValueError(_weights_only(path))
    if path.lower().endswith(_LEGACY_EXTENSIONS):
        return path
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"{path!r} is not a readable Keras model file: a `.keras` file is "
            "a zip archive, and this one is not (a truncated or damaged "
            "copy, or a file of another format?)."
        )
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as error:
        raise ValueError(
            f"{path!r} is not a readable Keras model file: its zip archive "
            f"cannot be read ({_one_line(error)})."
        ) from None
    if CONFIG_FILENAME not in names:
        raise ValueError(
            f"{path!r} is not a readable Keras model file: the zip archive "
            f"holds no {CONFIG_FILENAME} (it is not a model saved with "
            "`model.save('model.keras')`)."
        )
    if not path.endswith(".keras"):
        raise ValueError(
            f"{path!r} looks like a Keras model archive, but Keras reads "
            "only files whose name ends in `.keras`: rename it."
        )
    return path


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved with `model.save("model.keras")`.

    Registers the layers and models of keras_ordered with Keras, checks the
    file (`check_model_file`), then calls `keras.saving.load_model`. Any
    error comes back as one line that names the file and never holds the
    model's configuration (Keras' own message is kept as the exception's
    `__context__`).

    Args:
        filepath: str or path-like, the `.keras` file.
        custom_objects: optional dict of further classes or functions the
            model needs (passed to Keras).
        compile: bool, whether to compile the model as it was saved.
        safe_mode: bool, Keras' safe mode (refuses lambdas in the file).

    Returns:
        The model (e.g. an `ONLSTMLanguageModel`, its vocabulary restored).

    Raises:
        FileNotFoundError: nothing exists at `filepath`.
        ValueError: the file is not a readable Keras model file, or Keras
            cannot rebuild the model from it.

    Example:

    ```python
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "the", "cat", "sat"]
    )
    model.save("tiny.keras")
    restored = keras_ordered.load_model("tiny.keras")
    assert restored.vocabulary == model.vocabulary
    ```
    """
    path = check_model_file(filepath)
    import keras

    # The layers, models and TorchAdam are registered with Keras by
    # `import keras_ordered` (the command line's `_common.load_model`
    # imports them itself): this module sits below `models` and `training`
    # and never imports them (the import-linter contract in .importlinter).
    try:
        return keras.saving.load_model(
            path,
            custom_objects=custom_objects,
            compile=compile,
            safe_mode=safe_mode,
        )
    except Exception as error:  # Keras raises many types; one line for all
        if "No model config found" in str(error):
            raise ValueError(_weights_only(path)) from None
        raise ValueError(
            f"Could not load the model {path!r}: {_one_line(error)}"
        ) from None


def load_shipped(name, expected_class=None, compile=False):
    """Loads a shipped model.

    Args:
        name: str, a shipped model's name (see `shipped_names()`).
        expected_class: optional model class; a ValueError is raised when
            the shipped model is of another family.
        compile: whether to restore the training configuration (the shipped
            files hold none, so the default is False).

    Returns:
        The Keras model, in float32.

    Example:

    ```python
    model = keras_ordered.saving.load_shipped("prpn_ptb_quick")
    distances = model.sentence_distances([["the", "cat", "sat"]])
    ```
    """
    card = shipped.shipped_card(name)
    if expected_class is not None and card["class"] != expected_class.__name__:
        raise ValueError(
            f"The shipped model {name!r} is a {card['class']}, not a "
            f"{expected_class.__name__}: load it with "
            f"keras_ordered.models.{card['class']}.from_preset({name!r})."
        )
    return load_model(shipped.shipped_model_path(name), compile=compile)
