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

import contextlib
import io
import json
import os
import re
import shutil
import tempfile
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


# Groups of the weights file that a layer's class once named: Keras files a
# model's layers by their class names, and PRPN's reading network, a
# `keras.layers.RNN` in files of keras-ordered 0.1, is a
# `PRPNReadingNetwork` since 0.2 (same variables).
_RENAMED_WEIGHT_GROUPS = {
    "PRPNLanguageModel": {"layers/rnn": "layers/prpn_reading_network"},
}
_WEIGHTS_MEMBER = "model.weights.h5"


def _pending_renames(store, class_name):
    """The `(old, new)` group names of an open weights file still to rename."""
    return [(old, new)
            for old, new in _RENAMED_WEIGHT_GROUPS.get(class_name, {}).items()
            if old in store and new not in store]


def rename_weight_groups(weights_file, class_name):
    """Renames, in place, the groups of an `.weights.h5` file of a model of
    `class_name` written before one of its layers changed class. Returns
    whether anything was renamed."""
    import h5py  # a Keras dependency

    with h5py.File(weights_file, "r+") as store:
        renames = _pending_renames(store, class_name)
        for old, new in renames:
            store.move(old, new)
    return bool(renames)


def _needs_renaming(weights_file, class_name):
    import h5py

    if class_name not in _RENAMED_WEIGHT_GROUPS:
        return False
    with h5py.File(weights_file, "r") as store:
        return bool(_pending_renames(store, class_name))


@contextlib.contextmanager
def current_layout(path, class_name=None):
    """`path`, or a temporary copy of it in the current weights layout.

    A `.keras` archive (its class read from its config) or a
    `.weights.h5` file of a model of `class_name`, written by an earlier
    version whose layer classes Keras filed the weights under, is copied
    with those groups renamed (`rename_weight_groups`); the copy is
    removed on leaving. Other files are given as they are.
    """
    folder = None
    try:
        if path.endswith(".weights.h5") and class_name is not None:
            if _needs_renaming(path, class_name):
                folder = tempfile.mkdtemp(prefix="keras_ordered_")
                copy = os.path.join(folder, os.path.basename(path))
                shutil.copyfile(path, copy)
                rename_weight_groups(copy, class_name)
                path = copy
        elif path.endswith(".keras") and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                if CONFIG_FILENAME in names and _WEIGHTS_MEMBER in names:
                    config = json.loads(archive.read(CONFIG_FILENAME))
                    class_name = config.get("class_name")
                    if class_name in _RENAMED_WEIGHT_GROUPS:
                        folder = tempfile.mkdtemp(prefix="keras_ordered_")
                        weights = archive.extract(_WEIGHTS_MEMBER, folder)
                        if rename_weight_groups(weights, class_name):
                            copy = os.path.join(folder, "model.keras")
                            with zipfile.ZipFile(copy, "w") as out:
                                for name in names:
                                    if name == _WEIGHTS_MEMBER:
                                        out.write(weights, name)
                                    else:
                                        out.writestr(
                                            archive.getinfo(name),
                                            archive.read(name))
                            path = copy
        yield path
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def compressed_copy(filepath, output):
    """Writes a copy of a `.keras` file with its members compressed
    (deflated): the same model, bit for bit, in a smaller file.

    Keras stores the members of a `.keras` archive uncompressed; float32
    weights of a trained model deflate by about 8%. Keras reads the copy as
    it reads any `.keras` file (loading takes a little longer: it inflates
    the weights first). `saved_models/make_card.py` stores every shipped
    model so.

    Args:
        filepath: str or path-like, the `.keras` file to copy.
        output: str or path-like, where to write the copy (not `filepath`).

    Returns:
        `output`, as a string.

    Raises:
        ValueError: `filepath` is not a `.keras` model file with weights,
            or `output` is `filepath`.

    Example:

    ```python
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "the", "cat", "sat"])
    model.save("model.keras")
    keras_ordered.saving.compressed_copy("model.keras", "small.keras")
    same = keras_ordered.load_model("small.keras")  # the same weights
    ```
    """
    return _copy_archive(filepath, output, "compressed copy")


def half_precision_copy(filepath, output):
    """Writes a copy of a `.keras` file with its float32 weights stored as
    float16: about half the size, for shipping a model.

    The copy is an ordinary `.keras` file, its members compressed as
    `compressed_copy` writes them. Loading it gives the model with its own
    variable dtypes (float32 under the `float32` and mixed policies): Keras
    casts each stored array as it assigns it, so the model computes as
    before, with every weight rounded to the nearest float16. Rounding
    moves the model's outputs slightly; measure what matters (a shipped
    parser's trees) on the copy, not on the original.

    Args:
        filepath: str or path-like, the `.keras` file to copy.
        output: str or path-like, where to write the copy (not `filepath`).

    Returns:
        `output`, as a string.

    Raises:
        ValueError: `filepath` is not a `.keras` model file with weights,
            a float32 weight would overflow float16 (its magnitude is over
            65,504), or `output` is `filepath`.

    Example:

    ```python
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "the", "cat", "sat"])
    model.save("model.keras")
    keras_ordered.saving.half_precision_copy("model.keras", "model_f16.keras")
    half = keras_ordered.load_model("model_f16.keras")  # float32 weights
    ```
    """
    return _copy_archive(filepath, output, "half-precision copy",
                         _float16_weights)


