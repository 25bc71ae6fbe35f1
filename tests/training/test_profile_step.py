"""`benchmarks/profile_step.py`: a training step's time split by kernel."""

import json
import os
import subprocess
import sys

import pytest
import command_server
from conftest import REPO
from conftest import load_benchmark

profile_step = load_benchmark("profile_step")


def _space(events_per_thread):
    """An XSpace of one host plane; `events_per_thread`: lists of
    (name, start, duration) in picoseconds."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU")
    ids = {}
    for events in events_per_thread:
        line = plane.lines.add()
        for name, start, duration in events:
            if name not in ids:
                ids[name] = len(ids) + 1
                plane.event_metadata[ids[name]].name = name
                plane.event_metadata[ids[name]].id = ids[name]
            line.events.add(metadata_id=ids[name], offset_ps=start,
                            duration_ps=duration)
    return space


def test_self_time_leaves_out_nested_events_and_counts_intra_op_work():
    space = _space([
        [("ExecutorState::Process", 0, 100),
         ("a/MatMul:_MklMatMul", 10, 50),
         ("ParallelFor", 20, 10),  # inside the product: the product's time
         ("a/while/Mul:Mul", 70, 20)],
        [("ExecutorState::Process", 0, 30), ("b/Sum:Sum", 5, 10)],
    ])
    times = profile_step.self_times(space)
    assert times["a/MatMul:_MklMatMul"] == 50
    assert times["a/while/Mul:Mul"] == 20
    assert times["b/Sum:Sum"] == 10
    assert times["ExecutorState::Process"] == (100 - 50 - 20) + (30 - 10)
    assert "ParallelFor" not in times


@pytest.mark.parametrize("name, category", [
    ("gradient_tape/m/embedding_3/Tensordot/MatMul:_MklMatMul",
     "matrix products"),
    ("m/parsing_network_1/convolution:_MklNativeConv2D", "matrix products"),
    ("SparseSoftmaxCrossEntropyWithLogits/x:SparseSoftmaxCrossEntropyWithLogits",
     "loss"),
    ("torch_adam/Sqrt_1:Sqrt", "optimizer"),
    ("global_norm/L2Loss_24:L2Loss", "gradient clipping"),
    ("m/predict_network_1/batch_norm_1/sub:Sub", "batch norm"),
    ("m/reading_network_1/input_norm_1/truediv_1:RealDiv", "layer norm"),
    ("m/onlstm_1_1/while/body/_1/m/onlstm_1_1/while/Sigmoid:Sigmoid",
     "element-wise (in loops)"),
    ("m/onlstm_1_1/while/body/_1/while/TensorListGetItem:TensorListGetItem",
     "loop control and state"),
    ("m/hidden_dropout_1/stateless_random_uniform/x:StatelessRandomUniformV2",
     "dropout"),
    ("multiply_add_fusion.1", "XLA kernels"),
    ("CpuExecutable::ExecuteAsyncOnStream", "XLA launches"),
    ("ExecutorState::Process", "executor dispatch"),
    ("transpose_2:_MklTranspose", "other"),
    ("KernelAndDeviceFunc::Run", None),
    ("EagerLocalExecute: __inference_one_step_on_data_2763", None),
    ("one_step_on_data", None),
])
def test_categories(name, category):
    assert profile_step.categorize(name) == category


@pytest.mark.slow
def test_profile_of_a_tiny_model_prints_json():
    result = subprocess.run(
        command_server.argv(
            [sys.executable, os.path.join(REPO, "benchmarks",
                                          "profile_step.py"),
             "--model", "prpn", "--preset", "tiny", "--steps", "1",
             "--vocab-size", "50", "--matmul-size", "256"]),
        capture_output=True, text=True, timeout=600, cwd=REPO)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["busy_thread_ms_per_step"] > 0
    assert figures["ms_per_step"]["matrix products"] > 0
    assert figures["ms_per_step"]["XLA kernels"] > 0  # PRPN's cell work
    assert sum(figures["fraction_of_busy"].values()) == pytest.approx(
        1.0, abs=0.01)
