"""The ON-LSTM language model: regularisers, carried state, converter,
serialisation, learning, and the recipe end to end."""

import itertools
import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import require_data
from harness import to_numpy
from harness import LM_VOCAB as VOCAB
from harness import tiny_onlstm_lm as tiny_model
from harness import gradients
from keras_ordered.layers import ActivationRegularization
from keras_ordered.layers import EmbeddingDropout
from keras_ordered.layers import LockedDropout
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models.onlstm import from_official_state_dict
from keras_ordered.models.onlstm import get_preset
from keras_ordered.training import BPTTBatches
from keras_ordered.training.callbacks import NTASGD

pytestmark = pytest.mark.backends

# --- regularisers -----------------------------------------------------------
def test_locked_dropout_shares_one_mask_over_time():
    x = np.ones((4, 9, 6), "float32")
    y = to_numpy(LockedDropout(0.5, seed=1)(x, training=True))
    assert set(np.unique(y)) == {0.0, 2.0}
    np.testing.assert_array_equal(y, np.repeat(y[:, :1], 9, axis=1))
    np.testing.assert_array_equal(LockedDropout(0.5)(x, training=False), x)
    with pytest.raises(ValueError, match="rate"):
        LockedDropout(1.5)


def test_embedding_dropout_drops_whole_words_and_ties_softmax():
    layer = EmbeddingDropout(50, 4, rate=0.5, seed=2)
    ids = np.array([[3, 3, 7, 3, 7, 9]])
    out = to_numpy(layer(ids, training=True))
    table = to_numpy(layer.embeddings)
    for word in (3, 7, 9):
        rows = out[0, ids[0] == word]
        dropped = np.allclose(rows, 0)
        if not dropped:
            np.testing.assert_allclose(rows, np.tile(2 * table[word], (len(rows), 1)),
                                       rtol=1e-6)
        # every occurrence of a word is dropped or kept together
        assert dropped or np.all(np.abs(rows).sum(-1) > 0)
    np.testing.assert_allclose(layer(ids), table[ids])
    vectors = np.random.default_rng(0).normal(size=(1, 2, 4)).astype("float32")
    logits = to_numpy(layer(vectors, reverse=True))
    np.testing.assert_allclose(logits, vectors @ table.T + to_numpy(layer.output_bias),
                               rtol=1e-5, atol=1e-6)


def test_activation_regularization_values():
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(2, 5, 3)).astype("float32")
    dropped = rng.normal(size=(2, 5, 3)).astype("float32")
    layer = ActivationRegularization(alpha=2.0, beta=1.0)
    layer([raw, dropped], training=True)
    expected = 2.0 * np.mean(dropped**2) + np.mean((raw[:, 1:] - raw[:, :-1]) ** 2)
    np.testing.assert_allclose(float(sum(layer.losses)), expected, rtol=1e-5)
    layer([raw, dropped], training=False)
    assert not layer.losses
    # The official ON-LSTM code penalises the raw output (the model's default).
    official = ActivationRegularization(alpha=2.0, beta=1.0, ar_input="raw")
    official([raw, dropped], training=True)
    expected = 2.0 * np.mean(raw**2) + np.mean((raw[:, 1:] - raw[:, :-1]) ** 2)
    np.testing.assert_allclose(float(sum(official.losses)), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="ar_input"):
        ActivationRegularization(ar_input="both")
    model = tiny_model()
    assert model.ar_input == "raw"
    assert model.get_layer("activation_regularization").ar_input == "raw"


