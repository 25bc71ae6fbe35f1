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

FLOPs per token are counted by `keras_ordered.training.throughput`
(its docstring gives the formulas).

    python benchmarks/train_throughput.py --model onlstm --preset ptb --steps 4
    python benchmarks/train_throughput.py --model prpn --preset ptb --steps 3 \
        --precision float32 mixed_bfloat16 --jit off
"""

import argparse
import json
import os
import resource

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The recipes' process set-up (TensorFlow's pooled CPU allocator,
# `keras_ordered._cpu_memory`), before TensorFlow is imported.
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

import keras_ordered  # noqa: E402,F401  (first: it sets the process up)
import numpy as np  # noqa: E402

from keras_ordered.training.config import DEFAULT_PRECISION  # noqa: E402
from keras_ordered.training.precision import training_policy  # noqa: E402
from keras_ordered.training.throughput import FAMILIES  # noqa: E402
from keras_ordered.training.throughput import FLOPS_PER_TOKEN  # noqa: E402
from keras_ordered.training.throughput import add_matmul_size_option  # noqa: E402,E501
from keras_ordered.training.throughput import matmul_flops  # noqa: E402
from keras_ordered.training.throughput import step_seconds  # noqa: E402
from keras_ordered.training.throughput import training_step  # noqa: E402

# The official implementations' training throughput on a 2-core AVX-512
# CPU, as fractions of the float32 matmul rate (ON-LSTM 350 tokens/s x
# 151.2 MFLOP, PRPN 287 x 262.0 MFLOP, at a 209 GFLOP/s reference). Each run
# reports `times_official`, its own fraction over these.
OFFICIAL_FRACTION = {"onlstm": 0.25, "prpn": 0.36}


def training_throughput(family, preset, steps, jit_compile, precision,
                        vocab_size, batch=None, window=None, loop="default"):
    model, one, batch, window = training_step(
        family, preset, jit_compile, precision, vocab_size, batch, window,
        loop)
    seconds = float(np.median(step_seconds(one, steps)))
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
    add_matmul_size_option(parser)
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
    before = {d: matmul_flops(d, args.matmul_size)
              for d in ("float32", "bfloat16")}
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
    after = {d: matmul_flops(d, args.matmul_size)
             for d in ("float32", "bfloat16")}
    peak = {d: max(before[d], after[d]) for d in before}
    for run in result["runs"]:
        for d in peak:
            # Three significant figures: a test-sized model's fraction is
            # below 0.0005, which three decimals would write as 0.
            run[f"fraction_of_{d}_matmul"] = float(
                f"{run['achieved_flops'] / peak[d]:.3g}")
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
