"""Hyperparameter searches with keras-tuner (ON-LSTM, PRPN).

`ONLSTMHyperModel` and `PRPNHyperModel` are `keras_tuner.HyperModel`s whose
`fit` trains as the recipes do (truncated BPTT, carried state, validation
perplexity, optionally parsing F1); `keras_ordered.tuning.search` is the
machinery of `recipes/tune_onlstm.py` and `recipes/tune_prpn.py`.
"""

from keras_ordered.tuning.hypermodels import OBJECTIVES
from keras_ordered.tuning.hypermodels import LanguageModelHyperModel
from keras_ordered.tuning.hypermodels import ONLSTMHyperModel
from keras_ordered.tuning.hypermodels import PRPNHyperModel
