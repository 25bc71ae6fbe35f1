"""PRPN layers: memory gates, gated attention, the parsing convolution, the
layer-normalised LSTM, the reading cell and the predict network, against
independent NumPy computations of the paper's formulas."""

import keras
import numpy as np
import pytest

from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers.gated_attention import MemoryGates
from keras_ordered.layers.gated_attention import gated_softmax
from keras_ordered.layers.gated_attention import memory_gates
from keras_ordered.layers.parsing_conv import ParsingConv
from keras_ordered.layers.prpn_cell import LayerNormLSTMCell
from keras_ordered.layers.prpn_cell import PRPNReadingCell
from keras_ordered.layers.prpn_predict import PRPNPredictNetwork
from keras_ordered.layers.prpn_predict import memory_windows


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_layer_norm(x, gamma, beta=None, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * gamma
    return y if beta is None else y + beta


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
def test_memory_gates_match_numpy(hard):
    rng = np.random.default_rng(0)
    B, T, M = 2, 6, 4
    d = rng.uniform(size=(B, T)).astype("float32")
    history = rng.uniform(size=(B, M)).astype("float32")
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1]], "float32")
    query = rng.uniform(size=(B, T)).astype("float32")
    for q in (None, query):
        expected = np_gates(d, history, mask, d if q is None else q, M, 0.1, hard)
        got = np.asarray(
            memory_gates(d, M, history=history, history_mask=mask, query=q,
                         resolution=0.1, hard=hard)
        )
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # no history = start of the text: pre-start distances are +inf
    got = np.asarray(memory_gates(d, M, hard=hard))
    expected = np_gates(d, history, np.zeros_like(mask), d, M, 0.1, hard)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    layer = MemoryGates.from_config(MemoryGates(M, 0.1, hard).get_config())
    np.testing.assert_allclose(layer([d, history, mask]), memory_gates(
        d, M, history=history, history_mask=mask, hard=hard), atol=1e-7)


def test_memory_gates_limit_is_the_indicator():
    # As tau grows, slot m (position p) is open iff no d_j, p < j <= t,
    # exceeds d_t: p lies right of the last position whose distance > d_t.
    rng = np.random.default_rng(1)
    B, T, M = 3, 9, 5
    d = rng.permutation(B * T).reshape(B, T).astype("float32") / (B * T)
    got = np.asarray(memory_gates(d, M, resolution=1e-5))
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
    gates = np.asarray(memory_gates(base, 4))
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
def test_gated_attention_matches_numpy_and_respects_gates():
    rng = np.random.default_rng(2)
    B, M, d, p = 3, 5, 6, 4
    h = rng.normal(size=(B, M, d)).astype("float32")
    c = rng.normal(size=(B, M, d)).astype("float32")
    key = rng.normal(size=(B, p)).astype("float32")
    gates = np.array(
        [[0, 0, 0.3, 1, 1], [1, 0.5, 1, 0, 1], [0, 0, 0, 0, 0]], "float32"
    )
    layer = GatedAttention(dropout=0.5, bias_initializer="random_normal", seed=3)
    h_out, c_out, weights = layer([h, c, key, gates], return_attention_scores=True)
    A, bias = np.asarray(layer.kernel), np.asarray(layer.bias)
    k = key @ A + bias
    z = np.einsum("bmd,bd->bm", h, k) / np.sqrt(d)
    e = gates * np.exp(z - z.max(-1, keepdims=True))
    total = e.sum(-1, keepdims=True)
    s = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    np.testing.assert_allclose(weights, s, rtol=1e-5, atol=1e-6)
    for out, memory in ((h_out, h), (c_out, c)):
        np.testing.assert_allclose(
            out, np.einsum("bm,bmd->bd", s, memory), rtol=1e-5, atol=1e-6
        )
    weights = np.asarray(weights)
    # sums to one over the open slots, zero on the closed ones
    np.testing.assert_allclose(weights[:2].sum(-1), 1.0, rtol=1e-6)
    assert np.all(weights[gates == 0] == 0)
    # all gates closed: zero output, no NaN
    assert np.all(np.asarray(h_out)[2] == 0) and np.all(np.isfinite(h_out))
    # a closed slot's content (even huge) does not change anything
    h2, c2 = h.copy(), c.copy()
    h2[0, 0] = 1e4
    c2[1, 3] = -7.0
    h_out2, c_out2 = layer([h2, c2, key, gates])
    np.testing.assert_array_equal(h_out2, h_out)
    np.testing.assert_array_equal(c_out2, c_out)
    # training: the dropout changes the output; explicit masks are reused
    masks = layer.make_dropout_masks(B)
    a = layer([h, key, gates], training=True, dropout_masks=masks)
    b = layer([h, key, gates], training=True, dropout_masks=masks)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, h_out)
    config = GatedAttention.from_config(layer.get_config()).get_config()
    assert config == layer.get_config()


