"""Keras layers of keras-ordered: cells, recurrent layers and regularisers."""

from keras_ordered.layers.attention_decoder import AttentionDecoder
from keras_ordered.layers.attention_decoder import BahdanauAttention
from keras_ordered.layers.dropout import ActivationRegularization
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.dropout import LockedDropout
from keras_ordered.layers.gated_attention import FanInUniform
from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers.gated_attention import MemoryGates
from keras_ordered.layers.gated_attention import gated_softmax
from keras_ordered.layers.gated_attention import memory_gates
from keras_ordered.layers.on_lstm import ONLSTM
from keras_ordered.layers.on_lstm import ONLSTMCell
from keras_ordered.layers.on_lstm import cumax
from keras_ordered.layers.parsing_conv import ParsingConv
from keras_ordered.layers.prpn_cell import LayerNormLSTMCell
from keras_ordered.layers.prpn_cell import PRPNReadingCell
from keras_ordered.layers.prpn_cell import PRPNReadingNetwork
from keras_ordered.layers.prpn_cell import StdLayerNormalization
from keras_ordered.layers.prpn_predict import PRPNPredictNetwork
from keras_ordered.layers.tree_lstm import LeftDependentLSTM
from keras_ordered.layers.tree_lstm import TopDownTreeLSTM