# --- BPTT batching and carried state ------------------------------------------
def test_bptt_windows_are_contiguous_and_cover_the_stream():
    ids = np.arange(2003)
    batches = BPTTBatches(ids, 4, 20, variable_length=True, seed=5)
    streams = batches.streams
    for epoch in (0, 1):
        windows = list(batches.windows(epoch))
        assert len(windows) == len(batches)
        x = np.concatenate([w[0]["token_ids"] for w in windows], 1)
        y = np.concatenate([w[1] for w in windows], 1)
        np.testing.assert_array_equal(x, streams[:, :-1])
        np.testing.assert_array_equal(y, streams[:, 1:])
        assert windows[0][0]["reset"].min() == 1
        assert all(w[0]["reset"].max() == 0 for w in windows[1:])
        for (x_w, _y) in windows:
            np.testing.assert_allclose(
                x_w["lr_scale"], x_w["token_ids"].shape[1] / 20
            )
    lengths0, lengths1 = batches.window_lengths(0), batches.window_lengths(1)
    assert lengths0 != lengths1 and lengths0 == batches.window_lengths(0)
    assert min(lengths0) >= 4  # N(len, 5) clipped at 5, rescaled by ~1 %
    # No window soaks up the rounding remainder (its lr_scale would explode).
    assert max(lengths0) <= 20 + 6 * 5


def test_stream_runs_epochs_back_to_back_with_their_own_layouts():
    batches = BPTTBatches(np.arange(2003), 4, 20, seed=5)
    got = [x["token_ids"] for x, _ in itertools.islice(
        iter(batches.stream(1, steps_per_epoch=3)), 7)]
    expected = [w[0]["token_ids"] for e in (1, 2, 3) for w in list(batches.windows(e))[:3]]
    for a, b in zip(got, expected[:7]):
        np.testing.assert_array_equal(a, b)
    resumed = [x["token_ids"] for x, _ in batches.dataset(2, start_batch=1, steps_per_epoch=3)]
    assert len(resumed) == 2
    np.testing.assert_array_equal(resumed[0], expected[4])


def test_state_carried_across_windows_equals_one_window():
    model = tiny_model()
    ids = np.random.default_rng(4).integers(0, len(VOCAB), (2, 12))
    whole = model([ids, *model.initial_state(2)])
    first = model([ids[:, :5], *model.initial_state(2)])
    second = model([ids[:, 5:], *[to_numpy(s) for s in first[1:]]])
    np.testing.assert_allclose(
        np.concatenate([first[0], second[0]], 1), whole[0], atol=1e-5
    )
    for a, b in zip(second[1:], whole[1:]):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_gradients_reach_every_weight_of_the_language_model():
    model = tiny_model()
    ids = np.random.default_rng(5).integers(0, len(VOCAB), (2, 9))

    def loss():
        logits, *_ = model([ids[:, :-1], *model.initial_state(2)],
                           training=True)
        return model._token_loss(ids[:, 1:], logits) + sum(model.losses)

    grads = gradients(loss, model.trainable_weights)
    names = [w.path for w in model.trainable_weights]
    assert any("output_bias" in n for n in names)
    assert sum("onlstm" in n for n in names) == 6
    for name, grad in zip(names, grads):
        assert grad is not None, name
        assert float(np.linalg.norm(grad)) > 0, name


def test_distances_for_sentences():
    model = tiny_model()
    result = model.sentence_distances([["w1", "w2", "w3"], ["w4"], ["zzz", "w5"]])
    assert sorted(result) == sorted(model.distance_names)
    assert model.default_distance == "layer2/forget"
    for name, values in result.items():
        assert [len(v) for v in values] == [3, 1, 2]
        assert all(np.all((v >= 0) & (v <= 1)) for v in values)
    # A sentence alone gives the same distances as inside a padded batch.
    alone = model.sentence_distances([["w4"]])
    np.testing.assert_allclose(alone["layer1/forget"][0],
                               result["layer1/forget"][1], atol=1e-6)


def test_distances_of_passes_cut_by_length_are_each_sentences_own():
    # Lengths with a long tail: the passes are cut by `length_batches`,
    # not in equal batches; each sentence's distances are its own, in the
    # order given.
    model = tiny_model()
    rng = np.random.default_rng(3)
    lengths = [2, 9, 3, 3, 1, 2, 3, 2]
    sentences = [[f"w{int(w)}" for w in rng.integers(1, 9, size=n)]
                 for n in lengths]
    result = model.sentence_distances(sentences, batch_size=3)
    for sentence, values in zip(sentences, result["layer2/forget"]):
        alone = model.sentence_distances([sentence])["layer2/forget"][0]
        np.testing.assert_allclose(values, alone, atol=1e-6)


