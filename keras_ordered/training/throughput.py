"""What the throughput benchmarks measure a training step with.

The FLOPs a language model's training token costs (counted analytically
from its matrix products, which dominate: training = 3 x forward, the
backward pass costing two products per forward product), a compiled
training step of a preset on a random batch, and the rate of a chain of
float32 or bfloat16 products (the machine's practical peak, the ceiling a
step's rate is a fraction of). `benchmarks/train_throughput.py`,
`profile_step.py`, `step_bound.py` and `backend_throughput.py` report
their figures with these; tests/training/test_throughput.py checks them.

- ON-LSTM: forward `2 * sum_l (in_l + H_l) * (4 H_l + 2 n_l) + 2 * emb * V`
  (151.2 MFLOP per training token for the `ptb` preset).
- PRPN: forward `2 * [(Q + 1) E P` (parser convolution) `+ sum_l ((in_l +
  d) d` (attention query) `+ in_l 4d + d 4d` (LSTM) `+ 2 M d)` (attention
  scores and read-out of h, c) `+ d d + 2 d E + M d` (predict network) `+
  E V]` (output), with `in_1 = E`, `in_l = d` after (about 262 MFLOP per
  training token for the `ptb` preset).
"""

import time

import keras
import numpy as np

from keras_ordered import backend
from keras_ordered.models import onlstm
from keras_ordered.models import prpn
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.training.optimizers import make_optimizer

# The language models the throughput benchmarks train: family -> (model
# class, its `get_preset`).
FAMILIES = {
    "onlstm": (onlstm.ONLSTMLanguageModel, onlstm.get_preset),
    "prpn": (prpn.PRPNLanguageModel, prpn.get_preset),
}


def onlstm_flops_per_token(model):
    """Training FLOPs per token of an `ONLSTMLanguageModel`."""
    flops = 0
    inputs = model.embedding_dim
    for layer in model.rnn_layers:
        cell = layer.cell
        flops += 2 * (inputs + cell.units) * cell.gate_size
        inputs = cell.units
    flops += 2 * model.embedding_dim * model.vocabulary_size
    return 3 * flops


def prpn_flops_per_token(model):
    """Training FLOPs per token of a `PRPNLanguageModel`."""
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


MATMUL_SIZE = 2048
"""The side of the square products whose rate is the benchmarks' reference
(`matmul_flops`): large enough to reach a CPU's peak."""


def add_matmul_size_option(parser):
    """Adds `--matmul-size` (the reference products' side, default
    `MATMUL_SIZE`) to a benchmark's argparse `parser`; a smaller side checks
    the command in seconds (its tests), at a rate below the peak."""
    parser.add_argument(
        "--matmul-size", type=int, default=MATMUL_SIZE,
        help=f"side of the reference matmul chain (default {MATMUL_SIZE}; "
        "smaller for a quick check of the command, below the peak rate)")


def matmul_flops(dtype="float32", size=MATMUL_SIZE, repeats=20):
    """FLOP/s of a chain of `repeats` dependent `size`^3 products on
    TensorFlow (each product feeds the next, so that grappler cannot fold
    repeated identical products); the best of three runs."""
    tf = backend.require_tensorflow("the matmul rate")
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


def step_seconds(one, steps, warmup=2):
    """The seconds of each of `steps` calls of `one` (a step that waits
    for its result), after `warmup` untimed calls (tracing, compiling)."""
    for _ in range(warmup):
        one()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        one()
        times.append(time.perf_counter() - start)
    return times


def training_step(family, preset, jit_compile, precision, vocab_size,
                  batch=None, window=None, loop="default"):
    """A compiled training step of a preset on one random batch
    (TensorFlow).

    Returns:
        (model, one, batch, window): `one()` runs a whole training step
        (the recipe's `train_step`: dropouts, clipping, carried state,
        optimizer) and waits for its loss.
    """
    tf = backend.require_tensorflow("the benchmarks' training step")
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
