"""What the subcommands of `keras-ordered` share.

Standard library only at import time: `keras-ordered --help` imports this
module, and must not import `keras_ordered` (which imports TensorFlow,
Keras, NumPy and nltk). Whatever needs them is imported inside the
functions, after `import_tensorflow(verbose)`.
"""

import contextlib
import os
import signal
import sys

# The names the options choose among, which the package names too: one
# definition, in the package that imports neither (`keras_ordered_options`).
from keras_ordered_options import BASELINE_NAMES  # noqa: F401
from keras_ordered_options import DECODERS  # noqa: F401
from keras_ordered_options import DISTANCE_KINDS  # noqa: F401
from keras_ordered_options import WORD_DECODERS  # noqa: F401
from keras_ordered_options import non_negative_int  # noqa: F401
from keras_ordered_options import positive_int  # noqa: F401

DECODER_HELP = (
    "How the distances become a tree: right, the published top-down "
    "parser of the language models (the word of the largest distance "
    "opens the right part), left, its mirror image (that word closes the "
    "left part), or gap (a span splits between the two words of its "
    "largest gap, as a distance parser's distances are read). Default: "
    "each model's own (gap for a distance parser, else right)."
)
"""The help of `--decoder`, shared by `parse` and `evaluate-parsing`."""


class CommandError(Exception):
    """A usage or input error, reported on stderr with exit status 2."""


class UsageError(CommandError):
    """A wrong combination of options: reported with the subcommand's usage."""


def import_tensorflow(verbose=False):
    """Imports `keras_ordered` (and TensorFlow) quietly, unless `--verbose`.

    Every subcommand calls this before it imports anything of
    `keras_ordered`, so that TensorFlow's C++ start-up log (`oneDNN ...`,
    `Could not find cuda drivers ...`, `absl::InitializeLog ...`) stays off
    the terminal: it sets `KERAS_ORDERED_QUIET=1`, which the package's
    `__init__` reads (`keras_ordered._quiet`). `--verbose` or the
    environment variable `KERAS_ORDERED_TF_LOGS=1` show the log.

    Nothing happens when the package is imported already (in-process use,
    such as tests calling `keras_ordered_cli.main`): there is no start-up
    log left to silence, and the process's environment stays as it is.

    Args:
        verbose: bool, `--verbose`: show TensorFlow's start-up log.
    """
    if "keras_ordered" in sys.modules:
        return
    if verbose:
        os.environ["KERAS_ORDERED_TF_LOGS"] = "1"
    else:
        os.environ.setdefault("KERAS_ORDERED_QUIET", "1")
    import keras_ordered  # noqa: F401  (registers every layer and model)


def load_model(path):
    """Loads a saved model for a subcommand (after `main` imported the package).

    Args:
        path: the `.keras` file given with `--model`, or the name of a
            shipped model (`keras-ordered list-models`).

    Returns:
        The model.

    Raises:
        CommandError: with a one-line message naming the file when it is
            missing or not a readable Keras model file.
    """
    from keras_ordered import shipped
    from keras_ordered.saving import load_model as load_saved_model

    if shipped.is_shipped(path):
        path = shipped.shipped_model_path(path)

    try:
        # Without the training configuration: no subcommand trains, and a
        # model then loads whatever optimizer it was saved with.
        return load_saved_model(path, compile=False)
    except (ValueError, OSError) as error:
        raise CommandError(str(error)) from None


def select_distance_names(available, default=None, layer=None, kind=None,
                          single=False):
    """Picks a model's distances from `--layer` / `--distance`.

    Args:
        available: the model's `distance_names`.
        default: the model's `default_distance`.
        layer: int or None, keeps names `layer{layer}/...`.
        kind: str or None (`"forget"`, `"input"`), keeps names `.../{kind}`.
        single: whether exactly one name is wanted. Then, without `layer`
            and `kind`, the default; with only one of them, the other is
            taken from the default when possible.

    Returns:
        A non-empty list of names, in the model's order.

    Raises:
        CommandError: when no distance matches (the message lists them).

    Example:

    >>> names = ["layer1/forget", "layer1/input", "layer2/forget", "layer2/input"]
    >>> select_distance_names(names, "layer2/forget", kind="input", single=True)
    ['layer2/input']
    """
    available = list(available)
    if layer is None and kind is None:
        if not single:
            return available
        return [default if default in available else available[0]]
    matches = [
        name
        for name in available
        if (layer is None or name.startswith(f"layer{layer}/"))
        and (kind is None or name.endswith(f"/{kind}"))
    ]
    if not matches:
        wanted = f"layer{layer if layer is not None else '*'}/{kind or '*'}"
        raise CommandError(
            f"The model has no distance {wanted}; available: "
            f"{', '.join(available)}. Pick --layer / --distance among them."
        )
    if not single or len(matches) == 1:
        return matches
    if default in matches:
        return [default]
    default_layer, _, default_kind = (default or "").partition("/")
    for name in matches:
        name_layer, _, name_kind = name.partition("/")
        if (layer is None and name_layer == default_layer) or (
            kind is None and name_kind == default_kind
        ):
            return [name]
    return [matches[0]]


