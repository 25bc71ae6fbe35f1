"""keras_ordered.training.throughput: the FLOPs the throughput benchmarks
divide by, and benchmarks/backend_throughput.py and
benchmarks/train_throughput.py, dry."""

import json
import os
import subprocess
import sys

import pytest
import command_server
from conftest import REPO

from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.training import throughput

VOCABULARY = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9998)]


@pytest.mark.parametrize("family, model_class, mflop", [
    # The figures of the module's docstring (the `ptb` presets, 10,000
    # words).
    ("onlstm", ONLSTMLanguageModel, 151.2),
    ("prpn", PRPNLanguageModel, 262.0),
])
def test_flops_per_token_of_the_ptb_presets(family, model_class, mflop):
    model = model_class.from_preset("ptb", VOCABULARY)
    counted = throughput.FLOPS_PER_TOKEN[family](model)
    assert counted / 1e6 == pytest.approx(mflop, abs=0.1)


def test_the_training_step_trains():
    pytest.importorskip("tensorflow")
    model, one, batch, window = throughput.training_step(
        "onlstm", "tiny", jit_compile=False, precision="float32",
        vocab_size=30, batch=2, window=3)
    before = [w.copy() for w in model.get_weights()]
    one()
    assert (batch, window) == (2, 3)
    assert any((a != b).any() for a, b in zip(before, model.get_weights()))


@pytest.mark.slow  # a process per backend and measurement
def test_backend_throughput_dry_run_prints_a_line_per_measurement():
    process = subprocess.run(
        command_server.argv(
            [sys.executable, os.path.join(REPO, "benchmarks",
                                          "backend_throughput.py"),
             "--model", "onlstm", "--dry-run"]),
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-2000:]
    lines = [json.loads(x) for x in process.stdout.splitlines()
             if x.startswith("{")]
    kinds = {line.get("kind") for line in lines}
    assert {"matmul", "package"} <= kinds, lines
    package = [x for x in lines if x.get("kind") == "package"]
    assert package[0]["tokens_per_second"] > 0
    assert package[0]["device"].startswith(("cpu: ", "gpu: "))


@pytest.mark.slow  # a training step of the tiny preset, in a process
def test_train_throughput_prints_its_runs():
    process = subprocess.run(
        command_server.argv([
         sys.executable, os.path.join(REPO, "benchmarks",
                                      "train_throughput.py"),
         "--model", "onlstm", "--preset", "tiny", "--steps", "1",
         "--vocab-size", "50", "--precision", "float32", "--jit", "off",
         "--matmul-size", "256"]),
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-2000:]
    result = json.loads(process.stdout[process.stdout.index("{"):])
    (run,) = result["runs"]
    assert run["tokens_per_second"] > 0 and run["fraction_of_float32_matmul"] > 0


def test_step_seconds_warms_up_then_times_each_step():
    calls = []
    times = throughput.step_seconds(lambda: calls.append(1), 3, warmup=2)
    assert len(calls) == 5 and len(times) == 3
    assert all(t >= 0 for t in times)
