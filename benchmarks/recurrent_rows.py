"""A recurrence's matrix product by rows, in four libraries, as JSON.

A recurrent layer's per-step product `h_{t-1} @ U` has as many rows as the
batch (20 in ON-LSTM's `ptb` preset) and reads the whole kernel `U` each
step (1150 x 4830 float32 for that preset's large layers: 22 MB, more than
a core's caches). `step_bound.py` finds such products at a fraction of the
rate the same kernel reaches over many rows. This script asks whether that
is the library or the machine: it times a chain of `--steps` dependent
products `h <- tanh(h @ U)[:, :hidden]` at each of `--rows`, in
TensorFlow (a `tf.function` loop), JAX (a jitted `lax.scan`), PyTorch and
NumPy, each library in a fresh process of its own, best of `--repeats`
chains, with 2 threads where the library lets one set them.

Each JSON line: the library, the rows, the rate (GFLOP/s), the rate at
which the chain reads the kernel (`kernel_gbytes_per_s`: its bytes times
the steps over the time), and beside it the rate at which the same
library reads those bytes when it only sums them (`sum_gbytes_per_s`).
At few rows each kernel element serves few multiply-adds, so the product
needs the kernel at a high rate; if the chain's read rate stays well
under the sum's, memory is not what stops it, the library's product at
those rows is.

    python benchmarks/recurrent_rows.py
    python benchmarks/recurrent_rows.py --rows 20 64 --libraries tensorflow torch
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

LIBRARIES = ("tensorflow", "jax", "torch", "numpy")


def chain(library, kernel, hidden):
    """`(run, total)` in `library`: `run(x, steps) -> h` runs the chain;
    `total() -> float` sums the kernel (a read of its bytes with the least
    arithmetic)."""
    if library == "numpy":
        def run(x, steps):
            h = x
            for _ in range(steps):
                h = np.tanh(h @ kernel)[:, :hidden]
            return h
        return run, lambda: float(kernel.sum())
    if library == "torch":
        import torch

        torch.set_num_threads(2)
        u = torch.from_numpy(kernel)

        def run(x, steps):
            h = torch.from_numpy(x)
            with torch.no_grad():
                for _ in range(steps):
                    h = torch.tanh(h @ u)[:, :hidden]
            return h.numpy()
        return run, lambda: float(u.sum())
    if library == "jax":
        import functools

        import jax
        import jax.numpy as jnp

        u = jnp.asarray(kernel)

        @functools.partial(jax.jit, static_argnums=1)
        def scan(h, steps):
            def body(h, _):
                return jnp.tanh(h @ u)[:, :hidden], None
            return jax.lax.scan(body, h, None, length=steps)[0]

        def run(x, steps):
            return np.asarray(scan(jnp.asarray(x), steps))
        total = jax.jit(jnp.sum)
        return run, lambda: float(total(u))
    if library == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        u = tf.constant(kernel)

        @tf.function
        def loop(h, steps):
            for _ in tf.range(steps):
                h = tf.tanh(h @ u)[:, :hidden]
            return h

        def run(x, steps):
            return loop(tf.constant(x), tf.constant(steps)).numpy()
        total = tf.function(lambda: tf.reduce_sum(u))
        return run, lambda: float(total())
    raise ValueError(f"unknown library {library!r}; one of {LIBRARIES}")


def read_rate(total, nbytes, repeats):
    """GB/s of `total()`, a sum over `nbytes`, best of the calls."""
    total()
    best = float("inf")
    for _ in range(10 * repeats):
        start = time.perf_counter()
        total()
        best = min(best, time.perf_counter() - start)
    return nbytes / best / 1e9


def measure(library, rows_list, hidden, width, steps, repeats):
    """One JSON-ready dict per number of rows, for one library."""
    rng = np.random.default_rng(0)
    kernel = (rng.standard_normal((hidden, width)) /
              hidden ** 0.5).astype("float32")
    run, total = chain(library, kernel, hidden)
    read = read_rate(total, kernel.nbytes, repeats)
    lines = []
    for rows in rows_list:
        x = rng.standard_normal((rows, hidden)).astype("float32")
        out = run(x, 2)  # compile / warm up
        if not np.isfinite(out).all():
            raise RuntimeError(f"{library}: the chain is not finite")
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            run(x, steps)
            best = min(best, time.perf_counter() - start)
        lines.append({
            "library": library, "rows": rows, "hidden": hidden,
            "width": width, "steps": steps,
            "gflops": 2 * rows * hidden * width * steps / best / 1e9,
            "kernel_gbytes_per_s": kernel.nbytes * steps / best / 1e9,
            "seconds_per_step": best / steps,
            "sum_gbytes_per_s": read,
        })
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libraries", nargs="+", choices=LIBRARIES,
                        default=list(LIBRARIES))
    parser.add_argument("--rows", nargs="+", type=int,
                        default=[20, 40, 80, 200, 1400])
    parser.add_argument("--hidden", type=int, default=1150,
                        help="the kernel's rows and the state's width")
    parser.add_argument("--width", type=int, default=4830,
                        help="the kernel's columns (4 gates + 2 master "
                             "gates of hidden / chunk)")
    parser.add_argument("--steps", type=int, default=70)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.rows + [args.hidden, args.steps, args.repeats]) < 1 or (
            args.width < args.hidden):
        parser.error("rows, hidden, steps and repeats must be positive, "
                     "and width at least hidden")
    if args.child:
        for line in measure(args.libraries[0], args.rows, args.hidden,
                            args.width, args.steps, args.repeats):
            print(json.dumps(line))
        return 0
    from keras_ordered._cpu import describe_cpu  # the parent only

    cpu = describe_cpu()
    for library in args.libraries:
        command = [sys.executable, os.path.abspath(__file__), "--child",
                   "--libraries", library, "--rows",
                   *map(str, args.rows), "--hidden", str(args.hidden),
                   "--width", str(args.width), "--steps", str(args.steps),
                   "--repeats", str(args.repeats)]
        process = subprocess.run(command, capture_output=True, text=True)
        if process.returncode != 0:
            print(json.dumps({"library": library, "cpu": cpu,
                              "error": process.stderr.strip()[-500:]}))
            continue
        for text in process.stdout.splitlines():
            if text.startswith("{"):
                print(json.dumps({**json.loads(text), "cpu": cpu}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