def _float16_weights(filepath, data):
    """The weights member `data` of `filepath` with its float32 arrays
    stored as float16 (an error for a value float16 cannot hold)."""
    import h5py  # a Keras dependency
    import numpy as np

    limit = float(np.finfo(np.float16).max)
    halved = io.BytesIO()
    with h5py.File(io.BytesIO(data), "r") as source, \
            h5py.File(halved, "w") as target:
        target.attrs.update(source.attrs)

        def copy(name, item):
            if isinstance(item, h5py.Group):
                target.require_group(name)
            else:
                values = item[()]
                if getattr(values, "dtype", None) == np.float32:
                    if values.size and np.abs(values).max() > limit:
                        raise ValueError(
                            f"{filepath!r}: weight {name!r} has a value "
                            f"of magnitude over {limit:,.0f}, which "
                            "float16 cannot hold.")
                    values = values.astype(np.float16)
                target.create_dataset(name, data=values)
            target[name].attrs.update(item.attrs)

        source.visititems(copy)
    return halved.getvalue()


def _copy_archive(filepath, output, what, transform_weights=None):
    """Copies the `.keras` archive `filepath` to `output` with every member
    deflated, its weights member passed through `transform_weights`."""
    filepath, output = os.fspath(filepath), os.fspath(output)
    if os.path.abspath(filepath) == os.path.abspath(output):
        raise ValueError(f"{output!r}: write the {what} to another file "
                         "than the model it copies.")
    check_model_file(filepath)
    with zipfile.ZipFile(filepath) as archive:
        if _WEIGHTS_MEMBER not in archive.namelist():
            raise ValueError(f"{filepath!r} holds no {_WEIGHTS_MEMBER}: "
                             f"there are no weights to write a {what} of.")
        members = [(info, archive.read(info.filename))
                   for info in archive.infolist()]
    if transform_weights is not None:
        members = [(info, transform_weights(filepath, data)
                    if info.filename == _WEIGHTS_MEMBER else data)
                   for info, data in members]
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return output


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
        with current_layout(path) as current:
            return keras.saving.load_model(
                current,
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


def load_ensemble(specs, weights=None, decoder=None, tie=None,
                  smoothing=None):
    """A `keras_ordered.parsing.TreeEnsemble` of named members.

    Args:
        specs: list of `"MODEL[:DISTANCE]"` (`split_member`): `.keras`
            files or shipped names, with one distance, `all` of them, or
            none (the model's default); a shipped ensemble's name stands
            for its members (and, when it is the only spec, its weights,
            decoder, tie rule and smoothing).
        weights: one weight per member once expanded (None: the shipped
            ensemble's, or 1 each).
        decoder, tie: `"right"` or `"left"` (None: the shipped ensemble's,
            or `"right"`).
        smoothing: the members' vote smoothing (`TreeEnsemble`; None: the
            shipped ensemble's, or 0, hit counts).

    Returns:
        The `TreeEnsemble`; each model file is loaded once.

    Example:

    ```python
    ensemble = keras_ordered.saving.load_ensemble(
        ["prpn_ptb_quick", "onlstm_ptb_small:layer2/forget"])
    (parsed,) = ensemble.parse([["the", "cat", "sat"]])
    ```
    """
    from keras_ordered.parsing.ensemble import TreeEnsemble
    from keras_ordered.parsing.ensemble import split_member

    expanded = []
    for spec in specs:
        preset = shipped.ensemble_members(split_member(spec)[0])
        if preset is None:
            expanded.append(spec)
            continue
        expanded.extend(preset["members"])
        if len(specs) == 1:
            weights = preset["weights"] if weights is None else weights
            decoder = decoder or preset["decoder"]
            tie = tie or preset["tie"]
            smoothing = preset["smoothing"] if smoothing is None else smoothing
    loaded, entries, names = {}, [], []
    for spec in expanded:
        path, distance = split_member(spec)
        if path not in loaded:
            loaded[path] = (load_shipped(path) if shipped.is_shipped(path)
                            else load_model(path, compile=False))
        entries.append((loaded[path], distance))
        names.append(path)
    return TreeEnsemble(entries, weights=weights, decoder=decoder or "right",
                        tie=tie or "right", names=names,
                        smoothing=smoothing or 0.0)


def load_shipped(name, expected_class=None, compile=False):
    """Loads a shipped model.

    Args:
        name: str, a shipped model's name (see `shipped_names()`).
        expected_class: optional model class; a ValueError is raised when
            the shipped model is of another family.
        compile: whether to restore the training configuration (the shipped
            files hold none, so the default is False).

    Returns:
        The Keras model, in float32; for a shipped ensemble
        (`ensemble_ptb`), its `keras_ordered.parsing.TreeEnsemble`.

    Example:

    ```python
    model = keras_ordered.saving.load_shipped("prpn_ptb_quick")
    distances = model.sentence_distances([["the", "cat", "sat"]])
    ```
    """
    if shipped.ensemble_members(name) is not None:
        if expected_class is not None:
            raise ValueError(
                f"{name!r} is a shipped ensemble, not a "
                f"{expected_class.__name__}: load it with "
                f"keras_ordered.saving.load_shipped({name!r}).")
        return load_ensemble([name])
    card = shipped.shipped_card(name)
    if expected_class is not None and card["class"] != expected_class.__name__:
        raise ValueError(
            f"The shipped model {name!r} is a {card['class']}, not a "
            f"{expected_class.__name__}: load it with "
            f"keras_ordered.models.{card['class']}.from_preset({name!r})."
        )
    return load_model(shipped.shipped_model_path(name), compile=compile)
