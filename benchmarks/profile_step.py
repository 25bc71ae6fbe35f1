"""Where a training step's time goes, kernel by kernel, as JSON.

Traces `--steps` full training steps of a preset (the recipe's
`train_step`: every dropout, clipping, carried state, the preset's
optimizer; the default precision and loop unless told) with TensorFlow's
profiler, then reads the host trace (`*.xplane.pb`) and splits the busy
time of every thread into:

- `matrix products`: MatMul / convolution kernels (oneDNN's `_Mkl*`
  included), wherever they run;
- `loss`: the softmax cross-entropy and the loss's scope;
- `optimizer`: the optimizer's scope (`torch_adam/`, `SGD/`, ...) and the
  variable updates;
- `gradient clipping`: the global norm and the scaling;
- `batch norm` (PRPN's parser and predict network), `layer norm` (PRPN's
  cell: `input_norm`, `recurrent_norm`, `cell_norm`);
- `memory attention`: PRPN's attention over its memory (ops in a scope
  named `attention` or `memory`, matrix products excepted);
- `XLA kernels`: the fused kernels of code compiled by XLA (on
  TensorFlow: PRPN's cell work, and the fused token loss of ON-LSTM and the
  LSTM), and `XLA launches`: the executable calls around them;
- `loop control and state`: `While` machinery, tensor lists, slices and
  copies of the per-step state;
- `element-wise (in loops)`: the other ops of a loop body (gate math);
- `dropout`: the masks (random-number kernels) and their application;
- `embedding`: the lookup and its gradient (the tied output product
  counts as a matrix product);
- `executor dispatch`: time in TensorFlow's executor outside any kernel,
  the per-op cost of running many small ops;
- `other`: the rest (transposes, biases and element-wise ops outside
  loops).

Each category is per training step in milliseconds of thread time (the
threads together; on 2 cores it can exceed the wall time), and as a
fraction of all busy time. The JSON also gives the wall time per step,
tokens per second, the top kernels, the thread time left idle, and the
rate of the matrix products inside their own kernels and over the whole
step, as fractions of the same process's 2048 x 2048 float32 matmul rate
(the FLOPs counted by `keras_ordered.training.throughput`).

    python benchmarks/profile_step.py --model onlstm --preset ptb --steps 3
    python benchmarks/profile_step.py --model prpn --preset ptb --steps 2

The profiler adds some time per kernel: compare the split, not the
tokens per second, with `train_throughput.py`'s.
"""

import argparse
import collections
import glob
import json
import os
import platform
import re
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

import numpy as np  # noqa: E402

import keras_ordered  # noqa: E402,F401  (first: it sets the process up)
from keras_ordered.training import throughput  # noqa: E402
from keras_ordered.training.config import DEFAULT_PRECISION  # noqa: E402

MATMUL_TYPES = re.compile(
    r"^(_Mkl|_MklNative|_Fused|_MklFused)?(MatMul|BatchMatMul\w*|Conv\w*|"
    r"Einsum|FusedMatMul|NativeFusedMatMul|NativeConv\w*)$")
CONTROL_TYPES = re.compile(
    r"^(Enter|Exit|Merge|Switch|NextIteration|LoopCond|_SwitchN|Identity\w*|"
    r"TensorList\w*|TensorArray\w*|StridedSlice\w*|Slice|Pack|Unpack|"
    r"ConcatV2|Const|_Recv|_Send|Reshape|ExpandDims|Squeeze|ZerosLike|"
    r"OnesLike|Fill|Shape\w*|_HostRecv|_HostSend|Placeholder|"
    r"ReadVariableOp|Less|LessEqual|GreaterEqual|Range|Cast)$")
# A kernel of TensorFlow's executor: "scope/name:Type".
OP_EVENT = re.compile(r"^(\S+):([A-Za-z_][A-Za-z0-9_]*)$")
# A kernel of an XLA executable: "multiply_add_fusion.1", "wrapped_...".
HLO_EVENT = re.compile(r"^[a-z][a-z0-9_.\-]*$")
CONTAINERS = {"While", "StatelessWhile", "PartitionedCall",
              "StatefulPartitionedCall", "If", "StatelessIf"}
