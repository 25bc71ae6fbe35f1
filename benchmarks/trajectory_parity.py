"""Do two backends train PRPN along the same path, step after step?

From one set of initial weights (drawn on TensorFlow and loaded on the
other backend), with every dropout off so that a step is a deterministic
function of the weights, each backend (a child process, `KERAS_BACKEND`
set) trains a PRPN preset with the recipe's optimizer (`TorchAdam`, the
official arithmetic), clipping, carried state and windows through
`model.fit` for `--steps` windows of the PTB training text. Recorded per
backend: every step's running training loss, and at the end the weights,
the batch-norm moving statistics, the optimizer's step count and the
validation loss of the first `--eval-steps` windows.

Printed, one JSON line each: per step where it is reached, the largest
difference of the running losses so far; at the end the relative
difference of every weight and moving statistic between the backends,
and the validation losses. Rounding makes two float32 trainings part
slowly (the differences grow smoothly with the steps); a difference of
arithmetic shows as a jump, or as a gap from the first steps on.

    python benchmarks/trajectory_parity.py --steps 50 \
        --data ../shared/data/ptb --backends tensorflow jax
    python benchmarks/trajectory_parity.py --steps 50 \
        --data ../shared/data/ptb --backends tensorflow tensorflow+xla

The figures and what they settle: benchmarks/records/prpn_quick_float32_jax/.
"""

import argparse
import json
import os
import tempfile

import numpy as np

from dropout_gradient_parity import run_child

CHILD = r'''
import json, os, sys, time
import numpy as np
import keras
from keras import ops
from keras_ordered.datasets import ptb
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.training import BPTTBatches
from keras_ordered.training.optimizers import TorchAdam

args = json.loads(sys.argv[1])
(train_ids, valid_ids, _), vocabulary = ptb.load_data(
    args["data"], download=False)
model = PRPNLanguageModel.from_preset(
    args["preset"], vocabulary, seed=1, dropout=0.0, input_dropout=0.0,
    recurrent_dropout=0.0)
names = [v.path for v in model.weights]
if os.path.exists(args["init"]):
    with np.load(args["init"]) as init:
        for variable in model.weights:
            variable.assign(init[variable.path])
else:
    np.savez(args["init"], **{v.path: ops.convert_to_numpy(v)
                              for v in model.weights})
model.compile(optimizer=TorchAdam(0.003, beta_1=0.0, beta_2=0.999,
                                  epsilon=1e-9, l2=1e-6),
              jit_compile=keras.backend.backend() == "jax" or args["xla"])
model.configure_bptt(64, 10, clip_norm=1.0)
train = BPTTBatches(train_ids, 64, 35, variable_length=False, seed=1)
valid = BPTTBatches(valid_ids, 10, 35, variable_length=False)
running = []


class Record(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        running.append(float(logs["loss"]))


start = time.time()
model.fit(train.stream(0, args["steps"]), steps_per_epoch=args["steps"],
          epochs=1, verbose=0, callbacks=[Record()], shuffle=False)
seconds = time.time() - start
valid_loss = model.evaluate(valid.dataset(0, steps_per_epoch=args["eval_steps"]),
                            verbose=0, return_dict=True)["loss"]
out = {"running": np.array(running), "valid_loss": np.array(valid_loss),
       "seconds": np.array(seconds),
       "iterations": np.array(int(ops.convert_to_numpy(
           model.optimizer.iterations)))}
for variable in model.weights:
    out["w:" + variable.path] = ops.convert_to_numpy(variable)
np.savez(args["out"], **out)
'''


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--eval-steps", type=int, default=20)
    parser.add_argument("--data", required=True)
    parser.add_argument("--backends", nargs=2, default=["tensorflow", "jax"],
                        help="the two runs: a Keras backend each, "
                        "`tensorflow+xla` for TensorFlow's step compiled by "
                        "XLA (JAX's always is)")
    parser.add_argument("--folder", default=None,
                        help="keep the children's arrays here")
    args = parser.parse_args(argv)
    folder = args.folder or tempfile.mkdtemp()
    os.makedirs(folder, exist_ok=True)
    init = os.path.join(folder, "init.npz")
    if os.path.exists(init):
        os.remove(init)
    common = dict(preset=args.preset, steps=args.steps, data=args.data,
                  eval_steps=args.eval_steps, init=init)
    # The first backend draws the initial weights, the second loads them.
    runs = []
    for spec in args.backends:
        backend, _, xla = spec.partition("+")
        runs.append(run_child(backend, folder, code=CHILD, xla=xla == "xla",
                              **common))
    first, second = runs
    a, b = first["running"], second["running"]
    # The loss of each step, from the running means over equal windows.
    steps = np.arange(1, len(a) + 1)
    step_a = steps * a - np.concatenate([[0.0], (steps * a)[:-1]])
    step_b = steps * b - np.concatenate([[0.0], (steps * b)[:-1]])
    for n in sorted({1, 2, 5, 10, 20, 50, 100, 200, 400, 800, len(a)}):
        if n <= len(a):
            print(json.dumps({
                "step": int(n),
                "loss": [round(float(step_a[n - 1]), 5),
                         round(float(step_b[n - 1]), 5)],
                "max_step_loss_diff": float(np.max(np.abs(
                    step_a[:n] - step_b[:n]))),
                "mean_step_loss_diff_last_10": float(np.mean(
                    step_a[max(0, n - 10):n] - step_b[max(0, n - 10):n])),
            }))
    weights = {}
    for key in first:
        if key.startswith("w:"):
            x, y = first[key].astype("float64"), second[key].astype("float64")
            scale = max(np.linalg.norm(x), 1e-30)
            weights[key[2:]] = float(np.linalg.norm(x - y) / scale)
    print(json.dumps({"relative_weight_diff": weights}))
    print(json.dumps({
        "backends": args.backends,
        "valid_loss": [float(first["valid_loss"]), float(second["valid_loss"])],
        "iterations": [int(first["iterations"]), int(second["iterations"])],
        "seconds": [round(float(first["seconds"]), 1),
                    round(float(second["seconds"]), 1)],
        "folder": folder,
    }))


if __name__ == "__main__":
    main()
