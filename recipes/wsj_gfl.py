"""Train the LSTM+A parser of Grammar as a Foreign Language (Vinyals et al.,
2015) on Penn Treebank trees, and evaluate it with EVALB.

On the WSJ sample (wsj_0001-0129 train, 0130-0139 validation, 0140-0149
test), a model a 2-core CPU trains:

    python recipes/wsj_gfl.py --preset small --treebank ../shared/data/wsj_sample/mrg

The paper's model on the full WSJ (sections 02-21 / 22 / 23; needs a GPU):

    python recipes/wsj_gfl.py --preset paper --treebank .../parsed/mrg/wsj \\
        --train '0[2-9]' '1?' '2[01]' --valid 22 --test 23

Machinery in keras_ordered.training.tasks.gfl: `tf.distribute.
MirroredStrategy`, progress bars, TensorBoard (loss and validation EVALB F1
per epoch), crash-safe backups at every epoch end (the same command resumes
a killed run), and the final test evaluation (greedy and beam search: EVALB
F1 for all lengths and <= 40 words, malformed rate, sentences/s) in
results.json beside model.keras.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.training.tasks.gfl import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