EXECUTOR = ("ExecutorState::Process",)
XLA_LAUNCH = ("ExecutorState::ProcessAsync", "CpuExecutable", "ThunkExecutor",
              "BlockUntilReady")
TRANSPARENT = {"ParallelFor"}  # intra-op work: its op's time
WRAPPERS = {"one_step_on_data"}

SCOPES = [
    ("loss", re.compile(r"SparseSoftmaxCrossEntropy|(^|/)(token_)?loss"
                        r"(_\d+)?/")),
    ("optimizer", re.compile(r"^(torch_adam|adam|sgd|SGD|Adam|optimizer|"
                             r"averaged\w*)(_\d+)?/|Apply|AssignVariable|"
                             r"AssignAddVariable|AssignSubVariable")),
    ("gradient clipping", re.compile(r"(^|/)(global_norm|clip\w*)(_\d+)?/")),
    ("batch norm", re.compile(r"(^|/)batch_norm(_\d+)?/")),
    ("layer norm", re.compile(r"(^|/)(input|recurrent|cell)_norm(_\d+)?/")),
    ("memory attention", re.compile(r"attention|memory")),
    ("dropout", re.compile(r"dropout")),
    ("embedding", re.compile(r"(^|/)embedding(_\d+)?/")),
]
CATEGORIES = ["matrix products", "loss", "optimizer", "gradient clipping",
              "batch norm", "layer norm", "memory attention", "XLA kernels",
              "XLA launches", "loop control and state",
              "element-wise (in loops)", "dropout", "embedding",
              "executor dispatch", "other"]


def categorize(name):
    """The category of a trace event (None: a wrapper, not counted)."""
    if name in WRAPPERS:
        return None
    if name.startswith(EXECUTOR):
        return "executor dispatch"
    if name.startswith(XLA_LAUNCH):
        return "XLA launches"
    if "::" in name:
        return None  # the eager runtime's calls around the step
    op = OP_EVENT.match(name)
    if op:
        scope, kind = op.groups()
        if MATMUL_TYPES.match(kind):
            return "matrix products"
        for category, pattern in SCOPES:
            if pattern.search(scope) or pattern.search(kind):
                return category
        if kind.startswith(("StatelessRandom", "RandomUniform")):
            return "dropout"
        if CONTROL_TYPES.match(kind):
            return "loop control and state"
        if "while" in scope:
            return "element-wise (in loops)"
        return "other"
    if HLO_EVENT.match(name):
        return "XLA kernels"
    return None  # the eager and Python wrappers around the step


def self_times(space):
    """{event name: self time in ps} over the host threads of a trace.

    An event's self time is its duration less that of the events nested
    in it on the same thread; `ParallelFor` (intra-op work) counts for the
    kernel it runs in, and containers (`While`, function calls) count
    only their own time.
    """
    totals = collections.Counter()
    for plane in space.planes:
        if not plane.name.startswith("/host:CPU"):
            continue
        names = {key: value.name for key, value in plane.event_metadata.items()}
        for line in plane.lines:
            events = sorted(
                ((e.offset_ps, e.offset_ps + e.duration_ps,
                  names[e.metadata_id]) for e in line.events
                 if names[e.metadata_id] not in TRANSPARENT),
                key=lambda e: (e[0], -e[1]))
            stack = []  # [end, name, self time]
            for start, end, name in events:
                while stack and stack[-1][0] <= start:
                    _, done, own = stack.pop()
                    totals[done] += own
                if stack:
                    stack[-1][2] -= min(end, stack[-1][0]) - start
                stack.append([end, name, end - start])
            while stack:
                _, done, own = stack.pop()
                totals[done] += own
    return totals


