"""Train the ON-LSTM language model of Shen et al. (2019) on PTB.

Paper defaults (3 layers 1150/1150/400, chunk 10, SGD lr 30, NT-ASGD,
AWD-LSTM regularisation):

    python recipes/ptb_onlstm.py --data ../shared/data/ptb

A model a 2-core CPU trains in about an hour:

    python recipes/ptb_onlstm.py --preset small --output runs/onlstm_small

Runs under `tf.distribute.MirroredStrategy` (every visible GPU, else the
CPU), logs loss, perplexity and learning rate to TensorBoard
(`tensorboard --logdir runs/onlstm_ptb/logs`), backs up its whole state
every `--save-freq` steps so that a killed run resumes at the window it
stopped at (run the same command again), and prints validation (batch 10)
and test (batch 1) perplexity at the end. `--parse-eval DIR` parses gold
trees every epoch and logs unlabeled F1 per layer.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.models.onlstm import ONLSTMLanguageModel  # noqa: E402
from keras_ordered.training.tasks.language_model import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:],
            model_class=ONLSTMLanguageModel,
            description=__doc__.split("\n\n")[0],
            default_output="runs/onlstm_ptb",
        )
    )
