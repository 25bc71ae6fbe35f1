"""Keras layers of keras-ordered: cells, recurrent layers and regularisers."""

from keras_ordered.layers.dropout import ActivationRegularization
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.dropout import LockedDropout
from keras_ordered.layers.on_lstm import ONLSTM
from keras_ordered.layers.on_lstm import ONLSTMCell
from keras_ordered.layers.on_lstm import cumax
