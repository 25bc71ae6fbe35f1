"""Every public layer of `keras_ordered.layers` passes the harness's standard
checks (tests/harness.py, `TestCase.run_layer_test`): it builds on its
input's shape, gives the outputs' shapes, sends a gradient to every
trainable weight, round trips its config through `from_config` and
keras.saving, and a revived copy with the same weights gives the same
outputs. The equations themselves are checked against NumPy in
test_on_lstm.py, test_prpn_layers.py and the models' tests."""

import inspect

import keras
import numpy as np
import pytest

import keras_ordered.layers as layers_module
from keras_ordered.layers import ActivationRegularization
from keras_ordered.layers import AttentionDecoder
from keras_ordered.layers import BahdanauAttention
from keras_ordered.layers import EmbeddingDropout
from keras_ordered.layers import GatedAttention
from keras_ordered.layers import LayerNormLSTMCell
from keras_ordered.layers import LeftDependentLSTM
from keras_ordered.layers import LockedDropout
from keras_ordered.layers import MemoryGates
from keras_ordered.layers import ONLSTM
from keras_ordered.layers import ONLSTMCell
from keras_ordered.layers import ParsingConv
from keras_ordered.layers import PRPNPredictNetwork
from keras_ordered.layers import PRPNReadingCell
from keras_ordered.layers import PRPNReadingNetwork
from keras_ordered.layers import StdLayerNormalization
from keras_ordered.layers import TopDownTreeLSTM

pytestmark = pytest.mark.backends

RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def uniform(*shape):
    return RNG.uniform(size=shape).astype("float32")


