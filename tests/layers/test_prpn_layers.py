"""PRPN layers: memory gates, gated attention, the parsing convolution, the
layer-normalised LSTM, the reading cell and the predict network, against
independent NumPy computations of the paper's formulas."""

import keras
from keras import ops
import numpy as np
import pytest
import tensorflow as tf

from harness import to_numpy
from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers.gated_attention import MemoryGates
from keras_ordered.layers.gated_attention import gated_softmax
from keras_ordered.layers.gated_attention import memory_gates
from keras_ordered.layers.parsing_conv import ParsingConv
from keras_ordered.layers.prpn_cell import LayerNormLSTMCell
from keras_ordered.layers.prpn_cell import PRPNReadingCell
from keras_ordered.layers.prpn_predict import PRPNPredictNetwork

pytestmark = pytest.mark.backends


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_gates(d, history, history_mask, query, M, resolution, hard=True):
    """g[b, t, m] = prod_{i=p+1..t} alpha_i^t, p = t - M + m, by the book."""
    tau = 2.0 / resolution
    B, T = d.shape
    # absolute positions: history occupies -M..-1, the window 0..T-1
    dist = {(b, i - M): history[b, i] for b in range(B) for i in range(M)}
    valid = {(b, i - M): history_mask[b, i] > 0 for b in range(B) for i in range(M)}
    for b in range(B):
        for t in range(T):
            dist[(b, t)] = d[b, t]
            valid[(b, t)] = True
    out = np.zeros((B, T, M))
    for b in range(B):
        for t in range(T):
            for m in range(M):
                p = t - M + m
                g = 1.0
                for i in range(p + 1, t + 1):
                    if not valid[(b, i)]:
                        a = 0.0
                    elif hard:
                        delta = query[b, t] - dist[(b, i)]
                        a = (np.clip(delta * tau + 1, -1, 1) + 1) / 2
                    else:
                        a = np_sigmoid(5 * ((query[b, t] - dist[(b, i)]) * tau + 1))
                    g *= a
                out[b, t, m] = g
    return out


# --- memory gates -------------------------------------------------------------
@pytest.mark.parametrize("hard", [True, False])
def test_memory_gates_match_numpy(hard, harness):
    rng = np.random.default_rng(0)
    B, T, M = 2, 6, 4
    d = rng.uniform(size=(B, T)).astype("float32")
    history = rng.uniform(size=(B, M)).astype("float32")
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1]], "float32")
    query = rng.uniform(size=(B, T)).astype("float32")
    for q in (None, query):
        expected = np_gates(d, history, mask, d if q is None else q, M, 0.1, hard)
        got = to_numpy(
            memory_gates(d, M, history=history, history_mask=mask, query=q,
                         resolution=0.1, hard=hard)
        )
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # no history = start of the text: pre-start distances are +inf
    got = to_numpy(memory_gates(d, M, hard=hard))
    expected = np_gates(d, history, np.zeros_like(mask), d, M, 0.1, hard)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    layer = harness.run_serialization_test(MemoryGates(M, 0.1, hard))
    np.testing.assert_allclose(layer([d, history, mask]), memory_gates(
        d, M, history=history, history_mask=mask, hard=hard), atol=1e-7)


def test_memory_gates_limit_is_the_indicator():
    # As tau grows, slot m (position p) is open iff no d_j, p < j <= t,
    # exceeds d_t: p lies right of the last position whose distance > d_t.
    rng = np.random.default_rng(1)
    B, T, M = 3, 9, 5
    d = rng.permutation(B * T).reshape(B, T).astype("float32") / (B * T)
    got = to_numpy(memory_gates(d, M, resolution=1e-5))
    for b in range(B):
        for t in range(T):
            for m in range(M):
                p = t - M + m
                open_ = p + 1 >= 0 and all(
                    d[b, j] <= d[b, t] for j in range(p + 1, t + 1)
                )
                assert got[b, t, m] == float(open_), (b, t, m)
    # the newest slot (h_{t-1}) is always open for the reading gates
    np.testing.assert_array_equal(got[:, :, -1], 1.0)


@pytest.mark.tensorflow_only
def test_memory_gates_gradient_is_exact_where_alphas_saturate():
    # Products mixing alphas at exactly 0 and alphas on the linear ramp: the
    # gradient must be finite and equal finite differences (a cumprod
    # gradient that divides by alpha would give NaN here).
    import tensorflow as tf

    base = np.array([[0.50, 0.53, 0.47, 0.90, 0.55, 0.51, 0.46]], "float32")
    weights = np.random.default_rng(0).normal(size=(1, 7, 4)).astype("float32")

    def loss_of(d):
        return tf.reduce_sum(memory_gates(d, 4) * weights)

    d = tf.Variable(base)
    with tf.GradientTape() as tape:
        loss = loss_of(d)
    grad = tape.gradient(loss, d).numpy()
    assert np.all(np.isfinite(grad)) and np.abs(grad).sum() > 0
    gates = to_numpy(memory_gates(base, 4))
    assert np.any(gates == 0) and np.any((gates > 0) & (gates < 1))
    eps = 1e-3
    numeric = np.zeros_like(base)
    for i in range(base.shape[1]):
        up, down = base.copy(), base.copy()
        up[0, i] += eps
        down[0, i] -= eps
        numeric[0, i] = (loss_of(up) - loss_of(down)).numpy() / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=2e-2)


