"""Constituency parsing: distances to trees, scores, baselines, EVALB.

Plain Python and NumPy: importing this package imports no model and no
TensorFlow. The modules `keras_ordered.parsing.linearize` (trees as token
sequences for sequence-to-sequence parsing) and
`keras_ordered.parsing.evalb` (EVALB's scores) are exported below under
names that do not hide them or the unsupervised `evaluate_trees`.
"""

from keras_ordered.parsing.baselines import BASELINES
from keras_ordered.parsing.baselines import RIGHT_BRANCHING_MARGIN
from keras_ordered.parsing.baselines import balanced_tree
from keras_ordered.parsing.baselines import binarized_gold_tree
from keras_ordered.parsing.baselines import baseline_predictor
from keras_ordered.parsing.baselines import left_branching_tree
from keras_ordered.parsing.baselines import random_tree
from keras_ordered.parsing.baselines import right_branching_tree
from keras_ordered.parsing.ensemble import TIE_RULES
from keras_ordered.parsing.ensemble import AveragedTree
from keras_ordered.parsing.ensemble import Member
from keras_ordered.parsing.ensemble import TreeEnsemble
from keras_ordered.parsing.ensemble import average_tree
from keras_ordered.parsing.ensemble import fit_weights
from keras_ordered.parsing.ensemble import smoothed_votes
from keras_ordered.parsing.ensemble import span_votes
from keras_ordered.parsing.evalb import COLLINS_PARAMS
from keras_ordered.parsing.evalb import EvalbParams
from keras_ordered.parsing.evalb import EvalbResult
from keras_ordered.parsing.evalb import evaluate_files as evalb_files
from keras_ordered.parsing.evalb import evaluate_trees as evalb_trees
from keras_ordered.parsing.evalb import format_report as format_evalb_report
from keras_ordered.parsing.evalb import load_params as load_evalb_params
from keras_ordered.parsing.evaluate import PROTOCOLS
from keras_ordered.parsing.evaluate import WSJ10_MAX_LENGTH
from keras_ordered.parsing.evaluate import Protocol
from keras_ordered.parsing.evaluate import binarized_gold_trees
from keras_ordered.parsing.evaluate import check_distance_model
from keras_ordered.parsing.evaluate import distance_predictor
from keras_ordered.parsing.evaluate import evaluate_distances
from keras_ordered.parsing.evaluate import evaluate_model
from keras_ordered.parsing.evaluate import evaluate_parsing
from keras_ordered.parsing.evaluate import evaluate_protocol
from keras_ordered.parsing.evaluate import get_protocol
from keras_ordered.parsing.evaluate import headline as protocol_headline
from keras_ordered.parsing.evaluate import mean_std_max
from keras_ordered.parsing.evaluate import model_distances
from keras_ordered.parsing.evaluate import model_trees
from keras_ordered.parsing.evaluate import evaluate_trees
from keras_ordered.parsing.evaluate import shift_distances
from keras_ordered.parsing.evaluate import summarize_runs
from keras_ordered.parsing.evaluate import trees_self_f1
from keras_ordered.parsing.linearize import WORD_SYMBOL
from keras_ordered.parsing.linearize import Repairs
from keras_ordered.parsing.linearize import delinearize
from keras_ordered.parsing.linearize import linearize as linearize_tree
from keras_ordered.parsing.linearize import malformed_rate
from keras_ordered.parsing.linearize import source_tokens
from keras_ordered.parsing.metrics import LABELS
from keras_ordered.parsing.metrics import LENGTH_BUCKETS
from keras_ordered.parsing.metrics import BracketScorer
from keras_ordered.parsing.metrics import corpus_f1
from keras_ordered.parsing.metrics import protocol_scores
from keras_ordered.parsing.metrics import self_f1
from keras_ordered.parsing.metrics import sentence_f1
from keras_ordered.parsing.metrics import sentence_scores
from keras_ordered.parsing.metrics import sentence_spans
from keras_ordered.parsing.trees import DECODERS
from keras_ordered.parsing.trees import WORD_DECODERS
from keras_ordered.parsing.trees import UNLABELED
from keras_ordered.parsing.trees import WORD_TAG
from keras_ordered.parsing.trees import brackets_to_tree
from keras_ordered.parsing.trees import distances_to_spans
from keras_ordered.parsing.trees import distances_to_tree
from keras_ordered.parsing.trees import num_leaves
from keras_ordered.parsing.trees import spans_depth
from keras_ordered.parsing.trees import tree_depth
from keras_ordered.parsing.trees import tree_to_brackets
from keras_ordered.parsing.trees import tree_to_distances
from keras_ordered.parsing.trees import tree_to_labeled_spans
from keras_ordered.parsing.trees import tree_to_spans


def __getattr__(name):
    # `UnlabeledTree` subclasses nltk.Tree: made on first use, so that
    # importing the package does not load nltk (keras_ordered._nltk).
    if name == "UnlabeledTree":
        from keras_ordered.parsing import trees

        return trees.UnlabeledTree
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "UnlabeledTree"])
