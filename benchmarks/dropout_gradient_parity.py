"""Do two backends draw the same training gradients of a trained PRPN?

At fixed weights (a shipped PRPN model) and on one batch of PTB windows,
each backend (a child process per backend, `KERAS_BACKEND` set) computes
the training loss and the gradient of every weight `--draws` times, each
time with fresh dropout masks, from the zero state. The gradient is a
deterministic function of the masks, and the masks have one distribution
on every backend, so the mean gradients must agree to within their
sampling error. Printed, one JSON line each:

- per backend: the training loss's mean and standard error over the
  draws, and the inference loss;
- `"fixed_masks"`: the relative difference of the two backends' gradients
  with the parsing network's dropout masks fixed (the same arrays on both)
  and every other dropout off: the arithmetic alone, to float32 rounding;
- per pair of halves of the draws (`tensorflow[a]` against `jax[a]`, ...,
  and each backend's two halves against each other, the null), per
  weight: the mean over its elements of `z^2`, the squared difference of
  the two mean gradients over its standard error. Under equal
  distributions each is about 1 (more for weights whose elements move
  together, which the two nulls show).

`--keep parser` or `--keep reading` leaves only the parsing network's, or
only the reading network's, dropouts on.

    python benchmarks/dropout_gradient_parity.py --draws 60 --keep parser \
        --data ../shared/data/ptb

The figures and what they settle: benchmarks/records/prpn_quick_float32_jax/.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH, WINDOW = 64, 35

CHILD = r'''
import json, os, sys
import numpy as np
import keras
from keras import ops
import keras_ordered
from keras_ordered.models import PRPNLanguageModel

args = json.loads(sys.argv[1])
model = PRPNLanguageModel.from_preset(args["model"])
if args["mask_seed"]:
    # Other masks: every dropout's seed moved by the same amount on both
    # backends.
    for variable in model.non_trainable_variables:
        if variable.path.endswith("seed_generator_state"):
            state = keras.ops.convert_to_numpy(variable)
            variable.assign(np.array(
                [state[0] + 1000 * args["mask_seed"], state[1]], state.dtype))
cell = model.get_layer("reading_network").cell
parser = model.get_layer("parsing_network")
parser_dropouts = {id(layer) for layer in parser._flatten_layers()}
keep = args["keep"]
if keep != "all":
    if keep != "reading":
        cell.dropout = cell.layer_dropout = cell.attention_dropout = 0.0
        for attention in cell.attentions:
            attention.dropout = 0.0
    for layer in model._flatten_layers(include_self=False):
        if isinstance(layer, keras.layers.Dropout) and not (
                keep == "parser" and id(layer) in parser_dropouts):
            layer.rate = 0.0
    for layer in model.get_layer("predict_network")._flatten_layers():
        if isinstance(getattr(layer, "dropout", None), float):
            layer.dropout = 0.0
ids = np.load(args["ids"])
if args["fixed_masks"] is not None:
    # The parser's masks drawn by NumPy from a seed (the same arrays on
    # every backend), every other dropout off.
    rng = np.random.default_rng(args["fixed_masks"])
    batch, window = ids.shape[0], ids.shape[1] - 1
    rate = parser.dropout

    def mask(*shape):
        return (rng.uniform(size=shape) > rate).astype("float32") / (1 - rate)

    input_mask = mask(batch, window + model.lookback, model.embedding_dim)
    hidden_mask = mask(batch, window, parser.units)
    parser.input_dropout.call = lambda x, training=False: x * input_mask
    parser.hidden_dropout.call = lambda x, training=False: x * hidden_mask
x, y = ids[:, :-1], ids[:, 1:]
states = [np.zeros((x.shape[0], *s), "float32") for s in model.state_shapes()]
inputs = [x, *states]


def loss_of(logits):
    return ops.mean(keras.losses.sparse_categorical_crossentropy(
        y, logits, from_logits=True))


eval_loss = float(loss_of(model(inputs, training=False)[0]))
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = loss_of(model(inputs, training=True)[0])
        return loss, tape.gradient(loss, model.trainable_variables)

    def draw():
        loss, grads = step()
        return float(loss), [g.numpy() for g in grads]
else:
    import jax

    trainable = [v.value for v in model.trainable_variables]
    state = {"non_trainable": [v.value for v in model.non_trainable_variables]}

    def loss_and_state(trainable, non_trainable):
        outputs, non_trainable = model.stateless_call(
            trainable, non_trainable, inputs, training=True)
        return loss_of(outputs[0]), non_trainable

    step = jax.jit(jax.value_and_grad(loss_and_state, has_aux=True))

    def draw():
        (loss, state["non_trainable"]), grads = step(
            trainable, state["non_trainable"])
        return float(loss), [np.asarray(g) for g in grads]

draws = args["draws"]
half = max(draws // 2, 1)
sums = {}
losses = []
for i in range(draws):
    loss, grads = draw()
    losses.append(loss)
    flat = np.concatenate([np.ravel(g) for g in grads]).astype("float64")
    key = "a" if i < half else "b"
    total, squares, count = sums.get(key, (0.0, 0.0, 0))
    sums[key] = (total + flat, squares + flat * flat, count + 1)
out = {"losses": np.array(losses), "eval_loss": np.array(eval_loss),
       "names": np.array([v.path for v in model.trainable_variables]),
       "sizes": np.array([int(np.prod(v.shape))
                          for v in model.trainable_variables])}
for key, (total, squares, count) in sums.items():
    out[f"mean_{key}"] = total / count
    out[f"square_{key}"] = squares / count
    out[f"count_{key}"] = np.array(count)
np.savez(args["out"], **out)
'''


def batch_ids(data, vocabulary):
    """The first `BATCH` windows of `WINDOW + 1` words of the training
    text, as the model's ids."""
    index = {word: i for i, word in enumerate(vocabulary)}
    words = []
    with open(os.path.join(data, "train.txt"), encoding="utf-8") as text:
        for line in text:
            words += line.split() + ["<eos>"]
            if len(words) >= BATCH * (WINDOW + 1):
                break
    ids = [index.get(word, index["<unk>"])
           for word in words[: BATCH * (WINDOW + 1)]]
    return np.array(ids, "int32").reshape(BATCH, WINDOW + 1)


