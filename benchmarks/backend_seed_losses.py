"""Does a recipe reach the same validation loss on two backends, over seeds?

Runs a language-model recipe once per seed and backend (`KERAS_BACKEND`
set, a fresh process each), reads each run's `results.json`, and prints
one JSON line per run and a last line with the mean and spread of the
validation loss per backend and the paired difference seed by seed (the
mean, its spread, and Student's t over the seeds). A run whose
`results.json` is already in `--output` is read, not run again, so an
interrupted study goes on where it stopped.

Short runs of many seeds test what a long training over a few seeds
cannot: whether the training dynamics of the two backends differ on
average, beside the chaos that parts two trainings within a few steps
(`trajectory_parity.py`).

    python benchmarks/backend_seed_losses.py --seeds 1 2 3 4 5 6 7 8 9 10 \
        11 12 --output runs/backend_seed_losses -- recipes/ptb_prpn.py \
        --preset tiny --max-lines 1500 --epochs 1 --eval-steps 4 \
        --skip-test --data ../shared/data/ptb

The figures and what they settle: benchmarks/records/prpn_quick_float32_jax/.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np


def run(recipe_args, backend, seed, output):
    """The `results.json` of one run (running it unless it is there)."""
    folder = os.path.join(output, f"{backend}_{seed}")
    results = os.path.join(folder, "results.json")
    if not os.path.exists(results):
        env = dict(os.environ, KERAS_BACKEND=backend,
                   TF_CPP_MIN_LOG_LEVEL="3")
        subprocess.run(
            [sys.executable, *recipe_args, "--seed", str(seed), "--output",
             folder], env=env, check=True, stdout=subprocess.DEVNULL)
    with open(results) as f:
        results = json.load(f)
    history = os.path.join(folder, "history.csv")
    if os.path.exists(history):
        with open(history) as f:
            rows = list(csv.DictReader(f))
        if rows:  # the last epoch's mean training loss
            results["train_loss"] = float(rows[-1]["loss"])
    return results


def summary(losses, backends):
    """Per backend mean and spread; the paired difference of the last
    backend from the first, seed by seed."""
    out = {}
    for backend in backends:
        values = np.array([losses[backend][s] for s in sorted(losses[backend])])
        out[backend] = {"seeds": len(values), "mean": float(values.mean()),
                        "std": float(values.std(ddof=1))
                        if len(values) > 1 else None}
    first, last = backends[0], backends[-1]
    if first == last:
        return out
    seeds = sorted(set(losses[first]) & set(losses[last]))
    diff = np.array([losses[last][s] - losses[first][s] for s in seeds])
    if len(diff) > 1:
        spread = float(diff.std(ddof=1))
        out["paired"] = {
            "difference": f"{last} - {first}", "seeds": len(diff),
            "mean": float(diff.mean()), "std": spread,
            "t": float(diff.mean() / (spread / math.sqrt(len(diff))))
            if spread > 0 else None}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="+",
                        default=["tensorflow", "jax"])
    parser.add_argument("--seeds", nargs="+", type=int, required=True)
    parser.add_argument("--output", required=True,
                        help="one folder per run, <backend>_<seed>")
    parser.add_argument("recipe", nargs=argparse.REMAINDER,
                        help="after `--`: the recipe and its options "
                        "(without --seed and --output)")
    args = parser.parse_args()
    recipe = [a for a in args.recipe if a != "--"]
    if not recipe:
        parser.error("give the recipe after `--`")
    losses = {backend: {} for backend in args.backends}
    for seed in args.seeds:
        for backend in args.backends:
            results = run(recipe, backend, seed, args.output)
            losses[backend][seed] = results["valid_loss"]
            print(json.dumps({"backend": backend, "seed": seed,
                              "valid_loss": results["valid_loss"],
                              "train_loss": results.get("train_loss"),
                              "train_seconds": results.get("train_seconds")}),
                  flush=True)
    print(json.dumps({"summary": summary(losses, args.backends)}))


if __name__ == "__main__":
    main()
