"""Training tokens/s of the language models on each Keras backend, beside
the official PyTorch code, as JSON lines.

One JSON line per measurement. In one run, alternating, each in a process
of its own (a backend is chosen when Keras is imported):

- `package`: full training steps through `model.fit` (the recipe's
  carried-state `train_step`: every dropout of the preset, clipping,
  carried state, the preset's optimizer) at the preset's batch and window,
  on the backend asked for, per precision; the median step time after
  two warm-up steps (compilation), with the step's loss read back so that
  asynchronous backends are timed to the end of the step;
- `official`: the official code's harness (`../shared/reference/harness`,
  given with `--official DIR`; never part of the package) on the same
  device;
- `matmul`: the float32 rate of a chain of 2048 x 2048 products on the
  backend's device, the ceiling each training rate is a fraction of.

float32 products run in float32 everywhere, the official code's included
(no TensorFloat-32 on the GPUs that have it), as the recipes train.

    python benchmarks/backend_throughput.py --model onlstm prpn --preset ptb \
        --backends tensorflow jax torch --official ../shared/reference \
        --steps 4

Each line names the backend, the device, the model, the precision,
`tokens_per_second`, `fraction_of_matmul` (achieved FLOP/s over the same
backend's matmul rate, FLOPs counted by
`keras_ordered.training.throughput`) and, for the package,
`times_official` (over the official code's tokens/s in the same run).
`--dry-run` times the `tiny` presets for one step, the check that the
command still runs (tests/training/test_throughput.py).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = {"onlstm": ("ref_onlstm_torch.py", "onlstm"),
           "prpn": ("ref_prpn_torch.py", "prpn")}


def matmul_rate(size=2048, repeats=10):
    """float32 FLOP/s of `repeats` dependent products on the backend."""
    import keras
    import numpy as np

    backend = keras.backend.backend()
    rng = np.random.default_rng(0)
    a = rng.normal(size=(size, size)).astype("float32")
    b = (rng.normal(size=(size, size)) / size**0.5).astype("float32")
    if backend == "jax":
        import jax

        @jax.jit
        def chain(a, b):
            for _ in range(repeats):
                a = a @ b
            return a

        a, b = jax.device_put(a), jax.device_put(b)
        run = lambda: chain(a, b).block_until_ready()  # noqa: E731
    elif backend == "torch":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        a, b = torch.tensor(a, device=device), torch.tensor(b, device=device)

        def run():
            with torch.no_grad():
                out = a
                for _ in range(repeats):
                    out = out @ b
                if device == "cuda":
                    torch.cuda.synchronize()
                return out
    else:
        import tensorflow as tf

        a, b = tf.constant(a), tf.constant(b)

        @tf.function
        def chain(a, b):
            for _ in range(repeats):
                a = tf.matmul(a, b)
            return a

        run = lambda: chain(a, b).numpy()  # noqa: E731
    run()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 * repeats / best


def package_rate(family, preset, steps, precision):
    """Tokens/s of the package's training steps (`model.fit`)."""
    import keras
    import numpy as np

    from keras_ordered.training.config import LanguageModelTraining
    from keras_ordered.training.optimizers import make_optimizer
    from keras_ordered.training.throughput import FAMILIES
    from keras_ordered.training.throughput import FLOPS_PER_TOKEN

    model_class, get_preset = FAMILIES[family]
    training = LanguageModelTraining.from_dict(get_preset(preset)["training"])
    batch, window = training.batch_size, training.bptt
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(9998)]
    keras.mixed_precision.set_global_policy(precision)
    keras.utils.set_random_seed(0)
    model = model_class.from_preset(preset, vocabulary, seed=0)
    model.compile(optimizer=make_optimizer(training))
    model.configure_bptt(batch, batch, clip_norm=training.clip_norm)
    rng = np.random.default_rng(0)

    def windows():
        while True:
            ids = rng.integers(0, len(vocabulary), (batch, window + 1))
            yield ({"token_ids": ids[:, :-1].astype("int32"),
                    "reset": np.zeros((batch, 1), "float32"),
                    "lr_scale": np.ones((batch, 1), "float32")},
                   ids[:, 1:].astype("int32"))

    stamps = []

    class Clock(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            float(logs["loss"])  # the step has finished
            stamps.append(time.perf_counter())

    start = time.perf_counter()
    model.fit(windows(), steps_per_epoch=steps + 2, epochs=1, verbose=0,
              shuffle=False, callbacks=[Clock()])
    times = [b - a for a, b in zip(stamps[1:], stamps[2:])]
    seconds = statistics.median(times)
    tokens = batch * window
    flops = FLOPS_PER_TOKEN[family](model)
    return {"tokens_per_second": round(tokens / seconds, 1),
            "step_seconds_median": round(seconds, 4),
            "first_two_steps_seconds": round(stamps[1] - start, 1),
            "batch": batch, "window": window,
            "flops_per_token": flops}


def measure(args):
    """One measurement in this process (`--child`): prints one JSON line."""
    import keras_ordered  # noqa: F401  (first: the recipes' process set-up)
    import keras

    from keras_ordered import backend

    line = {"kind": args.child, "backend": keras.backend.backend(),
            "device": backend.device_name()}
    # float32 products in float32, as the recipes train (no TensorFloat-32
    # on the GPUs that have it: `backend.float32_matmuls`).
    with backend.float32_matmuls():
        if args.child == "matmul":
            # A dry run checks the command: a smaller product (1024, an
            # eighth of the work) still gives the rate's order.
            line["float32_flops"] = round(
                matmul_rate(1024 if args.dry_run else 2048))
        else:
            (family,) = args.model
            (precision,) = args.precision
            line.update(model=family, preset=args.preset,
                        precision=precision)
            line.update(package_rate(family, args.preset, args.steps,
                                     precision))
    print(json.dumps(line), flush=True)


def run_child(command, env):
    result = subprocess.run(command, capture_output=True, text=True,
                            env=env, cwd=ROOT)
    lines = [line for line in result.stdout.splitlines()
             if line.startswith("{")]
    if result.returncode != 0 or not lines:
        return {"error": result.stderr.strip().splitlines()[-1:]
                or [f"exit {result.returncode}"], "command": command}
    return json.loads(lines[-1])


def official(family, args):
    script, folder = HARNESS[family]
    command = [sys.executable,
               os.path.join(args.official, "harness", script),
               "--src", os.path.join(args.official, folder),
               "--steps", str(1 if args.dry_run else args.steps)]
    if args.device:
        command += ["--device", args.device]
    if args.dry_run:  # the paper's sizes, one tiny batch, no warm-up
        command += ["--batch", "2", "--bptt", "5", "--warmup", "0"]
    # The official code in float32 too: PyTorch's cuDNN convolutions
    # (PRPN's parser) default to TensorFloat-32 on the GPUs that have it;
    # NVIDIA's libraries read this switch.
    line = run_child(command, dict(os.environ, NVIDIA_TF32_OVERRIDE="0"))
    line.update(kind="official", model=family)
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["onlstm", "prpn"],
                        choices=sorted(HARNESS))
    parser.add_argument("--preset", default="ptb")
    parser.add_argument("--backends", nargs="+", default=None,
                        choices=["tensorflow", "jax", "torch"],
                        help="default: the configured Keras backend")
    parser.add_argument("--precision", nargs="+", default=["float32"],
                        choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1,
                        help="measure the official code and the package "
                        "this many times, alternating, and print the "
                        "medians")
    parser.add_argument("--official", default=None, metavar="DIR",
                        help="the folder of the official code and its "
                        "harness (../shared/reference); not measured "
                        "without it")
    parser.add_argument("--device", default=None,
                        help="the official harness's --device (cuda on a "
                        "GPU)")
    parser.add_argument("--dry-run", action="store_true",
                        help="tiny presets, one step: checks the command")
    parser.add_argument("--child", choices=["matmul", "package"],
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return measure(args)
    if args.dry_run:
        args.preset, args.steps = "tiny", 1
    backends = args.backends or [os.environ.get("KERAS_BACKEND",
                                                "tensorflow")]
    # The children set the process up as the recipes do (`KERAS_ORDERED_QUIET`:
    # TensorFlow's pooled CPU allocator, `keras_ordered._cpu_memory`).
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.setdefault("KERAS_ORDERED_QUIET", "1")
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    me = [sys.executable, os.path.abspath(__file__)]
    lines = []
    for backend in backends:
        child_env = dict(env, KERAS_BACKEND=backend)
        line = run_child(me + ["--child", "matmul"]
                         + (["--dry-run"] if args.dry_run else []),
                         child_env)
        lines.append(dict(line, kind="matmul", backend=backend))
        print(json.dumps(lines[-1]), flush=True)
    for family in args.model:
        for repeat in range(args.repeats):
            # Official and package one after the other, `--repeats` times:
            # a change of load touches both.
            if args.official:
                lines.append(dict(official(family, args), repeat=repeat))
                print(json.dumps(lines[-1]), flush=True)
            for precision in args.precision:
                for backend in backends:
                    command = me + ["--child", "package", "--model", family,
                                    "--precision", precision, "--preset",
                                    args.preset, "--steps", str(args.steps)]
                    line = run_child(command,
                                     dict(env, KERAS_BACKEND=backend))
                    line.setdefault("backend", backend)
                    line.setdefault("model", family)
                    line.setdefault("precision", precision)
                    line.update(kind="package", repeat=repeat)
                    lines.append(line)
                    summarise(line, [other for other in lines if
                                     other.get("repeat") in (None, repeat)])
                    print(json.dumps(line), flush=True)
        if args.repeats > 1:
            print(json.dumps(median_summary(family, lines)), flush=True)
    return 0


def median_summary(family, lines):
    """The medians over the repeats, per backend and precision, and the
    ratio of the package's median to the official code's."""
    def median(values):
        return round(statistics.median(values), 1) if values else None

    official_rates = [
        line.get("tokens_per_s_median", line.get("tokens_per_s"))
        for line in lines if line.get("kind") == "official"
        and line.get("model") == family and "error" not in line]
    summary = {"kind": "summary", "model": family,
               "official_tokens_per_second": median(official_rates),
               "package": {}}
    for line in lines:
        if (line.get("kind") == "package" and line.get("model") == family
                and "tokens_per_second" in line):
            key = f"{line['backend']}/{line['precision']}"
            summary["package"].setdefault(key, []).append(
                line["tokens_per_second"])
    for key, rates in summary["package"].items():
        rate = median(rates)
        summary["package"][key] = {
            "tokens_per_second": rate,
            "times_official": (round(rate / summary[
                "official_tokens_per_second"], 2)
                if summary["official_tokens_per_second"] else None)}
    return summary


def summarise(line, lines):
    """Adds the fraction of the backend's matmul rate and the ratio to the
    official code's tokens/s measured in this run."""
    if "tokens_per_second" not in line:
        return
    for other in lines:
        if (other.get("kind") == "matmul"
                and other.get("backend") == line["backend"]
                and other.get("float32_flops")):
            line["fraction_of_matmul"] = round(
                line["tokens_per_second"] * line["flops_per_token"]
                / other["float32_flops"], 3)
        rate = other.get("tokens_per_s_median", other.get("tokens_per_s"))
        if (other.get("kind") == "official"
                and other.get("model") == line["model"] and rate):
            line["times_official"] = round(line["tokens_per_second"] / rate,
                                           2)


if __name__ == "__main__":
    sys.exit(main())
