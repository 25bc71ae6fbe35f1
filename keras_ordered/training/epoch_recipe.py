"""The `main` of the recipes that back up at epoch ends (GFL, TD-TreeLSTM).

One place for what such a recipe does around its training function: the
verbosity default (a progress bar on a terminal, a line per epoch in a
file or a pipe), an input error as one line and exit status 2, and Ctrl-C
as one line that says what the backup holds and how to resume, with exit
status 130.
"""

import os
import sys


def run_recipe(parser, train, argv=None, callbacks=()):
    """Parses `argv`, runs `train(args, callbacks=...)`; returns the exit status.

    Args:
        parser: the recipe's `argparse` parser (with `--verbose` and
            `--output`).
        train: function `(args, callbacks=...)` returning the exit status.
        argv: list of arguments (None: `sys.argv[1:]`).
        callbacks: extra Keras callbacks for `fit` (tests use this).

    Returns:
        0 on success, 2 on an input error (one line on stderr), 130 after
        Ctrl-C (one line saying how to resume).
    """
    args = parser.parse_args(argv)
    if args.verbose is None:
        args.verbose = 1 if sys.stdout.isatty() else 2
    try:
        from keras_ordered.training.crash_safety import CtrlC

        return CtrlC(lambda: _interrupted(args.output)).call(
            train, args, callbacks=callbacks
        )
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(args.output)


def _interrupted(output):
    """After Ctrl-C: what the backup holds and how to resume; returns 130."""
    from keras_ordered.training.callbacks import TrainingBackup

    backup = TrainingBackup(os.path.join(output, "backup"))
    backup.remove_partial_saves()
    meta = backup.latest()
    if meta is None:
        message = ("Interrupted before the first epoch ended: nothing to "
                   "resume (run the same command again to start over).")
    else:
        message = (f"Interrupted. The backup in {backup.directory} holds "
                   f"{meta['epoch']} finished epoch(s): run the same "
                   "command again to resume from it.")
    print(f"\n{message}", file=sys.stderr)
    return 130