def test_gated_softmax_is_stable_for_large_scores():
    scores = np.array([[1e4, -1e4, 3.0]], "float32")
    gates = np.array([[0.0, 1.0, 1.0]], "float32")
    w = np.asarray(gated_softmax(scores, gates))
    np.testing.assert_allclose(w, [[0.0, 0.0, 1.0]], atol=1e-7)
    assert np.all(np.isfinite(w))


# --- parsing network ----------------------------------------------------------
def test_parsing_conv_is_causal_and_uses_previous_embeddings():
    rng = np.random.default_rng(4)
    Q, B, T, F = 2, 2, 7, 5
    parser = ParsingConv(6, lookback=Q, seed=1)
    x = rng.normal(size=(B, T, F)).astype("float32")
    d, n = (np.asarray(a) for a in parser(x))
    assert d.shape == n.shape == (B, T)
    assert np.all((d > 0) & (d < 1)) and not np.allclose(d, n)
    x2 = x.copy()
    x2[:, 4] += 1.0  # changes d_4 .. d_{4+Q} only
    d2, _ = (np.asarray(a) for a in parser(x2))
    np.testing.assert_array_equal(d2[:, :4], d[:, :4])
    assert not np.allclose(d2[:, 4], d[:, 4])
    np.testing.assert_array_equal(d2[:, 4 + Q + 1 :], d[:, 4 + Q + 1 :])
    previous = rng.normal(size=(B, Q, F)).astype("float32")
    d3, _ = (np.asarray(a) for a in parser([x, previous]))
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
    bn = parser.heads[0][2]
    assert not np.allclose(bn.moving_mean, 0.0)
    # the moving statistics are the inference ones: a fixed function per position
    again, _ = parser(x[:2], training=False)
    np.testing.assert_allclose(again, np.asarray(parser(x, training=False)[0])[:2],
                               rtol=1e-6)


def test_parsing_conv_config_and_validation():
    parser = ParsingConv(6, lookback=3, dropout=0.2, seed=7)
    config = parser.get_config()
    assert ParsingConv.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="lookback"):
        ParsingConv(6, lookback=0)
    with pytest.raises(ValueError, match="dropout"):
        ParsingConv(6, dropout=1.0)


# --- reading network ----------------------------------------------------------
def np_ln_lstm(cell, x, h, c):
    W, U, b = (np.asarray(v) for v in (cell.kernel, cell.recurrent_kernel, cell.bias))
    z = (
        np_layer_norm(x @ W, np.asarray(cell.input_norm.gamma))
        + np_layer_norm(h @ U, np.asarray(cell.recurrent_norm.gamma))
        + b
    )
    u = cell.units
    i, f, g, o = (z[:, k * u : (k + 1) * u] for k in range(4))
    c_new = np_sigmoid(f) * c + np_sigmoid(i) * np.tanh(g)
    ln_c = np_layer_norm(c_new, np.asarray(cell.cell_norm.gamma),
                         np.asarray(cell.cell_norm.beta))
    return np_sigmoid(o) * np.tanh(ln_c), c_new


