"""keras-tuner searches: the hypermodels' spaces, a search end to end (tiny
preset, a slice of PTB), its resumption, the best model parsing."""

import csv
import glob
import itertools
import json
import os

import keras
import keras_tuner as kt
import numpy as np
import pytest
import tensorflow as tf

from conftest import require_data
import keras_ordered_cli as cli
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.models import onlstm
from keras_ordered.models import prpn
from keras_ordered.models.base import constructor_defaults
from keras_ordered.saving import load_model
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.tuning import ONLSTMHyperModel
from keras_ordered.tuning import PRPNHyperModel
from keras_ordered.tuning import search

FAMILIES = {
    "onlstm": (ONLSTMHyperModel, onlstm.PRESETS),
    "prpn": (PRPNHyperModel, prpn.PRESETS),
}
WORDS = ["<eos>", "<unk>"] + [f"w{i}" for i in range(40)]


def _text_presets(presets):
    return [name for name, preset in presets.items()
            if not preset["training"].get("sentence_level")]


def _space(hypermodel):
    hp = kt.HyperParameters()
    hypermodel.values(hp)
    return hp


def _grid(hp):
    """Every combination of the choices and of each float's ends."""
    axes = []
    for parameter in hp.space:
        if isinstance(parameter, kt.engine.hyperparameters.Choice):
            axes.append([(parameter.name, v) for v in parameter.values])
        else:
            axes.append([(parameter.name, parameter.min_value),
                         (parameter.name, parameter.max_value)])
    return [dict(combination) for combination in itertools.product(*axes)]


# --- the search spaces --------------------------------------------------------
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_space_is_centred_on_the_preset_and_declares_every_knob(family):
    hypermodel_class, presets = FAMILIES[family]
    for name in _text_presets(presets):
        hypermodel = hypermodel_class(WORDS, preset=name)
        hp = _space(hypermodel)
        assert [p.name for p in hp.space] == [
            k for k in hypermodel.knobs if hypermodel.base_values()[k] is not None
        ]
        # Defaults: exactly the preset's model (every argument: the
        # constructor's defaults with the preset's departures) and
        # learning rate.
        config, training = hypermodel.configuration(hp)
        preset = presets[name]
        assert config == {**constructor_defaults(
            hypermodel.model_class), **preset["model"]}
        assert training == LanguageModelTraining.from_dict(preset["training"])
        for parameter in hp.space:
            base = hypermodel.base_values()[parameter.name]
            if parameter.name == "learning_rate":
                assert parameter.min_value < base < parameter.max_value
                assert parameter.sampling == "log"
            elif parameter.name.endswith("dropout") or "drop" in parameter.name:
                assert 0.0 == parameter.min_value <= base <= parameter.max_value
                assert parameter.max_value < 1.0


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_corner_of_the_space_is_a_valid_model(family):
    """All choice combinations and float ends give arguments the model
    accepts (ON-LSTM: every layer divisible by its chunk size); the tiny
    preset's corners are built and run."""
    hypermodel_class, presets = FAMILIES[family]
    model_class = hypermodel_class.model_class
    for name in _text_presets(presets):
        hypermodel = hypermodel_class(WORDS, preset=name)
        hp = _space(hypermodel)
        corners = _grid(hp)
        assert len(corners) >= 2 ** len(hp.space)
        for corner in corners:
            trial = hp.copy()
            trial.values.update(corner)
            config, training = hypermodel.configuration(trial)
            assert training.learning_rate == corner["learning_rate"]
            if family == "onlstm":
                chunk = config["chunk_size"]
                assert all(d % chunk == 0 for d in config["hidden_dims"])
                assert config["hidden_dims"][-1] == config["embedding_dim"]
                if "hidden_size" in corner:
                    assert config["hidden_dims"][0] >= corner["hidden_size"]
            floats_at_max = all(
                corner[p.name] == p.max_value for p in hp.space
                if not isinstance(p, kt.engine.hyperparameters.Choice)
            )
            if name == "tiny" and floats_at_max:  # one per choice combination
                model = hypermodel.build(trial)
                assert isinstance(model, model_class)
                logits = model([np.array([[0, 2, 3]]),
                                *model.initial_state(1)])[0]
                assert logits.shape == (1, 3, len(WORDS))