def profile(family, preset, steps, precision, jit_compile, vocab_size,
            matmul_size=throughput.MATMUL_SIZE):
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    model, one, batch, window = throughput.training_step(
        family, preset, jit_compile, precision, vocab_size)
    untraced = throughput.step_seconds(one, steps)
    log_dir = tempfile.mkdtemp(prefix="profile_step_")
    tf.profiler.experimental.start(
        log_dir, options=tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=2, python_tracer_level=0))
    start = time.perf_counter()
    for _ in range(steps):
        one()
    traced_seconds = (time.perf_counter() - start) / steps
    tf.profiler.experimental.stop()
    path = sorted(glob.glob(os.path.join(log_dir, "**", "*.xplane.pb"),
                            recursive=True))[-1]
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())

    by_category = collections.Counter()
    kernels = collections.Counter()
    for name, ps in self_times(space).items():
        category = categorize(name)
        if category is None:
            continue
        ms = ps / 1e9 / steps
        by_category[category] += ms
        if category not in ("executor dispatch", "XLA launches"):
            kind = OP_EVENT.match(name)
            kernels[kind.group(2) if kind else name] += ms
    busy = sum(by_category.values())
    seconds = float(np.median(untraced))
    tokens = batch * window
    flops = throughput.FLOPS_PER_TOKEN[family](model) * tokens
    matmul_ms = by_category["matrix products"]
    peak = throughput.matmul_flops("float32", matmul_size)
    threads = (tf.config.threading.get_intra_op_parallelism_threads()
               or os.cpu_count())
    return {
        "model": family, "preset": preset, "precision": precision,
        "jit_compile": jit_compile, "batch": batch, "window": window,
        "steps_traced": steps,
        "step_seconds_median": round(seconds, 4),
        "tokens_per_second": round(tokens / seconds, 1),
        "traced_step_seconds": round(traced_seconds, 4),
        "busy_thread_ms_per_step": round(busy, 1),
        "ms_per_step": {c: round(by_category[c], 1) for c in CATEGORIES},
        "fraction_of_busy": {c: round(by_category[c] / busy, 3)
                             for c in CATEGORIES},
        "top_kernels_ms_per_step": {
            k: round(v, 1) for k, v in kernels.most_common(15)},
        "threads": threads,
        "idle_thread_ms_per_step": round(
            threads * traced_seconds * 1e3 - busy, 1),
        # The products' rate while they run, per thread, against the
        # 2048 x 2048 product's rate per thread.
        "matmul_kernels_fraction_of_peak": round(
            flops / (matmul_ms / 1e3) / (peak / threads), 3)
        if matmul_ms else None,
        "whole_step_fraction_of_peak": round(flops / seconds / peak, 3),
        "float32_matmul_peak_gflops": round(peak / 1e9, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(throughput.FAMILIES),
                        default="onlstm")
    parser.add_argument("--preset", default="ptb")
    parser.add_argument("--steps", type=int, default=2,
                        help="training steps traced (after two untraced)")
    parser.add_argument("--precision", default=None,
                        help="dtype policy (default: the recipes' default "
                        "for the family)")
    parser.add_argument("--jit", choices=("off", "on"), default="off",
                        help="XLA on the whole step (default: off, the "
                        "recipes' default on TensorFlow)")
    parser.add_argument("--vocab-size", type=int, default=10000)
    throughput.add_matmul_size_option(parser)
    args = parser.parse_args()
    precision = args.precision or DEFAULT_PRECISION
    result = profile(args.model, args.preset, args.steps, precision,
                     args.jit == "on", args.vocab_size, args.matmul_size)
    result["cpu"] = platform.processor() or platform.machine()
    with open("/proc/cpuinfo") if os.path.exists("/proc/cpuinfo") else (
            open(os.devnull)) as f:
        info = f.read()
    model_name = re.search(r"model name\s*:\s*(.*)", info)
    result["cpu"] = model_name.group(1) if model_name else result["cpu"]
    result["cpu_flags"] = [flag for flag in ("avx2", "avx512f", "avx512_bf16",
                                             "amx_bf16")
                           if re.search(rf"\b{flag}\b", info)]
    result["onednn_max_cpu_isa"] = os.environ.get("ONEDNN_MAX_CPU_ISA")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
