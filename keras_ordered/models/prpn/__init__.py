"""PRPN language model (Shen et al., 2018)."""

from keras_ordered.models.prpn.presets import PRESETS
from keras_ordered.models.prpn.prpn_language_model import get_preset
from keras_ordered.models.prpn.prpn_language_model import PRPNLanguageModel
from keras_ordered.models.prpn.convert import from_official_state_dict
