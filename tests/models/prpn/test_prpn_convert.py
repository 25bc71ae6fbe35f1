"""Official PRPN weights -> PRPNLanguageModel: the parameter count of the
paper model from the official shapes, and the converted model's inference
forward pass against an independent NumPy forward pass of the official
equations, over two consecutive windows with carried state."""

import numpy as np
import pytest

from keras_ordered.models.prpn import PRPNLanguageModel
from keras_ordered.models.prpn import from_official_state_dict
from keras_ordered.models.prpn.convert import official_architecture

pytestmark = pytest.mark.backends

BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def official_shapes(V, E, H, K, layers, P=None):
    """Names and shapes of the official PRPN state dict (commit 42212fb)."""
    P = H if P is None else P
    shapes = {
        "encoder.weight": (V, E),
        "decoder.weight": (V, E),
        "decoder.bias": (V,),
        "parser.gate.1.weight": (P, E, K + 1),
        "parser.gate.1.bias": (P,),
        "parser.gate.5.weight": (2, P // 2, 1),
        "parser.gate.5.bias": (2,),
    }
    for name in ("weight", "bias", "running_mean", "running_var"):
        shapes[f"parser.gate.2.{name}"] = (P,)
    shapes["parser.gate.2.num_batches_tracked"] = ()
    for j in range(layers):
        in_j = E if j == 0 else H
        rnn = f"reader.{j}.memory_rnn"
        shapes.update({
            f"{rnn}.ih.0.weight": (4 * H, in_j),
            f"{rnn}.ih.0.bias": (4 * H,),
            f"{rnn}.hh.0.weight": (4 * H, H),
            f"{rnn}.hh.0.bias": (4 * H,),
            f"{rnn}.ih.1.gamma": (4 * H,),
            f"{rnn}.ih.1.beta": (4 * H,),
            f"{rnn}.hh.1.gamma": (4 * H,),
            f"{rnn}.hh.1.beta": (4 * H,),
            f"{rnn}.c_norm.gamma": (H,),
            f"{rnn}.c_norm.beta": (H,),
            f"reader.{j}.projector_summ.1.weight": (H, in_j + H),
            f"reader.{j}.projector_summ.1.bias": (H,),
        })
    shapes.update({
        "predictor.projector_pred.1.weight": (H, H),
        "predictor.projector_pred.1.bias": (H,),
        "predictor.ffd.1.weight": (E, 2 * H),
        "predictor.ffd.1.bias": (E,),
    })
    for name in ("weight", "bias", "running_mean", "running_var"):
        shapes[f"predictor.ffd.2.{name}"] = (E,)
    shapes["predictor.ffd.2.num_batches_tracked"] = ()
    return shapes


def official_parameter_count(shapes):
    """`sum(p.numel() for p in model.parameters())`: buffers left out, the
    tied decoder weight counted once (it is the encoder's)."""
    return sum(
        int(np.prod(shape)) for name, shape in shapes.items()
        if not name.endswith(BUFFERS) and name != "decoder.weight"
    )


def test_ptb_preset_has_the_official_parameter_count():
    shapes = official_shapes(V=10000, E=800, H=1200, K=5, layers=2)
    official = official_parameter_count(shapes)
    # by hand: embedding + output bias, parser, 2 reading layers, predictor
    H, E, V = 1200, 800, 10000
    reader = lambda i: (4 * H * i + 4 * H + 4 * H * H + 4 * H + 4 * 4 * H
                        + 2 * H + H * (i + H) + H)
    by_hand = (V * E + V + (H * E * 6 + H + 2 * H + H + 2)
               + reader(E) + reader(H) + (H * H + H + E * 2 * H + E + 2 * E))
    assert official == by_hand == 43_603_202
    model = PRPNLanguageModel.from_preset("ptb", 10000)
    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    assert trainable == official
    # count_params() also counts the batch norms' moving statistics
    assert model.count_params() == official + 2 * (H + E)


# --- the official forward pass, in NumPy --------------------------------------
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def layer_norm(x, gamma, beta, eps=1e-6):
    mean = x.mean(-1, keepdims=True)
    std = x.std(-1, ddof=1, keepdims=True)  # torch.std: unbiased
    return gamma * (x - mean) / (std + eps) + beta


def batch_norm(x, sd, prefix, eps=1e-5):
    return ((x - sd[f"{prefix}.running_mean"])
            / np.sqrt(sd[f"{prefix}.running_var"] + eps)
            * sd[f"{prefix}.weight"] + sd[f"{prefix}.bias"])


def masked_softmax(logits, gate):
    e = np.exp(logits - logits.max(-1, keepdims=True)) * gate
    return e / (e.sum(-1, keepdims=True) + 1e-8)


def official_initial_state(sd, batch, slots, K):
    E = sd["encoder.weight"].shape[1]
    H = sd["reader.0.memory_rnn.hh.0.weight"].shape[1]
    layers = len([k for k in sd if k.endswith("memory_rnn.ih.0.weight")])
    zeros = np.zeros((batch, slots, H))
    return {
        "emb_last": np.zeros((batch, K, E)),
        "cum_gate": np.full((batch, slots), np.inf),
        "reader": [(zeros.copy(), zeros.copy()) for _ in range(layers)],
        "predictor": zeros.copy(),  # newest slot first
    }


def official_forward(sd, ids, state, slots, resolution, hard):
    """Logits `[B, T, V]`, distances `[B, T]` and the new state."""
    B, T = ids.shape
    H = sd["reader.0.memory_rnn.hh.0.weight"].shape[1]
    emb = sd["encoder.weight"][ids]
    # parsing network
    window = np.concatenate([state["emb_last"], emb], 1)
    W1 = sd["parser.gate.1.weight"]
    width = W1.shape[2]
    z = np.stack([
        np.einsum("oik,bki->bo", W1, window[:, t:t + width]) for t in range(T)
    ], 1) + sd["parser.gate.1.bias"]
    z = np.maximum(batch_norm(z, sd, "parser.gate.2"), 0.0)
    half = z.shape[-1] // 2
    W5 = sd["parser.gate.5.weight"][:, :, 0]
    b5 = sd["parser.gate.5.bias"]
    gate = sigmoid(z[..., :half] @ W5[0] + b5[0])
    gate_next = sigmoid(z[..., half:] @ W5[1] + b5[1])
    cum_gate = np.concatenate([state["cum_gate"], gate], 1)
    # gate_hat[b, t, s] = d_{t-s}, newest first
    gate_hat = np.stack(
        [cum_gate[:, slots - s: slots - s + T] for s in range(slots)], 2)

    def alpha(query):
        with np.errstate(invalid="ignore", over="ignore"):
            x = (query[:, :, None] - gate_hat) / resolution
            if hard:
                a = (np.clip(x * 2 + 1, -1, 1) + 1) / 2
            else:
                a = sigmoid(x * 10 + 5)
        return np.cumprod(a, axis=2)

    memory_gate, memory_gate_next = alpha(gate), alpha(gate_next)
    reader = [(h.copy(), c.copy()) for h, c in state["reader"]]
    pred_memory = state["predictor"].copy()
    outputs = []
    for t in range(T):
        x = emb[:, t]
        for j in range(len(reader)):
            mh, mc = reader[j]
            r = f"reader.{j}"
            key = (np.concatenate([x, mh[:, 0]], 1)
                   @ sd[f"{r}.projector_summ.1.weight"].T
                   + sd[f"{r}.projector_summ.1.bias"])
            logits = np.einsum("bsh,bh->bs", mh, key) / np.sqrt(H)
            a = masked_softmax(logits, memory_gate[:, t])
            sel_h = np.einsum("bs,bsh->bh", a, mh)
            sel_c = np.einsum("bs,bsh->bh", a, mc)
            rnn = f"{r}.memory_rnn"
            gates = layer_norm(
                x @ sd[f"{rnn}.ih.0.weight"].T + sd[f"{rnn}.ih.0.bias"],
                sd[f"{rnn}.ih.1.gamma"], sd[f"{rnn}.ih.1.beta"],
            ) + layer_norm(
                sel_h @ sd[f"{rnn}.hh.0.weight"].T + sd[f"{rnn}.hh.0.bias"],
                sd[f"{rnn}.hh.1.gamma"], sd[f"{rnn}.hh.1.beta"],
            )
            i, f, g, o = np.split(gates, 4, axis=1)
            c = sigmoid(f) * sel_c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(
                layer_norm(c, sd[f"{rnn}.c_norm.gamma"], sd[f"{rnn}.c_norm.beta"]))
            reader[j] = (np.concatenate([h[:, None], mh[:, :-1]], 1),
                         np.concatenate([c[:, None], mc[:, :-1]], 1))
            x = h
        key = (x @ sd["predictor.projector_pred.1.weight"].T
               + sd["predictor.projector_pred.1.bias"])
        logits = np.einsum("bsh,bh->bs", pred_memory, key) / np.sqrt(H)
        a = masked_softmax(logits, memory_gate_next[:, t])
        selected = np.einsum("bs,bsh->bh", a, pred_memory)
        pred_memory = np.concatenate([x[:, None], pred_memory[:, :-1]], 1)
        out = (np.concatenate([x, selected], 1) @ sd["predictor.ffd.1.weight"].T
               + sd["predictor.ffd.1.bias"])
        out = np.tanh(batch_norm(out, sd, "predictor.ffd.2"))
        outputs.append(out @ sd["decoder.weight"].T + sd["decoder.bias"])
    new_state = {
        "emb_last": window[:, -state["emb_last"].shape[1]:],
        "cum_gate": cum_gate[:, -slots:],
        "reader": reader,
        "predictor": pred_memory,
    }
    official_forward.memory_gates = (memory_gate, memory_gate_next)
    return np.stack(outputs, 1), gate, new_state


def random_state_dict(rng, V=11, E=6, H=8, K=2, layers=2):
    sd = {}
    for name, shape in official_shapes(V, E, H, K, layers).items():
        if name.endswith("running_var"):
            sd[name] = rng.uniform(0.5, 2.0, shape)
        elif name.endswith("num_batches_tracked"):
            sd[name] = np.array(100)
        elif name.endswith("gamma") or name.endswith("2.weight"):
            sd[name] = rng.uniform(0.5, 1.5, shape)
        else:
            sd[name] = rng.normal(0.0, 0.5, shape)
    sd["decoder.weight"] = sd["encoder.weight"]
    # spread the distances over (0, 1), so that the hard gates open and close
    sd["parser.gate.5.weight"] *= 4.0
    return {k: np.asarray(v, "float32") for k, v in sd.items()}


@pytest.mark.parametrize("hard", [True, False])
def test_converted_model_matches_the_official_forward_pass(hard):
    rng = np.random.default_rng(0)
    sd = random_state_dict(rng)
    S, K, B = 4, 2, 3
    words = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9)]
    model = from_official_state_dict(sd, vocabulary=words, num_slots=S,
                                     hard_gates=hard)
    assert (model.hidden_dim, model.embedding_dim, model.lookback,
            model.num_layers, model.num_slots) == (8, 6, 2, 2, S)
    reference = {k: v.astype("float64") for k, v in sd.items()}
    ids = rng.integers(0, 11, (B, 9)).astype("int32")
    state = model.initial_state(B)
    official_state = official_initial_state(reference, B, S, K)
    gates_seen = []
    for window in (ids[:, :5], ids[:, 5:]):
        logits, distances, *state = model([window, *state], training=False)
        expected_logits, expected_d, official_state = official_forward(
            reference, window, official_state, S, 0.1, hard)
        np.testing.assert_allclose(distances, expected_d, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
        state = [np.asarray(s) for s in state]
        gates_seen += [g[:, 1:] for g in official_forward.memory_gates]
    # the carried state is the official one (tapes stored oldest first)
    for j in range(2):
        h, c = official_state["reader"][j]
        np.testing.assert_allclose(state[3 + 2 * j], h[:, ::-1], rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(state[4 + 2 * j], c[:, ::-1], rtol=1e-5,
                                   atol=1e-5)
    np.testing.assert_allclose(state[1], official_state["cum_gate"], rtol=1e-5)
    # the windows exercise the gates: slots closed, open and in between
    # (slot 0 left out: it is 1 or sigmoid(5) by construction)
    g = np.concatenate([x.ravel() for x in gates_seen])
    assert np.any(g < 0.01) and np.any(g > 0.99)
    assert np.any((g > 0.05) & (g < 0.95))


def test_converter_reads_the_architecture_and_refuses_mismatches():
    rng = np.random.default_rng(1)
    sd = random_state_dict(rng, V=9, E=4, H=6, K=3, layers=3)
    assert official_architecture(sd) == {
        "vocabulary_size": 9, "embedding_dim": 4, "hidden_dim": 6,
        "num_layers": 3, "parser_units": 6, "lookback": 3,
    }
    with pytest.raises(ValueError, match="vocabulary has 2 words"):
        from_official_state_dict(sd, vocabulary=["<eos>", "<unk>"])
    untied = dict(sd, **{"decoder.weight": sd["encoder.weight"] + 1.0})
    with pytest.raises(ValueError, match="tied"):
        from_official_state_dict(untied)
    missing = {k: v for k, v in sd.items() if k != "predictor.ffd.1.bias"}
    with pytest.raises(ValueError, match="predictor.ffd.1.bias"):
        from_official_state_dict(missing)
    other = PRPNLanguageModel(9, embedding_dim=4, hidden_dim=6, num_layers=2,
                              num_slots=4, lookback=3)
    with pytest.raises(ValueError, match="differ from the checkpoint"):
        from_official_state_dict(sd, model=other)
    # loading into an existing model of the right shape fills it
    model = PRPNLanguageModel(9, embedding_dim=4, hidden_dim=6, num_layers=3,
                              num_slots=4, lookback=3)
    assert from_official_state_dict(sd, model=model) is model
    np.testing.assert_array_equal(model.embedding.embeddings,
                                  sd["encoder.weight"])
