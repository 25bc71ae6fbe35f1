"""Training as the official code trains: gradient clipping under loss
scaling, and the best checkpoint under averaged SGD."""

import os

import keras
import numpy as np
import pytest

from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.training import BPTTBatches
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import ResumableModelCheckpoint

VOCAB = ["<eos>", "<unk>"] + [f"w{i}" for i in range(14)]
NO_DROPOUT = dict(dropout_output=0.0, dropout_hidden=0.0, dropout_input=0.0,
                  dropout_embedding=0.0, weight_drop=0.0, ar_alpha=0.0,
                  tar_beta=0.0)


def _first_update_norm(policy, clip_norm):
    keras.mixed_precision.set_global_policy(policy)
    try:
        keras.utils.set_random_seed(3)
        model = ONLSTMLanguageModel.from_preset("tiny", VOCAB, seed=3,
                                                **NO_DROPOUT)
        model.configure_bptt(4, 4, clip_norm=clip_norm)
        model.compile(optimizer=keras.optimizers.SGD(1.0))
        if policy == "mixed_float16":
            assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        ids = np.random.default_rng(0).integers(0, len(VOCAB), 200).astype("int32")
        data = BPTTBatches(ids, 4, 10, variable_length=False)
        before = [np.array(w.numpy(), "float64") for w in model.trainable_weights]
        model.fit(data.dataset(0, steps_per_epoch=1), verbose=0, shuffle=False)
        after = [np.array(w.numpy(), "float64") for w in model.trainable_weights]
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return float(np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(after, before))))


@pytest.mark.slow
def test_clipping_under_mixed_float16_clips_the_true_gradients():
    # SGD with learning rate 1: the first update is the clipped gradient.
    # The loss scale (2^15) must not shrink it (it did: norm 0.05 / 2^15).
    float32 = _first_update_norm("float32", clip_norm=0.05)
    mixed = _first_update_norm("mixed_float16", clip_norm=0.05)
    assert float32 == pytest.approx(0.05, rel=1e-3)  # the clip is active
    assert mixed == pytest.approx(float32, rel=0.01)
    # Unclipped, the two precisions agree too (the scale is divided out).
    assert _first_update_norm("mixed_float16", None) == pytest.approx(
        _first_update_norm("float32", None), rel=0.01
    )


