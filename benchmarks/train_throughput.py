"""Training throughput of the ON-LSTM and PRPN language models, as JSON.

Measures, in one process: the FLOP/s of a 2048 x 2048 matmul chain in
float32 and in bfloat16 (the machine's practical peaks; each product feeds
the next, so that grappler cannot fold repeated identical products), then
full training steps of a model preset (forward, backward, SGD update;
every dropout of the preset on, gradient clipping, carried state: the
recipe's `train_step`) at the preset's batch size and window length, and
reports tokens per second, achieved FLOP/s and their ratio to the
same-process float32 and bfloat16 matmul rates, per precision policy and
with or without XLA, and the peak resident memory of the process after
each configuration.

FLOPs per token are counted analytically from the matrix products (which
dominate); training = 3 x forward (the backward pass costs two products per
forward product).

- ON-LSTM: forward `2 * sum_l (in_l + H_l) * (4 H_l + 2 n_l) + 2 * emb * V`
  (151.2 MFLOP per training token for the `ptb` preset).
- PRPN: forward `2 * [(Q + 1) E P` (parser convolution) `+ sum_l ((in_l +
  d) d` (attention query) `+ in_l 4d + d 4d` (LSTM) `+ 2 M d)` (attention
  scores and read-out of h, c) `+ d d + 2 d E + M d` (predict network) `+
  E V]` (output), with `in_1 = E`, `in_l = d` after (about 262 MFLOP per
  training token for the `ptb` preset).

    python benchmarks/train_throughput.py --model onlstm --preset ptb --steps 4
    python benchmarks/train_throughput.py --model prpn --preset ptb --steps 3 \
        --precision float32 mixed_bfloat16 --jit off
"""

import argparse
import json
import os
import resource
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The recipes' process set-up (TensorFlow's pooled CPU allocator,
# `keras_ordered._cpu_memory`), before TensorFlow is imported.
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

import keras_ordered  # noqa: E402,F401  (first: it sets the process up)
import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_ordered.models import onlstm  # noqa: E402
from keras_ordered.models import prpn  # noqa: E402
from keras_ordered.training.config import DEFAULT_PRECISION  # noqa: E402
from keras_ordered.training.config import LanguageModelTraining  # noqa: E402
from keras_ordered.training.optimizers import make_optimizer  # noqa: E402
from keras_ordered.training.precision import training_policy  # noqa: E402

# The official implementations' training throughput on a 2-core AVX-512
# CPU, as fractions of the float32 matmul rate (ON-LSTM 350 tokens/s x
# 151.2 MFLOP, PRPN 287 x 262.0 MFLOP, at a 209 GFLOP/s reference). Each run
# reports `times_official`, its own fraction over these.
OFFICIAL_FRACTION = {"onlstm": 0.25, "prpn": 0.36}

FAMILIES = {
    "onlstm": (onlstm.ONLSTMLanguageModel, onlstm.get_preset),
    "prpn": (prpn.PRPNLanguageModel, prpn.get_preset),
}


def matmul_flops(dtype="float32", size=2048, repeats=20):
    """FLOP/s of a chain of `repeats` dependent `size`^3 products."""
    import tensorflow as tf

    a = tf.cast(tf.random.normal((size, size)), dtype)
    b = tf.cast(tf.random.normal((size, size)) / size**0.5, dtype)

    @tf.function
    def run(a, b):
        out = a
        for _ in range(repeats):
            out = tf.matmul(out, b)
        return out

    run(a, b).numpy()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 * repeats / best


def onlstm_flops_per_token(model):
    flops = 0
    inputs = model.embedding_dim
    for layer in model.rnn_layers:
        cell = layer.cell
        flops += 2 * (inputs + cell.units) * cell.gate_size
        inputs = cell.units
    flops += 2 * model.embedding_dim * model.vocabulary_size
    return 3 * flops


def prpn_flops_per_token(model):
    e, d, m = model.embedding_dim, model.hidden_dim, model.num_slots
    macs = (model.lookback + 1) * e * model.parser_units  # parser conv
    macs += model.parser_units  # the two distance heads (grouped, width 1)
    inputs = e
    for _ in range(model.num_layers):
        macs += (inputs + d) * d  # attention query from [input ; h_prev]
        macs += 2 * m * d  # attention scores + read-out of h (and c below)
        macs += m * d
        macs += inputs * 4 * d + d * 4 * d  # layer-normalised LSTM
        inputs = d
    macs += d * d + m * d + m * d  # predict attention: query, scores, read-out
    macs += 2 * d * e  # predict projection [h ; h~] -> E
    macs += e * model.vocabulary_size  # tied output embedding
    return 3 * 2 * macs


FLOPS_PER_TOKEN = {"onlstm": onlstm_flops_per_token,
                   "prpn": prpn_flops_per_token}


