"""The attention decoder's layers (`BahdanauAttention`, `AttentionDecoder`)
on every backend: the harness's standard checks (shapes, a gradient on
every weight, config round trips, a revived copy's outputs), the decoder's
loop against its own `step`, and, on TensorFlow, its `keras.ops` loop
against the `tf.while_loop` fast path. Marked `backends`: with
`KERAS_BACKEND=jax|torch` these run on JAX and PyTorch."""

import keras
import numpy as np
import pytest

from harness import to_numpy
from keras_ordered.layers import AttentionDecoder
from keras_ordered.layers import BahdanauAttention

pytestmark = pytest.mark.backends


def normal(rng, *shape):
    return rng.normal(size=shape).astype("float32")


def decoder_inputs(seed=0, units=5, memory_dim=5, num_layers=2):
    rng = np.random.default_rng(seed)
    return [
        normal(rng, 2, 6, 4),  # target embeddings
        normal(rng, 2, 3, memory_dim),  # memory
        np.array([[1, 1, 1], [1, 1, 0]], "float32"),  # its mask
        *[normal(rng, 2, units) for _ in range(2 * num_layers)],
    ]


def test_bahdanau_attention_standard_checks(harness):
    rng = np.random.default_rng(1)
    harness.run_layer_test(
        BahdanauAttention, {"units": 6},
        [normal(rng, 3, 5), normal(rng, 3, 4, 7)],
        build=False, expected_output_shape=[(3, 7), (3, 4)],
        expected_num_trainable_weights=3,
        call_kwargs={"mask": np.array([[1, 1, 1, 0], [1, 1, 0, 0],
                                       [1, 1, 1, 1]], bool)})


@pytest.mark.parametrize(
    "init_kwargs",
    [
        {"units": 5, "num_layers": 2, "dropout": 0.1, "seed": 2},
        {"units": 5, "num_layers": 2, "input_feeding": "bottom"},
        {"units": 5, "num_layers": 1, "attention": False},
    ],
    ids=["top-dropout", "bottom", "no-attention"],
)
def test_attention_decoder_standard_checks(harness, init_kwargs):
    inputs = decoder_inputs(num_layers=init_kwargs["num_layers"])
    features = 5 + (5 if init_kwargs.get("attention", True) else 0)
    harness.run_layer_test(
        AttentionDecoder, init_kwargs, inputs, build=False, training=True,
        expected_output_shape=[(2, 6, features), (2, 6, 3)])


def test_the_loop_equals_step_by_step():
    decoder = AttentionDecoder(5, num_layers=2)
    inputs = decoder_inputs(seed=3)
    features, weights = (to_numpy(x) for x in decoder(inputs))
    memory = keras.ops.convert_to_tensor(inputs[1])
    keys = decoder.project_memory(memory)
    states = decoder.initial_state(list(inputs[3:]), memory)
    for t in range(6):
        step_features, states, step_weights = decoder.step(
            inputs[0][:, t], states, memory, keys, inputs[2])
        np.testing.assert_allclose(to_numpy(step_features), features[:, t],
                                   atol=1e-6)
        np.testing.assert_allclose(to_numpy(step_weights), weights[:, t],
                                   atol=1e-6)
    assert np.all(weights[1, :, 2] == 0.0)  # the padding


@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="the tf.while_loop fast path is TensorFlow's")
@pytest.mark.parametrize("training", [False, True])
def test_keras_ops_loop_equals_the_tensorflow_loop(training):
    decoder = AttentionDecoder(5, num_layers=3, dropout=0.4, seed=7)
    inputs = decoder_inputs(seed=4, num_layers=3)
    decoder(inputs)  # builds
    state = to_numpy(decoder.seed_generator.state)
    outputs = []
    for implementation in ("auto", "ops"):
        decoder._loop_implementation = implementation
        decoder.seed_generator.state.assign(state)  # the same dropout masks
        outputs.append([to_numpy(x) for x in decoder(inputs, training=training)])
    for fast, generic in zip(*outputs):
        np.testing.assert_allclose(generic, fast, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(keras.backend.backend() != "jax",
                    reason="inspects the JAX program")
def test_on_jax_the_loop_is_one_scan():
    import jax

    decoder = AttentionDecoder(5, num_layers=2, dropout=0.2, seed=1)
    inputs = decoder_inputs(seed=5)
    decoder(inputs)  # builds

    def features(*arrays):
        with keras.StatelessScope():  # the seed's new state stays inside
            return decoder(list(arrays), training=True)[0]

    program = str(jax.make_jaxpr(features)(*inputs))
    assert program.count("scan[") == 1, program
    assert "while[" not in program
