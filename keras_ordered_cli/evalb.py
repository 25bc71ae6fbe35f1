"""`keras-ordered evalb`: EVALB's bracketing scores of a test file of trees.

Scores the test trees (one per line) against the gold trees (one per
line) with the semantics of EVALB (Sekine & Collins), and prints the
report its C program `evalb.c` prints, character for character: one row
per sentence, the totals, and the summary for all sentences and for
those of length <= `CUTOFF_LEN`, each with its `Bracketing FMeasure`
line. Without `-p`, the parameters are those of
`COLLINS.prm` (`keras_ordered.parsing.evalb.COLLINS_PARAMS`).

Example:

```
keras-ordered evalb gold.txt test.txt -p ../shared/data/evalb/COLLINS.prm
```
"""

import dataclasses

from keras_ordered_cli import _common

NAME = "evalb"


def add_parser(subparsers):
    """Adds the `evalb` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="EVALB bracketing scores of test trees against gold trees.",
        description="Labelled bracketing recall, precision, F-measure, "
        "crossing brackets and tagging accuracy of the trees of TEST "
        "against those of GOLD (one bracketed tree per line, in the same "
        "order; an empty TEST line is a parse failure), as EVALB computes "
        "and prints them. Without -p, the parameters of COLLINS.prm.",
    )
    parser.add_argument("gold", metavar="GOLD", help="File of gold trees.")
    parser.add_argument("test", metavar="TEST", help="File of test trees.")
    parser.add_argument(
        "-p",
        "--params",
        metavar="PRM",
        help="EVALB parameter file (default: COLLINS.prm's settings).",
    )
    parser.add_argument(
        "-e",
        "--max-error",
        type=_common.non_negative_int,
        metavar="N",
        help="Give up as EVALB's -e N does, at the error after N + 1 "
        "errors (overrides MAX_ERROR; 0: never, where the C program gives up "
        "at the second).",
    )
    return parser


def run(args):
    """Runs `keras-ordered evalb`; returns the exit status."""
    from keras_ordered.parsing import evalb

    params = evalb.load_params(args.params) if args.params else evalb.COLLINS_PARAMS
    if args.max_error is not None:
        params = dataclasses.replace(params, max_error=args.max_error)
    result = evalb.evaluate_files(args.gold, args.test, params)
    print(evalb.format_report(result), end="")
    return 0