def test_distances_leave_out_the_closing_eos_and_equal_reading_it(
        monkeypatch):
    # A left-to-right model reads "<eos> w_1 .. w_n", one step less than
    # "<eos> w_1 .. w_n <eos>"; the distances are those of the longer read.
    model = tiny_model()
    sentence = ["w1", "w2", "w3", "w4"]
    widths = []
    real = model._distances_for_ids

    def spy(ids, names=None):
        widths.append(np.shape(ids)[1])
        return real(ids, names)

    monkeypatch.setattr(model, "_distances_for_ids", spy)
    got = model.sentence_distances([sentence])
    from keras_ordered import backend

    assert widths == [backend.compiled_width(len(sentence) + 1, 16)]
    eos = model.vocabulary.index("<eos>")
    ids = np.array([[eos, *model.token_ids(sentence), eos]], "int32")
    full = model.syntactic_distances(ids)
    for name in model.distance_names:
        np.testing.assert_allclose(got[name][0], full[name][0, 1:-1],
                                   atol=1e-6)


# --- NT-ASGD ----------------------------------------------------------------
def test_ntasgd_triggers_non_monotonically_and_averages():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    callback = NTASGD(nonmono=2, verbose=0)
    callback.set_model(model)
    for epoch, loss in enumerate([5.0, 4.0, 3.0, 3.5, 3.2]):
        callback.on_epoch_end(epoch, {"val_loss": loss})
        assert not callback.averaging
    # 3.1 is worse than min(history[:-2]) = min(5, 4, 3) = 3.0: switch.
    callback.on_epoch_end(5, {"val_loss": 3.1})
    assert callback.averaging
    kernel = model.trainable_weights[0]
    seen = []
    for value in (1.0, 2.0, 6.0):
        kernel.assign(np.full((2, 1), value, "float32"))
        callback.on_train_batch_end(0)
        seen.append(value)
    callback.on_test_begin()
    np.testing.assert_allclose(kernel.numpy(), np.mean(seen))
    callback.on_test_end()
    np.testing.assert_allclose(kernel.numpy(), 6.0)
    callback.finalize()
    np.testing.assert_allclose(kernel.numpy(), 3.0)


def test_ntasgd_average_from_epoch_starts_at_that_epoch_at_the_latest():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    callback = NTASGD(nonmono=5, verbose=0, average_from_epoch=3)
    callback.set_model(model)
    for epoch in (0, 1):  # epochs 1 and 2
        callback.on_epoch_begin(epoch)
        assert not callback.averaging
        callback.on_epoch_end(epoch, {"val_loss": 5.0 - epoch})
    callback.on_epoch_begin(2)
    assert callback.averaging and callback.count == 0
    with pytest.raises(ValueError, match="average_from_epoch"):
        NTASGD(average_from_epoch=0)


