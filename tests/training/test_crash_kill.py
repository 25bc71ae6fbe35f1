"""Long jobs killed with SIGKILL at a random moment resume and lose at most
the trial or seed in flight: a keras-tuner search and the
multi-seed benchmark benchmarks/parsing_quality.py."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from conftest import require_data

pytestmark = pytest.mark.slow  # kills recipe subprocesses


def _processes_of(path):
    """PIDs of the live processes whose command line names `path` (the
    test's own folder: processes this test started)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                command = f.read().decode(errors="replace")
            with open(f"/proc/{name}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue  # a zombie waiting for its parent
        except OSError:
            continue
        if str(path) in command:
            pids.append(int(name))
    return pids


def _wait_until(process, condition, what, timeout=400):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        if process.poll() is not None:
            pytest.fail(f"the job ended (exit {process.returncode}) before "
                        f"{what}")
        time.sleep(0.1)
    pytest.fail(f"no {what} in {timeout} s")


def _kill_at_random(process, seed, high):
    """SIGKILL after a random delay in [0, high) s drawn from `seed`."""
    time.sleep(random.Random(seed).uniform(0.0, high))
    assert process.poll() is None, "finished before the kill: nothing tested"
    process.send_signal(signal.SIGKILL)
    process.wait()


def _run(command):
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                          timeout=900)


def _leave_no_process(path):
    for pid in _processes_of(path):  # an orphan of the killed job
        os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_search_killed_at_a_random_moment_keeps_finished_trials(tmp_path):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    output = tmp_path / "search"
    command = [sys.executable, os.path.join(REPO, "recipes", "tune_onlstm.py"),
               "--preset", "tiny", "--data", data, "--max-lines", "200",
               "--steps-per-epoch", "3", "--eval-steps", "2", "--verbose",
               "0", "--tuner", "random", "--max-trials", "3",
               "--max-epochs", "1", "--output", str(output)]

    def finished():
        trials = {}
        for name in os.listdir(output / "search"):
            path = output / "search" / name / "trial.json"
            if name.startswith("trial_") and path.exists():
                state = json.load(open(path))  # whole, or this fails
                if state["status"] == "COMPLETED":
                    trials[state["trial_id"]] = state["score"]
        return trials

    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        _wait_until(process, lambda: (output / "search").is_dir()
                    and finished(), "finished trial")
        _kill_at_random(process, seed=25, high=8.0)
        before = finished()
        result = _run(command)
    finally:
        if process.poll() is None:
            process.kill()
        _leave_no_process(tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{len(before)} trial(s) already finished" in result.stdout
    after = finished()
    assert len(after) == 3
    assert {k: after[k] for k in before} == before  # kept, not run again
    assert json.load(open(output / "results.json"))["trials_finished"] == 3


@pytest.mark.slow
def test_benchmark_killed_at_a_random_moment_keeps_finished_seeds(tmp_path):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    # Two files of each split, copied for this test only (parsing every
    # seed's model on the whole sample took most of the test's time).
    treebank = tmp_path / "mrg"
    treebank.mkdir()
    for name in ("wsj_0001.mrg", "wsj_0002.mrg", "wsj_0100.mrg",
                 "wsj_0101.mrg"):
        shutil.copy(require_data("wsj_sample", "mrg", name), treebank)
    output = tmp_path / "study"
    command = [sys.executable,
               os.path.join(REPO, "benchmarks", "parsing_quality.py"),
               "--family", "onlstm", "--preset", "tiny", "--seeds", "1", "2",
               "--data", data, "--treebank", str(treebank), "--output",
               str(output), "--", "--max-lines", "200", "--steps-per-epoch",
               "4", "--eval-steps", "2", "--epochs", "1", "--save-freq", "1"]
    first = output / "seed_1" / "parsing.json"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        _wait_until(process, first.exists, "finished seed")
        stamp = os.path.getmtime(first)
        # Seed 2 is training (or parsing) now.
        _kill_at_random(process, seed=25, high=15.0)
        backup = output / "seed_2" / "backup" / "backup.json"
        had_backup = backup.exists()
        # The recipe the study ran ends with it (it would otherwise train
        # on beside the next run's, into the same backup).
        deadline = time.time() + 20
        while _processes_of(output) and time.time() < deadline:
            time.sleep(0.2)
        assert not _processes_of(output), "the study's recipe outlived it"
        result = _run(command)
    finally:
        if process.poll() is None:
            process.kill()
        _leave_no_process(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.path.getmtime(first) == stamp  # seed 1 not trained again
    assert "[seed 1] trained" not in result.stdout
    summary = json.load(open(output / "summary.json"))
    assert summary["seeds"] == [1, 2]
    if had_backup:
        log = open(output / "seed_2" / "train.log").read()
        assert "Resuming" in log or "Training finished" in log
