"""Train the Parsing-Reading-Predict Network (Shen et al., 2018) on PTB.

Paper defaults (embedding 800, 2 layers of 1200, 15 memory slots, look-back
5; Adam lr 0.003 with beta_1 = 0, learning rate halved after 2 epochs
without improvement, batch 64, window 35, clip 1.0):

    python recipes/ptb_prpn.py --data ../shared/data/ptb

A model a 2-core CPU trains in under an hour:

    python recipes/ptb_prpn.py --preset small --output runs/prpn_small

Same machinery as `recipes/ptb_onlstm.py` (keras_ordered.training.tasks.language_model):
`tf.distribute.MirroredStrategy`, progress bars, TensorBoard, crash-safe
backups that resume at the window a killed run stopped at, validation and
test perplexity at the end, and `--parse-eval DIR` for parsing F1 of the
distances every epoch.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.models.prpn import PRPNLanguageModel  # noqa: E402
from keras_ordered.training.tasks.language_model import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:],
            model_class=PRPNLanguageModel,
            description=__doc__.split("\n\n")[0],
            default_output="runs/prpn_ptb",
        )
    )
