"""Search the hyperparameters of the ONLSTM language model with keras-tuner.

Hyperband over the preset's sensitive knobs, on PTB:

    python recipes/tune_onlstm.py --data ../shared/data/ptb --preset small

A quick search on a slice of PTB (random search, 4 trials of 2 epochs of
30 windows):

    python recipes/tune_onlstm.py --data ../shared/data/ptb --preset tiny \
        --max-lines 2000 --tuner random --max-trials 4 --max-epochs 2 \
        --steps-per-epoch 30 --output runs/tune_onlstm_quick

Trials train with truncated BPTT and carried state as the recipes do and
are ranked by validation perplexity (or, with --objective parse_f1, by
parsing F1 on --treebank). Results go to TensorBoard's HParams dashboard
(tensorboard --logdir OUTPUT/logs) and OUTPUT/results.json, the best
trial's model to OUTPUT/best_model.keras; running the same command again
continues an interrupted search.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.tuning import ONLSTMHyperModel  # noqa: E402
from keras_ordered.tuning.search import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:],
            hypermodel_class=ONLSTMHyperModel,
            description=__doc__.split("\n\n")[0],
            default_output="runs/tune_onlstm",
        )
    )