def test_memory_gates_validates():
    with pytest.raises(ValueError, match="num_slots"):
        MemoryGates(0)
    with pytest.raises(ValueError, match="resolution"):
        MemoryGates(3, resolution=0.0)


# --- gated attention ----------------------------------------------------------
def np_official_softmax(z, gates):
    """The official masked softmax: max over all slots, + 1e-8."""
    e = gates * np.exp(z - z.max(-1, keepdims=True))
    return e / (e.sum(-1, keepdims=True) + 1e-8)


def test_gated_attention_matches_numpy_and_respects_gates(harness):
    rng = np.random.default_rng(2)
    B, M, d, p = 3, 5, 6, 4
    h = rng.normal(size=(B, M, d)).astype("float32")
    c = rng.normal(size=(B, M, d)).astype("float32")
    key = rng.normal(size=(B, p)).astype("float32")
    gates = np.array(
        [[0, 0, 0.3, 1, 1], [1, 0.5, 1, 0, 1], [0, 0, 0, 0, 0]], "float32"
    )
    layer = GatedAttention(dropout=0.5, seed=3)
    h_out, c_out, weights = layer([h, c, key, gates], return_attention_scores=True)
    A, bias = to_numpy(layer.kernel), to_numpy(layer.bias)
    k = key @ A + bias
    z = np.einsum("bmd,bd->bm", h, k) / np.sqrt(d)
    s = np_official_softmax(z, gates)
    np.testing.assert_allclose(weights, s, rtol=1e-5, atol=1e-6)
    for out, memory in ((h_out, h), (c_out, c)):
        np.testing.assert_allclose(
            out, np.einsum("bm,bmd->bd", s, memory), rtol=1e-5, atol=1e-6
        )
    weights = to_numpy(weights)
    # sums to (almost) one over the open slots, zero on the closed ones
    np.testing.assert_allclose(weights[:2].sum(-1), 1.0, rtol=1e-6)
    assert np.all(weights[gates == 0] == 0)
    # all gates closed: zero output, no NaN (the + 1e-8)
    assert np.all(to_numpy(h_out)[2] == 0) and np.all(np.isfinite(to_numpy(h_out)))
    # a closed slot's cell state does not matter
    c2 = c.copy()
    c2[1, 3] = -7.0
    _, c_out2 = layer([h, c2, key, gates])
    np.testing.assert_array_equal(c_out2, c_out)
    # training: both key dropouts, drawn afresh at every call
    a = to_numpy(layer([h, key, gates], training=True))
    b = to_numpy(layer([h, key, gates], training=True))
    assert not np.allclose(a, b) and not np.allclose(a, h_out)
    harness.run_serialization_test(layer)


def test_gated_softmax_is_the_official_masked_softmax():
    # The maximum is taken over every slot, closed ones included: a closed
    # slot with a much larger score underflows the open ones (the official
    # behaviour), without NaN.
    scores = np.array([[1e4, -1e4, 3.0], [1.0, 2.0, 3.0], [5.0, 1.0, 2.0]],
                      "float32")
    gates = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
                     "float32")
    w = to_numpy(gated_softmax(scores, gates))
    assert np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[0], 0.0)
    np.testing.assert_allclose(w[1], np_official_softmax(scores[1], gates[1]),
                               rtol=1e-6)
    np.testing.assert_allclose(w[1], [0.2689414, 0.7310586, 0.0], rtol=1e-6)
    np.testing.assert_array_equal(w[2], 0.0)


def test_fan_in_uniform_is_pytorchs_default_initialisation(harness):
    from keras_ordered.layers.gated_attention import FanInUniform

    kernel = to_numpy(FanInUniform(seed=1)((400, 300)))
    assert np.abs(kernel).max() <= 1 / np.sqrt(400)
    assert np.abs(kernel).max() > 0.95 / np.sqrt(400)  # uniform, fills the range
    conv = to_numpy(FanInUniform(seed=2)((6, 50, 40)))  # (width, in, out)
    assert 0.95 / np.sqrt(300) < np.abs(conv).max() <= 1 / np.sqrt(300)
    bias = to_numpy(FanInUniform(fan_in=25, seed=3)((1000,)))
    assert 0.19 < np.abs(bias).max() <= 0.2
    with pytest.raises(ValueError, match="fan_in"):
        FanInUniform()((10,))
    harness.run_serialization_test(FanInUniform(fan_in=7, seed=4))
    # Several fan-ins: the sum of one uniform per fan-in, drawn apart.
    summed = to_numpy(FanInUniform(fan_in=[4, 100], seed=5)((20000,)))
    assert np.abs(summed).max() <= 0.5 + 0.1
    assert np.abs(summed).max() > 0.5  # beyond either term's bound
    assert np.var(summed) == pytest.approx(1 / 12 + 1 / 300, rel=0.05)
    np.testing.assert_array_equal(
        summed, to_numpy(FanInUniform(fan_in=[4, 100], seed=5)((20000,))))
    harness.run_serialization_test(FanInUniform(fan_in=[7, 9], seed=6))
    for bad in ([], [3, 0], [True]):
        with pytest.raises(ValueError, match="fan_in"):
            FanInUniform(fan_in=bad)


