"""Every model family keeps the Keras contracts keras-hub holds its
backbones to: the config carries `trainable` and the dtype policy (a float32
copy of a mixed-precision model is `from_config` with a dtype), every layer
of a mixed-precision model computes in the half dtype, and a misspelt preset
raises an error that lists the presets (tests/harness.py,
`run_precision_test` and `run_preset_test`)."""

import keras
import pytest

from harness import LM_VOCAB
from harness import gfl_vocabularies
from harness import tree_vocabulary
from keras_ordered.models import DistanceParser
from keras_ordered.models import GFLParser
from keras_ordered.models import LSTMLanguageModel
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.models import TDTreeLSTMLanguageModel
from keras_ordered.models.distance_parser import PRESETS as DP_PRESETS
from keras_ordered.models.gfl.presets import PRESETS as GFL_PRESETS
from keras_ordered.models.lstm.presets import PRESETS as LSTM_PRESETS
from keras_ordered.models.onlstm.presets import PRESETS as ONLSTM_PRESETS
from keras_ordered.models.prpn.presets import PRESETS as PRPN_PRESETS
from keras_ordered.models.tdtreelstm.presets import PRESETS as TD_PRESETS

pytestmark = pytest.mark.backends


def build(family, preset="tiny", **kwargs):
    if family == "gfl":
        return GFLParser.from_preset(preset, *gfl_vocabularies(), seed=1,
                                     **kwargs)
    if family == "tdtreelstm":
        return TDTreeLSTMLanguageModel.from_preset(
            preset, tree_vocabulary(), seed=1, **kwargs)
    cls = {"lstm": LSTMLanguageModel, "onlstm": ONLSTMLanguageModel,
           "prpn": PRPNLanguageModel, "distance_parser": DistanceParser}[family]
    return cls.from_preset(preset, LM_VOCAB, seed=1, **kwargs)


FAMILIES = {
    "distance_parser": DP_PRESETS,
    "lstm": LSTM_PRESETS,
    "onlstm": ONLSTM_PRESETS,
    "prpn": PRPN_PRESETS,
    "tdtreelstm": TD_PRESETS,
    "gfl": GFL_PRESETS,
}

# Layers made float32 on purpose under a mixed policy: the logits and
# distances (the losses and the parser read float32), and the AWD models'
# tied embedding, whose reverse direction computes the logits (its gradient
# products run in the half dtype: `EmbeddingDropout`).
FLOAT32_LAYERS = {
    "distance_parser": ("distance",),
    "lstm": ("logits", "embedding"),
    "onlstm": ("logits", "embedding"),
    "prpn": ("logits", "distances"),
    "tdtreelstm": (),
    "gfl": ("logits",),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_config_keeps_trainable_and_the_dtype_policy(family):
    model = build(family, dtype="mixed_bfloat16", trainable=False)
    config = model.get_config()
    assert config["trainable"] is False
    assert keras.dtype_policies.get(config["dtype"]).name == "mixed_bfloat16"
    revived = type(model).from_config(config)
    assert revived.trainable is False and not revived.trainable_weights
    assert revived.dtype_policy.name == "mixed_bfloat16"
    assert revived.get_config() == config
    # The default: the global policy, trainable.
    plain = build(family).get_config()
    assert plain["trainable"] is True
    assert keras.dtype_policies.get(plain["dtype"]).name == "float32"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_layer_takes_the_model_policy(harness, family):
    harness.run_precision_test(
        lambda dtype: build(family, dtype=dtype),
        float32_layers=FLOAT32_LAYERS[family])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_misspelt_preset_lists_the_presets(harness, family):
    harness.run_preset_test(lambda preset: build(family, preset),
                            sorted(FAMILIES[family]))


CLASSES = {
    "distance_parser": DistanceParser,
    "lstm": LSTMLanguageModel,
    "onlstm": ONLSTMLanguageModel,
    "prpn": PRPNLanguageModel,
    "tdtreelstm": TDTreeLSTMLanguageModel,
    "gfl": GFLParser,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_presets_class_property_lists_every_name_from_preset_takes(family):
    from keras_ordered import shipped

    cls = CLASSES[family]
    presets = cls.presets
    architecture = {n for n, p in presets.items() if p["kind"] == "architecture"}
    assert architecture == set(FAMILIES[family])
    for name in architecture:
        assert presets[name]["description"] == FAMILIES[family][name][
            "description"]
    trained = {n for n, p in presets.items() if p["kind"] == "trained"}
    assert trained == {n for n in shipped.shipped_names()
                       if shipped.shipped_card(n)["class"] == cls.__name__}
    for name in trained:
        card = shipped.shipped_card(name)
        assert presets[name]["path"] == card["path"]
        assert presets[name]["parameters"] == card["parameters"]
    if family == "prpn" and shipped.shipped_names():
        assert "prpn_ptb_quick" in trained


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_preset_holds_only_its_departures_from_the_defaults(family):
    # As keras-hub's presets: the constructor's defaults are the paper's
    # configuration; a preset names only what it changes, and get_preset
    # gives every argument.
    from keras_ordered.models.base import constructor_defaults

    cls = CLASSES[family]
    defaults = constructor_defaults(cls)
    for name, preset in FAMILIES[family].items():
        departures = preset["model"]
        for key, value in departures.items():
            assert key in defaults, (name, key)
            default = defaults[key]
            if isinstance(value, list) and isinstance(default, tuple):
                value = tuple(value)
            assert value != default, (
                f"preset {name!r} repeats the default {key}={value!r}")
        assert cls.get_preset(name)["model"] == {**defaults, **departures}
    # The paper's presets are the defaults.
    paper = {"prpn": "ptb", "tdtreelstm": "wsj", "onlstm": "ptb"}
    if family in paper:
        assert FAMILIES[family][paper[family]]["model"] == {}