# --- official weights ---------------------------------------------------------
def _official_forward(state, ids, chunk, weight_drop):
    """NumPy forward pass in the official layout (rows, two biases, eval
    scaling of the recurrent weights by 1 - weight_drop)."""
    emb = state["encoder.weight"][ids]
    x = emb
    distances = []
    layer = 0
    while f"rnn.cells.{layer}.ih.0.weight" in state:
        wi, bi = state[f"rnn.cells.{layer}.ih.0.weight"], state[f"rnn.cells.{layer}.ih.0.bias"]
        wh, bh = state[f"rnn.cells.{layer}.hh.weight"], state[f"rnn.cells.{layer}.hh.bias"]
        hidden = wh.shape[1]
        n = hidden // chunk
        h = np.zeros((ids.shape[0], hidden))
        c = np.zeros((ids.shape[0], hidden))
        outs, dfs, dis = [], [], []
        for t in range(ids.shape[1]):
            gates = x[:, t] @ wi.T + bi + h @ (wh * (1 - weight_drop)).T + bh
            cin = 1.0 - np.cumsum(_softmax(gates[:, :n]), -1)
            cforget = np.cumsum(_softmax(gates[:, n : 2 * n]), -1)
            dfs.append(1.0 - cforget.sum(-1) / n)
            dis.append(cin.sum(-1) / n)
            rest = gates[:, 2 * n :].reshape(-1, 4 * n, chunk)
            out, cell, ingate, forget = np.split(rest, 4, axis=1)
            sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
            cin, cforget = cin[:, :, None], cforget[:, :, None]
            overlap = cforget * cin
            forget = sig(forget) * overlap + (cforget - overlap)
            ingate = sig(ingate) * overlap + (cin - overlap)
            c = (forget * c.reshape(-1, n, chunk) + ingate * np.tanh(cell)).reshape(-1, hidden)
            h = (sig(out).reshape(-1, hidden)) * np.tanh(c)
            outs.append(h)
        x = np.stack(outs, 1)
        distances.append((np.stack(dfs, 1), np.stack(dis, 1)))
        layer += 1
    logits = x @ state["decoder.weight"].T + state["decoder.bias"]
    return logits, distances


