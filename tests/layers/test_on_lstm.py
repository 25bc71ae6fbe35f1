"""ONLSTMCell / ONLSTM against an independent NumPy reading of the paper."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from harness import to_numpy
from keras_ordered.layers import ONLSTM
from keras_ordered.layers import ONLSTMCell
from keras_ordered.layers import cumax

pytestmark = pytest.mark.backends


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_onlstm(x, W, U, b, units, chunk, extra=False, h0=None, c0=None):
    """Shen et al. (2019), eq. 9-14, written out with explicit stretch."""
    batch, steps, _ = x.shape
    n = units // chunk
    m = n + int(extra)
    h = np.zeros((batch, units)) if h0 is None else h0.astype("float64")
    c = np.zeros((batch, units)) if c0 is None else c0.astype("float64")
    hs, d_forget, d_input = [], [], []
    for t in range(steps):
        z = x[:, t] @ W + h @ U + b
        mi, mf = z[:, :m], z[:, m : 2 * m]
        o, chat, i, f = np.split(z[:, 2 * m :], 4, axis=1)
        master_i = (1.0 - np.cumsum(np_softmax(mi), -1))[:, :n]
        master_f = np.cumsum(np_softmax(mf), -1)[:, :n]
        d_forget.append(1.0 - master_f.sum(-1) / n)
        d_input.append(master_i.sum(-1) / n)
        stretch = lambda v: np.repeat(v, chunk, axis=1)  # noqa: E731
        w = master_f * master_i
        sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        f_hat = sig(f) * stretch(w) + stretch(master_f - w)
        i_hat = sig(i) * stretch(w) + stretch(master_i - w)
        c = f_hat * c + i_hat * np.tanh(chat)
        h = sig(o) * np.tanh(c)
        hs.append(h)
    return np.stack(hs, 1), np.stack(d_forget, 1), np.stack(d_input, 1), c


def random_cell_weights(cell, rng, scale=0.5):
    return [rng.normal(0, scale, w.shape).astype("float32") for w in cell.weights]


@pytest.mark.parametrize("extra", [False, True])
def test_layer_matches_numpy_equations(extra):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6, 5)).astype("float32")
    h0 = rng.normal(size=(3, 12)).astype("float32") * 0.5
    c0 = rng.normal(size=(3, 12)).astype("float32") * 0.5
    layer = ONLSTM(12, chunk_size=3, extra_master_level=extra,
                   return_sequences=True, return_state=True,
                   return_distances=True)
    layer.build((3, 6, 5))
    W, U, b = random_cell_weights(layer.cell, rng)
    layer.cell.set_weights([W, U, b])
    out, h, c, df, di = layer(x, initial_state=[h0, c0])
    ref_h, ref_df, ref_di, ref_c = np_onlstm(x, W, U, b, 12, 3, extra, h0, c0)
    np.testing.assert_allclose(out, ref_h, atol=1e-5)
    np.testing.assert_allclose(h, ref_h[:, -1], atol=1e-5)
    np.testing.assert_allclose(c, ref_c, atol=1e-5)
    np.testing.assert_allclose(df, ref_df, atol=1e-5)
    np.testing.assert_allclose(di, ref_di, atol=1e-5)


def test_cell_in_keras_rnn_equals_layer():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 4)).astype("float32")
    rnn = keras.layers.RNN(ONLSTMCell(8, chunk_size=2), return_sequences=True)
    layer = ONLSTM(8, chunk_size=2, return_sequences=True)
    rnn.build(x.shape)
    layer.build(x.shape)
    weights = random_cell_weights(rnn.cell, rng)
    rnn.cell.set_weights(weights)
    layer.cell.set_weights(weights)
    ref = np_onlstm(x, *weights, 8, 2)[0]
    np.testing.assert_allclose(rnn(x), ref, atol=1e-5)
    np.testing.assert_allclose(layer(x), ref, atol=1e-5)


def test_cumax_and_master_gates_are_monotone_in_unit_interval():
    rng = np.random.default_rng(2)
    logits = rng.normal(0, 3, (64, 2 * 7)).astype("float32")
    cell = ONLSTMCell(21, chunk_size=3)
    master_input, master_forget = (to_numpy(g) for g in cell.master_gates(logits))
    for gate in (master_input, master_forget):
        assert gate.min() >= -1e-6 and gate.max() <= 1 + 1e-6
    assert np.all(np.diff(master_forget, axis=-1) >= -1e-6)  # rising
    assert np.all(np.diff(master_input, axis=-1) <= 1e-6)  # falling
    # The paper's (official) behaviour: last level of f~ is 1, of i~ is 0.
    np.testing.assert_allclose(master_forget[:, -1], 1.0, atol=1e-6)
    np.testing.assert_allclose(master_input[:, -1], 0.0, atol=1e-6)
    np.testing.assert_allclose(
        to_numpy(cumax(np.zeros((1, 4), "float32"))), [[0.25, 0.5, 0.75, 1.0]]
    )


def test_extra_master_level_frees_the_top_chunk():
    rng = np.random.default_rng(3)
    cell = ONLSTMCell(12, chunk_size=3, extra_master_level=True)
    logits = rng.normal(0, 3, (32, 2 * 5)).astype("float32")
    master_input, master_forget = (to_numpy(g) for g in cell.master_gates(logits))
    assert master_input.shape == (32, 4)
    assert master_input[:, -1].max() > 0.01  # the top chunk can be written
    assert master_forget[:, -1].min() < 0.99  # and forgotten


def test_units_not_divisible_by_chunk_size_is_a_clear_error():
    with pytest.raises(ValueError, match="divisible by `chunk_size`"):
        ONLSTMCell(1150, chunk_size=7)
    with pytest.raises(ValueError, match="weight_drop"):
        ONLSTMCell(10, chunk_size=5, weight_drop=1.0)
    with pytest.raises(ValueError, match="return_sequences"):
        ONLSTM(10, chunk_size=5, return_distances=True)


def test_gradients_reach_every_weight(harness):
    # In training (DropConnect on), through keras' RNN and through ONLSTM:
    # the three weights get a gradient; the layers also pass the harness's
    # shape and serialisation checks.
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 5, 4)).astype("float32")
    harness.run_layer_test(
        keras.layers.RNN,
        {"cell": ONLSTMCell(8, chunk_size=2, weight_drop=0.3),
         "return_sequences": True},
        x, expected_output_shape=(2, 5, 8), expected_num_trainable_weights=3,
        training=True)
    harness.run_layer_test(
        ONLSTM, {"units": 8, "chunk_size": 2, "weight_drop": 0.3,
                 "return_sequences": True},
        x, expected_output_shape=(2, 5, 8), expected_num_trainable_weights=3,
        training=True)


def test_official_dropconnect_scaling():
    # The official code (the default): an unscaled mask in training, the
    # kernel times (1 - p) at inference.
    assert ONLSTMCell(8, chunk_size=2).weight_drop_scaling == "official"
    cell = ONLSTMCell(8, chunk_size=2, weight_drop=0.25, seed=3,
                      weight_drop_scaling="official")
    cell.build((None, 4))
    ratio = (to_numpy(cell.effective_recurrent_kernel(training=True))
             / to_numpy(cell.recurrent_kernel))
    assert set(np.round(np.unique(ratio), 4)) == {0.0, 1.0}
    np.testing.assert_allclose(cell.effective_recurrent_kernel(training=False),
                               0.75 * to_numpy(cell.recurrent_kernel),
                               rtol=1e-6)
    layer = ONLSTM(8, chunk_size=2, weight_drop=0.25,
                   weight_drop_scaling="official")
    assert layer.get_config()["weight_drop_scaling"] == "official"
    assert ONLSTM.from_config(layer.get_config()).cell.weight_drop_scaling == (
        "official")
    with pytest.raises(ValueError, match="weight_drop_scaling"):
        ONLSTMCell(8, chunk_size=2, weight_drop_scaling="half")


def test_dropconnect_mask_constant_over_time_and_absent_at_inference():
    cell = ONLSTMCell(8, chunk_size=2, weight_drop=0.5, seed=3,
                      weight_drop_scaling="inverted")
    cell.build((None, 4))
    kernel = cell.effective_recurrent_kernel(training=True)
    again = cell.effective_recurrent_kernel(training=True)
    # Within one batch (before the RNN resets the mask) every step sees the
    # same masked kernel: the mask is drawn once and cached.
    np.testing.assert_array_equal(kernel, again)
    ratio = to_numpy(kernel) / to_numpy(cell.recurrent_kernel)
    values = set(np.round(np.unique(ratio), 4))
    assert values <= {0.0, 2.0} and values == {0.0, 2.0}  # inverted scaling
    cell.reset_recurrent_dropout_mask()
    third = cell.effective_recurrent_kernel(training=True)
    assert not np.array_equal(kernel, third)  # new batch, new mask
    np.testing.assert_array_equal(
        cell.effective_recurrent_kernel(training=False), cell.recurrent_kernel
    )
    # Through the layer: with the mask fixed, outputs equal the NumPy model
    # run with the masked kernel at *every* step.
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6, 4)).astype("float32")
    layer = ONLSTM(8, chunk_size=2, weight_drop=0.5, return_sequences=True,
                   weight_drop_scaling="inverted")
    layer.build(x.shape)
    W, U, b = random_cell_weights(layer.cell, rng)
    layer.cell.set_weights([W, U, b])
    out = to_numpy(layer(x, training=True))
    mask = to_numpy(layer._last_recurrent_kernel) / U
    np.testing.assert_allclose(np_onlstm(x, W, U * mask, b, 8, 2)[0], out,
                               atol=1e-5)
    np.testing.assert_allclose(
        layer(x, training=False), np_onlstm(x, W, U, b, 8, 2)[0], atol=1e-5
    )


def test_distances_shapes_ranges_and_masking():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3, 7, 4)).astype("float32")
    layer = ONLSTM(12, chunk_size=4, return_sequences=True)
    out, df, di = layer(x, return_distances=True)
    assert out.shape == (3, 7, 12) and df.shape == (3, 7) and di.shape == (3, 7)
    for d in (to_numpy(df), to_numpy(di)):
        assert float(np.min(d)) >= 0.0 and float(np.max(d)) <= 1.0
    mask = np.ones((3, 7), bool)
    mask[0, 5:] = False
    _, df_masked, _ = layer(x, mask=mask, return_distances=True)
    np.testing.assert_allclose(df_masked[0, :5], df[0, :5], atol=1e-6)
    assert np.all(to_numpy(df_masked)[0, 5:] == 0)


def test_go_backwards_unroll_and_masking_contract():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    base = ONLSTM(6, chunk_size=3, return_sequences=True)
    base.build(x.shape)
    weights = random_cell_weights(base.cell, rng)
    base.cell.set_weights(weights)
    back = ONLSTM(6, chunk_size=3, go_backwards=True)
    back.build(x.shape)
    back.cell.set_weights(weights)
    ref_back = np_onlstm(x[:, ::-1], *weights, 6, 3)[0][:, -1]
    np.testing.assert_allclose(back(x), ref_back, atol=1e-5)
    unrolled = ONLSTM(6, chunk_size=3, return_sequences=True, unroll=True)
    unrolled.build(x.shape)
    unrolled.cell.set_weights(weights)
    np.testing.assert_allclose(unrolled(x), base(x), atol=1e-5)
    # Masked steps carry the state: a sequence padded with masked steps
    # ends in the state of the unpadded one.
    padded = np.concatenate([x, np.zeros((2, 2, 3), "float32")], 1)
    mask = np.ones((2, 7), bool)
    mask[:, 5:] = False
    last = ONLSTM(6, chunk_size=3)
    last.build(x.shape)
    last.cell.set_weights(weights)
    np.testing.assert_allclose(last(padded, mask=mask), last(x), atol=1e-5)


def test_stateful_when_asked():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 6, 3)).astype("float32")
    full = ONLSTM(6, chunk_size=3, return_sequences=True)
    full.build(x.shape)
    weights = random_cell_weights(full.cell, rng)
    full.cell.set_weights(weights)
    inputs = keras.Input(batch_shape=(2, None, 3))
    stateful = ONLSTM(6, chunk_size=3, return_sequences=True, stateful=True)
    model = keras.Model(inputs, stateful(inputs))
    stateful.cell.set_weights(weights)
    first = model(x[:, :3])
    second = model(x[:, 3:])
    np.testing.assert_allclose(
        np.concatenate([first, second], 1), full(x), atol=1e-5
    )


def test_config_and_keras_file_round_trip(harness):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    inputs = keras.Input((None, 3))
    outputs = keras.layers.RNN(
        ONLSTMCell(6, chunk_size=3, weight_drop=0.2, extra_master_level=True),
        return_sequences=True,
    )(inputs)
    outputs, df, di = ONLSTM(4, chunk_size=2, return_sequences=True,
                             return_distances=True)(outputs)
    model = keras.Model(inputs, [outputs, df, di])
    # The three outputs, exactly.
    harness.run_model_saving_test(model, x, filename="onlstm.keras")
    harness.run_serialization_test(ONLSTMCell(6, chunk_size=3, weight_drop=0.2))
    harness.run_serialization_test(
        ONLSTM(4, chunk_size=2, return_sequences=True, return_distances=True))


@pytest.mark.trains
@pytest.mark.slow
def test_mixed_precision_and_xla():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        inputs = keras.Input((None, 3))
        out, df, di = ONLSTM(6, chunk_size=3, return_sequences=True,
                             return_distances=True, weight_drop=0.2)(inputs)
        model = keras.Model(inputs, [out, df])
        assert model.layers[-1].cell.compute_dtype == "bfloat16"
        result = model(x, training=True)
        assert result[0].dtype == "bfloat16" and result[1].dtype == "float32"
        assert np.all(np.isfinite(to_numpy(result[0], "float32")))
    finally:
        keras.config.set_dtype_policy(previous)
    model = keras.Sequential([
        keras.Input((None, 3)),
        ONLSTM(6, chunk_size=3, weight_drop=0.2),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    history = model.fit(x, np.ones((2, 1)), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    # The XLA-compiled predict agrees with the eager forward pass.
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x), atol=1e-5)


@pytest.mark.tensorflow_only
@pytest.mark.parametrize("extra", [False, True])
def test_fast_recurrence_gradients_equal_the_plain_loop(extra):
    """ONLSTM's hand-written backward equals autodiff through RNN(cell)."""
    rng = np.random.default_rng(11)
    x = tf.constant(rng.normal(size=(3, 6, 4)).astype("float32"))
    h0 = tf.constant(rng.normal(size=(3, 8)).astype("float32"))
    c0 = tf.constant(rng.normal(size=(3, 8)).astype("float32"))
    plain = keras.layers.RNN(
        ONLSTMCell(8, chunk_size=2, extra_master_level=extra),
        return_sequences=True, return_state=True,
    )
    fast = ONLSTM(8, chunk_size=2, extra_master_level=extra,
                  return_sequences=True, return_state=True)
    plain.build(x.shape)
    fast.build(x.shape)
    weights = random_cell_weights(plain.cell, rng)
    plain.cell.set_weights(weights)
    fast.cell.set_weights(weights)
    signal = tf.constant(rng.normal(size=(3, 6, 8)).astype("float32"))

    def grads(layer):
        with tf.GradientTape() as tape:
            tape.watch([x, h0, c0])
            out, h, c = layer(x, initial_state=[h0, c0])
            loss = tf.reduce_sum(out * signal) + tf.reduce_sum(h * c)
        return tape.gradient(loss, [x, h0, c0, *layer.trainable_weights])

    for a, b in zip(grads(plain), grads(fast)):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize(
    "dtype, rows, flags, small_kernels_on_the_left",
    [
        ("float32", 3, {"avx512f", "avx2"}, False),  # transposed once
        ("float32", 3, {"avx2"}, False),  # kernel as the left operand
        ("bfloat16", 3, {"avx512f"}, True),  # few rows: plain / transpose_b
        ("bfloat16", 40, {"avx512f"}, True),  # many rows: on the left
        ("bfloat16", 40, {"avx512f"}, False),  # small kernel: plain
        ("bfloat16", None, {"avx512f"}, True),  # rows unknown: plain
    ],
)
def test_loop_products_multiply_by_the_kernel_in_every_layout(
    dtype, rows, flags, small_kernels_on_the_left, monkeypatch
):
    """`kernel_product` is `a @ K` and `transposed_product` is `d @ K^T`."""
    from keras_ordered.layers import _tf_recurrence

    if small_kernels_on_the_left:
        monkeypatch.setattr(_tf_recurrence, "LEFT_OPERAND_MIN_KERNEL_SIZE", 1)
    rng = np.random.default_rng(5)
    kernel = rng.normal(size=(9, 4)).astype("float32")
    a = rng.normal(size=(rows or 3, 9)).astype("float32")
    d = rng.normal(size=(rows or 3, 4)).astype("float32")
    cast_kernel = tf.cast(kernel, dtype)
    forward = _tf_recurrence.kernel_product(cast_kernel, rows)
    backward = _tf_recurrence.transposed_product(
        cast_kernel, rows, cpu_flags=flags
    )
    # bfloat16 keeps 8 bits of mantissa: compare with rounded operands.
    rounded = tf.cast(cast_kernel, "float32").numpy()

    def round_(x):
        return tf.cast(tf.cast(x, dtype), "float32").numpy()

    tolerance = 1e-6 if dtype == "float32" else 1e-2
    for got, expected in (
        (forward(tf.constant(a)), round_(a) @ rounded),
        (backward(tf.constant(d)), round_(d) @ rounded.T),
    ):
        assert got.dtype == tf.float32
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