def model_distances(model, path=None):
    """The model's distance names; a CommandError when it has none.

    The message of a model of another kind (a TD-TreeLSTM, a GFL parser)
    names the subcommand that takes it (see `commands_for`).
    """
    from keras_ordered.parsing.evaluate import check_distance_model

    try:
        return check_distance_model(model)
    except ValueError as error:
        hint = commands_for(model, path)
        raise CommandError(
            str(error) + (f" For this model: {hint}." if hint else "")
        ) from None


def commands_for(model, path=None):
    """What the subcommands do with a model of this kind, for messages.

    Imports nothing: a model's class was imported when it was loaded.

    Args:
        model: a loaded model.
        path: how the user named it (`--model`), for the examples.

    Returns:
        A phrase such as "`keras-ordered score FILE --model m.keras` (log
        P(S|T) of dependency trees)", or `""` for a model of no known kind.
    """
    name = path or "MODEL"
    kinds = (
        ("keras_ordered.models.tdtreelstm.tdtreelstm_language_model",
         "TDTreeLSTMLanguageModel",
         f"`keras-ordered score FILE --model {name}` (log P(S|T) of "
         "dependency trees; a TD-TreeLSTM induces no constituency trees)"),
        ("keras_ordered.models.gfl.gfl_parser", "GFLParser",
         f"`keras-ordered evaluate --model {name}` (EVALB of its parses) or "
         f"`keras-ordered parse --model {name}`"),
    )
    for module_name, class_name, hint in kinds:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(model, getattr(module, class_name)):
            return hint
    if callable(getattr(model, "sentence_distances", None)):
        return (
            f"`keras-ordered evaluate-parsing --model {name}` (the trees of "
            f"its syntactic distances) or `keras-ordered parse --model {name}`"
        )
    return ""


def escape(word):
    """A word as a leaf of a bracketed tree (`(` -> `-LRB-`, `)` -> `-RRB-`)."""
    return word.replace("(", "-LRB-").replace(")", "-RRB-")


def with_leaves(tree, words):
    """A copy of `tree` whose leaves are `words` (in order), escaped.

    Without recursion, so trees of any depth work (see
    `keras_ordered.parsing.trees.fold_tree`).
    """
    from keras_ordered.parsing import trees as trees_lib

    try:
        return trees_lib.replace_leaves(tree, [escape(w) for w in words])
    except ValueError:
        raise CommandError(
            f"The parser returned {trees_lib.num_leaves(tree)} leaves for "
            f"{len(words)} words."
        ) from None


def interrupted(command):
    """Ends the process after Ctrl-C: one line on stderr, exit status 130.

    The process ends with `os._exit`, without unwinding: a Ctrl-C that
    lands inside TensorFlow's C++ code would otherwise surface as another
    error with its traceback, and TensorFlow would print warnings about
    the interrupted computation at shutdown. What a subcommand was writing
    is removed first (an export's hidden version folder,
    `keras_ordered.export.layout.remove_partial_versions`; a drawing's
    temporary file, `remove_partial_files`); results not yet flushed to
    stdout are dropped, so nothing half-written is left.
    """
    layout = sys.modules.get("keras_ordered.export.layout")
    if layout is not None:
        layout.remove_partial_versions()
    remove_partial_files()
    # On a terminal, the line replaces a progress bar's.
    clear = "\r\x1b[2K" if sys.stderr.isatty() else ""
    print(f"{clear}keras-ordered {command}: interrupted", file=sys.stderr,
          flush=True)
    os._exit(130)


_PARTIAL_FILES = set()


def remove_partial_files():
    """Removes the temporary files a subcommand is writing now (see
    `writing`)."""
    for path in list(_PARTIAL_FILES):
        try:
            os.remove(path)
        except OSError:
            pass
        _PARTIAL_FILES.discard(path)