def _softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_official_state_dict_converter_matches_official_forward():
    rng = np.random.default_rng(6)
    V, emb, hidden, chunk = 16, 6, [10, 6], 2
    state = {"encoder.weight": rng.normal(0, 0.3, (V, emb))}
    state["decoder.weight"] = state["encoder.weight"]
    state["decoder.bias"] = rng.normal(0, 0.3, V)
    inputs = emb
    for l, h in enumerate(hidden):
        rows = 4 * h + 2 * (h // chunk)
        state[f"rnn.cells.{l}.ih.0.weight"] = rng.normal(0, 0.5, (rows, inputs))
        state[f"rnn.cells.{l}.ih.0.bias"] = rng.normal(0, 0.5, rows)
        state[f"rnn.cells.{l}.hh.weight"] = rng.normal(0, 0.5, (rows, h))
        state[f"rnn.cells.{l}.hh.bias"] = rng.normal(0, 0.5, rows)
        inputs = h
    state = {k: v.astype("float32") for k, v in state.items()}
    model = from_official_state_dict(state, vocabulary=VOCAB, weight_drop=0.45)
    assert model.chunk_size == chunk and model.hidden_dims == hidden
    ids = rng.integers(0, V, (3, 7))
    logits, *_ = model([ids, *model.initial_state(3)], training=False)
    ref_logits, ref_distances = _official_forward(state, ids, chunk, 0.45)
    np.testing.assert_allclose(logits, ref_logits, atol=1e-5)
    distances = model.syntactic_distances(ids)
    for l, (ref_df, ref_di) in enumerate(ref_distances):
        np.testing.assert_allclose(distances[f"layer{l + 1}/forget"], ref_df, atol=1e-5)
        np.testing.assert_allclose(distances[f"layer{l + 1}/input"], ref_di, atol=1e-5)
    # By default (official DropConnect scaling) the kernels load as they
    # are and the model scales them at inference; a model with inverted
    # scaling gets them folded: the same outputs either way.
    np.testing.assert_allclose(model.rnn_layers[0].cell.recurrent_kernel,
                               state["rnn.cells.0.hh.weight"].T, rtol=1e-6)
    inverted = from_official_state_dict(state, vocabulary=VOCAB,
                                        weight_drop=0.45,
                                        weight_drop_scaling="inverted")
    np.testing.assert_allclose(
        inverted.rnn_layers[0].cell.recurrent_kernel,
        0.55 * state["rnn.cells.0.hh.weight"].T, rtol=1e-6)
    logits_inverted, *_ = inverted([ids, *inverted.initial_state(3)],
                                   training=False)
    np.testing.assert_allclose(logits_inverted, ref_logits, atol=1e-5)
    bad = dict(state)
    bad["decoder.weight"] = state["decoder.weight"] + 1
    with pytest.raises(ValueError, match="tied"):
        from_official_state_dict(bad)
    with pytest.raises(ValueError, match="encoder.weight"):
        from_official_state_dict({"foo": np.zeros(2)})


# --- serialisation ------------------------------------------------------------
def test_keras_file_round_trip_reproduces_outputs_and_distances(harness):
    model = tiny_model()
    ids = np.random.default_rng(7).integers(0, len(VOCAB), (2, 6))
    # The logits and every carried state, exactly.
    restored = harness.run_model_saving_test(
        model, [ids, *model.initial_state(2)], filename="lm.keras")
    assert isinstance(restored, ONLSTMLanguageModel)
    assert restored.vocabulary == VOCAB
    for name in model.distance_names:
        np.testing.assert_array_equal(model.syntactic_distances(ids)[name],
                                      restored.syntactic_distances(ids)[name])
    assert ONLSTMLanguageModel.from_config(model.get_config()).count_params() == \
        model.count_params()


def test_bad_configuration_errors():
    with pytest.raises(ValueError, match="Unknown ON-LSTM preset"):
        get_preset("huge")
    with pytest.raises(ValueError, match="tie_weights"):
        ONLSTMLanguageModel(VOCAB, embedding_dim=8, hidden_dims=[12, 10], chunk_size=2)
    with pytest.raises(ValueError, match="<unk>"):
        ONLSTMLanguageModel(["<eos>", "a"], embedding_dim=4, hidden_dims=[4], chunk_size=2)


def test_official_initialization_is_pytorchs_linear_default(harness):
    # The official cell: nn.Linear(input, gates) + nn.Linear(hidden, gates),
    # each weight and bias uniform in +-1/sqrt(fan-in); the two biases are
    # one here, so it is the sum of the two draws.
    keras.utils.set_random_seed(3)
    vocabulary = VOCAB + [f"w{i}" for i in range(40)]
    model = ONLSTMLanguageModel(vocabulary, embedding_dim=30,
                                hidden_dims=[80, 30], chunk_size=10,
                                initialization="official")
    for layer, fan_in, units in zip(model.rnn_layers, (30, 80), (80, 30)):
        cell = layer.cell
        kernel, recurrent, bias = (to_numpy(w) for w in (
            cell.kernel, cell.recurrent_kernel, cell.bias))
        for weight, bound in ((kernel, 1 / np.sqrt(fan_in)),
                              (recurrent, 1 / np.sqrt(units))):
            assert bound * 0.98 < np.abs(weight).max() <= bound
            # uniform: variance bound^2 / 3
            assert np.var(weight) == pytest.approx(bound ** 2 / 3, rel=0.1)
        bias_bound = 1 / np.sqrt(fan_in) + 1 / np.sqrt(units)
        assert np.abs(bias).max() <= bias_bound
        assert np.var(bias) == pytest.approx(
            1 / (3 * fan_in) + 1 / (3 * units), rel=0.25)
    # The embedding as in the official code, +-0.1, whatever the choice.
    embedding = to_numpy(model.embedding.embeddings)
    assert 0.098 < np.abs(embedding).max() <= 0.1
    # The choice travels with the model.
    restored = harness.run_model_saving_test(
        model, [np.zeros((1, 3), "int32"), *model.initial_state(1)],
        filename="official.keras")
    assert restored.initialization == "official"
    assert restored.rnn_layers[0].cell.bias_initializer.fan_in == [30, 80]

    # The default stays the Keras layers' habit.
    default = ONLSTMLanguageModel(vocabulary, embedding_dim=30,
                                  hidden_dims=[80, 30], chunk_size=10)
    assert default.initialization == "keras"
    cell = default.rnn_layers[0].cell
    np.testing.assert_array_equal(to_numpy(cell.bias), 0.0)
    recurrent = to_numpy(cell.recurrent_kernel)  # orthogonal rows
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(80), atol=1e-5)
    with pytest.raises(ValueError, match="initialization"):
        ONLSTMLanguageModel(VOCAB, initialization="pytorch")