def run_child(backend, folder, code=CHILD, **args):
    """Runs `code` in a child process on `backend`, with `args` (and `out`,
    a new .npz file in `folder`, which the child writes) as JSON in its
    argv; returns the arrays it saved."""
    out = os.path.join(folder, f"{backend}_{len(os.listdir(folder))}.npz")
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
               KERAS_ORDERED_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [REPO] + [p for p in [env.get("PYTHONPATH")] if p])
    result = subprocess.run(
        [sys.executable, "-c", code, json.dumps({**args, "out": out})],
        env=env, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{backend} failed:\n{result.stderr[-3000:]}")
    with np.load(out) as arrays:
        return {key: arrays[key] for key in arrays.files}


def z_squared(first, second):
    """Per weight, the mean over its elements of the squared difference of
    two mean gradients over its standard error."""
    (run_a, half_a), (run_b, half_b) = first, second
    mean_a, mean_b = run_a[f"mean_{half_a}"], run_b[f"mean_{half_b}"]
    var_a = run_a[f"square_{half_a}"] - mean_a ** 2
    var_b = run_b[f"square_{half_b}"] - mean_b ** 2
    error = np.sqrt(var_a / run_a[f"count_{half_a}"]
                    + var_b / run_b[f"count_{half_b}"])
    z = np.where(error > 0, (mean_a - mean_b) / np.maximum(error, 1e-30), 0)
    bounds = np.concatenate([[0], np.cumsum(run_a["sizes"])])
    return {str(name): round(float(np.mean(z[lo:hi] ** 2)), 3)
            for name, lo, hi in zip(run_a["names"], bounds[:-1], bounds[1:])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="prpn_ptb_quick",
                        help="a shipped PRPN model (default prpn_ptb_quick)")
    parser.add_argument("--draws", type=int, default=60,
                        help="dropout draws per backend (two halves)")
    parser.add_argument("--keep", choices=["all", "parser", "reading"],
                        default="all", help="which dropouts stay on")
    parser.add_argument("--mask-seed", type=int, default=0,
                        help="moves every dropout's seed (0: the model's)")
    parser.add_argument("--backends", nargs=2, default=["tensorflow", "jax"])
    parser.add_argument("--data", default=os.path.join(
        os.environ.get("KERAS_ORDERED_DATA", "../shared/data"), "ptb"),
        help="the PTB folder (train.txt)")
    args = parser.parse_args(argv)

    import keras_ordered  # noqa: F401  (registers the models)
    from keras_ordered.models import PRPNLanguageModel

    vocabulary = PRPNLanguageModel.from_preset(args.model).vocabulary
    with tempfile.TemporaryDirectory(prefix="gradient_parity_") as folder:
        ids_path = os.path.join(folder, "ids.npy")
        np.save(ids_path, batch_ids(args.data, vocabulary))
        common = dict(model=args.model, ids=ids_path,
                      mask_seed=args.mask_seed)
        runs = {}
        for backend in args.backends:
            runs[backend] = run = run_child(
                backend, folder, keep=args.keep, draws=args.draws,
                fixed_masks=None, **common)
            losses = run["losses"]
            print(json.dumps({
                "backend": backend, "keep": args.keep, "draws": args.draws,
                "mask_seed": args.mask_seed,
                "train_loss": round(float(losses.mean()), 5),
                "train_loss_error": round(
                    float(losses.std() / np.sqrt(len(losses))), 5),
                "eval_loss": round(float(run["eval_loss"]), 5)}))
        fixed = [run_child(backend, folder, keep="none", draws=1,
                           fixed_masks=0, **common)
                 for backend in args.backends]
        bounds = np.concatenate([[0], np.cumsum(fixed[0]["sizes"])])
        difference = {
            str(name): float(
                np.linalg.norm(fixed[0]["mean_a"][lo:hi]
                               - fixed[1]["mean_a"][lo:hi])
                / max(np.linalg.norm(fixed[0]["mean_a"][lo:hi]), 1e-30))
            for name, lo, hi in zip(fixed[0]["names"], bounds[:-1],
                                    bounds[1:])}
        print(json.dumps({"fixed_masks": "parser", "relative_difference":
                          {k: f"{v:.1e}" for k, v in difference.items()}}))
        first, second = args.backends
        for a, b in [((first, "a"), (first, "b")), ((second, "a"),
                     (second, "b")), ((first, "a"), (second, "a")),
                     ((first, "b"), (second, "b")), ((first, "a"),
                     (second, "b")), ((first, "b"), (second, "a"))]:
            print(json.dumps({
                "keep": args.keep, "mask_seed": args.mask_seed,
                "pair": f"{a[0]}[{a[1]}] {b[0]}[{b[1]}]",
                "z_squared": z_squared((runs[a[0]], a[1]),
                                       (runs[b[0]], b[1]))}))


if __name__ == "__main__":
    main()
