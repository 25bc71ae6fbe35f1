"""Train a top-down TreeLSTM / LdTreeLSTM language model P(S | T) on
dependency trees (Zhang, Lu and Lapata, 2016), and evaluate it.

On the WSJ sample's dependency trees (wsj_0001-0139 train, 0140-0149
validation), a model a 2-core CPU trains:

    python recipes/wsj_tdtreelstm.py --preset small [--ld]

The same network on left-to-right chains, a sequential LSTM language model
of the same size (the baseline):

    python recipes/wsj_tdtreelstm.py --preset small --sequential

The official dependency-reranking setup on your own CoNLL trees:

    python recipes/wsj_tdtreelstm.py --preset wsj --ld --data DIR \\
        --train 'train*.conll' --valid 'dev*.conll' --test 'test*.conll'

Machinery in keras_ordered.training.tasks.tdtreelstm: MirroredStrategy,
progress bars, TensorBoard, backups at every epoch end (the same command
resumes a killed run), the official SGD schedule, and the evaluation
(perplexity, MSR-style completion accuracy, gold-vs-perturbed tree
preference) in results.json beside model.keras.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.training.tasks.tdtreelstm import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
