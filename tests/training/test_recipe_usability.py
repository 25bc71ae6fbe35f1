"""What a user of the recipes sees: help, warnings, quiet start-up, plain
output off a terminal, explicit resumption, Ctrl-C, TensorBoard steps."""

import json
import os
import signal
import subprocess
import sys

import pytest
import tensorflow as tf

import command_server
from conftest import REPO
from conftest import require_data
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.models import onlstm
from keras_ordered.models import prpn
from keras_ordered.training import runner
from keras_ordered.training import cpu_time
from keras_ordered.training.tasks import language_model
from keras_ordered.training.callbacks import StepLogger
from keras_ordered.training.callbacks import read_epoch_history

FAMILIES = {
    "onlstm": (ONLSTMLanguageModel, onlstm.PRESETS, onlstm.get_preset),
    "prpn": (PRPNLanguageModel, prpn.PRESETS, prpn.get_preset),
}
PTB_VOCABULARY = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9998)]


def _main(argv, family="onlstm"):
    model_class, presets, get_preset = FAMILIES[family]
    return language_model.main(argv, model_class=model_class, get_preset=get_preset,
                       presets=presets, description="t",
                       default_output="runs/t")


def _tiny_args(output, *extra):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    return ["--preset", "tiny", "--data", data, "--max-lines", "200",
            "--steps-per-epoch", "6", "--eval-steps", "2", "--epochs", "1",
            "--skip-test", "--output", str(output), *extra]


def test_average_from_epoch_needs_an_ntasgd_preset(capsys):
    assert _main(["--preset", "tiny", "--average-from-epoch", "2"],
                 family="prpn") == 2
    assert "--average-from-epoch needs a preset trained with NT-ASGD" in (
        capsys.readouterr().err)


# --- --help -------------------------------------------------------------------
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_help_lists_presets_and_every_option_with_its_default(family):
    model_class, presets, _ = FAMILIES[family]
    # The family the benchmark's command names is the model class's.
    parser = language_model.build_parser(
        "t", presets, "runs/t", family=language_model.family_of(model_class))
    text = parser.format_help()
    for name, preset in presets.items():
        assert f"  {name} " in text
        assert preset["description"][:30] in text
        assert f"{preset['parameters'] / 1e6:.1f}M parameters" in text
    assert "per epoch on CPU" not in text  # measured per machine instead
    assert (f"benchmarks/preset_epoch_time.py --model {family}"
            in " ".join(text.split()))
    formatter = parser._get_formatter()
    for action in parser._actions:
        assert action.help, f"{action.option_strings} has no help text"
        if action.dest == "help":
            continue
        shown = formatter._get_help_string(action)
        if action.default not in (None, False):
            assert "(default: %(default)s)" in shown, action.option_strings
        elif action.default is None:  # says what happens without it
            assert "default" in shown, action.option_strings
    assert "(default: 200)" in text  # --save-freq
    assert "(default: the preset's)" in text  # --epochs
    eval_help = next(a.help for a in parser._actions if a.dest == "eval_steps")
    assert "only part of the data" in eval_help


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_preset_sizes_quoted_in_help_are_the_models(family):
    model_class, presets, _ = FAMILIES[family]
    for name, preset in presets.items():
        model = model_class.from_preset(name, PTB_VOCABULARY)
        assert model.count_params() == preset["parameters"], name
        # Measurements live beside the warning that quotes them
        # (`CPU_MINUTES_PER_EPOCH`), not in the presets; every preset has
        # one.
        assert "cpu_minutes_per_epoch" not in preset
        measured = cpu_time.CPU_MINUTES_PER_EPOCH[model_class.__name__]
        assert measured[name] > 0
    assert set(measured) == set(presets)


def test_paper_preset_on_a_cpu_warns_with_the_time_and_the_alternative(
    monkeypatch,
):
    presets = onlstm.PRESETS
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind: [])
    minutes = cpu_time.CPU_MINUTES_PER_EPOCH
    warning = cpu_time.cpu_warning(
        "ptb", presets, minutes["ONLSTMLanguageModel"])
    assert "no GPU is visible" in warning
    assert "per epoch on a CPU" in warning and "days" in warning
    assert "--preset small" in warning
    prpn_warning = cpu_time.cpu_warning(
        "ptb", prpn.PRESETS, minutes["PRPNLanguageModel"])
    assert "--preset quick" in prpn_warning
    # CPU-sized presets do not warn, and nothing warns with a GPU.
    assert cpu_time.cpu_warning(
        "small", presets, minutes["ONLSTMLanguageModel"]) is None
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind: ["g"])
    assert cpu_time.cpu_warning(
        "ptb", presets, minutes["ONLSTMLanguageModel"]) is None


# --- a run, as a user sees it -----------------------------------------------
@pytest.mark.slow
def test_output_off_a_terminal_is_plain_lines(tmp_path, capsys):
    assert _main(_tiny_args(tmp_path, "--epochs", "2")) == 0
    out = capsys.readouterr().out
    # No progress-bar control characters when stdout is not a terminal:
    # Keras' verbose=2 lines (one per epoch).
    assert not any(c in out for c in "\r\b\x1b")
    assert out.count("6/6 - ") == 2
    assert "Validation perplexity (first 2 windows only: --eval-steps)" in out
    results = json.load(open(tmp_path / "results.json"))
    assert results["eval_steps"] == 2
    assert results["evaluation"].startswith("partial")