def test_prpn_layers_initialise_as_pytorch_modules():
    # nn.Linear / nn.Conv1d: weight and bias uniform(+-1/sqrt(fan_in)).
    def assert_range(weight, fan_in):
        value = np.abs(to_numpy(weight))
        assert value.max() <= 1 / np.sqrt(fan_in) + 1e-7, weight.path
        if value.size >= 30:  # uniform over the whole range
            assert value.max() > 0.8 / np.sqrt(fan_in), weight.path

    parser = ParsingConv(40, lookback=3, seed=1)
    parser(np.zeros((2, 5, 30), "float32"))
    for weight in (parser.window_kernel, parser.window_bias):
        assert_range(weight, 30 * 4)
    for weight in (parser.output_kernel, parser.output_bias):
        assert_range(weight, 20)
    assert parser.batch_norm.epsilon == 1e-5
    assert parser.batch_norm.momentum == 0.9  # PyTorch's momentum 0.1
    cell = PRPNReadingCell(30, num_layers=2, num_slots=3, seed=2)
    cell.build((None, 20 + 3))
    for index, layer_input in enumerate((20, 30)):
        lstm, attention = cell.lstm_cells[index], cell.attentions[index]
        assert_range(lstm.kernel, layer_input)
        assert_range(lstm.input_bias, layer_input)
        assert_range(lstm.recurrent_kernel, 30)
        assert_range(lstm.recurrent_bias, 30)
        assert_range(attention.kernel, layer_input + 30)
        assert_range(attention.bias, layer_input + 30)
        for norm in (lstm.input_norm, lstm.recurrent_norm, lstm.cell_norm):
            np.testing.assert_array_equal(norm.gamma, 1.0)
            np.testing.assert_array_equal(norm.beta, 0.0)
    predict = PRPNPredictNetwork(16, 3, seed=3)
    predict.build([(None, None, 30), (None, 3, 30), (None, None, 3)])
    assert_range(predict.attention.kernel, 30)
    assert_range(predict.attention.bias, 30)
    assert_range(predict.projection.kernel, 60)
    assert_range(predict.projection.bias, 60)
    assert predict.batch_norm.epsilon == 1e-5


# --- parsing network ----------------------------------------------------------
def test_parsing_conv_is_causal_and_uses_previous_embeddings():
    rng = np.random.default_rng(4)
    Q, B, T, F = 2, 2, 7, 5
    parser = ParsingConv(6, lookback=Q, seed=1)
    x = rng.normal(size=(B, T, F)).astype("float32")
    d, n = (to_numpy(a) for a in parser(x))
    assert d.shape == n.shape == (B, T)
    assert np.all((d > 0) & (d < 1)) and not np.allclose(d, n)
    x2 = x.copy()
    x2[:, 4] += 1.0  # changes d_4 .. d_{4+Q} only
    d2, _ = (to_numpy(a) for a in parser(x2))
    np.testing.assert_array_equal(d2[:, :4], d[:, :4])
    assert not np.allclose(d2[:, 4], d[:, 4])
    np.testing.assert_array_equal(d2[:, 4 + Q + 1 :], d[:, 4 + Q + 1 :])
    previous = rng.normal(size=(B, Q, F)).astype("float32")
    d3, _ = (to_numpy(a) for a in parser([x, previous]))
    assert not np.allclose(d3[:, :Q], d[:, :Q])
    np.testing.assert_array_equal(d3[:, Q:], d[:, Q:])
    # one long sequence = two windows carrying the last Q embeddings
    da, _ = parser(x[:, :4])
    db, _ = parser([x[:, 4:], x[:, 2:4]])
    np.testing.assert_allclose(np.concatenate([da, db], 1), d, rtol=1e-6, atol=1e-6)


def test_parsing_conv_batch_norm_differs_between_training_and_inference():
    rng = np.random.default_rng(5)
    parser = ParsingConv(6, lookback=2, dropout=0.0)
    x = rng.normal(2.0, 3.0, size=(4, 6, 5)).astype("float32")
    inference, _ = parser(x, training=False)
    training, _ = parser(x, training=True)  # batch statistics, updates moving ones
    assert not np.allclose(inference, training, atol=1e-4)
    bn = parser.batch_norm
    assert not np.allclose(bn.moving_mean, 0.0)
    # the moving statistics are the inference ones: a fixed function per position
    again, _ = parser(x[:2], training=False)
    np.testing.assert_allclose(again, to_numpy(parser(x, training=False)[0])[:2],
                               rtol=1e-6)


