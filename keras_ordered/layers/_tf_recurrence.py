"""Loop helpers of the hand-written recurrences (TensorFlow backend only).

`ONLSTM` and PRPN's reading network run their recurrences as TensorFlow
while loops with a hand-written backward pass (see
`on_lstm._tf_fast_recurrence` and `prpn_cell._tf_reading_recurrence`).
What they share is here: the loop itself, and the per-step product of a
gradient with a transposed kernel.
"""


def time_loop(step, elems, carry, outputs_like, reverse=False):
    """A loop over time-major tensors that keeps only the last carry.

    Like `tf.scan`, without stacking every step's carry, and reading each
    step's slice of `elems` directly (`x[t]` of a time-major tensor is one
    contiguous block) instead of converting them into tensor lists first.

    Args:
        step: `step(carry, elems_t) -> (carry, outputs_t)`.
        elems: tuple of time-major tensors `(time, ...)`.
        carry: the initial carry (a nested structure of tensors).
        outputs_like: tuple of per-step tensors giving the outputs' dtypes.
        reverse: bool, run from the last step to the first.

    Returns:
        `(last_carry, stacked_outputs)`, the outputs time-major.
    """
    import tensorflow as tf

    steps = tf.shape(elems[0])[0]
    outputs = [
        tf.TensorArray(o.dtype, size=steps, element_shape=o.shape)
        for o in outputs_like
    ]

    def body(i, carry, outputs):
        t = steps - 1 - i if reverse else i
        carry, out = step(carry, tuple(e[t] for e in elems))
        outputs = [a.write(t, o) for a, o in zip(outputs, out)]
        return i + 1, carry, outputs

    _, carry, outputs = tf.while_loop(
        lambda i, *_: i < steps, body, (tf.constant(0), carry, outputs)
    )
    return carry, tuple(a.stack() for a in outputs)


def transposed_product(kernel):
    """`f(d) = d @ kernel^T` in float32, for a loop's per-step backward.

    With a float32 kernel the transpose is taken once, before the loop:
    oneDNN's float32 `matmul(..., transpose_b=True)` re-lays out the whole
    kernel at every call, and measured 2.3 times slower than a plain
    product with a pre-transposed kernel for a `(20, 4830) x (4830, 1150)`
    step on this project's CPU (1.9 times for `(64, 4800) x (4800, 1200)`).
    In bfloat16 the transposed product is as fast or faster, and the kernel
    is used as it is.
    """
    import tensorflow as tf

    dtype = kernel.dtype
    if dtype == tf.float32:
        transposed = tf.transpose(kernel)

        def product(d):
            return tf.matmul(d, transposed)

        return product

    def product(d):
        return tf.cast(
            tf.matmul(tf.cast(d, dtype), kernel, transpose_b=True), "float32"
        )

    return product