@contextlib.contextmanager
def stop_on_ctrl_c(command):
    """Within it, Ctrl-C ends the command at once (`interrupted`).

    Python's default turns Ctrl-C into a `KeyboardInterrupt` wherever the
    main thread is, which inside TensorFlow's C++ code can come out as a
    `SystemError` with a traceback. This handler instead ends the process
    cleanly. The previous handler comes back on exit (`main` runs inside
    tests too).

    Args:
        command: the subcommand's name, for the message.
    """
    try:
        previous = signal.signal(
            signal.SIGINT, lambda signum, frame: interrupted(command)
        )
    except ValueError:  # not the main thread: Python's default stays
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def standalone_module(name):
    """A standard-library-only module of `keras_ordered`, without its package.

    `import keras_ordered.shipped` runs `keras_ordered/__init__.py`, which
    imports TensorFlow to register the package's layers with Keras. A
    subcommand that needs none of that (`list-models` reading the shipped
    models' cards) loads the module's file on its own instead; once the
    package is imported, its own module is returned.

    Args:
        name: the module's name inside `keras_ordered` (e.g. `"shipped"`).

    Returns:
        The module.
    """
    import importlib.util

    if "keras_ordered" in sys.modules:
        return importlib.import_module(f"keras_ordered.{name}")
    package = importlib.util.find_spec("keras_ordered")
    (folder,) = package.submodule_search_locations
    spec = importlib.util.spec_from_file_location(
        f"keras_ordered_cli._standalone_{name}", os.path.join(folder, f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def progress_bar(total, description):
    """A progress bar on stderr when it is a terminal, else a silent one.

    Args:
        total: the number of items (sentences) to come.
        description: what is being done, shown before the bar.

    Returns:
        A `tqdm` bar (call `update(n)`, `close()`; a context manager),
        disabled when stderr is not a terminal (a pipe, a file, a test).
    """
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=description,
        unit=" sentences",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        leave=False,
        mininterval=0.5,
    )


def note(message):
    """Writes one informative line on stderr (stdout keeps the results)."""
    print(message, file=sys.stderr)


TIE_RULES = ("right", "left")
"""The tie rules of tree averaging (`keras_ordered.parsing.TIE_RULES`)."""


def add_ensemble_arguments(parser, tie_choices=TIE_RULES):
    """Adds `--weights`, `--tie` and `--smoothing`, the options of tree
    averaging."""
    parser.add_argument(
        "--weights",
        type=_weights,
        metavar="W,W,...",
        help="Ensembles: one non-negative weight per member, comma-"
        "separated, in the order of the members once MODEL:all is expanded "
        "(default: 1 each).",
    )
    parser.add_argument(
        "--tie",
        choices=tie_choices,
        default="right",
        help="Ensembles: how tree averaging chooses between equally voted "
        "splits: towards right-branching (right, the default) or "
        "left-branching (left)"
        + (", or both (a row each)." if "both" in tie_choices else "."),
    )
    parser.add_argument(
        "--smoothing",
        type=_smoothing,
        metavar="S",
        help="Ensembles: 0 (hit counts, the default of a list of models) or "
        "the noise, relative to each sentence's distances, under which each "
        "member votes for a span with the share of its noisy trees that "
        "hold it (default: a shipped ensemble's own).",
    )


def _weights(text):
    """`argparse` type of `--weights`: comma-separated numbers."""
    import argparse

    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be numbers separated by commas (1,2,0.5), got {text!r}"
        ) from None


def _smoothing(text):
    """`argparse` type of `--smoothing`: a finite number, 0 or more."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a number, 0 or more, got {text!r}")
    return value


def split_member(spec):
    """`MODEL[:DISTANCE]` -> `(model, distance or None)`
    (`keras_ordered.parsing.ensemble.split_member`)."""
    from keras_ordered.parsing.ensemble import split_member as split

    return split(spec)


def is_ensemble(specs):
    """Whether the `--model` values ask for tree averaging: several
    models, a `MODEL:DISTANCE` member, or a shipped ensemble."""
    if not specs:
        return False
    if len(specs) > 1:
        return True
    name, distance = split_member(specs[0])
    if distance is not None:
        return True
    return standalone_module("shipped").ensemble_members(name) is not None


def load_ensemble(specs, weights=None, decoder=None, tie="right",
                  smoothing=None):
    """A `keras_ordered.parsing.TreeEnsemble` of the `--model` members
    (`keras_ordered.saving.load_ensemble`): `--weights`, `--decoder` and
    `--tie` replace a shipped ensemble's own. A line on stderr notes
    members whose vocabularies differ (each reads the words its own way).

    Args:
        specs: the `--model` values (paths, shipped names,
            `MODEL:DISTANCE` members).
        weights: the `--weights`, or None (the ensemble's own, or 1 each).
        decoder: the `--decoder` (`left` or `gap` replace the ensemble's;
            None, `right` and `both` keep it).
        tie: the `--tie` (`left` replaces the ensemble's).
        smoothing: the `--smoothing`, or None (the ensemble's own, or 0).

    Raises:
        CommandError: a member that is not a model of syntactic distances,
            an unknown distance, fewer than two members, bad weights (one
            line each).
    """
    from keras_ordered.saving import load_ensemble as load

    try:
        ensemble = load(
            specs, weights=weights,
            decoder=decoder if decoder in ("left", "gap") else None,  # "both": rows
            tie="left" if tie == "left" else None, smoothing=smoothing)
    except (ValueError, OSError) as error:
        raise CommandError(str(error)) from None
    models = {id(m.model): m for m in ensemble.members}
    for member in models.values():
        model_distances(member.model, member.name)
    vocabularies = {tuple(getattr(m.model, "vocabulary", ()) or ())
                    for m in models.values()}
    if len(vocabularies) > 1:
        note("note: the members' vocabularies differ: each reads the words "
             "its own way.")
    return ensemble
