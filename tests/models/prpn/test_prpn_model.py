"""The PRPN language model: structure, carried state across windows,
gradients, serialisation, learning, distances for parsing, presets."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import require_data
from harness import to_numpy
from harness import LM_VOCAB as VOCAB
from harness import random_ids as harness_random_ids
from harness import tiny_prpn_lm as tiny_model
from keras_ordered.models.prpn import PRESETS
from keras_ordered.models.prpn import PRPNLanguageModel
from keras_ordered.models.prpn import get_preset
from keras_ordered.training import BPTTBatches

pytestmark = pytest.mark.backends

def random_ids(batch, time, seed=0):
    return harness_random_ids(batch, time, len(VOCAB), seed=seed)


def test_structure_and_initial_state():
    model = tiny_model()
    config = get_preset("tiny")["model"]
    M, Q, d = config["num_slots"], config["lookback"], config["hidden_dim"]
    state = model.initial_state(3)
    assert [s.shape for s in state] == [
        (3, Q, config["embedding_dim"]), (3, M), (3, M),
        (3, M, d), (3, M, d), (3, M, d), (3, M, d),
    ]
    assert all(s.dtype == np.float32 and not s.any() for s in state)
    assert model.state_names[:3] == ["embedding_history", "distance_history",
                                     "distance_mask"]
    outputs = model([random_ids(3, 5), *state], training=True)
    assert tuple(outputs[0].shape) == (3, 5, len(VOCAB))
    assert keras.backend.standardize_dtype(outputs[0].dtype) == "float32"
    assert tuple(outputs[1].shape) == (3, 5)
    assert [tuple(s.shape) for s in outputs[2:]] == [s.shape for s in state]
    logits, new_states = model.split_outputs(outputs)
    assert logits is outputs[0] and len(new_states) == len(state)
    # the distance history now holds the window's distances, all valid
    np.testing.assert_allclose(outputs[3], to_numpy(outputs[1])[:, -M:])
    np.testing.assert_array_equal(outputs[4], 1.0)


def test_memory_tapes_roll_across_windows():
    # Inference: one window of 11 tokens = windows of 6 and 5 with the state
    # carried (the tapes, the last embeddings, the last distances).
    model = tiny_model()
    ids = random_ids(2, 11, seed=3)
    whole = model([ids, *model.initial_state(2)], training=False)
    first = model([ids[:, :6], *model.initial_state(2)], training=False)
    second = model([ids[:, 6:], *[to_numpy(s) for s in first[2:]]], training=False)
    np.testing.assert_allclose(
        np.concatenate([first[0], second[0]], 1), whole[0], rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        np.concatenate([first[1], second[1]], 1), whole[1], rtol=1e-5, atol=1e-5
    )
    for a, b in zip(second[2:], whole[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # the state matters: a second window from a zero state differs
    fresh = model([ids[:, 6:], *model.initial_state(2)], training=False)
    assert not np.allclose(fresh[0], second[0], atol=1e-4)


@pytest.mark.trains
@pytest.mark.tensorflow_only
def test_one_train_step_reaches_every_weight():
    model = tiny_model()
    # Equal output biases for d and d^, so that the predict gates start
    # open (with PyTorch's initialisation d^ may start far below d, closing
    # every predict slot: the predict key then gets no gradient).
    model.parser.output_bias.assign(np.zeros(2, "float32"))
    ids = random_ids(4, 9, seed=4)
    with tf.GradientTape() as tape:
        outputs = model([ids[:, :-1], *model.initial_state(4)], training=True)
        loss = tf.reduce_mean(
            keras.losses.sparse_categorical_crossentropy(
                ids[:, 1:], outputs[0], from_logits=True
            )
        )
    grads = tape.gradient(loss, model.trainable_weights)
    names = [w.path for w in model.trainable_weights]
    assert len(names) == len(set(names))
    for weight, grad in zip(model.trainable_weights, grads):
        assert grad is not None, weight.path
        norm = float(tf.norm(tf.convert_to_tensor(grad)))
        assert np.isfinite(norm) and norm > 0, weight.path
    # the parser learns through both gates: the grouped output convolution
    # gets a gradient for d (column 0) and for d^ (column 1)
    grad = dict(zip(names, grads))["parsing_network/output_kernel"]
    grad = to_numpy(tf.convert_to_tensor(grad))
    assert np.abs(grad[:, 0]).sum() > 0 and np.abs(grad[:, 1]).sum() > 0


def test_config_and_keras_file_round_trips(harness):
    model = tiny_model()
    ids = random_ids(2, 7, seed=5)
    state = model.initial_state(2)
    # move the batch-norm statistics off their initial values
    model([ids, *state], training=True)
    expected = model([ids, *state], training=False)
    config = model.get_config()
    assert config["vocabulary"] == VOCAB
    clone = PRPNLanguageModel.from_config(config)
    clone.set_weights(model.get_weights())
    for a, b in zip(clone([ids, *state]), expected):
        np.testing.assert_array_equal(a, b)
    # The inference outputs (moved batch-norm statistics), exactly.
    loaded = harness.run_model_saving_test(model, [ids, *state],
                                           filename="prpn.keras")
    assert isinstance(loaded, PRPNLanguageModel)
    assert loaded.vocabulary == VOCAB
    for a, b in zip(loaded([ids, *state]), expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.trains
@pytest.mark.slow
def test_overfits_a_tiny_corpus():
    # A deterministic pattern that needs context: the first half of each
    # "sentence" predicts its second half.
    rng = np.random.default_rng(0)
    sentences = [[2, 3, 4, 5], [6, 7, 8, 9], [10, 11, 12, 13]]
    stream = []
    for k in rng.integers(0, 3, 300):
        stream += sentences[k] + [0]
    stream = np.array(stream, "int32")
    unigram = np.bincount(stream, minlength=len(VOCAB)) / len(stream)
    unigram_perplexity = float(np.exp(-np.log(unigram[stream]).mean()))
    keras.utils.set_random_seed(0)
    model = tiny_model(dropout=0.0, input_dropout=0.0, recurrent_dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(0.01, beta_1=0.0, epsilon=1e-9))
    model.configure_bptt(8, 8, clip_norm=1.0)
    batches = BPTTBatches(stream, 8, 10, variable_length=False)
    model.fit(batches.dataset(), epochs=4, verbose=0, shuffle=False)
    logs = model.evaluate(
        BPTTBatches(stream, 8, 10, variable_length=False).dataset(0),
        verbose=0, return_dict=True,
    )
    perplexity = float(np.exp(logs["loss"]))
    # A sentence start is a 1-in-3 guess, the rest is determined:
    # the ideal is 3 ** (1/5) ~ 1.25; unigram ~ 11.
    assert perplexity < 2.0 < unigram_perplexity / 4, (perplexity, unigram_perplexity)


def test_distances_for_parsing():
    model = tiny_model()
    sentences = [["w1", "w2", "w3"], ["w4"], ["w5", "oov", "w6", "w7", "w8"]]
    result = model.sentence_distances(sentences, batch_size=2)
    assert list(result) == ["parser/distance"] == model.distance_names
    assert model.default_distance == "parser/distance"
    assert [len(d) for d in result["parser/distance"]] == [3, 1, 5]
    # the distances are the model's own (zero state, inference), word k's at
    # its own position in "<eos> w_1 .. w_n <eos>"
    ids = np.array([[0] + model.token_ids(sentences[2]) + [0]], "int32")
    outputs = model([ids, *model.initial_state(1)], training=False)
    np.testing.assert_allclose(
        result["parser/distance"][2], to_numpy(outputs[1])[0, 1:6], rtol=1e-6
    )
    direct = model.syntactic_distances(ids)["parser/distance"]
    np.testing.assert_allclose(direct, outputs[1], rtol=1e-6)


def test_presets_and_validation():
    assert set(PRESETS) == {"ptb", "up", "small", "quick", "tiny"}
    ptb = get_preset("ptb")
    paper = {
        "embedding_dim": 800, "hidden_dim": 1200, "num_layers": 2,
        "num_slots": 15, "lookback": 5, "resolution": 0.1, "hard_gates": True,
        "dropout": 0.7, "input_dropout": 0.5, "recurrent_dropout": 0.5,
    }
    # The paper's configuration is the constructor's defaults: the preset
    # departs from none of them, and get_preset gives them all.
    assert PRESETS["ptb"]["model"] == {}
    assert {key: ptb["model"][key] for key in paper} == paper
    training = ptb["training"]
    assert (training["optimizer"], training["learning_rate"], training["beta_1"],
            training["beta_2"], training["epsilon"], training["weight_decay"],
            training["batch_size"], training["bptt"], training["clip_norm"],
            training["reduce_lr_patience"], training["reduce_lr_factor"]) == (
        "adam", 0.003, 0.0, 0.999, 1e-9, 1e-6, 64, 35, 1.0, 2, 0.5)
    up = get_preset("up")
    assert (up["model"]["embedding_dim"], up["model"]["hidden_dim"],
            up["training"]["learning_rate"], up["training"]["sentence_level"]) == (
        200, 400, 0.001, True)
    assert (up["model"]["dropout"], up["model"]["input_dropout"],
            up["model"]["recurrent_dropout"]) == (0.2, 0.2, 0.0)
    with pytest.raises(ValueError, match="ptb, quick, small, tiny, up"):
        PRPNLanguageModel.from_preset("huge", VOCAB)
    with pytest.raises(ValueError, match="<unk>"):
        PRPNLanguageModel.from_preset("tiny", ["<eos>", "a"])
    with pytest.raises(ValueError, match="lookback"):
        tiny_model(lookback=0)
    with pytest.raises(ValueError, match="dropout"):
        tiny_model(dropout=1.0)


@pytest.mark.tensorflow_only
def test_mixed_precision_forward_and_gradients_are_finite():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = tiny_model()
        ids = random_ids(2, 6, seed=6)
        with tf.GradientTape() as tape:
            outputs = model([ids, *model.initial_state(2)], training=True)
            loss = tf.reduce_mean(outputs[0])
        grads = tape.gradient(loss, model.trainable_weights)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert outputs[0].dtype == "float32" and outputs[1].dtype == "float32"
    assert model.get_layer("reading_network").cell.compute_dtype == "bfloat16"
    assert all(np.isfinite(to_numpy(o, "float32")).all() for o in outputs)
    assert all(g is not None and np.isfinite(to_numpy(g)).all() for g in grads)


# --- the recipe ---------------------------------------------------------------
def _recipe(tmp_path, *extra):
    from keras_ordered.training.tasks.language_model import main

    data = os.path.dirname(require_data("ptb", "train.txt"))
    argv = [
        "--data", data, "--max-lines", "200", "--steps-per-epoch", "2",
        "--eval-steps", "2", "--epochs", "1", "--output", str(tmp_path),
        "--verbose", "0", *extra,
    ]
    return main(argv, model_class=PRPNLanguageModel, get_preset=get_preset,
                presets=PRESETS, description="t", default_output=str(tmp_path))


@pytest.mark.slow
def test_recipe_runs_two_steps_on_ptb_and_parses(tmp_path, capsys):
    treebank = require_data("wsj_sample", "mrg")
    code = _recipe(tmp_path, "--preset", "tiny", "--parse-eval", treebank,
                   "--parse-eval-sentences", "20")
    assert code == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Test perplexity" in out
    assert "Parsing F1 (parser/distance, 20 gold trees)" in out
    assert "Right-branching on the same trees" in out
    results = json.load(open(os.path.join(tmp_path, "results.json")))
    # Two steps of training: no parser, and the recipe says so.
    assert results["beats_right_branching"] is False
    assert "no better than right-branching trees" in " ".join(
        captured.err.split())
    assert np.isfinite(results["valid_perplexity"])
    assert np.isfinite(results["test_perplexity"])
    f1 = results["parse_f1"]["parser/distance"]
    assert 0 < f1["sentence_f1"] <= 100 and 0 < f1["corpus_f1"] <= 100
    assert os.listdir(os.path.join(tmp_path, "logs", "parsing"))
    restored = keras.saving.load_model(os.path.join(tmp_path, "model.keras"))
    assert isinstance(restored, PRPNLanguageModel)
    distances = restored.sentence_distances([["the", "cat", "sat"]])
    assert distances["parser/distance"][0].shape == (3,)


@pytest.mark.slow
def test_recipe_up_preset_trains_on_the_treebank_sentences(tmp_path, capsys):
    # The official unsupervised-parsing setup: WSJ10 sentences of the
    # treebank, in order, plateau on the training loss, parsed in the end.
    training = get_preset("up")["training"]
    assert training["sentence_level"] and training["data"] == "treebank"
    assert (training["max_sentence_length"], training["min_count"],
            training["shuffle"], training["eval_batch_size"],
            training["reduce_lr_patience"], training["reduce_lr_monitor"]) == (
        10, 3, False, 64, 0, "loss")
    treebank = require_data("wsj_sample", "mrg")
    assert _recipe(tmp_path, "--preset", "up", "--batch-size", "8",
                   "--treebank", treebank) == 0
    from keras_ordered.datasets.treebank import load_lm_sentences

    vocabulary = load_lm_sentences(treebank, max_length=10)[1]
    out = capsys.readouterr().out
    assert "treebank sentences" in out
    results = json.load(open(os.path.join(tmp_path, "results.json")))
    assert results["valid_split"].startswith("the training sentences")
    assert "test_perplexity" not in results
    # Two steps from a uniform-ish start: the sentence-level (masked) loss
    # stays near log |V|, far from what padding or a wrong reset would give.
    assert 0.5 * len(vocabulary) < results["valid_perplexity"] < 2 * len(vocabulary)
    scores = results["parse_f1"]["parser/distance"]
    assert scores["wsj10_sentences"] == results["parse_sentences"]


@pytest.mark.slow
def test_recipe_errors_are_clear(tmp_path, capsys):
    assert _recipe(tmp_path, "--preset", "huge") == 2
    assert "Unknown PRPN preset" in capsys.readouterr().err
    from keras_ordered.training.tasks.language_model import main

    code = main(["--preset", "tiny", "--data", str(tmp_path / "nowhere")],
                model_class=PRPNLanguageModel, get_preset=get_preset,
                presets=PRESETS, description="t", default_output=str(tmp_path))
    assert code == 2
    assert "--data" in capsys.readouterr().err


@pytest.mark.slow
def test_killed_adam_run_resumes_with_its_optimizer_state(tmp_path, capsys,
                                                          monkeypatch):
    # PRPN trains with Adam: resuming must rebuild its moments under the
    # MirroredStrategy (an SGD run has no slot variables to trip on).
    from keras_ordered.training import runner

    class Crash(runner.LearningRateLogger):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                raise RuntimeError("simulated crash")

    extra = ("--preset", "tiny", "--steps-per-epoch", "4", "--save-freq", "1",
             "--skip-test")
    monkeypatch.setattr(runner, "LearningRateLogger", Crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        _recipe(tmp_path, *extra)
    monkeypatch.setattr(runner, "LearningRateLogger", Crash.__mro__[1])

    capsys.readouterr()
    assert _recipe(tmp_path, *extra) == 0
    assert "Resuming from epoch 1, window 2 of " in capsys.readouterr().out
    model = keras.saving.load_model(os.path.join(tmp_path, "model.keras"))
    # 2 windows before the crash + 2 after it: Adam counted all 4.
    assert int(model.optimizer.iterations.numpy()) == 4


def test_initialisation_is_the_official_one():
    # The official init_weights: embedding (= tied output) uniform(+-0.01),
    # output bias 0; the other layers as PyTorch's modules (see
    # tests/layers/test_prpn_layers.py::test_prpn_layers_initialise_as_pytorch_modules).
    model = tiny_model()
    embeddings = np.abs(to_numpy(model.embedding.embeddings))
    assert 0.009 < embeddings.max() <= 0.01
    np.testing.assert_array_equal(model.embedding.output_bias, 0.0)
    cell = model.get_layer("reading_network").cell
    assert cell.attentions[0].dropout == model.input_dropout  # idropout
    assert cell.recurrent_dropout == model.recurrent_dropout  # rdropout
    predict = model.get_layer("predict_network")
    assert predict.attention.dropout == model.input_dropout


@pytest.mark.trains
@pytest.mark.slow
def test_training_step_compiles_with_xla():
    # The per-step dropout draws happen inside the recurrent loop.
    model = tiny_model()
    model.compile(optimizer=keras.optimizers.Adam(0.01), jit_compile=True)
    model.configure_bptt(4, 4, clip_norm=1.0)
    stream = random_ids(1, 200, seed=7)[0]
    batches = BPTTBatches(stream, 4, 6, variable_length=False)
    history = model.fit(batches.dataset(), epochs=1, steps_per_epoch=2,
                        verbose=0, shuffle=False)
    assert np.isfinite(history.history["loss"][-1])