def test_parsing_conv_is_one_trunk_with_a_grouped_output():
    # The official parser: one trunk, a width-1 convolution with 2 groups:
    # d reads the first half of the channels, d^ the second half.
    rng = np.random.default_rng(11)
    U, Q, F = 8, 2, 5
    parser = ParsingConv(U, lookback=Q, seed=1)
    x = rng.normal(size=(3, 6, F)).astype("float32")
    d, n = (to_numpy(a) for a in parser(x))
    shapes = {w.path.split("/")[-1]: tuple(w.shape) for w in parser.weights}
    assert shapes == {
        "window_kernel": (Q + 1, F, U), "window_bias": (U,),
        "output_kernel": (U // 2, 2), "output_bias": (2,),
        "gamma": (U,), "beta": (U,), "moving_mean": (U,),
        "moving_variance": (U,),
    }
    trainable = sum(int(np.prod(w.shape)) for w in parser.trainable_weights)
    assert trainable == U * F * (Q + 1) + U + 2 * U + 2 * (U // 2) + 2
    # perturbing the weights reading the second half changes d^ only
    kernel = to_numpy(parser.output_kernel)
    changed = kernel.copy()
    changed[:, 1] += 1.0
    parser.output_kernel.assign(changed)
    d2, n2 = (to_numpy(a) for a in parser(x))
    np.testing.assert_array_equal(d2, d)
    assert not np.allclose(n2, n)
    # and the channels of the second half do not reach d at all
    parser.output_kernel.assign(kernel)
    parser.batch_norm.beta.assign(
        np.concatenate([np.zeros(U // 2), np.full(U // 2, 3.0)]).astype("float32"))
    d3, n3 = (to_numpy(a) for a in parser(x))
    np.testing.assert_array_equal(d3, d)
    assert not np.allclose(n3, n)
    # NumPy: conv, BN (moving statistics), ReLU, grouped conv, sigmoid
    window = np.concatenate([np.zeros((3, Q, F), "float32"), x], 1)
    W = to_numpy(parser.window_kernel)
    z = np.stack([np.einsum("kio,bki->bo", W, window[:, t : t + Q + 1])
                  for t in range(6)], 1) + to_numpy(parser.window_bias)
    bn = parser.batch_norm
    z = (z - to_numpy(bn.moving_mean)) / np.sqrt(
        to_numpy(bn.moving_variance) + 1e-5)
    z = np.maximum(z * to_numpy(bn.gamma) + to_numpy(bn.beta), 0)
    b = to_numpy(parser.output_bias)
    np.testing.assert_allclose(
        d3, np_sigmoid(z[..., : U // 2] @ kernel[:, 0] + b[0]), rtol=1e-5,
        atol=1e-6)
    np.testing.assert_allclose(
        n3, np_sigmoid(z[..., U // 2 :] @ kernel[:, 1] + b[1]), rtol=1e-5,
        atol=1e-6)


def test_parsing_conv_config_and_validation(harness):
    parser = ParsingConv(6, lookback=3, dropout=0.2, seed=7)
    harness.run_serialization_test(parser)
    with pytest.raises(ValueError, match="lookback"):
        ParsingConv(6, lookback=0)
    with pytest.raises(ValueError, match="dropout"):
        ParsingConv(6, dropout=1.0)
    with pytest.raises(ValueError, match="even"):
        ParsingConv(7)


# --- reading network ----------------------------------------------------------
def np_std_layer_norm(x, gamma, beta, eps=1e-6):
    """The official PRPN LayerNorm: unbiased std, eps added to the std."""
    mean = x.mean(-1, keepdims=True)
    std = np.sqrt(((x - mean) ** 2).sum(-1, keepdims=True) / (x.shape[-1] - 1))
    return gamma * (x - mean) / (std + eps) + beta


def test_std_layer_normalization_matches_numpy(harness):
    from keras_ordered.layers.prpn_cell import StdLayerNormalization

    rng = np.random.default_rng(12)
    x = rng.normal(2.0, 3.0, size=(4, 7)).astype("float32")
    norm = StdLayerNormalization()
    norm.build(x.shape)
    gamma = rng.uniform(0.5, 1.5, 7).astype("float32")
    beta = rng.normal(size=7).astype("float32")
    norm.gamma.assign(gamma)
    norm.beta.assign(beta)
    expected = np_std_layer_norm(x.astype("float64"), gamma, beta)
    np.testing.assert_allclose(norm(x), expected, rtol=1e-5, atol=1e-6)
    # not Keras' normalisation (biased variance, epsilon inside the root)
    biased = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                       + 1e-6) * gamma + beta
    assert not np.allclose(norm(x), biased, atol=1e-3)
    # epsilon is added to the standard deviation: a constant row gives beta
    np.testing.assert_allclose(norm(np.ones((1, 7), "float32")), beta[None],
                               atol=1e-6)
    harness.run_serialization_test(norm)


def np_ln_lstm(cell, x, h, c):
    """The official LSTMCell: LN(x W + b_ih) + LN(h U + b_hh), LN on c."""
    def w(v):
        return to_numpy(v, "float64")

    def ln(norm, y):
        return np_std_layer_norm(y, w(norm.gamma), w(norm.beta))

    z = (ln(cell.input_norm, x @ w(cell.kernel) + w(cell.input_bias))
         + ln(cell.recurrent_norm, h @ w(cell.recurrent_kernel)
              + w(cell.recurrent_bias)))
    u = cell.units
    i, f, g, o = (z[:, k * u : (k + 1) * u] for k in range(4))
    c_new = np_sigmoid(f) * c + np_sigmoid(i) * np.tanh(g)
    return np_sigmoid(o) * np.tanh(ln(cell.cell_norm, c_new)), c_new


def test_layer_norm_lstm_cell_matches_numpy(harness):
    rng = np.random.default_rng(6)
    cell = LayerNormLSTMCell(4, seed=1)
    x = rng.normal(size=(3, 5)).astype("float32")
    h = rng.normal(size=(3, 4)).astype("float32")
    c = rng.normal(size=(3, 4)).astype("float32")
    cell(x, [h, c])
    for v in cell.weights:  # give the layer norms non-trivial parameters
        v.assign(v + rng.normal(scale=0.1, size=v.shape).astype("float32"))
    out, (h_new, c_new) = cell(x, [h, c])
    eh, ec = np_ln_lstm(cell, x, h, c)
    np.testing.assert_allclose(h_new, eh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c_new, ec, rtol=1e-4, atol=1e-5)
    names = [w.path.split("/", 1)[-1] for w in cell.weights]
    assert names == [
        "kernel", "input_bias", "recurrent_kernel", "recurrent_bias",
        "input_norm/gamma", "input_norm/beta", "recurrent_norm/gamma",
        "recurrent_norm/beta", "cell_norm/gamma", "cell_norm/beta",
    ]
    harness.run_serialization_test(cell)


def test_reading_cell_step_matches_numpy():
    rng = np.random.default_rng(7)
    B, F, d, M, L = 2, 3, 4, 3, 2
    cell = PRPNReadingCell(d, num_layers=L, num_slots=M, seed=1)
    emb = rng.normal(size=(B, F)).astype("float32")
    gates = np.array([[0, 1, 1], [0.5, 0.2, 1]], "float32")
    tapes = [rng.normal(size=(B, M * d)).astype("float32") for _ in range(2 * L)]
    out, new = cell(np.concatenate([emb, gates], -1), tapes, training=False)
    x = emb
    for l in range(L):
        th = tapes[2 * l].reshape(B, M, d)
        tc = tapes[2 * l + 1].reshape(B, M, d)
        att = cell.attentions[l]
        # the official key: [layer input ; previous hidden state]
        key = np.concatenate([x, th[:, -1]], -1) @ to_numpy(att.kernel)
        key = key + to_numpy(att.bias)
        z = np.einsum("bmd,bd->bm", th, key) / np.sqrt(d)
        s = np_official_softmax(z, gates)
        h_att, c_att = np.einsum("bm,bmd->bd", s, th), np.einsum("bm,bmd->bd", s, tc)
        h, c = np_ln_lstm(cell.lstm_cells[l], x, h_att, c_att)
        np.testing.assert_allclose(
            to_numpy(new[2 * l]).reshape(B, M, d),
            np.concatenate([th[:, 1:], h[:, None]], 1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            to_numpy(new[2 * l + 1]).reshape(B, M, d),
            np.concatenate([tc[:, 1:], c[:, None]], 1), rtol=1e-4, atol=1e-5)
        x = h
    np.testing.assert_allclose(out, x, rtol=1e-4, atol=1e-5)


@pytest.mark.tensorflow_only
def test_reading_cell_dropout_regime_is_the_official_one(harness):
    # Layer inputs and attention keys: element-wise, fresh at every step.
    # Attended hidden state h~: one (1, units) mask per layer and window,
    # shared by the whole batch.
    B, T, F, d, M, L = 4, 6, 5, 8, 3, 2
    cell = PRPNReadingCell(d, num_layers=L, num_slots=M, dropout=0.5,
                           layer_dropout=0.4, recurrent_dropout=0.5,
                           attention_dropout=0.3, seed=2)
    rnn = keras.layers.RNN(cell, return_sequences=True)
    seq = np.concatenate(
        [np.ones((B, T, F), "float32"), np.ones((B, T, M), "float32")], -1
    )
    inference = to_numpy(rnn(seq, training=False))
    window_masks, step_masks, key_masks = [], [], []
    window_mask, step_dropout = cell._window_mask, cell._step_dropout

    def record_window(rate):
        mask = window_mask(rate)
        window_masks.append((rate, to_numpy(mask)))
        return mask

    def record_step(x, rate):
        y = step_dropout(x, rate)
        step_masks.append((rate, to_numpy(y) / np.where(to_numpy(x) == 0,
                                                          1, to_numpy(x))))
        return y

    cell._window_mask, cell._step_dropout = record_window, record_step
    for attention in cell.attentions:
        drop = attention._drop

        def record_key(x, training, drop=drop):
            y = drop(x, training)
            key_masks.append(to_numpy(y) != 0)
            return y

        attention._drop = record_key
    training = to_numpy(rnn(seq, training=True))
    assert not np.allclose(training, inference)
    # h~: L masks per call, (1, d): one per layer and window, batch-shared
    assert [r for r, _ in window_masks] == [0.5] * L
    assert all(m.shape == (1, d) for _, m in window_masks)
    assert cell._dropout_mask is None  # cleared after the call
    # layer inputs: one draw per layer and step, element-wise (Keras' TF
    # loop may call the step once more before the loop, for shapes)
    steps = len(step_masks) // 2
    assert steps in (T, T + 1)
    assert [r for r, _ in step_masks] == [0.5, 0.4] * steps
    first = [m for r, m in step_masks[0::2]]
    assert all(m.shape == (B, F) for m in first)
    assert not all(np.array_equal(first[0], m) for m in first[1:])  # per step
    assert not all(np.array_equal(first[0][0], row) for row in first[0][1:])
    # keys: two dropouts per layer and step (before and after the map)
    assert len(key_masks) == 2 * L * steps
    assert [m.shape for m in key_masks[:2]] == [(B, F + d), (B, d)]
    assert not np.array_equal(key_masks[0], key_masks[2 * L])
    second = keras.layers.RNN(cell, return_sequences=True)
    window_masks.clear()
    second(seq, training=True)
    assert len(window_masks) == L  # a new window draws new masks
    harness.run_serialization_test(cell)
    with pytest.raises(ValueError, match="num_slots"):
        PRPNReadingCell(4, num_slots=0)
    with pytest.raises(ValueError, match="dropout"):
        PRPNReadingCell(4, dropout=1.2)


@pytest.mark.tensorflow_only
def test_reading_cell_draws_fresh_step_masks_in_a_compiled_loop():
    # Inside tf.function (model.fit), the per-step draws must still differ
    # from step to step: the same input at every step with a zero state and
    # closed gates gives the same output at every step without dropout.
    import tensorflow as tf

    B, T, F, d, M = 2, 5, 6, 4, 2
    cell = PRPNReadingCell(d, num_layers=1, num_slots=M, dropout=0.5,
                           recurrent_dropout=0.0, attention_dropout=0.0, seed=4)
    rnn = keras.layers.RNN(cell, return_sequences=True)
    step = np.concatenate([np.ones((B, 1, F)), np.zeros((B, 1, M))], -1)
    seq = np.repeat(step, T, axis=1).astype("float32")
    # closed gates: the attended state is 0 at every step, so each step
    # sees only its own (dropped) input
    plain = to_numpy(rnn(seq, training=False))
    np.testing.assert_allclose(plain, np.repeat(plain[:, :1], T, 1), atol=1e-6)
    out = to_numpy(tf.function(lambda x: rnn(x, training=True))(seq))
    assert not np.allclose(out[:, 0], out[:, 1])
    assert len({out[0, t].tobytes() for t in range(T)}) == T


# --- predict network ----------------------------------------------------------
def memory_windows(memory, sequence, num_slots):
    """The reference: `(batch, time, M, d)` tapes whose `[:, t]` holds the
    states of positions `t - M .. t - 1` (the memory, then the sequence)."""
    full = ops.concatenate([ops.cast(memory, sequence.dtype), sequence], axis=1)
    return ops.stack([full[:, m : m - num_slots] for m in range(num_slots)],
                     axis=2)


def test_memory_windows_hold_the_previous_states():
    rng = np.random.default_rng(9)
    B, T, M, d = 2, 5, 3, 2
    memory = rng.normal(size=(B, M, d)).astype("float32")
    seq = rng.normal(size=(B, T, d)).astype("float32")
    w = to_numpy(memory_windows(memory, seq, M))
    full = np.concatenate([memory, seq], 1)  # position t of the window = M + t
    for t in range(T):
        np.testing.assert_array_equal(w[:, t], full[:, t : t + M])  # h_{t-M}..h_{t-1}


def test_predict_network_forward_and_batch_norm_modes(harness):
    rng = np.random.default_rng(10)
    B, T, M, d, out = 3, 5, 3, 4, 6
    predict = PRPNPredictNetwork(out, M, dropout=0.0, input_dropout=0.0,
                                 attention_dropout=0.0)
    hidden = rng.normal(size=(B, T, d)).astype("float32")
    memory = rng.normal(size=(B, M, d)).astype("float32")
    gates = rng.uniform(size=(B, T, M)).astype("float32")
    y = to_numpy(predict([hidden, memory, gates]))
    # NumPy: attention over windows, concat, dense, BN (moving stats), tanh
    att = predict.attention
    full = np.concatenate([memory, hidden], 1)
    windows = np.stack([full[:, t : t + M] for t in range(T)], 1)
    k = hidden @ to_numpy(att.kernel) + to_numpy(att.bias)
    z = np.einsum("btmd,btd->btm", windows, k) / np.sqrt(d)
    s = np_official_softmax(z, gates)
    summary = np.einsum("btm,btmd->btd", s, windows)
    x = np.concatenate([hidden, summary], -1) @ to_numpy(predict.projection.kernel)
    x = x + to_numpy(predict.projection.bias)
    bn = predict.batch_norm
    assert bn.epsilon == 1e-5
    x = (x - to_numpy(bn.moving_mean)) / np.sqrt(
        to_numpy(bn.moving_variance) + 1e-5
    )
    x = x * to_numpy(bn.gamma) + to_numpy(bn.beta)
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-4, atol=1e-5)
    y_train = to_numpy(predict([hidden, memory, gates], training=True))
    assert not np.allclose(y_train, y, atol=1e-3)
    harness.run_serialization_test(predict)


@pytest.mark.tensorflow_only
@pytest.mark.parametrize("training", [False, True])
def test_windowed_attention_equals_attention_over_the_windows(training):
    """The banded products give the windows' values, gradients and draws."""
    from keras_ordered.layers.prpn_predict import windowed_attention

    rng = np.random.default_rng(12)
    B, T, M, d = 3, 7, 4, 5
    memory = tf.constant(rng.normal(size=(B, M, d)).astype("float32"))
    hidden = tf.constant(rng.normal(size=(B, T, d)).astype("float32"))
    gates = tf.constant(rng.uniform(size=(B, T, M)).astype("float32"))
    results = []
    for banded in (False, True):
        attention = GatedAttention(dropout=0.3, seed=5)
        attention.build([(None, None, M, d), (None, None, d), (None, None, M)])
        attention.set_weights([rng.normal(size=(d, d)).astype("float32"),
                               rng.normal(size=(d,)).astype("float32")]
                              if not results else results[0][0])
        with tf.GradientTape() as tape:
            tape.watch([memory, hidden, gates])
            if banded:
                out = windowed_attention(attention, memory, hidden, gates, M,
                                         training=training)
            else:
                out = attention([memory_windows(memory, hidden, M), hidden,
                                 gates], training=training)
            loss = tf.reduce_sum(out * tf.range(1.0, d + 1.0))
        grads = tape.gradient(
            loss, [memory, hidden, gates, *attention.trainable_weights])
        results.append((attention.get_weights(), out, grads))
    (_, out_a, grads_a), (_, out_b, grads_b) = results
    np.testing.assert_allclose(out_b, out_a, rtol=1e-5, atol=1e-5)
    for a, b in zip(grads_a, grads_b):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def _reading_network_pair(dropout):
    from keras_ordered.layers import PRPNReadingNetwork

    cell = PRPNReadingCell(8, num_layers=2, num_slots=4, dropout=dropout,
                           layer_dropout=dropout, recurrent_dropout=dropout,
                           attention_dropout=dropout, seed=3)
    rnn = PRPNReadingNetwork(cell, return_state=True, layer_loop=False)
    rng = np.random.default_rng(0)
    inputs = np.concatenate(
        [rng.normal(size=(3, 6, 5)), rng.uniform(size=(3, 6, 4))], -1
    ).astype("float32")
    states = [rng.normal(size=(3, 32)).astype("float32") for _ in range(4)]
    reference = [to_numpy(t) for t in rnn(inputs, initial_state=states)]
    rnn.layer_loop = True
    return rnn, inputs, states, reference


@pytest.mark.tensorflow_only
def test_layerwise_reading_loop_equals_the_per_step_cell():
    import tensorflow as tf

    rnn, inputs, states, reference = _reading_network_pair(0.0)
    fast = [to_numpy(t) for t in rnn(inputs, initial_state=states)]
    for a, b in zip(fast, reference):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)

    def gradients():
        with tf.GradientTape() as tape:
            outputs = rnn(inputs, initial_state=states, training=True)
            loss = tf.reduce_sum(outputs[0] ** 2) + tf.reduce_sum(outputs[1])
        return tape.gradient(loss, rnn.trainable_variables)

    fast_grads = gradients()
    rnn.layer_loop = False
    for a, b in zip(fast_grads, gradients()):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.tensorflow_only
def test_inference_reading_loop_holds_no_hand_written_backward():
    # As ON-LSTM's: the custom gradient (IdentityN) in training only.
    import tensorflow as tf

    from keras_ordered.export.ops import graph_op_types

    rnn, inputs, states, _ = _reading_network_pair(0.0)

    def op_types(training):
        traced = tf.function(
            lambda x, s: rnn(x, initial_state=s, training=training))
        return graph_op_types(traced.get_concrete_function(
            tf.convert_to_tensor(inputs), [tf.convert_to_tensor(s)
                                           for s in states]))

    assert "IdentityN" in op_types(True)
    assert "IdentityN" not in op_types(False)


@pytest.mark.tensorflow_only
def test_layerwise_reading_loop_applies_dropout_in_training_only():
    rnn, inputs, states, reference = _reading_network_pair(0.5)
    inference = rnn(inputs, initial_state=states, training=False)
    np.testing.assert_allclose(to_numpy(inference[0]), reference[0],
                               rtol=1e-5, atol=1e-5)
    training = rnn(inputs, initial_state=states, training=True)
    assert not np.allclose(to_numpy(training[0]), reference[0], atol=1e-3)


def test_reading_network_round_trips_and_refuses_other_cells():
    from keras_ordered.layers import PRPNReadingNetwork

    cell = PRPNReadingCell(8, num_layers=2, num_slots=4, seed=3)
    layer = PRPNReadingNetwork(cell, return_state=True, layer_loop=False)
    inputs = np.random.default_rng(1).uniform(size=(2, 5, 9)).astype(
        "float32")
    want = [to_numpy(t) for t in layer(inputs)]
    copy = PRPNReadingNetwork.from_config(layer.get_config())
    assert copy.layer_loop is False and copy.return_sequences
    copy(inputs)
    copy.set_weights(layer.get_weights())
    for a, b in zip([to_numpy(t) for t in copy(inputs)], want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="PRPNReadingCell"):
        PRPNReadingNetwork(keras.layers.LSTMCell(4))
    with pytest.raises(ValueError, match="return_sequences"):
        PRPNReadingNetwork(cell, return_sequences=False)


def test_jit_compile_runs_the_reading_network_step_by_step():
    from keras_ordered.models import PRPNLanguageModel

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(10)]
    model = PRPNLanguageModel.from_preset("tiny", vocabulary)
    reading = model.get_layer("reading_network")
    assert reading.layer_loop
    model.compile(optimizer="sgd", jit_compile=True)
    assert not reading.layer_loop
    model.jit_compile = False
    assert reading.layer_loop


def _reading_problem(b, t, m, d, kernel_dtype="float32", seed=1):
    """Inputs, weights, dropout masks and a loss of one reading layer."""
    import tensorflow as tf

    from keras_ordered.layers.prpn_cell import _tf_reading_recurrence

    rng = np.random.default_rng(seed)

    def normal(*shape):
        return tf.constant(rng.normal(size=shape).astype("float32"))

    def drop(*shape):
        return tf.constant(2.0 * (rng.uniform(size=shape) > 0.5), "float32")

    inputs = [normal(b, t, d), normal(b, t, 4 * d),
              tf.constant(rng.uniform(size=(b, t, m)).astype("float32")),
              normal(b, m, d), normal(b, m, d)]
    weights = {"query_kernel": normal(d, d), "recurrent_kernel": normal(d, 4 * d),
               "recurrent_bias": normal(4 * d), "recurrent_gamma": normal(4 * d),
               "recurrent_beta": normal(4 * d), "cell_gamma": normal(d),
               "cell_beta": normal(d)}
    for name in ("query_kernel", "recurrent_kernel"):
        weights[name] = tf.cast(weights[name], kernel_dtype)
    masks = {"key": drop(b, t, d), "query": drop(b, t, d),
             "attended": drop(1, d)}
    probes = normal(b, t, d), normal(b, t, d)

    def gradients(custom, fuse=True, fuse_cell=False):
        sources = inputs + list(weights.values())
        with tf.GradientTape() as tape:
            tape.watch(sources)
            h, c = _tf_reading_recurrence(
                *inputs, weights, masks, epsilon=(1e-6, 1e-6),
                custom_backward=custom, fuse_tape_updates=fuse,
                fuse_cell_work=fuse_cell)
            loss = tf.reduce_sum(h * probes[0]) + tf.reduce_sum(c * probes[1])
        return (h, c), tape.gradient(loss, sources)

    return gradients


@pytest.mark.tensorflow_only
def test_reading_recurrence_backward_equals_autodiff_with_dropout_masks():
    gradients = _reading_problem(b=2, t=5, m=3, d=4)
    # The reference: autodiff through the loop of plain TensorFlow ops.
    (h_ref, c_ref), autodiff = gradients(False, fuse_cell=False)
    # The tape work XLA-fused or as TF ops; the cell work XLA-fused or not.
    for fuse, fuse_cell in ((True, False), (False, False), (True, True)):
        (h, c), mine = gradients(True, fuse, fuse_cell)
        np.testing.assert_allclose(to_numpy(h), to_numpy(h_ref),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(to_numpy(c), to_numpy(c_ref),
                                   rtol=1e-5, atol=1e-6)
        for got, expected in zip(mine, autodiff):
            np.testing.assert_allclose(to_numpy(got), to_numpy(expected),
                                       rtol=2e-4, atol=2e-5)


@pytest.mark.tensorflow_only
def test_reading_recurrence_in_bfloat16_with_many_rows_equals_autodiff(
    monkeypatch,
):
    """bfloat16 kernels and a batch of 32: the products take the kernel as
    their left operand (`_tf_recurrence.LEFT_OPERAND_MIN_ROWS`; the size
    threshold lowered for these small kernels), forward and in the
    hand-written backward, and still agree with autodiff."""
    from keras_ordered.layers import _tf_recurrence
    from keras_ordered.layers._tf_recurrence import LEFT_OPERAND_MIN_ROWS

    monkeypatch.setattr(_tf_recurrence, "LEFT_OPERAND_MIN_KERNEL_SIZE", 1)
    gradients = _reading_problem(
        b=LEFT_OPERAND_MIN_ROWS, t=4, m=3, d=8, kernel_dtype="bfloat16"
    )
    (h_ref, c_ref), autodiff = gradients(False)
    (h, c), mine = gradients(True, fuse=True, fuse_cell=True)
    np.testing.assert_allclose(to_numpy(h), to_numpy(h_ref), atol=1e-5)
    np.testing.assert_allclose(to_numpy(c), to_numpy(c_ref), atol=1e-5)
    for got, expected in zip(mine, autodiff):
        got = to_numpy(got, "float32")
        expected = to_numpy(expected, "float32")
        # Both round the products' operands to bfloat16, in other places.
        scale = np.abs(expected).max()
        assert np.abs(got - expected).max() <= 2e-2 * scale