def test_paper_preset_has_about_25m_parameters():
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9998)]
    model = ONLSTMLanguageModel.from_preset("ptb", vocabulary)
    assert 24e6 < model.count_params() < 26e6


# --- learning -----------------------------------------------------------------
@pytest.mark.trains
@pytest.mark.slow
def test_language_model_overfits_a_tiny_corpus():
    rng = np.random.default_rng(8)
    sentences = [[2 + int(w) for w in rng.integers(0, 14, rng.integers(3, 7))]
                 for _ in range(6)]
    stream = np.array([w for _ in range(40) for s in sentences for w in s + [0]])
    counts = np.bincount(stream, minlength=len(VOCAB)) / len(stream)
    unigram_ppl = float(np.exp(-np.sum(counts[counts > 0] * np.log(counts[counts > 0]))))
    model = tiny_model(dropout_output=0.0, dropout_hidden=0.0, dropout_input=0.0,
                       weight_drop=0.0, ar_alpha=0.0, tar_beta=0.0)
    model.configure_bptt(8, 8, clip_norm=1.0)
    model.compile(optimizer=keras.optimizers.Adam(0.02))
    data = BPTTBatches(stream, 8, 12, variable_length=False)
    history = model.fit(data.dataset(), epochs=15, verbose=0, shuffle=False)
    final = history.history["perplexity"][-1]
    assert final < unigram_ppl / 3, (final, unigram_ppl)


# --- the recipe ---------------------------------------------------------------
def _recipe_args(tmp_path, *extra):
    data = require_data("ptb", "train.txt")
    return [
        "--preset", "tiny", "--data", os.path.dirname(data), "--max-lines", "200",
        "--steps-per-epoch", "2", "--eval-steps", "2", "--epochs", "1",
        "--output", str(tmp_path), "--verbose", "0", *extra,
    ]


@pytest.mark.slow
def test_recipe_runs_two_steps_on_ptb(tmp_path, capsys):
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.training.tasks.language_model import main

    code = main(_recipe_args(tmp_path), model_class=ONLSTMLanguageModel,
                get_preset=get_preset, presets=PRESETS, description="t",
                default_output=str(tmp_path))
    assert code == 0
    results = json.load(open(os.path.join(tmp_path, "results.json")))
    assert np.isfinite(results["valid_perplexity"]) and np.isfinite(results["test_perplexity"])
    assert "Test perplexity" in capsys.readouterr().out
    assert os.listdir(os.path.join(tmp_path, "logs"))
    restored = keras.saving.load_model(os.path.join(tmp_path, "model.keras"))
    assert restored.sentence_distances([["the", "cat"]])["layer1/forget"][0].shape == (2,)


@pytest.mark.slow
def test_recipe_errors_are_clear(tmp_path, capsys):
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.training.tasks.language_model import main

    kwargs = dict(model_class=ONLSTMLanguageModel, get_preset=get_preset,
                  presets=PRESETS, description="t", default_output=str(tmp_path))
    assert main(["--preset", "huge", "--data", str(tmp_path)], **kwargs) == 2
    assert "Unknown ON-LSTM preset" in capsys.readouterr().err
    code = main(["--preset", "tiny", "--data", str(tmp_path / "nowhere")], **kwargs)
    assert code == 2
    assert "--data" in capsys.readouterr().err
    # A backup written by another configuration is refused.
    assert main(_recipe_args(tmp_path / "run"), **kwargs) == 0
    meta = os.path.join(tmp_path, "run", "backup", "backup.json")
    assert os.path.exists(meta)
    code = main(_recipe_args(tmp_path / "run", "--bptt", "5", "--epochs", "2"), **kwargs)
    assert code == 2
    assert "another configuration" in capsys.readouterr().err


