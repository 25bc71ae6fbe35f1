"""The dtype policy a recipe trains under (`--precision`).

float32 is every recipe's default: a precision becomes the default only
where its trees, over seeds, match float32's
(`benchmarks/parsing_quality.py`; issue 23's rule, docs/results.md).
"""

import tensorflow as tf

from keras_ordered._cpu import CPUINFO
from keras_ordered._cpu import cpu_flags
from keras_ordered.training.options import PRECISIONS


def cpu_has_native_bfloat16(cpuinfo=CPUINFO):
    """Whether the CPU does bfloat16 arithmetic natively (AVX512_BF16, AMX).

    Read from the flags of `/proc/cpuinfo` (False where that file does not
    exist, e.g. on macOS or Windows).
    """
    return bool(cpu_flags(cpuinfo) & {"avx512_bf16", "amx_bf16"})


def training_policy(precision="auto", mixed_precision=False, gpus=None,
                    native_bfloat16=None):
    """The dtype policy a recipe trains under (see `--precision`).

    Args:
        precision: one of `PRECISIONS`.
        mixed_precision: the `--mixed-precision` flag (mixed_float16 on
            GPU, mixed_bfloat16 on CPU); it overrides `precision`.
        gpus: whether a GPU is visible (default: asks TensorFlow).
        native_bfloat16: whether the CPU has native bfloat16 arithmetic
            (default: `cpu_has_native_bfloat16()`).

    Returns:
        A Keras dtype policy name.
    """
    if precision not in PRECISIONS:
        raise ValueError(
            f"Unknown precision {precision!r}: expected one of {PRECISIONS}."
        )
    if gpus is None:
        gpus = bool(tf.config.list_physical_devices("GPU"))
    if mixed_precision:
        return "mixed_float16" if gpus else "mixed_bfloat16"
    if precision != "auto":
        return precision
    if gpus:
        return "float32"
    if native_bfloat16 is None:
        native_bfloat16 = cpu_has_native_bfloat16()
    return "mixed_bfloat16" if native_bfloat16 else "float32"
