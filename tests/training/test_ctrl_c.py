"""Ctrl-C (a real SIGINT) stops a recipe within seconds wherever it is, the
backup stays whole, and the same command resumes."""

import json
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

import command_server
from conftest import REPO
from conftest import require_data
from parity import require_backend

pytestmark = pytest.mark.slow  # interrupts recipe subprocesses

# A correctness bound for a loaded 2-core CPU, not a speed target: a Ctrl-C
# in the first training step must not wait for the whole step to end.
STOP_SECONDS = 15


def _command(output, phases, sentences):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    treebank = require_data("wsj_sample", "mrg")
    return [sys.executable, os.path.join(REPO, "tests", "recipe_phases.py"),
            str(phases), "--preset", "tiny", "--data", data,
            "--max-lines", "300", "--steps-per-epoch", "4", "--epochs", "1",
            "--eval-steps", "3", "--save-freq", "2", "--skip-test",
            "--parse-eval", treebank, "--parse-eval-sentences", str(sentences),
            "--verbose", "2", "--output", str(output)]


def _start(command, backend="tensorflow"):
    # As a user runs it: TensorFlow's log settings not inherited from the
    # tests, and SIGINT at its default, as from a terminal, even when the
    # tests run in the background (`cmd &` starts them with SIGINT ignored).
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_ORDERED_TF_LOGS")}
    environment["KERAS_BACKEND"] = backend
    return subprocess.Popen(
        command_server.argv(command), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=REPO, env=environment,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for(process, phases, phase, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline and process.poll() is None:
        if phases.exists() and phase in phases.read_text().split():
            return
        time.sleep(0.05)
    out, err = process.communicate(timeout=60)
    pytest.fail(f"the recipe never entered {phase!r} (exit "
                f"{process.returncode}):\n{out[-2000:]}\n{err[-2000:]}")


def _check_backup_whole(folder):
    meta = json.load(open(folder / "backup.json"))
    assert sorted(os.listdir(folder)) == ["backup.json", meta["folder"]]
    saved = folder / meta["folder"]
    with h5py.File(saved / "model.weights.h5", "r") as f:
        assert len(f.keys()) > 0
    with np.load(saved / "state.npz") as arrays:
        for name in arrays.files:
            assert np.all(np.isfinite(arrays[name]))
    return meta


def _interrupt(command, backend, output, phases, phase):
    """Starts the command, sends SIGINT inside `phase` and checks the stop:
    within seconds, one line on stderr naming the backup, the backup whole,
    no results. Returns the backup's meta (None before the first backup)
    and the run's stdout."""
    if phases.exists():
        phases.unlink()
    process = _start(command, backend)
    _wait_for(process, phases, phase)
    time.sleep(0.2)  # inside the phase
    sent = time.time()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    stopped = time.time() - sent
    print(f"Ctrl-C in {phase}: stopped {stopped:.1f} s after the signal")
    assert process.returncode == 130, (phase, err)
    assert stopped < STOP_SECONDS, f"{stopped:.1f} s after Ctrl-C in {phase}"
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, (phase, err)

    backup = output / "backup"
    meta = None
    if (backup / "backup.json").exists():
        meta = _check_backup_whole(backup)
        position = (f"epoch {meta['epoch'] + 1}, window {meta['next_batch']}"
                    if meta["next_batch"] else
                    f"start of epoch {meta['epoch'] + 1}")
        assert lines[0] == (
            f"Interrupted. The backup in {backup} is whole ({position}): run "
            "the same command again to resume from it."), phase
    else:
        assert phase == "train", f"no backup after Ctrl-C in {phase}"
        assert lines[0] == (
            "Interrupted before the first backup: nothing to resume (run the "
            "same command again to start over).")
    assert not (output / "results.json").exists(), phase
    return meta, out


def _check_resumed(out, meta):
    """The same command, run after a Ctrl-C that left `meta`, says where it
    resumes from (its stdout `out`)."""
    if meta is None:
        assert "Resuming" not in out
    elif meta["epoch"] == 1:  # training had ended
        assert "Training finished (1 epochs) before the final evaluation" in out
    else:
        assert (f"Resuming from epoch 1, window {meta['next_batch']} of 4"
                in out)


def _finish(command, backend, output, meta):
    """The same command runs to the end after the last Ctrl-C."""
    process = _start(command, backend)
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    _check_resumed(out, meta)
    results = json.load(open(output / "results.json"))
    assert np.isfinite(results["valid_perplexity"])
    assert results["parse_f1"]
    if meta is not None:
        # The training time counts the part before the Ctrl-C: all of it
        # when training had ended (this run only evaluates).
        assert meta["train_seconds"] > 0
        assert results["train_seconds"] >= round(meta["train_seconds"], 1)


@pytest.mark.slow
def test_ctrl_c_in_each_phase_stops_within_seconds_and_the_same_command_resumes(
        tmp_path):
    # One run interrupted in each phase in turn, as a user pressing Ctrl-C
    # and running the same command again: the first training step (before
    # any backup), a backup being written (mid-epoch), validation, the
    # parsing callback (enough sentences that it lasts past the signal) and
    # the final evaluation; then the same command finishes the run. Each
    # run after the first says where it resumes from.
    output, phases = tmp_path / "run", tmp_path / "phases"
    command = _command(output, phases, 400)
    meta = None
    for phase in ("train", "backup", "validation", "parsing", "final"):
        previous = meta
        meta, out = _interrupt(command, "tensorflow", output, phases, phase)
        if phase != "train":
            _check_resumed(out, previous)
    assert meta["epoch"] == 1  # the final evaluation comes after training
    _finish(command, "tensorflow", output, meta)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_ctrl_c_in_a_backup_on_another_backend_resumes_from_its_window(
        tmp_path, backend):
    # The other backends' training: interrupted in the middle of an epoch
    # (a backup of the carried state), resumed from its window.
    require_backend(backend)
    output, phases = tmp_path / "run", tmp_path / "phases"
    command = _command(output, phases, 20)
    meta, _ = _interrupt(command, backend, output, phases, "backup")
    assert meta is not None
    _finish(command, backend, output, meta)


@pytest.mark.slow
def test_a_native_crash_in_a_recipe_prints_the_python_stack():
    # A segmentation fault in native code leaves no Python traceback;
    # within `CtrlC` (every recipe's main) faulthandler names where it was.
    code = (
        "import ctypes\n"
        "from keras_ordered.training.crash_safety import CtrlC\n"
        "def crash_here():\n"
        "    ctypes.string_at(0)\n"
        "CtrlC(lambda: 130).call(crash_here)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, cwd=REPO, env=env, timeout=300)
    assert result.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in result.stderr
    assert "in crash_here" in result.stderr
