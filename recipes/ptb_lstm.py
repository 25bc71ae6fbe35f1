"""Train a conventional LSTM language model on PTB: the parsing control.

The control of Dyer, Melis and Blunsom (2019): ON-LSTM's recipe and sizes
with Keras' own `LSTM` in place of the ON-LSTM; its gates' distances are
parsed and scored as ON-LSTM's are:

    python recipes/ptb_lstm.py --preset small --output runs/lstm_small

Everything else is the ON-LSTM recipe's (`recipes/ptb_onlstm.py`):
`tf.distribute`, TensorBoard, backups and resume, `--parse-eval DIR`.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.models.lstm import LSTMLanguageModel  # noqa: E402
from keras_ordered.training.tasks.language_model import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:],
            model_class=LSTMLanguageModel,
            description=__doc__.split("\n\n")[0],
            default_output="runs/lstm_ptb",
        )
    )
