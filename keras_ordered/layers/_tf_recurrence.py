"""Loop helpers of the hand-written recurrences (TensorFlow backend only).

`ONLSTM` and PRPN's reading network run their recurrences as TensorFlow
while loops with a hand-written backward pass (see
`on_lstm._tf_fast_recurrence` and `prpn_cell._tf_reading_recurrence`).
What they share is here: the loop itself, and the per-step products by a
kernel (forward) and by its transpose (backward), laid out for the CPU.
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


# In bfloat16, oneDNN multiplies a block of 32 rows or more by a large
# kernel faster with the kernel as the left operand, `(kernel^T a^T)^T`,
# and a block of fewer rows, or a small kernel, faster as it is
# (`benchmarks/loop_kernels.py --only row_layouts`, ms per forward step,
# plain / kernel on the left: PRPN `ptb`'s `(1200, 4800)` kernel 0.50 /
# 0.61 at 20 rows, 0.67 / 0.61 at 32, 1.26 / 1.08 at 64; PRPN `small`'s
# `(256, 1024)` 0.16 / 0.17 at 64 rows and slower on the left at every row
# count; `(512, 2048)` even; the same backward and for ON-LSTM's kernel).
LEFT_OPERAND_MIN_ROWS = 32
LEFT_OPERAND_MIN_KERNEL_SIZE = 1 << 20  # elements


def _kernel_on_the_left(kernel, rows):
    import tensorflow as tf

    size = kernel.shape.num_elements()
    return (
        kernel.dtype == tf.bfloat16
        and rows is not None
        and rows >= LEFT_OPERAND_MIN_ROWS
        and size is not None
        and size >= LEFT_OPERAND_MIN_KERNEL_SIZE
    )


def kernel_product(kernel, rows=None):
    """`f(a) = a @ kernel` in float32, for a loop's per-step forward.

    `a` is float32 and is multiplied in the kernel's dtype. With a bfloat16
    kernel of at least `LEFT_OPERAND_MIN_KERNEL_SIZE` elements and `rows`
    (the static number of rows of `a`) at least `LEFT_OPERAND_MIN_ROWS`,
    the kernel is transposed once, here, and each call multiplies with it
    as the left operand; otherwise each call is a plain `matmul(a,
    kernel)`.

    Args:
        kernel: the `(in, out)` kernel.
        rows: the static number of rows of `a`, or None where unknown.
    """
    import tensorflow as tf

    dtype = kernel.dtype
    if _kernel_on_the_left(kernel, rows):
        transposed = tf.transpose(kernel)

        def product(a):
            out = tf.matmul(transposed, tf.cast(a, dtype), transpose_b=True)
            return tf.cast(tf.transpose(out), "float32")

        return product

    def product(a):
        return tf.cast(tf.matmul(tf.cast(a, dtype), kernel), "float32")

    return product


def transposed_product(kernel, rows=None, cpu_flags=None):
    """`f(d) = d @ kernel^T` in float32, for a loop's per-step backward.

    oneDNN's float32 `matmul(d, kernel, transpose_b=True)` re-lays out the
    whole kernel at every call, so in float32 the product is arranged by
    the CPU's instruction set, after `benchmarks/loop_kernels.py` (ms per
    `(20, 4830) x (4830, 1150)` step, `transpose_b` / kernel transposed
    once before the loop / kernel as the left operand):

    - with AVX-512 (`avx512f`), `d @ kernel_t` with the kernel transposed
      once before the loop: 1.41 / **0.69** / 0.96;
    - without it (an AVX2 CPU), `(kernel @ d^T)^T`, the kernel used as
      stored on the left of the small `d^T`: 6.00 / 4.06 / **3.09**.

    In bfloat16 (measured on AVX-512 BF16 CPUs only), `(kernel @ d^T)^T`
    for a kernel of `LEFT_OPERAND_MIN_KERNEL_SIZE` elements or more from
    `LEFT_OPERAND_MIN_ROWS` rows on, `matmul(d, kernel, transpose_b=True)`
    otherwise (at 20 rows: 0.48 / 0.54 / 0.56).

    Args:
        kernel: the `(gates, units)` kernel.
        rows: the static number of rows of `d`, or None where unknown.
        cpu_flags: the CPU's flags (default: this machine's
            `/proc/cpuinfo`).
    """
    import tensorflow as tf

    dtype = kernel.dtype
    if dtype == tf.float32:
        if cpu_flags is None:
            from keras_ordered._cpu import cpu_flags as read_flags

            cpu_flags = read_flags()
        if "avx512f" in cpu_flags:
            transposed = tf.transpose(kernel)

            def product(d):
                return tf.matmul(d, transposed)

            return product
        on_the_left = True
    else:
        on_the_left = _kernel_on_the_left(kernel, rows)

    if on_the_left:

        def product(d):
            out = tf.matmul(kernel, tf.cast(d, dtype), transpose_b=True)
            return tf.cast(tf.transpose(out), "float32")

    else:

        def product(d):
            out = tf.matmul(tf.cast(d, dtype), kernel, transpose_b=True)
            return tf.cast(out, "float32")

    return product