@pytest.mark.slow
def test_best_checkpoint_under_averaging_holds_the_validated_weights(tmp_path):
    rng = np.random.default_rng(5)
    ids = rng.integers(0, len(VOCAB), 1200).astype("int32")
    train = BPTTBatches(ids[:900], 4, 10, variable_length=False)
    valid = BPTTBatches(ids[900:], 4, 10, variable_length=False)

    def model_():
        keras.utils.set_random_seed(1)
        model = ONLSTMLanguageModel.from_preset("tiny", VOCAB, seed=1,
                                                **NO_DROPOUT)
        model.configure_bptt(4, 4, clip_norm=0.25)
        model.compile(optimizer=keras.optimizers.SGD(5.0))
        return model

    model = model_()
    ntasgd = NTASGD(nonmono=5, verbose=0)

    class AverageFromTheStart(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            ntasgd.start_averaging()

    path = str(tmp_path / "best.weights.h5")
    checkpoint = ResumableModelCheckpoint(
        path, monitor="val_loss", save_best_only=True, save_weights_only=True,
        weights_context=ntasgd.validated_weights,
    )
    model.fit(train.dataset(), epochs=3, validation_data=valid.dataset(),
              callbacks=[AverageFromTheStart(), ntasgd, checkpoint],
              verbose=0, shuffle=False)
    assert ntasgd.averaging and ntasgd.count > 0
    saved = model_()
    saved.evaluate(valid.dataset(), verbose=0)  # builds the model
    saved.load_weights(path)
    loss = saved.evaluate(valid.dataset(), verbose=0, return_dict=True)["loss"]
    assert loss == pytest.approx(checkpoint.best, rel=1e-5)
    # The raw SGD weights (what was saved before) score differently.
    raw = model.evaluate(valid.dataset(), verbose=0, return_dict=True)["loss"]
    assert abs(raw - checkpoint.best) > 1e-3


def _tiny_recipe_results(output, precision, preset_precision=None,
                         extra=()):
    """Runs the ON-LSTM recipe's `tiny` preset briefly; its results.json.

    `precision` None leaves `--precision` out (the preset's default, which
    `preset_precision` sets when given)."""
    import json

    from conftest import require_data
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.models.onlstm import get_preset
    from keras_ordered.training.tasks import language_model

    def preset(name):
        settings = get_preset(name)
        if preset_precision is not None:
            settings["precision"] = preset_precision
        return settings

    data = os.path.dirname(require_data("ptb", "train.txt"))
    args = ["--preset", "tiny", "--data", data, "--max-lines", "200",
            "--steps-per-epoch", "4", "--eval-steps", "3", "--epochs", "2",
            "--skip-test", "--output", str(output), "--verbose", "0"]
    if precision is not None:
        args += ["--precision", precision]
    args += list(extra)
    assert language_model.main(args, model_class=ONLSTMLanguageModel,
                       get_preset=preset, presets=PRESETS,
                       description="t", default_output=str(output)) == 0
    return json.load(open(output / "results.json"))


@pytest.mark.slow
def test_recipe_evaluates_the_best_checkpoint(tmp_path, capsys):
    results = _tiny_recipe_results(tmp_path, "float32")
    assert results["weights"] == "best checkpoint"
    assert results["precision"] == results["evaluation_precision"] == "float32"
    # The final validation pass (same windows) re-measures the best loss.
    assert results["valid_loss"] == pytest.approx(results["best_val_loss"],
                                                  rel=1e-5)
    assert "Evaluating the best checkpoint" in capsys.readouterr().out


@pytest.mark.slow
def test_recipe_trains_in_its_presets_precision(tmp_path, monkeypatch,
                                                capsys):
    # Without --precision, the preset decides (ON-LSTM `small`:
    # mixed_bfloat16); an explicit --precision wins.
    # On a CPU that emulates bfloat16 the recipe warns, in bfloat16 only.
    from keras_ordered.training import precision

    monkeypatch.setattr(precision, "cpu_has_native_bfloat16", lambda: False)
    assert _tiny_recipe_results(tmp_path / "a", None)["precision"] == "float32"
    assert "no native bfloat16" not in capsys.readouterr().err
    assert _tiny_recipe_results(
        tmp_path / "b", None, "mixed_bfloat16")["precision"] == "mixed_bfloat16"
    assert "no native bfloat16" in capsys.readouterr().err
    assert _tiny_recipe_results(
        tmp_path / "c", "float32", "mixed_bfloat16")["precision"] == "float32"
    assert "no native bfloat16" not in capsys.readouterr().err


@pytest.mark.slow
def test_model_args_replace_the_presets_and_are_recorded(tmp_path, capsys):
    from conftest import require_data
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.models.onlstm import get_preset
    from keras_ordered.training.tasks import language_model

    # tiny: hidden_dims [20, 16], chunk_size 4.
    extra = ("--model-arg", "chunk_size=2", "--model-arg",
             "hidden_dims=[24, 16]", "--model-arg", "dropout_output=0.2")
    results = _tiny_recipe_results(tmp_path, "float32", extra=extra)
    assert results["model_args"] == {"chunk_size": 2, "hidden_dims": [24, 16],
                                     "dropout_output": 0.2}
    config = keras.saving.load_model(tmp_path / "model.keras").get_config()
    assert config["chunk_size"] == 2 and list(config["hidden_dims"]) == [24, 16]
    default = ONLSTMLanguageModel.from_preset("tiny", VOCAB)
    assert default.get_config()["chunk_size"] == 4
    # Resuming the run with other model arguments is refused (the backup's
    # configuration; here the same weights, another dropout), and so is a
    # name the model does not take.
    base = ["--preset", "tiny", "--output", str(tmp_path), "--verbose", "0",
            "--max-lines", "200", "--epochs", "3", "--steps-per-epoch", "4",
            "--data", os.path.dirname(require_data("ptb", "train.txt"))]
    capsys.readouterr()
    for extra, message in (
        (["--model-arg", "chunk_size=2", "--model-arg", "hidden_dims=[24,16]"],
         "configuration"),
        (["--model-arg", "chunks=2"], "no such argument; choose among"),
        (["--model-arg", "chunk_size"], "expected NAME=VALUE"),
    ):
        assert language_model.main(
            base + extra, model_class=ONLSTMLanguageModel,
            get_preset=get_preset, presets=PRESETS, description="t",
            default_output=str(tmp_path)) == 2
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_recipe_trained_in_bfloat16_is_evaluated_and_saved_in_float32(
        tmp_path, capsys):
    results = _tiny_recipe_results(tmp_path, "mixed_bfloat16")
    out = capsys.readouterr().out
    assert "under the mixed_bfloat16 policy" in out
    assert "Trained under mixed_bfloat16; evaluating in float32." in out
    assert results["precision"] == "mixed_bfloat16"
    assert results["evaluation_precision"] == "float32"
    # The same weights measured in float32 instead of bfloat16: close to the
    # loss validation saw during training, not equal to it.
    assert results["valid_loss"] == pytest.approx(results["best_val_loss"],
                                                  rel=2e-2)
    assert results["valid_loss"] != results["best_val_loss"]
    # The global policy is restored, and the saved model computes in float32.
    assert keras.mixed_precision.global_policy().name == "float32"
    model = keras.saving.load_model(tmp_path / "model.keras")
    policies = {layer.dtype_policy.name for layer in model._flatten_layers()}
    assert policies == {"float32"}, policies
    # It keeps the optimizer's state (that of the best checkpoint: after
    # epoch 1 or 2 of 4 windows each), not a fresh optimizer's.
    assert int(model.optimizer.iterations.numpy()) in (4, 8)


def test_plateau_halves_as_the_official_scheduler():
    from keras_ordered.training.callbacks import make_plateau
    from keras_ordered.training.config import LanguageModelTraining

    def training(**settings):
        return LanguageModelTraining(optimizer="adam", learning_rate=0.004,
                                     batch_size=2, epochs=8, bptt=5,
                                     **settings)

    model = ONLSTMLanguageModel.from_preset("tiny", VOCAB)
    model.compile(optimizer=keras.optimizers.Adam(0.004))
    plateau = make_plateau(training(reduce_lr_patience=2,
                                    reduce_lr_factor=0.5))
    plateau.set_model(model)
    plateau.on_train_begin()
    rates = []
    # Epoch 0 sets the best; equal losses are no improvement (threshold 0);
    # PyTorch halves when more than `patience` = 2 epochs were bad: epoch 3.
    for epoch, loss in enumerate([5.0, 5.0, 5.0, 5.0, 4.99999, 5.0, 5.0, 5.0]):
        plateau.on_epoch_end(epoch, {"val_loss": loss})
        rates.append(float(np.asarray(model.optimizer.learning_rate)))
    assert rates == pytest.approx([0.004] * 3 + [0.002] * 4 + [0.001])
    assert make_plateau(training()) is None
    watch_training = make_plateau(training(reduce_lr_patience=0,
                                           reduce_lr_monitor="loss"))
    assert (watch_training.monitor, watch_training.patience) == ("loss", 1)


def test_bfloat16_emulated_by_the_cpu_is_announced():
    """A preset that defaults to mixed_bfloat16 runs about 2x slower than
    float32 on a CPU without AVX512_BF16 / AMX: the recipe says so."""
    from keras_ordered.training.precision import emulated_bfloat16_warning

    warning = emulated_bfloat16_warning("mixed_bfloat16", gpus=False,
                                        native_bfloat16=False)
    assert "no native bfloat16" in warning and "--precision float32" in warning
    for policy, gpus, native in (("mixed_bfloat16", False, True),
                                 ("mixed_bfloat16", True, False),
                                 ("float32", False, False),
                                 ("mixed_float16", True, False)):
        assert emulated_bfloat16_warning(policy, gpus=gpus,
                                         native_bfloat16=native) is None


def test_training_policy_is_bfloat16_only_on_cpus_that_compute_it_natively(
        tmp_path):
    from keras_ordered.training.precision import cpu_has_native_bfloat16
    from keras_ordered.training.precision import training_policy

    def cpuinfo(flags):
        path = tmp_path / f"cpuinfo_{len(flags)}"
        path.write_text("processor\t: 0\nflags\t\t: fpu sse2 "
                        + " ".join(flags) + "\n\n")
        return str(path)

    assert cpu_has_native_bfloat16(cpuinfo(["avx512f", "avx512_bf16"]))
    assert cpu_has_native_bfloat16(cpuinfo(["amx_tile", "amx_bf16"]))
    assert not cpu_has_native_bfloat16(cpuinfo(["avx512f", "avx2"]))
    assert not cpu_has_native_bfloat16(str(tmp_path / "missing"))

    assert training_policy("auto", gpus=False,
                           native_bfloat16=True) == "mixed_bfloat16"
    assert training_policy("auto", gpus=False, native_bfloat16=False) == (
        "float32")
    # On GPUs the official float32 stays the default (not measured here).
    assert training_policy("auto", gpus=True, native_bfloat16=True) == (
        "float32")
    assert training_policy("float32", gpus=False,
                           native_bfloat16=True) == "float32"
    assert training_policy("mixed_float16", gpus=True) == "mixed_float16"
    # --mixed-precision keeps its meaning.
    assert training_policy("float32", mixed_precision=True,
                           gpus=True) == "mixed_float16"
    assert training_policy("auto", mixed_precision=True,
                           gpus=False) == "mixed_bfloat16"
    with pytest.raises(ValueError, match="Unknown precision 'half'"):
        training_policy("half", gpus=False)


@pytest.mark.slow
def test_average_from_epoch_and_the_trees_of_the_averaged_weights():
    # `average_from_epoch=2`: plain SGD in epoch 1, averaging from the
    # first step of epoch 2; the parsing callback then parses with the
    # averaged weights (those validation and the checkpoints use), not the
    # raw SGD weights it parsed with before.
    import nltk

    from keras_ordered.datasets.treebank import make_sentence
    from keras_ordered.parsing import evaluate_trees
    from keras_ordered.parsing import model_trees
    from keras_ordered.training.callbacks import ParsingEvaluation

    rng = np.random.default_rng(5)
    ids = rng.integers(0, len(VOCAB), 1200).astype("int32")
    train = BPTTBatches(ids[:900], 4, 10, variable_length=False)
    valid = BPTTBatches(ids[900:], 4, 10, variable_length=False)
    gold = []
    for _ in range(12):
        w = [f"w{i}" for i in rng.integers(0, 14, 5)]
        gold.append(make_sentence(nltk.Tree.fromstring(
            f"(S (NP (DT {w[0]}) (NN {w[1]})) (VP (VB {w[2]}) "
            f"(NP (DT {w[3]}) (NN {w[4]}))))")))
    keras.utils.set_random_seed(1)
    model = ONLSTMLanguageModel.from_preset("tiny", VOCAB, seed=1,
                                            **NO_DROPOUT)
    model.configure_bptt(4, 4, clip_norm=0.25)
    model.compile(optimizer=keras.optimizers.SGD(5.0))
    ntasgd = NTASGD(nonmono=5, verbose=0, average_from_epoch=2)
    parsing = ParsingEvaluation(gold, weights_context=ntasgd.validated_weights)
    history = model.fit(train.dataset(), epochs=3,
                        validation_data=valid.dataset(),
                        callbacks=[ntasgd, parsing], verbose=0, shuffle=False)
    assert history.history["averaging"] == [0.0, 1.0, 1.0]
    assert ntasgd.count == 2 * train.steps()

    def scores():
        trees = model_trees(gold, model)
        return {name: evaluate_trees(gold, induced)["sentence_f1"]
                for name, induced in trees.items()}

    raw = scores()
    with ntasgd.validated_weights():
        averaged = scores()
    assert {name: s["sentence_f1"] for name, s in parsing.results.items()} \
        == pytest.approx(averaged)
    assert raw != pytest.approx(averaged)  # the two weights parse apart
