"""How long a command of the package takes to import it, against a plain
library import, in fresh processes taken in turn.

A command (a recipe, `keras-ordered`) sets `KERAS_ORDERED_QUIET=1` before
it imports the package: Keras (and TensorFlow) are then imported without
the optional integrations they never use there
(`keras_ordered._quiet.refused_integrations`). A library import loads what
Keras and TensorFlow load by themselves. Each process imports
`keras_ordered` and `keras_ordered.models` and prints how long that took
and which of those integrations it loaded:

    python benchmarks/start_time.py --rounds 5
    python benchmarks/start_time.py --rounds 5 --backend jax

Prints one JSON line per process and a summary line with the median of
each kind, their ratio and the CPU.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, sys, time
start = time.perf_counter()
import keras_ordered
import keras_ordered.models
seconds = time.perf_counter() - start
print(json.dumps({"seconds": round(seconds, 3), "loaded": sorted(
    name for name in ("jax", "sklearn", "matplotlib") if name in sys.modules)}))
"""

KINDS = {"command": {"KERAS_ORDERED_QUIET": "1"}, "library": {}}


def run_child(kind, backend):
    env = {k: v for k, v in os.environ.items() if k != "KERAS_ORDERED_QUIET"}
    env.update(KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3", **KINDS[kind])
    result = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"the {kind} import failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5,
                        help="processes of each kind, taken in turn")
    parser.add_argument("--backend", default="tensorflow",
                        choices=["tensorflow", "jax", "torch"])
    args = parser.parse_args(argv)
    seconds = {kind: [] for kind in KINDS}
    for round_ in range(args.rounds):
        for kind in KINDS:
            line = {"kind": kind, "round": round_, "backend": args.backend,
                    **run_child(kind, args.backend)}
            seconds[kind].append(line["seconds"])
            print(json.dumps(line), flush=True)
    from keras_ordered._cpu import describe_cpu  # after the children

    medians = {kind: statistics.median(values)
               for kind, values in seconds.items()}
    print(json.dumps({
        "summary": True, "backend": args.backend, "rounds": args.rounds,
        "median_seconds": medians,
        "range_seconds": {k: [min(v), max(v)] for k, v in seconds.items()},
        "command_over_library": round(medians["command"]
                                      / medians["library"], 3),
        "cpu": describe_cpu(),
    }))


if __name__ == "__main__":
    main()
