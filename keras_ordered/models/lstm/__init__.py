"""A conventional LSTM language model: the control of Dyer et al. (2019)."""

from keras_ordered.models.lstm.lstm_language_model import LSTMLanguageModel
from keras_ordered.models.lstm.presets import PRESETS
from keras_ordered.models.lstm.lstm_language_model import get_preset