def test_layer_norm_lstm_cell_matches_numpy():
    rng = np.random.default_rng(6)
    cell = LayerNormLSTMCell(4)
    x = rng.normal(size=(3, 5)).astype("float32")
    h = rng.normal(size=(3, 4)).astype("float32")
    c = rng.normal(size=(3, 4)).astype("float32")
    out, (h_new, c_new) = cell(x, [h, c])
    for v in cell.weights:  # give the layer norms non-trivial parameters
        v.assign(v + rng.normal(scale=0.1, size=v.shape).astype("float32"))
    out, (h_new, c_new) = cell(x, [h, c])
    eh, ec = np_ln_lstm(cell, x, h, c)
    np.testing.assert_allclose(h_new, eh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c_new, ec, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(cell.bias)[4:8], 1.0, atol=0.2)  # forget bias
    assert LayerNormLSTMCell.from_config(cell.get_config()).units == 4


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
        key = np.concatenate([th[:, -1], x], -1) @ np.asarray(att.kernel)
        key = key + np.asarray(att.bias)
        z = np.einsum("bmd,bd->bm", th, key) / np.sqrt(d)
        e = gates * np.exp(z - z.max(-1, keepdims=True))
        s = e / e.sum(-1, keepdims=True)
        h_att, c_att = np.einsum("bm,bmd->bd", s, th), np.einsum("bm,bmd->bd", s, tc)
        h, c = np_ln_lstm(cell.lstm_cells[l], x, h_att, c_att)
        np.testing.assert_allclose(
            np.asarray(new[2 * l]).reshape(B, M, d),
            np.concatenate([th[:, 1:], h[:, None]], 1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            np.asarray(new[2 * l + 1]).reshape(B, M, d),
            np.concatenate([tc[:, 1:], c[:, None]], 1), rtol=1e-4, atol=1e-5)
        x = h
    np.testing.assert_allclose(out, x, rtol=1e-4, atol=1e-5)


def test_reading_cell_uses_one_dropout_mask_per_sequence():
    B, T, F, d, M, L = 2, 6, 3, 4, 3, 2
    cell = PRPNReadingCell(d, num_layers=L, num_slots=M, dropout=0.5,
                           layer_dropout=0.5, recurrent_dropout=0.5,
                           attention_dropout=0.5, seed=2)
    rnn = keras.layers.RNN(cell, return_sequences=True)
    seq = np.concatenate(
        [np.ones((B, T, F), "float32"), np.ones((B, T, M), "float32")], -1
    )
    draws = []
    draw = cell._mask
    cell._mask = lambda *args: draws.append(args) or draw(*args)
    inference = np.asarray(rnn(seq, training=False))
    draws.clear()
    training = np.asarray(rnn(seq, training=True))
    # input and h~ masks of each layer: drawn once per call, not per step
    assert len(draws) == 2 * L
    assert [a[1] for a in draws] == [F, d, d, d]
    assert cell._dropout_mask is None  # reset after the call
    assert not np.allclose(training, inference)
    # The loop applies the cached masks at every step: the same as calling
    # the cell step by step with those masks.
    masks = cell.get_dropout_mask(seq[:, 0])
    states = cell.get_initial_state(B)
    outputs = []
    for t in range(T):
        out, states = cell(seq[:, t], states, training=True)
        outputs.append(np.asarray(out))
    _, looped, _ = rnn.inner_loop(seq, cell.get_initial_state(B), None, training=True)
    assert cell.get_dropout_mask(seq[:, 0]) is masks
    np.testing.assert_allclose(looped, np.stack(outputs, 1), rtol=1e-5, atol=1e-6)
    cell.reset_dropout_mask()
    config = cell.get_config()
    assert PRPNReadingCell.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="num_slots"):
        PRPNReadingCell(4, num_slots=0)
    with pytest.raises(ValueError, match="dropout"):
        PRPNReadingCell(4, dropout=1.2)


# --- predict network ----------------------------------------------------------
def test_memory_windows_hold_the_previous_states():
    rng = np.random.default_rng(9)
    B, T, M, d = 2, 5, 3, 2
    memory = rng.normal(size=(B, M, d)).astype("float32")
    seq = rng.normal(size=(B, T, d)).astype("float32")
    w = np.asarray(memory_windows(memory, seq, M))
    full = np.concatenate([memory, seq], 1)  # position t of the window = M + t
    for t in range(T):
        np.testing.assert_array_equal(w[:, t], full[:, t : t + M])  # h_{t-M}..h_{t-1}


def test_predict_network_forward_and_batch_norm_modes():
    rng = np.random.default_rng(10)
    B, T, M, d, out = 3, 5, 3, 4, 6
    predict = PRPNPredictNetwork(out, M, dropout=0.0, input_dropout=0.0,
                                 attention_dropout=0.0)
    hidden = rng.normal(size=(B, T, d)).astype("float32")
    memory = rng.normal(size=(B, M, d)).astype("float32")
    gates = rng.uniform(size=(B, T, M)).astype("float32")
    y = np.asarray(predict([hidden, memory, gates]))
    # NumPy: attention over windows, concat, dense, BN (moving stats), tanh
    att = predict.attention
    windows = np.asarray(memory_windows(memory, hidden, M))
    k = hidden @ np.asarray(att.kernel) + np.asarray(att.bias)
    z = np.einsum("btmd,btd->btm", windows, k) / np.sqrt(d)
    e = gates * np.exp(z - z.max(-1, keepdims=True))
    s = e / e.sum(-1, keepdims=True)
    summary = np.einsum("btm,btmd->btd", s, windows)
    x = np.concatenate([hidden, summary], -1) @ np.asarray(predict.projection.kernel)
    bn = predict.batch_norm
    x = (x - np.asarray(bn.moving_mean)) / np.sqrt(
        np.asarray(bn.moving_variance) + bn.epsilon
    )
    x = x * np.asarray(bn.gamma) + np.asarray(bn.beta)
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-4, atol=1e-5)
    y_train = np.asarray(predict([hidden, memory, gates], training=True))
    assert not np.allclose(y_train, y, atol=1e-3)
    config = predict.get_config()
    assert PRPNPredictNetwork.from_config(config).get_config() == config
