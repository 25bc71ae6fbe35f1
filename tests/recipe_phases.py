"""`recipes/ptb_prpn.py` with its phases written to a file, for the Ctrl-C tests.

    python tests/recipe_phases.py PHASES_FILE RECIPE_ARGS...

runs the PRPN recipe as `recipes/ptb_prpn.py RECIPE_ARGS...` does, and
appends one line to PHASES_FILE as the run enters each phase: `train`
(the first training step of a `fit`, which builds the graph),
`validation` (the second validation step during training), `parsing` (the
parsing callback), `backup` (a backup being written; it lasts a second
longer here), `final` (the final evaluation). A test
sends SIGINT when the phase it wants appears, instead of sleeping blindly.
It changes nothing else.
"""

import os
import sys
import time

os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.models.prpn import PRESETS  # noqa: E402
from keras_ordered.models.prpn import PRPNLanguageModel  # noqa: E402
from keras_ordered.models.prpn import get_preset  # noqa: E402
from keras_ordered.training.callbacks import parsing as parsing_callback  # noqa: E402
from keras_ordered.training.tasks import language_model  # noqa: E402

try:  # the module that makes the backups
    from keras_ordered.training import runner  # noqa: E402
except ImportError:  # an older checkout, where the task made them
    runner = language_model

PHASES = sys.argv[1]


def mark(phase):
    with open(PHASES, "a") as f:
        f.write(phase + "\n")


# The method that writes a backup: `_save`, or `save` in older checkouts of
# the package, which these phases also run against to compare.
WRITE = "_save" if hasattr(runner.TrainingBackup, "_save") else "save"


class MarkingBackup(runner.TrainingBackup):
    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:  # the first step of a fit builds the graph: the longest
            mark("train")

    def on_test_batch_begin(self, batch, logs=None):
        if batch == 1:
            mark("validation")

    def _save(self, *args, **kwargs):
        mark("backup")
        time.sleep(1.0)  # a backup long enough for a signal to land inside
        return getattr(super(), WRITE)(*args, **kwargs)

    if WRITE == "save":  # an older checkout, for comparison
        save = _save


def marking(phase, function):
    def marked(*args, **kwargs):
        mark(phase)
        return function(*args, **kwargs)
    return marked


runner.TrainingBackup = MarkingBackup
language_model.evaluate_stream = marking("final", language_model.evaluate_stream)
parsing_callback.ParsingEvaluation.evaluate = marking(
    "parsing", parsing_callback.ParsingEvaluation.evaluate
)

if __name__ == "__main__":
    sys.exit(language_model.main(
        sys.argv[2:], model_class=PRPNLanguageModel, get_preset=get_preset,
        presets=PRESETS, description="PRPN", default_output="runs/prpn_ptb",
    ))
