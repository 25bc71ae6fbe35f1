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

import sys

from keras_ordered.models.onlstm import PRESETS
from keras_ordered.models.onlstm import ONLSTMLanguageModel
from keras_ordered.models.onlstm import get_preset
from keras_ordered.training.runner import main

if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:],
            model_class=ONLSTMLanguageModel,
            get_preset=get_preset,
            presets=PRESETS,
            description=__doc__.split("\n\n")[0],
            default_output="runs/onlstm_ptb",
        )
    )
