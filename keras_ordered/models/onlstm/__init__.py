"""ON-LSTM language model (Shen et al., 2019)."""

from keras_ordered.models.onlstm.onlstm_language_model import ONLSTMLanguageModel
from keras_ordered.models.onlstm.presets import PRESETS
from keras_ordered.models.onlstm.onlstm_language_model import get_preset
from keras_ordered.models.onlstm.convert import from_official_state_dict
