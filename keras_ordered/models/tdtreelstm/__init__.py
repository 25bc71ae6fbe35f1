"""The top-down TreeLSTM and LdTreeLSTM (Zhang, Lu and Lapata, 2016)."""

from keras_ordered.models.tdtreelstm.inputs import batch_arrays
from keras_ordered.models.tdtreelstm.inputs import encode_tree
from keras_ordered.models.tdtreelstm.presets import PRESETS
from keras_ordered.models.tdtreelstm.tdtreelstm_language_model import get_preset
from keras_ordered.models.tdtreelstm.tdtreelstm_language_model import (
    TDTreeLSTMLanguageModel,
)
