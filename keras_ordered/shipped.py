"""Trained models shipped with the package, in `saved_models/`.

Each shipped model is a folder `saved_models/<name>/` holding

- `model.keras`: the model (weights and config; its vocabulary is an asset
  inside the file), saved without an optimizer;
- `card.json`: how it was made and what it is worth (the figures that
  `keras-ordered list-models` prints and that a test recomputes);
- `README.md`: the model card for people (data, preset, command, training
  time, perplexity, parsing F1 against right-branching).

They load like keras-hub presets, from local files (no download):

```python
model = keras_ordered.models.PRPNLanguageModel.from_preset("prpn_ptb_quick")
model = keras_ordered.saving.load_shipped("onlstm_ptb_small")
```

The folder is found at `$KERAS_ORDERED_SAVED_MODELS` when that is set, else
inside the package (`keras_ordered/saved_models`, what an installed wheel
holds: `setup.py` copies the models there), else beside the package
(`<repository>/saved_models`, what a clone and its editable install have).

Standard library only at import time: `keras-ordered list-models` reads the
cards without importing TensorFlow.
"""

import json
import os

SAVED_MODELS_ENV = "KERAS_ORDERED_SAVED_MODELS"
"""Environment variable naming another `saved_models` folder."""

DEFAULT_PARSER = "prpn_ptb_quick"
"""The shipped model `keras-ordered parse` uses without `--model`: the
shipped model with the best parsing F1 on the WSJ sample (see its card)."""

MODEL_FILE = "model.keras"
CARD_FILE = "card.json"
ENSEMBLE_FILE = "ensemble.json"


def saved_models_dir():
    """The folder of the shipped models (it may not exist)."""
    folder = os.environ.get(SAVED_MODELS_ENV)
    if folder:
        return os.path.abspath(os.path.expanduser(folder))
    package = os.path.dirname(os.path.abspath(__file__))
    inside = os.path.join(package, "saved_models")
    if os.path.isdir(inside):
        return inside
    return os.path.join(os.path.dirname(package), "saved_models")


def _folders_with(file_name):
    """The sorted names of the folders of `saved_models_dir()` that hold
    `file_name`."""
    folder = saved_models_dir()
    if not os.path.isdir(folder):
        return []
    return sorted(
        name
        for name in os.listdir(folder)
        if os.path.isfile(os.path.join(folder, name, file_name))
    )


def shipped_names():
    """Names of the shipped models (folders with a card), sorted."""
    return _folders_with(CARD_FILE)


def ensemble_names():
    """Names of the shipped ensembles (folders with an `ensemble.json`:
    averages of shipped models' trees, no model file of their own), sorted.
    """
    return _folders_with(ENSEMBLE_FILE)


def suggestion(name):
    """A hint naming the shipped models closest to `name`, or `""`.

    For messages about a model that was not found: a misspelt shipped
    name (`prpn_ptb_quik`) gets `Did you mean the shipped model
    'prpn_ptb_quick'?`, and a shipped name given where a file was expected
    says to load it with `keras_ordered.saving.load_shipped`; the other
    hints point to `keras-ordered list-models`.

    Args:
        name: what the user gave as a model (a name or a path).

    Returns:
        A sentence (starting with a space), or `""` when no model is
        shipped.

    Example:

    ```python
    from keras_ordered import shipped
    hint = shipped.suggestion("prpn_ptb_quik")
    assert "list-models" in hint or hint == ""
    ```
    """
    import difflib

    names = shipped_names() + ensemble_names()
    if not names:
        return ""
    base = os.path.basename(os.path.normpath(str(name)))
    if base.endswith(".keras"):
        base = base[: -len(".keras")]
    if str(name) in names:
        return (
            f" {name!r} is a shipped model, not a file: load it with "
            f"`keras_ordered.saving.load_shipped({str(name)!r})`."
        )
    close = difflib.get_close_matches(base, names, n=2, cutoff=0.6)
    if close:
        quoted = " or ".join(repr(n) for n in close)
        return (
            f" Did you mean the shipped model {quoted}? (`keras-ordered "
            "list-models` lists them.)"
        )
    return (
        f" Shipped models: {', '.join(names)} (`keras-ordered list-models`)."
    )


def _missing(name):
    names = shipped_names()
    where = saved_models_dir()
    if not names:
        return ValueError(
            f"No shipped model {name!r}: there are no shipped models at "
            f"{where} (set ${SAVED_MODELS_ENV} to the saved_models folder of "
            "a keras-ordered clone, or pass a model file)."
        )
    return ValueError(f"No shipped model {name!r} in {where}." + suggestion(name))


def is_shipped(name):
    """Whether `name` names a shipped model or ensemble (not a file
    path)."""
    return (
        isinstance(name, str)
        and os.sep not in name
        and not name.endswith(".keras")
        and (name in shipped_names() or name in ensemble_names())
    )


def ensemble_card(name):
    """The card (a dict) of a shipped ensemble (`ensemble.json`)."""
    path = os.path.join(saved_models_dir(), name, ENSEMBLE_FILE)
    if not os.path.isfile(path):
        raise _missing(name)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def shipped_card(name):
    """The card (a dict) of a shipped model; a ValueError lists the names."""
    path = os.path.join(saved_models_dir(), name, CARD_FILE)
    if not os.path.isfile(path):
        raise _missing(name)
    with open(path, encoding="utf-8") as f:
        card = json.load(f)
    card["path"] = os.path.join(saved_models_dir(), name, MODEL_FILE)
    return card


def ensemble_members(name):
    """The members of a shipped ensemble, or None for a single model.

    A shipped ensemble (`saved_models/ensemble_ptb/`) has a card and no
    `model.keras`: its card's `members` name shipped models, each with
    one of its distances (`"onlstm_ptb_small:layer2/forget"`), and its
    `weights`, `decoder` and `tie` say how their trees are averaged
    (`keras_ordered.parsing.TreeEnsemble`).

    Returns:
        None, or a dict with `members` (list of str), `weights` (list of
        float or None), `decoder`, `tie` and `smoothing` (0: hit counts).
    """
    if not isinstance(name, str) or name not in ensemble_names():
        return None
    card = ensemble_card(name)
    return {"members": list(card["members"]),
            "weights": card.get("weights"),
            "decoder": card.get("decoder", "right"),
            "tie": card.get("tie", "right"),
            "smoothing": card.get("smoothing", 0.0)}


def shipped_model_path(name):
    """The `.keras` file of a shipped model."""
    if ensemble_members(name) is not None:
        raise ValueError(
            f"{name!r} is a shipped ensemble of other shipped models, not one "
            "model file: parse with it (keras-ordered parse --model "
            f"{name}), or load its members "
            f"({', '.join(ensemble_members(name)['members'])}).")
    path = shipped_card(name)["path"]
    if not os.path.isfile(path):
        raise ValueError(
            f"The shipped model {name!r} has a card but no {MODEL_FILE} "
            f"({path}): the clone is incomplete (git lfs or a partial copy?)."
        )
    return path
