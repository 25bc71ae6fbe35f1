"""Distil an ensemble of parsers into one model: a syntactic-distance parser
(Shen et al., 2018) trained on the trees tree averaging gives the PTB text
(Shayegh, Cao and Mou, 2024).

    python recipes/ptb_distance_parser.py --data ../shared/data/ptb \\
        --treebank ../shared/data/wsj_sample/mrg --teacher ensemble_ptb

The teacher parses the training text (without the treebank's sentences)
and the validation text once (kept in OUTPUT/silver/); the student trains
on those trees, its best epoch chosen on the silver validation trees; the
gold dev and test trees are read by the final evaluation only
(results.json). The same command resumes a killed run. Machinery in
keras_ordered.training.tasks.distance_parser.
"""

import os
import sys

# TensorFlow's start-up log stays quiet unless --tf-logs or
# KERAS_ORDERED_TF_LOGS=1 asks for it (set before keras_ordered imports it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered.training.tasks.distance_parser import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
