"""What the package and the `keras-ordered` command both name: the shared
limits, the names options choose among, and the `argparse` types of
numeric options, used by the recipes' options (the typed configs of
`keras_ordered.training.config`, `keras_ordered.training.options`,
`keras_ordered.tuning`), the package and the `keras-ordered` command.

A package of its own beside `keras_ordered`, standard library only, that
imports nothing of `keras_ordered` or `keras_ordered_cli` (a contract of
`.importlinter`). It cannot be a module inside `keras_ordered`: importing
any module of that package runs `keras_ordered/__init__.py`, which
registers every layer and model with Keras and so imports Keras (and
TensorFlow), while `keras-ordered --help` builds every subcommand's
options with these types and answers without either.

Example:

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = parser.add_argument("--batch-size", type=positive_int, default=20)
>>> parser.parse_args(["--batch-size", "64"]).batch_size
64
"""

import argparse

BASELINE_NAMES = ("right-branching", "left-branching", "balanced", "random")
"""The trivial trees, by name: `keras_ordered.parsing.BASELINES`' keys,
`keras-ordered parse --baseline` and `evaluate-parsing --baseline`."""

DISTANCE_KINDS = ("forget", "input")
"""The distances of an ON-LSTM layer: from its forget or its input master
gate (`--distance`, the models' `layerN/forget` and `layerN/input`)."""

DECODERS = ("right", "left", "gap")
"""The top-down decoders of distances (`keras_ordered.parsing.
distances_to_tree`, `--decoder`): `"right"`, the published parser of PRPN
and ON-LSTM (the split word opens the right part), `"left"`, its mirror
image (the split word closes the left part), and `"gap"`, the complete
parser of Shen et al. (2018), which splits a span between two words (every
binary tree has distances that give it)."""

WORD_DECODERS = ("right", "left")
"""The decoders that split a span at a word (the language models'), which
`evaluate-parsing --decoder both` reports side by side."""

SPLIT_NAMES = ("train", "dev", "test", "wsj10")
"""The splits of a treebank folder (`keras_ordered.datasets.treebank`,
`evaluate-parsing --split`)."""

PROTOCOL_PUNCTUATION = {
    "on-lstm": False, "prpn": False, "compound-pcfg": False, "evalb": False,
    "sentence-punct": True, "corpus-punct": True,
}
"""The evaluation protocols by name (`keras_ordered.parsing.evaluate.
PROTOCOLS`, `evaluate-parsing --protocol`), and whether each scores the
trees with their punctuation (the command then reads the treebank with
it)."""

MAX_SENTENCE_LENGTH = 400
"""The longest sentence, in tokens, that keras-ordered reads by default:
the one limit of `keras-ordered parse --max-length`, `keras-ordered export
--max-length`, the exported SavedModels (`keras_ordered.export`) and so
of a server of them. Far longer than the sentences of the PTB text and
the WSJ trees; a sentence over it gets a one-line error, and each
command's `--max-length` raises it."""


def _int_option(text, smallest, what):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < smallest:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def positive_int(text):
    """`argparse` type of a count option: an int of 1 or more.

    Args:
        text: the option's value as given.

    Returns:
        The int.

    Raises:
        argparse.ArgumentTypeError: `argparse` then prints the usage and
            `error: argument --batch-size: must be a positive integer (1,
            2, ...), got '0'`, and exits with status 2.

    Example:

    >>> positive_int("64")
    64
    """
    return _int_option(text, 1, "a positive integer (1, 2, ...)")


def non_negative_int(text):
    """`argparse` type of a seed or limit that may be 0: an int >= 0.

    Args:
        text: the option's value as given.

    Returns:
        The int.

    Raises:
        argparse.ArgumentTypeError: for a negative or non-integer value.

    Example:

    >>> non_negative_int("0")
    0
    """
    return _int_option(text, 0, "an integer of 0 or more")


def positive_float(text):
    """`argparse` type of a rate or duration: a float above 0.

    Args:
        text: the option's value as given.

    Returns:
        The float.

    Raises:
        argparse.ArgumentTypeError: for 0, a negative value or a non-number.

    Example:

    >>> positive_float("0.003")
    0.003
    """
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be a positive number, got {text!r}")
    return value