def test_tune_restricts_the_space_and_bad_options_say_what_to_do():
    hypermodel = ONLSTMHyperModel(WORDS, "tiny",
                                  tune=["chunk_size", "learning_rate"])
    hp = _space(hypermodel)
    assert [p.name for p in hp.space] == ["chunk_size", "learning_rate"]
    assert hp.get("chunk_size") == 4
    with pytest.raises(ValueError, match="choose among chunk_size"):
        ONLSTMHyperModel(WORDS, "tiny", tune=["chunk"])
    with pytest.raises(ValueError, match="needs a treebank"):
        PRPNHyperModel(WORDS, "tiny", objective="parse_f1")
    with pytest.raises(ValueError, match="use one of perplexity"):
        PRPNHyperModel(WORDS, "tiny", objective="bleu")
    with pytest.raises(ValueError, match="treebank sentences"):
        PRPNHyperModel(WORDS, "up")
    with pytest.raises(ValueError, match="not only its size"):
        PRPNHyperModel(42, "tiny")
    assert ONLSTMHyperModel(WORDS, "tiny").objective.name == "val_perplexity"
    assert ONLSTMHyperModel(WORDS, "tiny").objective.direction == "min"


def test_built_model_ignores_build_from_config():
    """keras-tuner's Hyperband calls `build_from_config(get_build_config())`
    on the model it continues; the functional models are built already."""
    for model_class in (ONLSTMLanguageModel, PRPNLanguageModel):
        model = model_class.from_preset("tiny", WORDS)
        before = [w.numpy() for w in model.weights]
        model.build_from_config(model.get_build_config())
        for a, b in zip(before, model.weights):
            np.testing.assert_array_equal(a, b.numpy())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["random", "bayesian", "hyperband"])
def test_every_tuner_starts_with_the_preset(tmp_path, name):
    hypermodel = PRPNHyperModel(WORDS, "tiny")
    tuner = search.make_tuner(hypermodel, name, str(tmp_path), max_trials=3,
                              max_epochs=2)
    trial = tuner.oracle.create_trial("tuner0")
    values = trial.hyperparameters.values
    for knob, base in hypermodel.base_values().items():
        assert values[knob] == pytest.approx(base)


# --- a search end to end ------------------------------------------------------
def _search(output, *extra, family="onlstm"):
    hypermodel_class, presets = FAMILIES[family]
    data = os.path.dirname(require_data("ptb", "train.txt"))
    argv = ["--preset", "tiny", "--data", data, "--max-lines", "200",
            "--steps-per-epoch", "3", "--eval-steps", "2", "--verbose", "0",
            "--output", str(output), *extra]
    return search.main(argv, hypermodel_class=hypermodel_class,
                       presets=presets, description="t",
                       default_output="runs/t")


def _checkpoints(output):
    return {
        path: os.path.getmtime(path)
        for path in glob.glob(os.path.join(output, "search", "trial_*",
                                           "checkpoint.weights.h5"))
    }


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """A 2-trial random search of the tiny ON-LSTM with parsing F1, run as
    one trial, then continued to two, then run a third time."""
    treebank = require_data("wsj_sample", "mrg")
    output = tmp_path_factory.mktemp("search")
    options = ("--tuner", "random", "--max-epochs", "1",
               "--treebank", treebank, "--parse-sentences", "10")
    assert _search(output, *options, "--max-trials", "1") == 0
    first = json.load(open(output / "results.json"))
    after_first = _checkpoints(output)
    assert _search(output, *options, "--max-trials", "2") == 0
    second = json.load(open(output / "results.json"))
    after_second = _checkpoints(output)
    assert _search(output, *options, "--max-trials", "2") == 0
    third = json.load(open(output / "results.json"))
    return dict(output=output, results=(first, second, third),
                checkpoints=(after_first, after_second, _checkpoints(output)))


@pytest.mark.slow
def test_search_records_trials_objective_and_parsing_f1(searched):
    results = searched["results"][1]
    assert results["trials_finished"] == 2
    assert [t["status"] for t in results["trials"]] == ["COMPLETED"] * 2
    scores = [t["score"] for t in results["trials"]]
    assert scores == sorted(scores)  # best (lowest perplexity) first
    assert results["best"] == results["trials"][0]
    preset = next(t for t in results["trials"] if t["trial_id"] == "0")
    for knob, base in ONLSTMHyperModel(WORDS, "tiny").base_values().items():
        assert preset["hyperparameters"][knob] == pytest.approx(base)
    for trial in results["trials"]:
        metrics = trial["metrics"]
        assert trial["score"] == metrics["val_perplexity"]
        assert 1.0 < metrics["val_perplexity"] < 10000.0
        assert 0.0 <= metrics["parse_f1"] <= 100.0


@pytest.mark.slow
def test_a_second_invocation_does_not_redo_finished_trials(searched):
    first, second, third = searched["results"]
    before, after, again = searched["checkpoints"]
    assert first["trials_finished"] == 1
    assert len(before) == 1 and len(after) == 2
    for path, mtime in before.items():
        assert after[path] == mtime  # trial 0 not trained again
    assert again == after  # the budget was spent: nothing ran
    assert first["trials"][0] in second["trials"]
    assert third["trials"] == second["trials"]
    assert third["invocations"] == 3


