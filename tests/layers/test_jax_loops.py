"""On JAX, the recurrent layers' generic `keras.ops` loop compiles to one
`lax.scan` (no Python loop unrolled into the program, no while loop)."""

import keras
import numpy as np
import pytest

from keras_ordered.layers import ONLSTM
from keras_ordered.layers import PRPNReadingCell
from keras_ordered.layers import PRPNReadingNetwork

pytestmark = [
    pytest.mark.backends,
    pytest.mark.skipif(keras.backend.backend() != "jax",
                       reason="inspects the JAX program"),
]


def _program(layer, x, training):
    import jax

    layer(x)  # builds

    def outputs(x):
        with keras.StatelessScope():  # dropout seeds' new states stay inside
            return keras.tree.flatten(layer(x, training=training))

    return str(jax.make_jaxpr(outputs)(x))


@pytest.mark.parametrize("training", [False, True])
def test_onlstm_is_one_scan(training):
    x = np.random.default_rng(0).normal(size=(2, 9, 4)).astype("float32")
    layer = ONLSTM(8, chunk_size=2, weight_drop=0.3, return_sequences=True,
                   return_distances=True, seed=1)
    program = _program(layer, x, training)
    assert program.count("scan[") == 1, program
    assert "while[" not in program


@pytest.mark.parametrize("training", [False, True])
def test_prpn_reading_network_is_one_scan(training):
    x = np.random.default_rng(1).normal(size=(2, 7, 6)).astype("float32")
    cell = PRPNReadingCell(6, num_layers=2, num_slots=3, dropout=0.2, seed=2)
    layer = PRPNReadingNetwork(cell)
    program = _program(layer, x, training)
    assert program.count("scan[") == 1, program
    assert "while[" not in program
