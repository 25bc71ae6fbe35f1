"""Stress test of the sequence behind a segmentation fault in TensorFlow.

Plain TensorFlow, nothing of keras_ordered: a generator-backed dataset
(`tf.data.Dataset.from_generator`, prefetched, the window datasets'
options) distributed by a `OneDeviceStrategy`, from which a fresh iterator
reads one batch and is then dropped half-read, again and again. That is
what Keras' TensorFlow trainer does under an explicit strategy in `fit`
and `evaluate` (`_maybe_symbolic_build`, then `epoch_iterator.reset()`),
where the package's recipes crashed (faulthandler's Python stack). The
package avoids the sequence (`_keras_private.SymbolicBuildWithoutData`).

Run it under gdb for a native backtrace if it crashes:

    gdb -q -batch -ex run -ex bt --args \\
        python benchmarks/tf_iterator_stress.py --iterations 2000

Prints one JSON object: iterations done, seconds, and the versions. A
crash ends the process (exit 139, or gdb's `SIGSEGV` and backtrace)
before the JSON.
"""

import argparse
import faulthandler
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BATCH, STEPS = 64, 35


def window_dataset(length, prefetch=True, generator=True):
    """A from_generator dataset of (x, y) windows, as the recipes build.

    With `generator=False`, the same windows from tensors
    (`from_tensor_slices`), with no Python generator behind them.
    """
    if not generator:
        rng = np.random.default_rng(0)
        tokens = rng.integers(0, 10_000, (length, BATCH, STEPS + 1), dtype=np.int32)
        dataset = tf.data.Dataset.from_tensor_slices(tokens).map(
            lambda t: ({"token_ids": t[:, :-1],
                        "reset": tf.zeros((BATCH, 1), tf.float32)}, t[:, 1:]))
        return _finish(dataset, prefetch)

    def generate():
        rng = np.random.default_rng(0)
        for _ in range(length):
            tokens = rng.integers(0, 10_000, (BATCH, STEPS + 1), dtype=np.int32)
            yield (
                {
                    "token_ids": tokens[:, :-1].copy(),
                    "reset": np.zeros((BATCH, 1), np.float32),
                },
                tokens[:, 1:].copy(),
            )

    signature = (
        {
            "token_ids": tf.TensorSpec((BATCH, None), tf.int32),
            "reset": tf.TensorSpec((BATCH, 1), tf.float32),
        },
        tf.TensorSpec((BATCH, None), tf.int32),
    )
    dataset = tf.data.Dataset.from_generator(generate, output_signature=signature)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(length))
    return _finish(dataset, prefetch)


def _finish(dataset, prefetch):
    """The window datasets' options (batching._with_options), and prefetch."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.OFF
    )
    options.experimental_optimization.apply_default_optimizations = False
    if prefetch:
        dataset = dataset.prefetch(2)
    return dataset.with_options(options)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--length", type=int, default=50,
                        help="windows per dataset (the generator's length)")
    parser.add_argument("--no-strategy", action="store_true",
                        help="iterate the dataset itself, not a distributed one")
    parser.add_argument("--no-prefetch", action="store_true")
    parser.add_argument("--pause", type=float, default=0.0, metavar="SECONDS",
                        help="wait this long between the read and the drop")
    parser.add_argument("--no-generator", action="store_true",
                        help="windows from tensors, not from a Python generator")
    parser.add_argument("--read-all", action="store_true",
                        help="read each iterator to its end before dropping it")
    args = parser.parse_args(argv)
    faulthandler.enable()
    dataset = window_dataset(args.length, prefetch=not args.no_prefetch,
                             generator=not args.no_generator)
    if not args.no_strategy:
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        dataset = strategy.experimental_distribute_dataset(dataset)
    start = time.perf_counter()
    for _ in range(args.iterations):
        iterator = iter(dataset)
        next(iterator)  # one batch, as the symbolic build reads ...
        if args.read_all:
            for _ in iterator:
                pass
        if args.pause:
            time.sleep(args.pause)
        iterator = None  # ... then dropped half-read, as reset() does
    print(json.dumps({
        "iterations": args.iterations,
        "length": args.length,
        "strategy": not args.no_strategy,
        "prefetch": not args.no_prefetch,
        "generator": not args.no_generator,
        "read_all": args.read_all,
        "pause": args.pause,
        "seconds": round(time.perf_counter() - start, 1),
        "crashed": False,
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