@pytest.mark.slow
def test_a_search_with_other_settings_is_refused(searched, capsys):
    assert _search(searched["output"], "--tuner", "hyperband") == 2
    err = capsys.readouterr().err
    assert "was made with other settings" in err
    assert "tuner: 'random' then, 'hyperband' now" in err


@pytest.mark.slow
def test_search_logs_hparams_for_tensorboard(searched):
    plugins = set()
    for path in glob.glob(os.path.join(searched["output"], "logs", "*",
                                       "execution0", "events.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                plugins.add(value.metadata.plugin_data.plugin_name)
    assert "hparams" in plugins
    assert len(glob.glob(os.path.join(searched["output"], "logs", "*",
                                      "execution0", "validation"))) == 2


@pytest.mark.slow
def test_best_model_reloads_and_parses(searched, capsys):
    path = str(searched["output"] / "best_model.keras")
    model = load_model(path)
    assert isinstance(model, ONLSTMLanguageModel)
    assert len(model.vocabulary) == searched["results"][1]["vocabulary_size"]
    assert {"<eos>", "<unk>", "the"} <= set(model.vocabulary)
    best = searched["results"][1]["best"]["hyperparameters"]
    assert model.get_config()["chunk_size"] == best["chunk_size"]
    assert cli.main(["parse", "--model", path, "the cat sat on the mat"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("(") and out.count("(") == out.count(")")
    assert out.split()[-1].rstrip(")") == "mat"


@pytest.mark.slow
def test_hyperband_continues_trials_prpn(tmp_path):
    """Hyperband (max 2 epochs, factor 2) capped at 3 trials: two 1-epoch
    trials, then the better one trained on from its checkpoint for a
    second epoch."""
    assert _search(tmp_path, "--max-epochs", "2", "--factor", "2",
                   "--max-trials", "3",
                   "--tune", "dropout,learning_rate", family="prpn") == 0
    results = json.load(open(tmp_path / "results.json"))
    assert results["trials_finished"] == 3
    continued = [t for t in results["trials"]
                 if t["hyperparameters"].get("tuner/trial_id")]
    assert len(continued) == 1
    values = continued[0]["hyperparameters"]
    assert values["tuner/initial_epoch"] == 1 and values["tuner/epochs"] == 2
    # The runner trained the continued trial from epoch 1 (the weights of
    # the trial it continues), one epoch, in the trial's own folder.
    trial = json.load(open(tmp_path / "search" /
                           f"trial_{continued[0]['trial_id']}" /
                           "results.json"))
    assert trial["start_epoch"] == 1 and trial["epochs_run"] == 2
    assert len(trial["history"]["val_perplexity"]) == 1
    assert isinstance(load_model(tmp_path / "best_model.keras"),
                      PRPNLanguageModel)


def _two_trial_search(tmp_path, train, valid, vocabulary, callbacks):
    """A random search of 2 one-epoch trials of the tiny ON-LSTM (chunk
    size tuned) in `tmp_path`, with `callbacks`; returns the tuner."""
    hypermodel = ONLSTMHyperModel(vocabulary, "tiny", tune=["chunk_size"])
    tuner = search.make_tuner(hypermodel, "random", str(tmp_path),
                              max_trials=2)
    tuner.search(train, validation_data=valid, epochs=1, steps_per_epoch=3,
                 validation_steps=2, callbacks=callbacks, verbose=0)
    return tuner


@pytest.mark.slow
def test_an_interrupted_trial_runs_again(tmp_path):
    """A search killed inside a trial (Ctrl-C) keeps the finished trials;
    the next run continues with the interrupted one."""
    data = os.path.dirname(require_data("ptb", "train.txt"))
    from keras_ordered.datasets import ptb

    (train, valid, _), vocabulary = ptb.load_data(data, max_lines=200)

    trials_begun = []  # shared by keras-tuner's per-trial copies

    class Interrupt(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            trials_begun.append(1)

        def on_train_batch_end(self, batch, logs=None):
            if len(trials_begun) == 2 and batch == 1:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _two_trial_search(tmp_path, train, valid, vocabulary, [Interrupt()])
    interrupted = json.load(open(tmp_path / "search" / "oracle.json"))
    assert list(interrupted["ongoing_trials"].values()) == ["1"]
    tuner = _two_trial_search(tmp_path, train, valid, vocabulary, [])
    statuses = {t.trial_id: t.status for t in tuner.oracle.trials.values()}
    assert statuses == {"0": "COMPLETED", "1": "COMPLETED"}


@pytest.mark.slow
def test_a_trial_stopped_after_its_last_backup_completes_when_run_again(
        tmp_path):
    """A search stopped after a trial's last epoch was backed up, before
    the trial's results were written (CI's kill at a random moment once
    landed there): run again, the trial trains no epoch, and its
    objective comes from its history.csv (it failed with "recorded no
    val_perplexity", and the search finished one trial short)."""
    data = os.path.dirname(require_data("ptb", "train.txt"))
    from keras_ordered.datasets import ptb

    (train, valid, _), vocabulary = ptb.load_data(data, max_lines=200)
    trials_begun = []

    class StopAfterTraining(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            trials_begun.append(1)

        def on_train_end(self, logs=None):
            if len(trials_begun) == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _two_trial_search(tmp_path, train, valid, vocabulary,
                          [StopAfterTraining()])
    folder = tmp_path / "search" / "trial_1"
    assert (folder / "backup" / "backup.json").exists()
    assert not (folder / "results.json").exists()
    tuner = _two_trial_search(tmp_path, train, valid, vocabulary, [])
    trials = tuner.oracle.trials
    assert {t.trial_id: t.status for t in trials.values()} == {
        "0": "COMPLETED", "1": "COMPLETED"}
    rows = list(csv.DictReader(open(folder / "history.csv")))
    assert trials["1"].score == pytest.approx(
        float(rows[0]["val_perplexity"]))
    results = json.load(open(folder / "results.json"))
    assert results["epochs_run"] == 1 and results["history"][
        "val_perplexity"] == [trials["1"].score]


@pytest.mark.slow
def test_trials_train_in_the_presets_precision(tmp_path, monkeypatch,
                                               capsys):
    """A search trains as the recipe would: in the preset's precision unless
    --precision says otherwise (each trial run by the runner, which sets the
    policy and puts the global one back after); the best model is saved in
    float32."""
    built = []  # the policy of each trial's model

    class Spy(ONLSTMHyperModel):
        def build(self, hp):
            model = super().build(hp)
            built.append(model.dtype_policy.name)
            return model

    def searched(output, *extra):
        built.clear()
        data = os.path.dirname(require_data("ptb", "train.txt"))
        argv = ["--preset", "tiny", "--data", data, "--max-lines", "200",
                "--steps-per-epoch", "2", "--eval-steps", "1", "--verbose",
                "0", "--tuner", "random", "--max-trials", "1",
                "--max-epochs", "1", "--output", str(output), *extra]
        assert search.main(argv, hypermodel_class=Spy,
                           presets=onlstm.PRESETS, description="t",
                           default_output="runs/t") == 0
        results = json.load(open(output / "results.json"))
        best = load_model(output / "best_model.keras")
        assert isinstance(best, ONLSTMLanguageModel)
        # The runner's record of the trial: trained in the search's
        # policy, evaluated and saved in float32.
        trials = glob.glob(str(output / "search" / "trial_*" / "results.json"))
        recorded = {json.load(open(path))["precision"] for path in trials}
        assert len(set(built)) == 1 and recorded == set(built)
        return built[0], results["precision"], best.dtype_policy.name

    monkeypatch.setitem(onlstm.PRESETS["tiny"], "precision", "mixed_bfloat16")
    # On a CPU that emulates bfloat16, the search says so.
    from keras_ordered.training import precision
    monkeypatch.setattr(precision, "cpu_has_native_bfloat16", lambda: False)
    bf16 = "mixed_bfloat16"
    assert searched(tmp_path / "a") == (bf16, "mixed_bfloat16", "float32")
    assert "no native bfloat16" in capsys.readouterr().err
    float32 = "float32"
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        assert searched(tmp_path / "b", "--precision", "float32") == (
            float32, "float32", "float32")
        assert "no native bfloat16" not in capsys.readouterr().err
        assert keras.mixed_precision.global_policy().name == "mixed_float16"
    finally:
        keras.mixed_precision.set_global_policy("float32")
    monkeypatch.delitem(onlstm.PRESETS["tiny"], "precision")
    assert searched(tmp_path / "c") == (float32, "float32", "float32")
    # A search made before --precision existed (no "precision" in its
    # search.json) trained in float32 and continues as such (refused if
    # the missing value were taken for another precision).
    settings = json.load(open(tmp_path / "c" / "search.json"))
    del settings["precision"]
    json.dump(settings, open(tmp_path / "c" / "search.json", "w"))
    assert searched(tmp_path / "c", "--max-trials", "2") == (
        float32, "float32", "float32")
