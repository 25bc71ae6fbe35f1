"""Training throughput of the ON-LSTM language model, as JSON.

Measures, in one process: the FLOP/s of a large float32 matmul (the
machine's practical peak), then full training steps (forward, backward,
SGD update; dropout, DropConnect, AR/TAR all on) of the ON-LSTM language
model at batch 20 and window 70, and reports tokens per second, achieved
FLOP/s and their ratio to the matmul rate, with and without XLA, and the
process's peak resident memory.

FLOPs per token are counted analytically for the matrix products (which
dominate): forward `2 * sum_l (in_l + H_l) * (4 H_l + 2 n_l) + 2 * emb * V`,
training = 3 x forward (the backward pass costs two products per forward
product), the convention of the PyTorch figure quoted in benchmarks/README.md.

    python benchmarks/train_throughput.py --preset ptb --steps 6
"""

import argparse
import json
import os
import resource
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_ordered.models import ONLSTMLanguageModel  # noqa: E402
from keras_ordered.models.onlstm import get_preset  # noqa: E402


def matmul_flops(size=2048, repeats=20):
    a = tf.random.normal((size, size))
    b = tf.random.normal((size, size))

    @tf.function
    def run(a, b):
        out = a
        for _ in range(repeats):
            out = tf.matmul(out, b) * 1e-3
        return out

    run(a, b).numpy()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 * repeats / best


def model_flops_per_token(model):
    flops = 0
    inputs = model.embedding_dim
    for layer in model.rnn_layers:
        cell = layer.cell
        flops += 2 * (inputs + cell.units) * cell.gate_size
        inputs = cell.units
    flops += 2 * model.embedding_dim * model.vocabulary_size
    return 3 * flops


def training_throughput(preset, batch, window, steps, jit_compile, vocab_size):
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(vocab_size - 2)]
    keras.utils.set_random_seed(0)
    model = ONLSTMLanguageModel.from_preset(preset, vocabulary)
    settings = get_preset(preset)["training"]
    model.compile(
        optimizer=keras.optimizers.SGD(settings["learning_rate"],
                                       weight_decay=settings["weight_decay"]),
        jit_compile=jit_compile,
    )
    model.configure_bptt(batch, batch, clip_norm=settings["clip_norm"])
    rng = np.random.default_rng(0)
    ids = rng.integers(0, vocab_size, (batch, window + 1)).astype("int32")
    column = np.ones((batch, 1), "float32")
    x = {"token_ids": tf.constant(ids[:, :-1]), "reset": tf.constant(column),
         "lr_scale": tf.constant(column)}
    y = tf.constant(ids[:, 1:])
    model.make_train_function()
    step = model.train_function

    def one():
        logs = step(iter([(x, y)]))
        float(logs["loss"])

    one()  # trace / compile
    one()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        one()
        times.append(time.perf_counter() - start)
    seconds = float(np.median(times))
    tokens = batch * window
    return {
        "jit_compile": jit_compile,
        "step_seconds_median": round(seconds, 4),
        "tokens_per_second": round(tokens / seconds, 1),
        "flops_per_token": model_flops_per_token(model),
        "achieved_flops": tokens / seconds * model_flops_per_token(model),
        "parameters": int(model.count_params()),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="ptb")
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--window", type=int, default=70)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--vocab-size", type=int, default=10000)
    args = parser.parse_args()
    before = matmul_flops()
    result = {
        "preset": args.preset, "batch": args.batch, "window": args.window,
        "threads": os.cpu_count(), "runs": [],
    }
    for jit in (False, True):
        result["runs"].append(training_throughput(
            args.preset, args.batch, args.window, args.steps, jit,
            args.vocab_size))
    # The matmul rate is measured before and after the training steps and
    # the higher one is the reference: a conservative ratio on a noisy box.
    peak = max(before, matmul_flops())
    for run in result["runs"]:
        run["fraction_of_matmul"] = round(run["achieved_flops"] / peak, 3)
        run["achieved_flops"] = f"{run['achieved_flops'] / 1e9:.2f} GFLOP/s"
    result["matmul_flops"] = f"{peak / 1e9:.2f} GFLOP/s"
    result["peak_rss_mib"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