# (id, class, init kwargs, input data, run_layer_test's other arguments)
CASES = [
    ("onlstm", ONLSTM,
     dict(units=8, chunk_size=2, weight_drop=0.3, return_sequences=True,
          return_distances=True),
     normal(2, 5, 4),
     dict(expected_output_shape=[(2, 5, 8), (2, 5), (2, 5)],
          expected_num_trainable_weights=3, training=True)),
    ("onlstm_state", ONLSTM,
     dict(units=6, chunk_size=3, extra_master_level=True, return_state=True),
     normal(2, 4, 3),
     dict(expected_output_shape=[(2, 6), (2, 6), (2, 6)],
          expected_num_trainable_weights=3)),
    ("onlstm_cell", ONLSTMCell, dict(units=6, chunk_size=3),
     {"inputs": normal(2, 4), "states": [normal(2, 6), normal(2, 6)]},
     dict(build=False, expected_output_shape=[(2, 6), (2, 6), (2, 6)],
          expected_num_trainable_weights=3)),
    ("memory_gates", MemoryGates, dict(num_slots=4, resolution=0.1, hard=False),
     [uniform(2, 6), uniform(2, 4), np.array([[0, 0, 1, 1], [1, 1, 1, 1]],
                                             "float32")],
     # No weights: nothing to differentiate.
     dict(build=False, expected_output_shape=(2, 6, 4),
          expected_num_trainable_weights=0, run_gradient_check=False)),
    ("gated_attention", GatedAttention, dict(dropout=0.5, seed=3),
     [normal(3, 5, 6), normal(3, 5, 6), normal(3, 4), uniform(3, 5)],
     dict(build=False, expected_output_shape=[(3, 6), (3, 6)],
          expected_num_trainable_weights=2)),
    ("parsing_conv", ParsingConv, dict(units=6, lookback=2, dropout=0.2, seed=7),
     normal(2, 7, 5),
     dict(build=False, expected_output_shape=[(2, 7), (2, 7)])),
    ("std_layer_norm", StdLayerNormalization, {}, normal(4, 7),
     dict(expected_output_shape=(4, 7), expected_num_trainable_weights=2)),
    ("layer_norm_lstm_cell", LayerNormLSTMCell, dict(units=4, seed=1),
     {"inputs": normal(3, 5), "states": [normal(3, 4), normal(3, 4)]},
     dict(build=False, expected_output_shape=[(3, 4), (3, 4), (3, 4)],
          expected_num_trainable_weights=10)),
    ("prpn_reading_cell", PRPNReadingCell,
     dict(units=4, num_layers=2, num_slots=3, dropout=0.0, layer_dropout=0.0,
          recurrent_dropout=0.0, attention_dropout=0.0, seed=1),
     {"inputs": np.concatenate([normal(2, 3), uniform(2, 3)], -1),
      "states": [normal(2, 12) for _ in range(4)]},
     dict(build=False, expected_output_shape=[(2, 4)] + [(2, 12)] * 4)),
    ("prpn_reading_network", PRPNReadingNetwork,
     dict(cell=PRPNReadingCell(units=4, num_layers=2, num_slots=3, dropout=0.3,
                               layer_dropout=0.3, recurrent_dropout=0.3,
                               attention_dropout=0.3, seed=1),
          return_state=True),
     np.concatenate([normal(2, 5, 3), uniform(2, 5, 3)], -1),
     dict(expected_output_shape=[(2, 5, 4)] + [(2, 12)] * 4,
          expected_num_trainable_weights=24, training=True)),
    ("prpn_predict", PRPNPredictNetwork,
     dict(output_dim=6, num_slots=3, dropout=0.0, input_dropout=0.0,
          attention_dropout=0.0),
     [normal(3, 5, 4), normal(3, 3, 4), uniform(3, 5, 3)],
     dict(build=False, expected_output_shape=(3, 5, 6))),
    ("bahdanau_attention", BahdanauAttention, dict(units=6),
     [normal(3, 5), normal(3, 4, 7)],
     dict(build=False, expected_output_shape=[(3, 7), (3, 4)],
          expected_num_trainable_weights=3,
          call_kwargs={"mask": np.array([[1, 1, 1, 0], [1, 1, 0, 0],
                                         [1, 1, 1, 1]], bool)})),
    ("attention_decoder", AttentionDecoder,
     dict(units=5, num_layers=2, dropout=0.1, seed=2),
     # target embeddings, memory, its mask, the encoder's (h, c) per layer
     [normal(2, 6, 4), normal(2, 3, 5), np.array([[1, 1, 1], [1, 1, 0]],
                                                 "float32"),
      *[normal(2, 5) for _ in range(4)]],
     dict(build=False, training=True)),
    ("locked_dropout", LockedDropout, dict(rate=0.5, seed=1), normal(4, 9, 6),
     # No weights.
     dict(expected_output_shape=(4, 9, 6), expected_num_trainable_weights=0,
          run_gradient_check=False)),
    ("embedding_dropout", EmbeddingDropout,
     dict(input_dim=50, output_dim=4, rate=0.5, seed=2),
     np.array([[3, 3, 7, 9]], "int32"),
     # The output bias serves `reverse=True` (the tied softmax) only.
     dict(expected_output_shape=(1, 4, 4), expected_num_trainable_weights=2,
          no_gradient=("output_bias",))),
    ("activation_regularization", ActivationRegularization,
     dict(alpha=2.0, beta=1.0), [normal(2, 5, 4), normal(2, 5, 4)],
     # No weights.
     dict(build=False, expected_num_trainable_weights=0,
          run_gradient_check=False)),
    ("top_down_tree_lstm", TopDownTreeLSTM,
     dict(units=4, num_layers=2, context_dim=3),
     [normal(3, 5, 6), RNG.integers(0, 4, (3, 5)),
      np.array([[0, 1, 1, 2, 0], [0, 0, 2, 3, 1], [0, 1, 2, 3, 4]]),
      normal(3, 5, 3)],
     dict(build=False, expected_output_shape=(3, 5, 4))),
    ("left_dependent_lstm", LeftDependentLSTM, dict(units=3, num_layers=2),
     [normal(2, 4, 3, 5), np.array([[[1, 1, 0]] * 4, [[1, 0, 0]] * 4], bool)],
     dict(build=False, expected_output_shape=(2, 4, 3))),
]


@pytest.mark.parametrize("cls, init_kwargs, input_data, checks",
                         [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_layer_passes_the_standard_checks(harness, cls, init_kwargs,
                                          input_data, checks):
    harness.run_layer_test(cls, init_kwargs, input_data, **checks)


def test_every_public_layer_has_a_case():
    public = {
        obj for obj in vars(layers_module).values()
        if inspect.isclass(obj) and issubclass(obj, keras.layers.Layer)
    }
    covered = {case[1] for case in CASES}
    assert public - covered == set(), "layers without a standard check"
