"""Token cross-entropy over a vocabulary, fused for the CPU.

The language models' loss is the cross-entropy of next-token logits
`(..., V)` against integer targets: `log sum_v exp(z_v) - z_target`. Over a
10,000-word vocabulary it is a pass-bound computation on a CPU: TensorFlow's
`SparseSoftmaxCrossEntropyWithLogits` (what `keras.losses.
sparse_categorical_crossentropy` runs) takes about 29 ms forward and
backward for a `(1400, 10000)` batch on a 2-core AVX-512 CPU, about 5 % of
an ON-LSTM `ptb` training step. `token_cross_entropy` computes the same
function as two XLA-compiled passes (the log-normaliser forward; `softmax -
one_hot` times the upstream gradient backward, from the saved
log-normaliser): 9 ms there (`benchmarks/loop_kernels.py --only
token_loss`).

The values are those of the plain op up to float32 rounding (XLA's `exp`
and `log` are not bit-identical to Eigen's), so a model trained with it
follows a trajectory that parts from the plain op's after some steps; the
ON-LSTM evidence that it learns as well is in benchmarks/README.md.
"""

import tensorflow as tf


# XLA compiles each kernel once per distinct input shape and caches it:
# with variable-length BPTT windows, once per window length met (a
# fraction of a second each on a 2-core CPU).
@tf.function(jit_compile=True)
def _log_normaliser_and_loss(logits, targets):
    # Rows of `logits` (N, V), `targets` (N,).
    top = tf.reduce_max(logits, axis=-1, keepdims=True)
    log_normaliser = top + tf.math.log(
        tf.reduce_sum(tf.exp(logits - top), axis=-1, keepdims=True)
    )
    picked = tf.gather(logits, targets[:, None], batch_dims=1)
    return log_normaliser, (log_normaliser - picked)[:, 0]


@tf.function(jit_compile=True)
def _logits_gradient(logits, targets, log_normaliser, upstream):
    one_hot = tf.one_hot(targets, tf.shape(logits)[-1], dtype=logits.dtype)
    return (tf.exp(logits - log_normaliser) - one_hot) * upstream[:, None]


def token_cross_entropy(targets, logits):
    """Per-token cross-entropy `log sum_v exp(z_v) - z_target`, float32.

    Equal (to float32 rounding) to `keras.losses.
    sparse_categorical_crossentropy(targets, logits, from_logits=True)`,
    with its gradient `softmax(z) - one_hot(target)`, computed by two
    XLA-compiled kernels (see the module docstring). Usable inside a model
    compiled with or without `jit_compile`, and under a distribution
    strategy.

    Args:
        targets: integer tensor `(...)` of token ids in `[0, V)`.
        logits: float tensor `(..., V)` (cast to float32).

    Returns:
        float32 tensor of the shape of `targets`.

    Raises:
        InvalidArgumentError: (when run) a target outside `[0, V)`.

    Example:

    ```python
    from keras_ordered.models.losses import token_cross_entropy

    logits = np.random.normal(size=(20, 70, 10000)).astype("float32")
    targets = np.random.randint(0, 10000, (20, 70))
    loss = token_cross_entropy(targets, logits)  # (20, 70) float32
    ```
    """
    logits = tf.cast(logits, "float32")
    targets = tf.cast(targets, "int32")
    vocabulary = tf.shape(logits)[-1]
    checks = [
        tf.debugging.assert_non_negative(
            targets, message="token_cross_entropy: negative target id"
        ),
        tf.debugging.assert_less(
            targets, vocabulary,
            message="token_cross_entropy: target id outside the vocabulary",
        ),
    ]
    with tf.control_dependencies(checks):
        flat_targets = tf.reshape(targets, (-1,))
    flat_logits = tf.reshape(logits, (-1, vocabulary))

    @tf.custom_gradient
    def cross_entropy(flat_logits):
        log_normaliser, loss = _log_normaliser_and_loss(
            flat_logits, flat_targets
        )

        def grad(upstream):
            return _logits_gradient(
                flat_logits, flat_targets, log_normaliser, upstream
            )

        return loss, grad

    return tf.reshape(cross_entropy(flat_logits), tf.shape(targets))