def test_bfloat16_products_take_the_kernel_on_the_left_only_when_large():
    from keras_ordered.layers._tf_recurrence import _kernel_on_the_left

    large = tf.zeros((1200, 4800), "bfloat16")
    small = tf.zeros((256, 1024), "bfloat16")
    assert _kernel_on_the_left(large, 64)
    assert not _kernel_on_the_left(large, 20)  # ON-LSTM's batch
    assert not _kernel_on_the_left(large, None)
    assert not _kernel_on_the_left(small, 64)  # PRPN small's kernel
    assert not _kernel_on_the_left(tf.zeros((1200, 4800)), 64)  # float32


@pytest.mark.tensorflow_only
def test_inference_graph_holds_no_hand_written_backward():
    # In training the loop is wrapped in its custom gradient (an IdentityN
    # op carrying the gradient override); in inference it runs bare, so
    # that exports and compiled distance passes trace less.
    from keras_ordered.export.ops import graph_op_types

    layer = ONLSTM(8, chunk_size=4, return_sequences=True)
    layer(tf.zeros((2, 5, 6)))

    def op_types(training):
        traced = tf.function(lambda x: layer(x, training=training))
        return graph_op_types(
            traced.get_concrete_function(tf.TensorSpec((None, None, 6))))

    assert "IdentityN" in op_types(True)
    assert "IdentityN" not in op_types(False)
