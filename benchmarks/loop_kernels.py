"""The loop-level measurements behind the recurrences' layouts, as JSON.

Each entry times alternatives side by side in one process (interleaved,
fastest of `--repeats` calls each), on the shapes of the `ptb` presets:

- `transposed_product`: a loop of 70 (ON-LSTM, `(20, 4830) x (4830, 1150)`)
  or 35 (PRPN, `(64, 4800) x (4800, 1200)`) dependent per-step products
  by a kernel, `matmul(d, kernel, transpose_b=True)` against a kernel
  transposed once before the loop and against the kernel as the left
  operand, `transpose(matmul(kernel, d, transpose_b=True))`
  (`_tf_recurrence.transposed_product` uses the fastest), in float32 and
  bfloat16; milliseconds per step.
- `row_layouts`: bfloat16 per-step products by the presets' kernels for
  20 to 128 rows, forward (`a @ K`) and backward (`d @ K^T`), plain against
  the kernel as the left operand; milliseconds per step.
- `parsing_convolution`: PRPN's parsing convolution (batch 64, window
  35 + 5, 800 -> 1200 channels, width 6), forward and backward, as
  oneDNN's convolution, as one product over unfolded windows, and as six
  tap products; milliseconds.
- `reading_tape_work`: one PRPN reading layer (batch 64, 35 steps, 15
  slots, 1200 units, dropout masks), forward and backward through
  `_tf_reading_recurrence`, with the backward's tape work XLA-fused
  (`fuse_tape_updates=True`, the default) or as separate ops;
  milliseconds.
- `token_loss`: the token cross-entropy of an ON-LSTM `ptb` batch (1,400
  tokens, 10,000 words), forward and backward, as Keras' sparse
  cross-entropy (TensorFlow's fused op) and as the XLA-compiled
  `keras_ordered.models.losses.token_cross_entropy`; milliseconds.
- `vocabulary_projection`: the tied projection of the same batch
  (`(1400, 400)` vectors by the `(10000, 400)` embedding, float32 logits)
  with that loss, forward and backward, its gradient products in float32
  or in bfloat16 (`EmbeddingDropout(reverse_gradient_dtype="bfloat16")`,
  what ON-LSTM uses under `mixed_bfloat16`); milliseconds.

    python benchmarks/loop_kernels.py
    python benchmarks/loop_kernels.py --only transposed_product
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_ordered.layers.dropout import EmbeddingDropout  # noqa: E402
from keras_ordered.layers.prpn_cell import _tf_reading_recurrence  # noqa: E402
from keras_ordered.models.losses import token_cross_entropy  # noqa: E402


def fastest(functions, repeats):
    """Milliseconds of the fastest call of each function, interleaved."""
    for function in functions.values():
        function()
    best = {name: float("inf") for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            result = function()
            np.asarray(tf.nest.flatten(result)[0])
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: round(1e3 * value, 2) for name, value in best.items()}


def transposed_product(repeats):
    results = {}
    for name, (rows, width, units, steps) in {
        "onlstm": (20, 4830, 1150, 70),
        "prpn": (64, 4800, 1200, 35),
    }.items():
        for dtype in ("float32", "bfloat16"):
            d = tf.cast(tf.random.normal((rows, width)), dtype)
            kernel = tf.cast(tf.random.normal((units, width)) / width**0.5,
                             dtype)
            transposed = tf.transpose(kernel)

            def loop(product):
                @tf.function
                def run():
                    def body(i, x):
                        return i + 1, tf.tanh(product(x))[:, :1] * d
                    return tf.while_loop(lambda i, x: i < steps, body,
                                         (0, d))[1]
                return run

            times = fastest({
                "transpose_b": loop(
                    lambda x: tf.matmul(x, kernel, transpose_b=True)),
                "transposed_once": loop(lambda x: tf.matmul(x, transposed)),
                "kernel_on_the_left": loop(lambda x: tf.transpose(
                    tf.matmul(kernel, x, transpose_b=True))),
            }, repeats)
            results[f"{name}/{dtype}"] = {
                k: round(v / steps, 3) for k, v in times.items()}
    return results


def row_layouts(repeats):
    """bfloat16 per-step products by a kernel as the rows grow, both ways.

    Forward `a @ K` (`plain` against `kernel_on_the_left`, the kernel
    transposed once) and backward `d @ K^T` (`transpose_b` against
    `kernel_on_the_left`), for the `ptb` presets' kernels, PRPN `small`'s
    recurrent kernel and one in between: where the thresholds of
    `_tf_recurrence._kernel_on_the_left` come from.
    """
    steps = 35
    results = {}
    for name, (inputs, outputs) in {
        "onlstm": (1150, 4830),
        "prpn": (1200, 4800),
        "prpn_small": (256, 1024),
        "512x2048": (512, 2048),
    }.items():
        kernel = tf.cast(
            tf.random.normal((inputs, outputs)) / inputs**0.5, "bfloat16")
        transposed = tf.transpose(kernel)
        for rows in (20, 32, 48, 64, 128):
            a = tf.cast(tf.random.normal((rows, inputs)), "bfloat16")
            d = tf.cast(tf.random.normal((rows, outputs)), "bfloat16")

            def loop(product, start, keep):
                # Each step's product feeds the next (tiled back to width).
                tiles = -(-keep // min(inputs, outputs))

                @tf.function
                def run():
                    def body(i, x):
                        y = tf.tile(tf.tanh(product(x)), (1, tiles))
                        return i + 1, y[:, :keep] * start
                    return tf.while_loop(lambda i, x: i < steps, body,
                                         (0, start))[1]
                return run

            times = fastest({
                "forward/plain": loop(
                    lambda x: tf.matmul(x, kernel), a, inputs),
                "forward/kernel_on_the_left": loop(lambda x: tf.transpose(
                    tf.matmul(transposed, x, transpose_b=True)), a, inputs),
                "backward/transpose_b": loop(
                    lambda x: tf.matmul(x, kernel, transpose_b=True), d,
                    outputs),
                "backward/kernel_on_the_left": loop(lambda x: tf.transpose(
                    tf.matmul(kernel, x, transpose_b=True)), d, outputs),
            }, repeats)
            results[f"{name}/{rows}_rows"] = {
                k: round(v / steps, 3) for k, v in times.items()}
    return results


def parsing_convolution(repeats):
    batch, steps, features, units, width = 64, 35, 800, 1200, 6
    results = {}
    for dtype in ("float32", "bfloat16"):
        x = tf.cast(tf.random.normal((batch, steps + width - 1, features)),
                    dtype)
        kernel = tf.Variable(
            tf.cast(tf.random.normal((width, features, units)) / 70, dtype))

        def convolution(x):
            return tf.nn.conv1d(x, kernel, 1, "VALID")

        def unfolded(x):
            windows = tf.concat([x[:, k : k + steps] for k in range(width)], -1)
            flat = tf.matmul(tf.reshape(windows, (-1, width * features)),
                             tf.reshape(kernel, (width * features, units)))
            return tf.reshape(flat, (batch, steps, units))

        def taps(x):
            return tf.add_n([tf.matmul(x[:, k : k + steps], kernel[k])
                             for k in range(width)])

        def with_gradient(forward):
            @tf.function
            def run():
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = tf.cast(forward(x), "float32")
                    loss = tf.reduce_sum(y * y)
                return tape.gradient(loss, [x, kernel])
            return run

        results[dtype] = fastest({
            "convolution": with_gradient(convolution),
            "unfolded_product": with_gradient(unfolded),
            "tap_products": with_gradient(taps),
        }, repeats)
    return results


def reading_tape_work(repeats):
    batch, steps, slots, units = 64, 35, 15, 1200
    rng = np.random.default_rng(0)

    def normal(*shape, scale=1.0):
        return tf.constant((rng.normal(size=shape) * scale).astype("float32"))

    def drop(*shape):
        return tf.constant(2.0 * (rng.uniform(size=shape) > 0.5), "float32")

    inputs = [normal(batch, steps, units), normal(batch, steps, 4 * units),
              tf.constant(rng.uniform(size=(batch, steps, slots)),
                          "float32"),
              normal(batch, slots, units), normal(batch, slots, units)]
    weights = {"query_kernel": normal(units, units, scale=0.03),
               "recurrent_kernel": normal(units, 4 * units, scale=0.03),
               "recurrent_bias": normal(4 * units),
               "recurrent_gamma": normal(4 * units),
               "recurrent_beta": normal(4 * units),
               "cell_gamma": normal(units), "cell_beta": normal(units)}
    masks = {"key": drop(batch, steps, units),
             "query": drop(batch, steps, units),
             "attended": drop(batch, units)}

    def layer(fuse):
        @tf.function
        def run():
            sources = inputs + list(weights.values())
            with tf.GradientTape() as tape:
                tape.watch(sources)
                h, c = _tf_reading_recurrence(
                    *inputs, weights, masks, epsilon=(1e-6, 1e-6),
                    fuse_tape_updates=fuse)
                loss = tf.reduce_sum(h) + tf.reduce_sum(c)
            return tape.gradient(loss, sources)
        return run

    return fastest({"xla_fused": layer(True), "separate_ops": layer(False)},
                   repeats)


def _onlstm_batch(rng, tokens=1400, vocabulary=10000):
    return tf.constant(rng.integers(0, vocabulary, tokens).astype("int32"))


def token_loss(repeats):
    rng = np.random.default_rng(0)
    targets = _onlstm_batch(rng)
    logits = tf.constant(rng.normal(size=(1400, 10000)).astype("float32"))

    def with_gradient(loss_function):
        @tf.function
        def run():
            with tf.GradientTape() as tape:
                tape.watch(logits)
                loss = tf.reduce_mean(loss_function(targets, logits))
            return tape.gradient(loss, logits)
        return run

    def keras_loss(targets, logits):
        return keras.losses.sparse_categorical_crossentropy(
            targets, logits, from_logits=True)

    return fastest({"keras_sparse_cross_entropy": with_gradient(keras_loss),
                    "token_cross_entropy_xla": with_gradient(
                        token_cross_entropy)}, repeats)


def vocabulary_projection(repeats):
    rng = np.random.default_rng(0)
    targets = _onlstm_batch(rng)
    vectors = tf.constant(rng.normal(size=(1400, 400)).astype("float32"))

    def projection(gradient_dtype):
        layer = EmbeddingDropout(10000, 400, dtype="float32",
                                 reverse_gradient_dtype=gradient_dtype)
        layer.build()

        @tf.function
        def run():
            with tf.GradientTape() as tape:
                tape.watch(vectors)
                logits = layer(vectors, reverse=True)
                loss = tf.reduce_mean(token_cross_entropy(targets, logits))
            return tape.gradient(loss, [vectors, *layer.trainable_weights])
        return run

    return fastest({"float32": projection(None),
                    "bfloat16_gradient_products": projection("bfloat16")},
                   repeats)


MEASUREMENTS = {
    "transposed_product": (
        "transposed_product_ms_per_step", transposed_product),
    "row_layouts": ("bfloat16_row_layouts_ms_per_step", row_layouts),
    "parsing_convolution": ("parsing_convolution_ms", parsing_convolution),
    "reading_tape_work": (
        "reading_layer_forward_backward_ms", reading_tape_work),
    "token_loss": ("token_loss_forward_backward_ms", token_loss),
    "vocabulary_projection": (
        "vocabulary_projection_forward_backward_ms", vocabulary_projection),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=sorted(MEASUREMENTS),
                        default=sorted(MEASUREMENTS),
                        help="the measurements to run (default: all)")
    args = parser.parse_args()
    result = {"load_average_at_start": [round(v, 2) for v in os.getloadavg()]}
    for name in args.only:
        key, function = MEASUREMENTS[name]
        result[key] = function(args.repeats)
    result["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
