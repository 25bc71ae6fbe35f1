"""The `keras-ordered` command line (the console script's package).

It is a package of its own, beside `keras_ordered`, so that `--help` and
`--version` answer at once while `import keras_ordered` always registers
every layer and model with Keras (it imports TensorFlow): this package
imports `keras_ordered` only once a subcommand runs.

Subcommands:

- `keras-ordered parse`: parses sentences with a saved model's syntactic
  distances (or a baseline) and prints one bracketed tree per sentence,
  or draws them (`--format text`, or `svg` / `png` files, `--distances`
  for the distances as bars).
- `keras-ordered evaluate-parsing`: scores a model's induced trees and
  baselines' against gold Penn Treebank trees, in one table.
- `keras-ordered evalb`: EVALB's report of a file of test trees against a
  file of gold trees.
- `keras-ordered evaluate`: EVALB's report of a supervised (GFL) parser's
  parses of a treebank's trees.
- `keras-ordered export`: writes a SavedModel for TF Serving whose
  signatures take raw sentences.
- `keras-ordered serve`: a parse page and TF Serving's REST API over
  HTTP, on this machine.
- `keras-ordered list-models`: the trained models shipped with the
  package.

Run `keras-ordered SUBCOMMAND --help` for the options. Exit status: 0 on
success, 1 when `parse --on-error skip` skipped lines, 2 on a usage or
input error (one line on stderr), 130 on Ctrl-C (one line on stderr, no
partial output). Work of more than a moment shows a progress bar on
stderr when stderr is a terminal, and nothing when it is a pipe or a
file.
`keras-ordered --version` prints the version; `--verbose` shows
TensorFlow's start-up log, which every subcommand otherwise silences (so
does the environment variable `KERAS_ORDERED_TF_LOGS=1`).

One module of this package per subcommand, listed in `SUBCOMMANDS`. A
module provides `NAME` (the subcommand), `add_parser(subparsers)` (adds
and returns its `argparse` parser) and `run(args)` (returns the exit
status, raises `CommandError` for an input error, `UsageError` for a wrong
combination of options). It imports only the standard library at module
level (and `keras_ordered_options`): `keras-ordered --help` loads every subcommand
module, and imports neither `keras_ordered` nor TensorFlow. `main` imports
`keras_ordered` quietly (`_common.import_tensorflow(verbose)`) before it calls
`run`, which imports what it needs inside the function; a module that
sets `NEEDS_TENSORFLOW = False` (`list-models`) runs without it.

Example:

```
keras-ordered evaluate-parsing --treebank ../shared/data/wsj_sample/mrg \\
    --baseline right-branching --json
echo "The cat sat on the mat." | keras-ordered parse --model model.keras
```
"""

import argparse
import importlib
import importlib.metadata
import re
import sys

from keras_ordered_cli import _common
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError
from keras_ordered_cli._common import select_distance_names

__all__ = [
    "SUBCOMMANDS",
    "CommandError",
    "UsageError",
    "build_parser",
    "main",
    "select_distance_names",
]

SUBCOMMANDS = (
    "parse",
    "evaluate_parsing",
    "evalb",
    "evaluate",
    "score",
    "export",
    "serve",
    "list_models",
)
"""Modules of `keras_ordered_cli` that each add one subcommand, in `--help`
order. A new subcommand is a new module, named here."""

_VERBOSE_HELP = "Show TensorFlow's start-up log (also KERAS_ORDERED_TF_LOGS=1)."


def _subcommand_modules():
    return [
        importlib.import_module(f"keras_ordered_cli.{name}")
        for name in SUBCOMMANDS
    ]


def _version():
    """The installed distribution's version (`keras_ordered.__version__`).

    Read from the installation's metadata, which setup.cfg takes from
    `keras_ordered.__version__`, so that `--version` imports no TensorFlow.
    """
    try:
        return importlib.metadata.version("keras-ordered")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: pip install -e .)"


def build_parser():
    """The `argparse` parser of the `keras-ordered` command.

    Returns:
        An `argparse.ArgumentParser` whose parsed arguments carry the
        subcommand's `run` function (`args.run`) and parser
        (`args.command_parser`).
    """
    parser = argparse.ArgumentParser(
        prog="keras-ordered",
        description="Syntax-aware language models and parsers: parse "
        "sentences (syntactic distances or a GFL parser; with no model, the "
        "shipped prpn_ptb_quick), evaluate the trees, score bracketings with "
        "EVALB, score dependency trees, export SavedModels for TF Serving, "
        "list the shipped models.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"keras-ordered {_version()}",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        default=False,
        help=_VERBOSE_HELP,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for module in _subcommand_modules():
        subparser = module.add_parser(commands)
        # Also accepted after the subcommand; SUPPRESS keeps the
        # subcommand's parser from resetting a --verbose given before it.
        subparser.add_argument(
            "--verbose",
            action="store_true",
            default=argparse.SUPPRESS,
            help=_VERBOSE_HELP,
        )
        subparser.set_defaults(
            run=module.run,
            command_parser=subparser,
            needs_tensorflow=getattr(module, "NEEDS_TENSORFLOW", True),
        )
    return parser


def main(argv=None):
    """Entry point of the `keras-ordered` console script.

    Args:
        argv: list of arguments (without the program name); `None` reads
            `sys.argv`.

    Returns:
        The exit status: 0 on success, 2 on an input error (with a
        one-line message on stderr). Usage errors exit through `argparse`
        (`SystemExit(2)`, with the usage). Ctrl-C ends the process at
        once with status 130 and one line on stderr
        (`_common.interrupted`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _common.stop_on_ctrl_c(args.command):
            if not getattr(args, "needs_tensorflow", True):
                return args.run(args)
            _common.import_tensorflow(getattr(args, "verbose", False))
            from keras_ordered import backend

            # Models run with float32 products in float32 on a GPU too (no
            # TensorFloat-32): the trees of the CPU and of the recipes.
            with backend.float32_matmuls():
                return args.run(args)
    except UsageError as error:
        args.command_parser.error(str(error))
    except (CommandError, ValueError) as error:
        message = re.sub(r"\s+", " ", str(error)).strip()
        print(f"keras-ordered {args.command}: error: {message}", file=sys.stderr)
        return 2
    except ImportError as error:
        # A TensorFlow-only feature without TensorFlow: its one line.
        if not getattr(error, "one_line", False):
            raise
        print(f"keras-ordered {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _common.interrupted(args.command)