@pytest.mark.slow
def test_killed_run_resumes_at_the_window_it_stopped(tmp_path, capsys, monkeypatch):
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.training import runner
    from keras_ordered.training.tasks import language_model

    class Crash(runner.LearningRateLogger):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                raise RuntimeError("simulated crash")

    kwargs = dict(model_class=ONLSTMLanguageModel, get_preset=get_preset,
                  presets=PRESETS, description="t", default_output=str(tmp_path))
    args = _recipe_args(tmp_path, "--steps-per-epoch", "6", "--save-freq", "1",
                        "--skip-test")
    monkeypatch.setattr(runner, "LearningRateLogger", Crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        language_model.main(args, **kwargs)
    meta = json.load(open(os.path.join(tmp_path, "backup", "backup.json")))
    # Windows 0 and 1 finished and were backed up; window 2 crashed.
    assert (meta["epoch"], meta["next_batch"]) == (0, 2)
    monkeypatch.setattr(runner, "LearningRateLogger", Crash.__mro__[1])
    capsys.readouterr()
    assert language_model.main(args, **kwargs) == 0
    out = capsys.readouterr().out
    assert f"Resuming from epoch 1, window {meta['next_batch']} of 6" in out
    assert os.path.exists(os.path.join(tmp_path, "model.keras"))


@pytest.mark.tensorflow_only
def test_sentence_batches_read_each_sentence_from_zero_state():
    from keras_ordered.training import SentenceBatches

    ids = np.array([5, 6, 0, 7, 0, 8, 9, 10, 0, 11, 0], "int32")
    batches = SentenceBatches(ids, 2, eos_id=0, shuffle=False)
    assert len(batches) == 2
    (x, y), = list(batches.windows(0))[:1]
    np.testing.assert_array_equal(x["token_ids"], [[0, 5, 6], [0, 7, 0]])
    np.testing.assert_array_equal(y, [[5, 6, 0], [7, 0, 0]])
    np.testing.assert_array_equal(x["loss_mask"], [[1, 1, 1], [1, 1, 0]])
    assert x["reset"].min() == 1
    # The masked loss ignores padding: a model trained sentence by sentence.
    model = tiny_model()
    model.configure_bptt(2, 2)
    model.compile(optimizer="sgd")
    logs = model.evaluate(batches.dataset(0), verbose=0, return_dict=True)
    assert np.isfinite(logs["loss"])


def test_mixed_bfloat16_keeps_logits_and_recurrence_state_in_float32():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mixed = tiny_model()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    reference = tiny_model()
    reference.set_weights(mixed.get_weights())
    assert mixed.rnn_layers[0].cell.compute_dtype == "bfloat16"
    # The vocabulary projection runs in float32 under the mixed policy, its
    # gradient products in bfloat16; the loss is the fused one.
    assert mixed.embedding.compute_dtype == "float32"
    assert mixed.embedding.reverse_gradient_dtype == "bfloat16"
    assert reference.embedding.reverse_gradient_dtype is None
    assert ONLSTMLanguageModel.fused_token_loss
    ids = np.random.default_rng(0).integers(0, len(VOCAB), (3, 9)).astype("int32")
    inputs = [ids, *mixed.initial_state(3)]
    logits = to_numpy(mixed(inputs)[0])
    expected = to_numpy(reference(inputs)[0])
    assert logits.dtype == np.float32
    # bfloat16 products only: the logits stay within bfloat16 rounding.
    np.testing.assert_allclose(logits, expected, atol=0.05)


def _bfloat16(array):
    import ml_dtypes

    return to_numpy(array, "float32").astype(ml_dtypes.bfloat16)


@pytest.mark.tensorflow_only
def test_tied_projection_backward_products_in_the_gradient_dtype():
    rng = np.random.default_rng(3)
    layer = EmbeddingDropout(
        23, 8, reverse_gradient_dtype="bfloat16", dtype="float32"
    )
    layer.build()
    matrix = rng.normal(size=(23, 8)).astype("float32")
    layer.embeddings.assign(matrix)
    x = tf.constant(rng.normal(size=(2, 5, 8)).astype("float32"))
    upstream = rng.normal(size=(2, 5, 23)).astype("float32")
    with tf.GradientTape() as tape:
        tape.watch(x)
        logits = layer(x, reverse=True)
        weighted = tf.reduce_sum(logits * upstream)
    d_x, d_matrix, d_bias = tape.gradient(
        weighted, [x, layer.embeddings, layer.output_bias]
    )
    # Forward in float32: the plain product, not rounded.
    np.testing.assert_allclose(
        logits, to_numpy(x) @ matrix.T, rtol=1e-5, atol=1e-6
    )
    assert logits.dtype == tf.float32 and d_x.dtype == tf.float32
    # Backward: the products of bfloat16-rounded operands (float32 sums),
    # each result rounded to bfloat16.
    up16, m16 = _bfloat16(upstream), _bfloat16(matrix)
    x16 = _bfloat16(x)
    expected_d_x = up16.astype("float32") @ m16.astype("float32")
    expected_d_matrix = np.einsum(
        "btv,btd->vd", up16.astype("float32"), x16.astype("float32")
    )
    np.testing.assert_allclose(
        d_x, _bfloat16(expected_d_x).astype("float32"), rtol=1e-2, atol=1e-2
    )
    np.testing.assert_allclose(
        d_matrix, _bfloat16(expected_d_matrix).astype("float32"),
        rtol=1e-2, atol=1e-2,
    )
    # They are rounded: not the float32 gradient.
    exact_d_x = upstream @ matrix
    assert np.abs(to_numpy(d_x) - exact_d_x).max() > 1e-4
    np.testing.assert_allclose(d_x, exact_d_x, rtol=0.05, atol=0.05)
    np.testing.assert_allclose(d_bias, upstream.sum((0, 1)), rtol=1e-5)
    config = layer.get_config()
    assert config["reverse_gradient_dtype"] == "bfloat16"
    assert EmbeddingDropout.from_config(config).reverse_gradient_dtype == (
        "bfloat16"
    )
    with pytest.raises(ValueError, match="reverse_gradient_dtype"):
        EmbeddingDropout(23, 8, reverse_gradient_dtype="int32")


def test_distances_of_lower_layers_do_not_run_the_layers_above():
    # Three layers; the distances of layer 2 need layers 1 and 2 only. The
    # top layer, made to fail, is never run, and the distances equal the
    # whole pass's.
    def three_layers():
        return ONLSTMLanguageModel(
            vocabulary_size=len(VOCAB), embedding_dim=8,
            hidden_dims=[12, 12, 8], chunk_size=4, vocabulary=VOCAB, seed=0)

    sentences = [["the", "cat", "sat"], ["a", "dog"]]
    reference = three_layers()
    whole = reference.sentence_distances(sentences)
    assert len(whole) == 6

    def fail(*args, **kwargs):
        raise AssertionError("the top layer ran")

    model = three_layers()
    model.set_weights(reference.get_weights())
    model.rnn_layers[2].call = fail
    lower = model.sentence_distances(
        sentences, names=["layer2/forget", "layer1/input"])
    assert sorted(lower) == ["layer1/input", "layer2/forget"]
    for name in lower:
        for a, b in zip(lower[name], whole[name]):
            np.testing.assert_allclose(a, b, atol=1e-6)
    with pytest.raises(AssertionError, match="the top layer ran"):
        model.sentence_distances(sentences, names=["layer3/forget"])
    with pytest.raises(ValueError, match="no distance 'layer4/forget'"):
        model.sentence_distances(sentences, names=["layer4/forget"])
    with pytest.raises(ValueError, match="has 3 layers"):
        model.syntactic_distances(np.zeros((1, 3), "int32"), layers=4)
