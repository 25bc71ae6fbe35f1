"""Unsupervised constituency parsing: distances to trees, scores, baselines.

Plain Python and NumPy: importing this package imports no model and no
TensorFlow.
"""

from keras_ordered.parsing.baselines import BASELINES
from keras_ordered.parsing.baselines import balanced_tree
from keras_ordered.parsing.baselines import baseline_predictor
from keras_ordered.parsing.baselines import left_branching_tree
from keras_ordered.parsing.baselines import random_tree
from keras_ordered.parsing.baselines import right_branching_tree
from keras_ordered.parsing.evaluate import WSJ10_MAX_LENGTH
from keras_ordered.parsing.evaluate import check_distance_model
from keras_ordered.parsing.evaluate import distance_predictor
from keras_ordered.parsing.evaluate import evaluate_distances
from keras_ordered.parsing.evaluate import evaluate_model
from keras_ordered.parsing.evaluate import evaluate_parsing
from keras_ordered.parsing.evaluate import evaluate_trees
from keras_ordered.parsing.metrics import LABELS
from keras_ordered.parsing.metrics import BracketScorer
from keras_ordered.parsing.metrics import corpus_f1
from keras_ordered.parsing.metrics import sentence_f1
from keras_ordered.parsing.metrics import sentence_scores
from keras_ordered.parsing.metrics import sentence_spans
from keras_ordered.parsing.trees import UNLABELED
from keras_ordered.parsing.trees import brackets_to_tree
from keras_ordered.parsing.trees import distances_to_tree
from keras_ordered.parsing.trees import num_leaves
from keras_ordered.parsing.trees import spans_depth
from keras_ordered.parsing.trees import tree_depth
from keras_ordered.parsing.trees import tree_to_brackets
from keras_ordered.parsing.trees import tree_to_labeled_spans
from keras_ordered.parsing.trees import tree_to_spans
