"""The layers' shared argument checks (`keras_ordered.layers._checks`)."""

import types

import pytest

from keras_ordered.layers import BahdanauAttention
from keras_ordered.layers import LeftDependentLSTM
from keras_ordered.layers import TopDownTreeLSTM
from keras_ordered.layers import LayerNormLSTMCell
from keras_ordered.layers import ONLSTMCell
from keras_ordered.layers import PRPNPredictNetwork
from keras_ordered.layers import PRPNReadingCell
from keras_ordered.layers._checks import check_positive_int
from keras_ordered.layers.gated_attention import FanInUniform
from keras_ordered.layers.gated_attention import MemoryGates
from keras_ordered.layers.gated_attention import memory_gates
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.models.gfl.decoding import beam_search
from keras_ordered.models.gfl.inference import parse_sentences
from keras_ordered.models.gfl.vocabulary import load_word_vectors


@pytest.mark.parametrize("value", [1, 7, 10**9])
def test_check_positive_int_accepts(value):
    assert check_positive_int("units", value) == value


@pytest.mark.parametrize("value", [0, -3, 2.5, "4", True, None])
def test_check_positive_int_refuses(value):
    with pytest.raises(ValueError) as error:
        check_positive_int("units", value)
    assert str(error.value) == (
        f"`units` must be a positive integer. Received: units={value!r}"
    )


@pytest.mark.parametrize("layer", [BahdanauAttention, LeftDependentLSTM,
                                   TopDownTreeLSTM])
@pytest.mark.parametrize("units", [0, True, 3.0])
def test_layers_refuse_a_bad_units(layer, units):
    with pytest.raises(ValueError, match=r"`units` must be a positive integer"):
        layer(units=units)


# Every count the layers and models take goes through the one check, which
# refuses True (an int to Python) as it refuses 0.
COUNTS = [
    ("units", lambda v: ONLSTMCell(v, chunk_size=1)),
    ("chunk_size", lambda v: ONLSTMCell(4, chunk_size=v)),
    ("units", lambda v: LayerNormLSTMCell(v)),
    ("units", lambda v: PRPNReadingCell(v, num_slots=2)),
    ("num_layers", lambda v: PRPNReadingCell(4, num_layers=v, num_slots=2)),
    ("num_slots", lambda v: PRPNReadingCell(4, num_slots=v)),
    ("output_dim", lambda v: PRPNPredictNetwork(v, num_slots=2)),
    ("num_slots", lambda v: PRPNPredictNetwork(4, num_slots=v)),
    ("num_slots", lambda v: memory_gates([[0.1, 0.2]], num_slots=v)),
    ("num_slots", lambda v: MemoryGates(num_slots=v)),
    ("fan_in", lambda v: FanInUniform(fan_in=v)),
    ("num_slots", lambda v: PRPNLanguageModel(["<eos>", "<unk>", "a"],
                                              num_slots=v)),
    ("batch_size", lambda v: parse_sentences(
        types.SimpleNamespace(source_vocabulary=[], target_vocabulary=[]),
        [["a"]], batch_size=v)),
    ("beam_size", lambda v: beam_search(None, [], [], [2], 1, 2,
                                        beam_size=v)),
    ("dim", lambda v: load_word_vectors(None, None, dim=v)),
]


@pytest.mark.parametrize("value", [True, 0])
@pytest.mark.parametrize("name, make", COUNTS,
                         ids=[f"{i}-{n}" for i, (n, _) in enumerate(COUNTS)])
def test_every_count_refuses_true_and_zero(name, make, value):
    with pytest.raises(ValueError) as error:
        make(value)
    assert str(error.value) == (
        f"`{name}` must be a positive integer. Received: {name}={value!r}"
    )
