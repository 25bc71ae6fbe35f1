"""The options several subcommands of `keras-ordered` share, each defined
once: its name, type, metavar, default and choices.

A subcommand adds an option with the function here and says in `help`
what the option does for it (a GFL parser's `--beam-size` decodes
`evaluate`'s trees, and sizes the served graph's beam in `export`); what
the option is stays here. The names the options choose among come from
`keras_ordered_options`, which the package reads too, so `--help` needs
neither TensorFlow nor a copy of them.

Standard library only at import time, as `_common` (`keras-ordered --help`
imports it).

Example:

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_model(parser, "A saved model.", required=True)
>>> add_beam_size(parser, "Beam search keeping K prefixes.")
>>> add_batch_size(parser, "Sentences decoded together.")
>>> args = parser.parse_args(["--model", "m.keras", "--beam-size", "4"])
>>> args.model, args.beam_size, args.batch_size
('m.keras', 4, 64)
"""

from keras_ordered_options import BASELINE_NAMES
from keras_ordered_options import DECODERS
from keras_ordered_options import DISTANCE_KINDS
from keras_ordered_options import MAX_SENTENCE_LENGTH
from keras_ordered_options import non_negative_int
from keras_ordered_options import positive_int

BATCH_SIZE = 64
"""Sentences per forward pass of a model, unless `--batch-size` says."""


def add_model(parser, help, *, required=False, repeat=None,
              metavar="PATH"):
    """`--model`: a model file or a shipped model's name.

    Args:
        parser: the subcommand's parser (or a mutually exclusive group).
        help: str, what the model is for in this subcommand.
        required: bool, whether the subcommand needs one.
        repeat: None (one model), `"append"` (`--model A --model B`) or
            `"extend"` (`--model A B`, also repeated).
        metavar: str.
    """
    keywords = {}
    if repeat == "append":
        keywords["action"] = "append"
    elif repeat == "extend":
        keywords.update(action="extend", nargs="+")
    elif repeat is not None:
        raise ValueError(f"repeat must be None, 'append' or 'extend', got "
                         f"{repeat!r}.")
    parser.add_argument("--model", required=required, metavar=metavar,
                        help=help, **keywords)


def add_beam_size(parser, help):
    """`--beam-size K` (default None: greedy decoding).

    Args:
        parser: the subcommand's parser.
        help: str, what the beam decodes in this subcommand.
    """
    parser.add_argument("--beam-size", type=positive_int, metavar="K",
                        help=help)


def add_batch_size(parser, help, default=BATCH_SIZE):
    """`--batch-size N`: sentences per forward pass.

    Args:
        parser: the subcommand's parser.
        help: str, what is batched (the default is shown after it).
        default: int.
    """
    parser.add_argument("--batch-size", type=positive_int, default=default,
                        help=f"{help} (default {default}).")


def add_max_length(parser, help):
    """`--max-length N`, default `MAX_SENTENCE_LENGTH`, the one limit of
    `parse`, `export` and `serve`.

    Args:
        parser: the subcommand's parser.
        help: str, what a longer sentence gets (the default follows).
    """
    parser.add_argument(
        "--max-length", type=positive_int, default=MAX_SENTENCE_LENGTH,
        metavar="N",
        help=f"Longest sentence, in tokens (default {MAX_SENTENCE_LENGTH}, "
        f"the limit parse, export and the SavedModels share): {help}")


def add_layer(parser, help):
    """`--layer L` (1 = the lowest layer)."""
    parser.add_argument("--layer", type=positive_int, metavar="L",
                        help=help)


def add_distance(parser, help):
    """`--distance {forget,input}`: a layer's master-gate distance."""
    parser.add_argument("--distance", choices=DISTANCE_KINDS, help=help)


def add_decoder(parser, help, more=()):
    """`--decoder`: one of `DECODERS` (default None: each model's own).

    Args:
        parser: the subcommand's parser.
        help: str.
        more: further choices of this subcommand (`("both",)`).
    """
    parser.add_argument("--decoder", choices=DECODERS + tuple(more),
                        default=None, help=help)


def add_baseline(parser, help, *, repeat=False):
    """`--baseline NAME`: trivial trees (`BASELINE_NAMES`).

    Args:
        parser: the subcommand's parser (or a mutually exclusive group).
        help: str.
        repeat: whether several may be given (`--baseline A B`, repeated).
    """
    keywords = dict(action="extend", nargs="+", metavar="NAME") if repeat \
        else {}
    parser.add_argument("--baseline", choices=BASELINE_NAMES, help=help,
                        **keywords)


def add_no_tokenize(parser, help):
    """`--no-tokenize` (`args.tokenize` False): split at whitespace only."""
    parser.add_argument("--no-tokenize", dest="tokenize",
                        action="store_false", help=help)


def add_limit(parser, help):
    """`--limit N`: only the first N items (quick checks)."""
    parser.add_argument("--limit", type=positive_int, metavar="N",
                        help=help)


def add_treebank(parser):
    """`--treebank DIR`, a folder of .mrg files."""
    parser.add_argument(
        "--treebank", metavar="DIR",
        help="Folder of .mrg files (default: "
        "$KERAS_ORDERED_DATA/wsj_sample/mrg).")


def add_distance_selection(parser):
    """`--layer`, `--distance`, `--seed` (of the random baseline) and
    `--batch-size`: which distance of a model, and how it is read."""
    add_layer(parser, "Layer whose distances to use (1 = lowest), e.g. 2.")
    add_distance(parser, "Which distance of the layer: from the forget or "
                 "the input master gate.")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="Seed of the random baseline.")
    add_batch_size(parser, "Sentences per forward pass of the model")
