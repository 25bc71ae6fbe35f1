"""The one `main` of every recipe: options in, exit status out.

The recipes (`recipes/*.py`) are short drivers: each builds its parser from
`keras_ordered.training.options` and hands it, with its task function, to
`run_recipe`. One place for what every recipe does around its task:

- the verbosity default: a progress bar on a terminal, a line per epoch
  when the output goes to a file or a pipe (that output line-buffered, so
  a log shows each epoch as it ends);
- an input error (`ValueError`, `FileNotFoundError`), or an `--output`
  folder the run could not write (checked first), as one line on stderr
  and exit status 2;
- Ctrl-C within seconds wherever the run is
  (`keras_ordered.training.crash_safety.CtrlC`), then one line that says
  what the backup holds and how to resume, and exit status 130.

Example:

```python
import argparse

from keras_ordered.training.driver import run_recipe

parser = argparse.ArgumentParser()
parser.add_argument("--output", default="runs/example")
parser.add_argument("--verbose", type=int, default=None)

def task(options):
    if not options.output:
        raise ValueError("--output must not be empty.")
    return 0

assert run_recipe(parser, task, ["--output", "runs/x"]) == 0
assert run_recipe(parser, task, ["--output", ""]) == 2
```
"""

import os
import sys

from keras_ordered import _environment
from keras_ordered import backend

from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.crash_safety import CtrlC


def run_recipe(parser, task, argv=None, *, interrupted=None, on_error=None,
               **kwargs):
    """Parses `argv`, runs `task(args, **kwargs)`; returns the exit status.

    Args:
        parser: the recipe's `argparse` parser (with `--verbose` and
            `--output`).
        task: function `(args, **kwargs)` returning the exit status.
        argv: list of arguments (None: `sys.argv[1:]`).
        interrupted: function `(output)` called after Ctrl-C with the
            `--output` folder: prints what the run keeps and how to resume,
            returns 130 (default: `backup_interrupted`, for recipes run by
            `keras_ordered.training.runner.Runner`, whose backups are in
            `OUTPUT/backup`).
        on_error: function `(args, error)` for any other exception: returns
            an exit status, or None to let the error propagate (default:
            propagate).
        **kwargs: passed on to `task` (tests pass extra callbacks).

    Returns:
        `task`'s status; 2 on an input error (one line on stderr); 130
        after Ctrl-C.
    """
    args = parser.parse_args(argv)
    if getattr(args, "verbose", 0) is None:
        args.verbose = 1 if sys.stdout.isatty() else 2
    if not sys.stdout.isatty() and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    if interrupted is None:
        interrupted = backup_interrupted
    output = getattr(args, "output", None)
    # On JAX or PyTorch, Keras still seeds TensorFlow and writes TensorBoard
    # summaries through it when it is installed: import it now, quietly.
    backend.import_installed_tensorflow()

    try:
        if output:
            # Before any data is read: a folder the run could not write.
            _environment.check_output_dir(output)
        return CtrlC(lambda: interrupted(output)).call(task, args, **kwargs)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted(output)
    except Exception as error:
        status = on_error(args, error) if on_error else None
        if status is None:
            raise
        return status


def backup_interrupted(output):
    """After Ctrl-C: the latest backup in `OUTPUT/backup` is whole (a save
    cut short is removed); says where it stands and how to resume; 130.

    Args:
        output: str, the run's `--output` folder.

    Returns:
        130, after one paragraph on stderr.
    """
    backup = TrainingBackup(os.path.join(output, "backup"))
    backup.remove_partial_saves()
    meta = backup.latest()
    if meta is None:
        message = ("Interrupted before the first backup: nothing to resume "
                   "(run the same command again to start over).")
    else:
        epoch, next_batch = meta["epoch"], meta.get("next_batch", 0)
        position = (f"epoch {epoch + 1}, window {next_batch}" if next_batch
                    else f"start of epoch {epoch + 1}")
        message = (f"Interrupted. The backup in {backup.directory} is whole "
                   f"({position}): run the same command again to resume "
                   "from it.")
    print(f"\n{message}", file=sys.stderr)
    return 130
