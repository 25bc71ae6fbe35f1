"""`benchmarks/step_bound.py`: a training step's products alone."""

import json
import os
import subprocess
import sys

import pytest
import command_server
from conftest import REPO
from conftest import load_benchmark

from keras_ordered.training import throughput

step_bound = load_benchmark("step_bound")


def _model(family, preset="tiny", vocab_size=50):
    model, _, batch, window = throughput.training_step(
        family, preset, jit_compile=False, precision="float32",
        vocab_size=vocab_size, batch=3, window=4)
    return model, batch, window


BOTH = ("batched", "per_step")


def _counts(family):
    """The model, its rows, the step's FLOPs as keras_ordered.training.throughput counts
    them, and the FLOPs of each program (both parts, per step, batched)."""
    model, batch, window = _model(family)
    rows = batch * window
    flops = {
        parts: step_bound.time_program(family, model, batch, window,
                                       parts)[1]
        for parts in (BOTH, ("per_step",), ("batched",))}
    counted = throughput.FLOPS_PER_TOKEN[family](model) * rows
    return model, rows, counted, flops


def test_onlstm_program_has_the_steps_flops_and_its_recurrence_per_step():
    model, rows, counted, flops = _counts("onlstm")
    assert flops[BOTH] == counted
    assert flops[("batched",)] + flops[("per_step",)] == flops[BOTH]
    # Per step: h @ U forward and dz @ U^T backward; dU is one product
    # over all rows after the loop, so it is batched.
    recurrent = sum(layer.cell.units * layer.cell.gate_size
                    for layer in model.rnn_layers)
    assert flops[("per_step",)] == 2 * 2 * rows * recurrent


def test_prpn_program_has_the_steps_flops_but_the_distance_heads():
    model, rows, counted, flops = _counts("prpn")
    # The count includes the two width-1 distance heads (parser_units
    # MACs per token, three times); the program leaves them out.
    assert flops[BOTH] == counted - 3 * 2 * model.parser_units * rows
    assert flops[("batched",)] + flops[("per_step",)] == flops[BOTH]
    d, m = model.hidden_dim, model.num_slots
    # Forward: query from h (d x d), scores and two read-outs (3 M d), the
    # LSTM's recurrent product (d x 4d); backward: their transposes, and
    # two products for each of the three attention products (6 M d).
    per_layer = 2 * (d * d + 3 * m * d + 4 * d * d) + 2 * (
        4 * d * d + d * d + 6 * m * d)
    assert flops[("per_step",)] == rows * model.num_layers * per_layer


def _executed_products(run):
    """How many product kernels one call of `run` executes (a trace)."""
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    profile_step = load_benchmark("profile_step")
    log_dir = tempfile.mkdtemp(prefix="step_bound_")
    tf.profiler.experimental.start(log_dir)
    run()
    tf.profiler.experimental.stop()
    count = 0
    for root, _, files in os.walk(log_dir):
        for name in files:
            if not name.endswith(".xplane.pb"):
                continue
            space = xplane_pb2.XSpace()
            with open(os.path.join(root, name), "rb") as f:
                space.ParseFromString(f.read())
            for plane in space.planes:
                for line in plane.lines:
                    for event in line.events:
                        op = profile_step.OP_EVENT.match(
                            plane.event_metadata[event.metadata_id].name)
                        if op and profile_step.MATMUL_TYPES.match(op.group(2)):
                            count += 1
    return count


@pytest.mark.parametrize("family", ["onlstm", "prpn"])
@pytest.mark.parametrize("parts", [("per_step",), ("batched",)])
def test_every_counted_product_runs(family, parts):
    # The graph optimizer drops work whose result nothing reads: a
    # recurrence kept only for its FLOP count would be counted and not
    # timed (the per-step program of ON-LSTM once ran one of its three
    # forward chains).
    model, batch, window = _model(family)
    run, _, products = step_bound.time_program(family, model, batch, window,
                                               parts)
    assert products > 10
    assert _executed_products(run) == products


@pytest.mark.slow
def test_the_script_prints_one_json_line():
    out = subprocess.run(
        command_server.argv(
            [sys.executable, "benchmarks/step_bound.py", "--model",
             "onlstm", "--preset", "tiny", "--vocab-size", "50",
             "--repeats", "1", "--batch", "3", "--window", "4",
             "--matmul-size", "256"]),
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=REPO))
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["program_flops"]["products"] == result["step_flops_counted"]
    assert 0 < result["products_fraction_of_matmul"]
    assert 0 < result["parts_fraction_of_matmul"]
    assert set(result["recurrent_product_gflops_by_rows"]) == {
        "3", "64", "200", "12"}  # the batch, 64, 200, batch x window
    assert result["step_over_products_time"] > 0
    assert set(result["seconds"]) == {"products", "batched", "per_step",
                                      "step"}
