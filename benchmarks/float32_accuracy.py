"""How exact is a backend's float32 arithmetic on this CPU?

Evaluates, on the backend `KERAS_BACKEND` names and compiled as training
compiles it (`jax.jit` on JAX, a `tf.function` on TensorFlow, eager on
PyTorch), the operations a PRPN or ON-LSTM training step is made of:
the element-wise functions (exp, log, tanh, sigmoid, softplus, log1p,
rsqrt, division) on a million float32 inputs, and the products at the
paper presets' shapes (the gate products, their gradients' transposed
shapes, the softmax layer, the attention over PRPN's memory and the
parsing convolution). Each result is compared with NumPy in float64 on
the same float32 inputs. Prints one JSON line per operation: for the
element-wise functions the largest and the mean error in units of the
last place (a mean far from 0 would be a bias), for the products the
largest error relative to the largest result.

    KERAS_BACKEND=jax python benchmarks/float32_accuracy.py
    KERAS_BACKEND=jax XLA_FLAGS=--xla_cpu_enable_platform_dependent_math=false \
        python benchmarks/float32_accuracy.py

A faithful float32 product errs by about 1e-6 of its scale; bfloat16
inputs (what a CPU's bfloat16 units would compute) by about 2e-3, which
the script also prints for each product as `bfloat16_inputs_error`.

The figures and what they settle: benchmarks/records/prpn_quick_float32_jax/.
"""

import argparse
import json
import os

import numpy as np


def compiled(fn):
    """`fn` compiled the way a training step runs on this backend."""
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        return jax.jit(fn)
    if backend == "tensorflow":
        import tensorflow as tf
        return tf.function(fn)
    return fn


def ulp_errors(out, truth):
    """Each float32 result's error from the float64 truth, in units of
    the last place of the truth rounded to float32."""
    ulp = np.spacing(np.abs(truth).astype(np.float32)).astype(np.float64)
    return (np.asarray(out, np.float64) - truth) / ulp


def relative_error(out, truth):
    """The largest error relative to the largest result."""
    return float(np.abs(np.asarray(out, np.float64) - truth).max()
                 / np.abs(truth).max())


def elementwise_cases(rng, size):
    """(name, keras.ops function, float64 reference, float32 inputs)."""
    from keras import ops

    x = (rng.standard_normal(size) * 4).astype(np.float32)
    positive = np.abs(x) + np.float32(1e-3)
    return [
        ("exp", ops.exp, np.exp, np.clip(x, -80, 80)),
        ("log", ops.log, np.log, positive),
        ("tanh", ops.tanh, np.tanh, x),
        ("sigmoid", ops.sigmoid, lambda v: 1 / (1 + np.exp(-v)), x),
        ("softplus", ops.softplus, lambda v: np.logaddexp(0, v), x),
        ("log1p", ops.log1p, np.log1p, positive),
        ("rsqrt", ops.rsqrt, lambda v: 1 / np.sqrt(v), positive),
        ("reciprocal", lambda v: 1.0 / v, lambda v: 1.0 / v, positive),
    ]


def product_cases(rng):
    """(name, keras.ops function, float64 reference, float32 operands)."""
    from keras import ops

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    cases = []
    for m, k, n, what in [
            (64, 800, 4800, "PRPN gates, batch 64"),
            (4800, 64, 800, "its kernel gradient"),
            (64, 1200, 4800, "PRPN second layer"),
            (20, 1150, 4600, "ON-LSTM gates, batch 20"),
            (2240, 400, 10000, "softmax layer, 64 x 35 tokens"),
            (1, 800, 4800, "a single row")]:
        cases.append((f"matmul {m}x{k}x{n} ({what})", ops.matmul,
                      lambda a, b: a @ b, (normal(m, k), normal(k, n))))
    cases.append((
        "batched attention scores 64 x (1x1200 . 1200x15)",
        lambda a, b: ops.einsum("bih,bhs->bis", a, b),
        lambda a, b: np.einsum("bih,bhs->bis", a, b),
        (normal(64, 1, 1200), normal(64, 1200, 15))))
    cases.append((
        "attention read 64 x (15 . 15x1200)",
        lambda a, b: ops.einsum("bs,bsh->bh", a, b),
        lambda a, b: np.einsum("bs,bsh->bh", a, b),
        (normal(64, 15), normal(64, 15, 1200))))

    def conv_reference(x, w):
        width = w.shape[0]
        steps = x.shape[1] - width + 1
        return np.stack([sum(x[:, t + i] @ w[i] for i in range(width))
                         for t in range(steps)], axis=1)

    cases.append((
        "conv1d, width 6, 800 -> 1200 channels (the parsing network's)",
        lambda x, w: ops.conv(x, w, padding="valid"), conv_reference,
        (normal(64, 40, 800), normal(6, 800, 1200))))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1 << 20,
                        help="inputs per element-wise function")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import keras
    from keras_ordered._cpu import describe_cpu
    from ml_dtypes import bfloat16

    rng = np.random.default_rng(args.seed)
    common = {"backend": keras.backend.backend(), "cpu": describe_cpu(),
              "xla_flags": os.environ.get("XLA_FLAGS", "")}
    for name, fn, reference, x in elementwise_cases(rng, args.size):
        out = keras.ops.convert_to_numpy(compiled(fn)(x))
        error = ulp_errors(out, reference(x.astype(np.float64)))
        print(json.dumps({**common, "op": name,
                          "max_abs_ulp": round(float(np.abs(error).max()), 3),
                          "mean_ulp": round(float(error.mean()), 5)}))
    for name, fn, reference, operands in product_cases(rng):
        out = keras.ops.convert_to_numpy(compiled(fn)(*operands))
        truth = reference(*(o.astype(np.float64) for o in operands))
        rounded = reference(*(o.astype(bfloat16).astype(np.float64)
                              for o in operands))
        print(json.dumps({
            **common, "op": name,
            "max_relative_error": float(f"{relative_error(out, truth):.3g}"),
            "bfloat16_inputs_error": float(
                f"{relative_error(rounded, truth):.3g}")}))


if __name__ == "__main__":
    main()