@pytest.mark.slow
def test_finished_run_says_so_and_a_changed_layout_is_refused(
    tmp_path, capsys, monkeypatch
):
    run = tmp_path / "run"
    assert _main(_tiny_args(run)) == 0
    stamp = os.path.getmtime(run / "results.json")
    capsys.readouterr()
    # The same command again: finished, nothing re-evaluated.
    assert _main(_tiny_args(run)) == 0
    out = capsys.readouterr().out
    assert f"The run in {run} is finished (1 epochs)" in out
    assert "--epochs 2 or more" in out
    assert os.path.getmtime(run / "results.json") == stamp

    # A run killed in the middle of an epoch of 6 windows ...
    class Crash(runner.LearningRateLogger):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 3:
                raise RuntimeError("simulated crash")

    killed = tmp_path / "killed"
    args = _tiny_args(killed, "--save-freq", "1", "--epochs", "2")
    monkeypatch.setattr(runner, "LearningRateLogger", Crash)
    with pytest.raises(RuntimeError):
        _main(args)
    monkeypatch.setattr(runner, "LearningRateLogger", Crash.__mro__[1])
    capsys.readouterr()
    # ... is not resumed with epochs of another length (that skipped the
    # rest of the epoch), nor with fewer epochs than the one it stopped in.
    changed = [a if a != "6" else "4" for a in args]
    assert _main(changed) == 2
    err = capsys.readouterr().err
    assert "stopped at window 3 of an epoch of 6 windows" in err
    assert "--steps-per-epoch 6" in err
    with pytest.raises(SystemExit) as exit_info:
        _main(args[:-2] + ["--epochs", "0"])
    assert exit_info.value.code == 2
    assert "argument --epochs: must be a positive integer" in (
        capsys.readouterr().err)
    # The same options resume it.
    assert _main(args) == 0
    out = capsys.readouterr().out
    assert "Resuming from epoch 1, window 3 of 6" in out
    # The progress lines count the run's epochs: the rest of epoch 1 is
    # epoch 1 of 2 (Keras' own bar, in a `fit` of 1 epoch, would say
    # nothing).
    assert "Epoch 1/2" in out and "Epoch 2/2" in out
    # history.csv: one row per epoch across the crash, as the finished run.
    assert [row["epoch"] for row in read_epoch_history(
        str(killed / "history.csv"))] == [0, 1]
    finished = read_epoch_history(str(run / "history.csv"))
    assert [row["epoch"] for row in finished] == [0]
    assert finished[0]["val_perplexity"] > 1.0


def test_step_logger_numbers_points_by_global_step_across_a_resume(tmp_path):
    import keras

    model = ONLSTMLanguageModel.from_preset("tiny", 20)
    model.compile(optimizer=keras.optimizers.SGD(0.5))

    def run(logger, epoch, start_batch, batches):
        logger.set_model(model)
        logger.on_epoch_begin(epoch)
        for batch in range(batches):
            logger.on_train_batch_end(batch, {"loss": 2.0, "perplexity": 7.4})
        logger.on_epoch_end(epoch)

    logger = StepLogger(str(tmp_path), every=2, steps_per_epoch=5)
    run(logger, 0, 0, 3)  # killed after window 3 of epoch 1
    resumed = StepLogger(str(tmp_path), every=2, steps_per_epoch=5)
    resumed.epoch, resumed.start_batch = 0, 3
    run(resumed, 0, 3, 2)  # windows 4-5
    run(resumed, 1, 0, 5)  # epoch 2
    resumed.on_train_end()
    steps = {}
    for name in os.listdir(tmp_path):
        for event in tf.compat.v1.train.summary_iterator(str(tmp_path / name)):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(event.step)
    assert sorted(steps) == ["step_learning_rate", "step_loss",
                             "step_perplexity"]
    assert sorted(steps["step_loss"]) == [2, 4, 6, 8, 10]


@pytest.mark.slow
def test_recipe_logs_steps_to_tensorboard(tmp_path, capsys):
    assert _main(_tiny_args(tmp_path, "--log-every", "2")) == 0
    folder = tmp_path / "logs" / "steps"
    steps = []
    for name in os.listdir(folder):
        for event in tf.compat.v1.train.summary_iterator(str(folder / name)):
            steps += [event.step for v in event.summary.value
                      if v.tag == "step_perplexity"]
    assert steps == [2, 4, 6]


# --- the scripts, as processes --------------------------------------------------
def _recipe_process(output, *extra, env=None):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    command = [sys.executable, os.path.join(REPO, "recipes", "ptb_prpn.py"),
               "--preset", "tiny", "--data", data, "--eval-steps", "2",
               "--skip-test", "--output", str(output), *extra]
    environment = dict(os.environ)
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)  # as a user runs it
    environment.pop("KERAS_ORDERED_TF_LOGS", None)
    environment.update(env or {})
    # As from a terminal: SIGINT at its default even when the tests run in
    # the background (`cmd &` starts them with SIGINT ignored, which the
    # recipe rightly keeps ignoring).
    return subprocess.Popen(command_server.argv(command),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=environment, cwd=REPO,
                            preexec_fn=_default_sigint)


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_recipe_starts_quietly_unless_asked(tmp_path):
    steps = ("--max-lines", "100", "--steps-per-epoch", "2", "--epochs", "1")
    process = _recipe_process(tmp_path / "quiet", *steps)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert err == ""  # no absl banner, no cuInit "error", no tf.data warning
    assert "Validation perplexity" in out
    # With --tf-logs, TensorFlow's start-up log reaches stderr; the run is
    # stopped once it has (the quiet run above already trained to the end).
    process = _recipe_process(tmp_path / "loud", *steps, "--tf-logs")
    seen = []
    try:
        for line in process.stderr:
            seen.append(line)
            if "absl::InitializeLog" in line or "cuda" in line.lower():
                break
    finally:
        process.kill()
        process.communicate(timeout=60)
    err = "".join(seen)
    assert "absl::InitializeLog" in err or "cuda" in err.lower(), err