def training_step(family, preset, jit_compile, precision, vocab_size,
                  batch=None, window=None, loop="default"):
    """A compiled training step of a preset on one random batch.

    Returns:
        (model, one, batch, window): `one()` runs a whole training step
        (the recipe's `train_step`: dropouts, clipping, carried state,
        optimizer) and waits for its loss.
    """
    import tensorflow as tf

    model_class, get_preset = FAMILIES[family]
    training = LanguageModelTraining.from_dict(get_preset(preset)["training"])
    batch = batch or training.batch_size
    window = window or training.bptt
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(vocab_size - 2)]
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(precision)
    try:
        keras.utils.set_random_seed(0)
        model = model_class.from_preset(preset, vocabulary, seed=0)
        model.compile(optimizer=make_optimizer(training),
                      jit_compile=jit_compile)
        if loop == "per-step":
            # PRPN: the reading network as `keras.layers.RNN` runs its cell,
            # one step of all layers at a time (the path PRPN runs under XLA,
            # against which the layer-by-layer loop is measured).
            model.get_layer("reading_network").layer_loop = False
        model.configure_bptt(batch, batch, clip_norm=training.clip_norm)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, vocab_size, (batch, window + 1)).astype("int32")
    # `reset` and `lr_scale` each own their memory: no two inputs backed by
    # one buffer (what the training batches guarantee too).
    x = {"token_ids": tf.constant(ids[:, :-1]),
         "reset": tf.ones((batch, 1), "float32"),
         "lr_scale": tf.ones((batch, 1), "float32")}
    y = tf.constant(ids[:, 1:])
    model.make_train_function()
    step = model.train_function

    def one():
        logs = step(iter([(x, y)]))
        float(logs["loss"])

    return model, one, batch, window


def training_throughput(family, preset, steps, jit_compile, precision,
                        vocab_size, batch=None, window=None, loop="default"):
    model, one, batch, window = training_step(
        family, preset, jit_compile, precision, vocab_size, batch, window,
        loop)
    one()  # trace / compile
    one()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        one()
        times.append(time.perf_counter() - start)
    seconds = float(np.median(times))
    tokens = batch * window
    per_token = FLOPS_PER_TOKEN[family](model)
    return {
        "precision": precision,
        "jit_compile": jit_compile,
        "loop": loop,
        "batch": batch,
        "window": window,
        "step_seconds_median": round(seconds, 4),
        "tokens_per_second": round(tokens / seconds, 1),
        "flops_per_token": per_token,
        "achieved_flops": tokens / seconds * per_token,
        "parameters": int(model.count_params()),
        "peak_rss_mib_so_far": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(FAMILIES), default="onlstm")
    parser.add_argument("--preset", default="ptb")
    parser.add_argument("--batch", type=int, default=None,
                        help="default: the preset's batch size")
    parser.add_argument("--window", type=int, default=None,
                        help="default: the preset's bptt")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--vocab-size", type=int, default=10000)
    parser.add_argument("--precision", nargs="+",
                        default=["float32", "mixed_bfloat16"],
                        choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--jit", nargs="+", default=["off", "on"],
                        choices=["off", "on"])
    parser.add_argument("--loop", nargs="+", default=["default"],
                        choices=["default", "per-step"],
                        help="PRPN reading network: `default` (layer by "
                        "layer, input projections outside the loop) or "
                        "`per-step` (keras.layers.RNN over the cell)")
    args = parser.parse_args()
    load = os.getloadavg()
    before = {d: matmul_flops(d) for d in ("float32", "bfloat16")}
    default = training_policy(DEFAULT_PRECISION)
    result = {
        "model": args.model, "preset": args.preset,
        "threads": os.cpu_count(),
        "load_average_at_start": [round(v, 2) for v in load],
        # What the recipes train under by default on this machine
        # (`DEFAULT_PRECISION`), without XLA, with the default loop.
        "recipe_default": {"precision": default, "jit_compile": False,
                           "loop": "default"},
        "runs": [],
    }
    for loop in args.loop:
        for precision in args.precision:
            for jit in args.jit:
                result["runs"].append(training_throughput(
                    args.model, args.preset, args.steps, jit == "on",
                    precision, args.vocab_size, args.batch, args.window,
                    loop))
    # The matmul rates are measured before and after the training steps and
    # the higher one is the reference: a conservative ratio on a noisy box.
    after = {d: matmul_flops(d) for d in ("float32", "bfloat16")}
    peak = {d: max(before[d], after[d]) for d in before}
    for run in result["runs"]:
        for d in peak:
            run[f"fraction_of_{d}_matmul"] = round(
                run["achieved_flops"] / peak[d], 3)
        run["times_official"] = round(
            run["fraction_of_float32_matmul"] / OFFICIAL_FRACTION[args.model],
            2)
        run["recipe_default"] = all(
            run[k] == v for k, v in result["recipe_default"].items())
        run["achieved_flops"] = f"{run['achieved_flops'] / 1e9:.2f} GFLOP/s"
    result["matmul_flops"] = {
        d: f"{peak[d] / 1e9:.2f} GFLOP/s" for d in peak}
    result["matmul_flops_before_after"] = {
        d: [round(before[d] / 1e9, 1), round(after[d] / 1e9, 1)] for d in peak}
    result["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    result["peak_rss_mib"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
