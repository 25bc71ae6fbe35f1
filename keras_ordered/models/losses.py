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

import functools

from keras import ops

from keras_ordered import backend


@functools.cache
def _tensorflow_kernels():
    """The two XLA-compiled kernels of the TensorFlow fast path, made on
    first use. XLA compiles each once per distinct input shape and caches
    it: with variable-length BPTT windows, once per window length met (a
    fraction of a second each on a 2-core CPU)."""
    tf = backend.require_tensorflow("the fused token cross-entropy")

    @tf.function(jit_compile=True)
    def log_normaliser_and_loss(logits, targets):
        # Rows of `logits` (N, V), `targets` (N,).
        top = tf.reduce_max(logits, axis=-1, keepdims=True)
        log_normaliser = top + tf.math.log(
            tf.reduce_sum(tf.exp(logits - top), axis=-1, keepdims=True)
        )
        picked = tf.gather(logits, targets[:, None], batch_dims=1)
        return log_normaliser, (log_normaliser - picked)[:, 0]

    @tf.function(jit_compile=True)
    def logits_gradient(logits, targets, log_normaliser, upstream):
        one_hot = tf.one_hot(targets, tf.shape(logits)[-1], dtype=logits.dtype)
        return (tf.exp(logits - log_normaliser) - one_hot) * upstream[:, None]

    return log_normaliser_and_loss, logits_gradient


def token_cross_entropy(targets, logits):
    """Per-token cross-entropy `log sum_v exp(z_v) - z_target`, float32.

    Equal (to float32 rounding) to `keras.losses.
    sparse_categorical_crossentropy(targets, logits, from_logits=True)`,
    with its gradient `softmax(z) - one_hot(target)`. On TensorFlow it is
    computed by two XLA-compiled kernels (see the module docstring), usable
    inside a model compiled with or without `jit_compile` and under a
    distribution strategy; on JAX and PyTorch by `keras.ops` (`logsumexp`
    minus the target's logit), differentiated by the backend.

    Args:
        targets: integer tensor `(...)` of token ids in `[0, V)`.
        logits: float tensor `(..., V)` (cast to float32).

    Returns:
        float32 tensor of the shape of `targets`.

    Raises:
        InvalidArgumentError: (when run, on TensorFlow) a target outside
            `[0, V)`.

    Example:

    ```python
    from keras_ordered.models.losses import token_cross_entropy

    logits = np.random.normal(size=(20, 70, 10000)).astype("float32")
    targets = np.random.randint(0, 10000, (20, 70))
    loss = token_cross_entropy(targets, logits)  # (20, 70) float32
    ```
    """
    if not backend.is_tensorflow():
        return _generic_cross_entropy(targets, logits)
    return _tensorflow_cross_entropy(targets, logits)


def _generic_cross_entropy(targets, logits):
    # Every backend: `logsumexp - picked`, differentiated by the backend
    # (on JAX, XLA fuses it with the rest of the compiled step).
    logits = ops.cast(logits, "float32")
    targets = ops.cast(targets, "int32")
    log_normaliser = ops.logsumexp(logits, axis=-1)
    picked = ops.take_along_axis(logits, targets[..., None], axis=-1)
    return log_normaliser - picked[..., 0]


def _tensorflow_cross_entropy(targets, logits):
    # TensorFlow fast path: the two fused XLA kernels, with a custom
    # gradient from the saved log-normaliser.
    tf = backend.require_tensorflow("the fused token cross-entropy")
    log_normaliser_and_loss, logits_gradient = _tensorflow_kernels()
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
        log_normaliser, loss = log_normaliser_and_loss(
            flat_logits, flat_targets
        )

        def grad(upstream):
            return logits_gradient(
                flat_logits, flat_targets, log_normaliser, upstream
            )

        return loss, grad

    return tf.reshape(cross_entropy(flat_logits), tf.shape(targets))
