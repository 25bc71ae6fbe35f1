"""The dtype policy a recipe trains under (`--precision`).

float32 is every recipe's default: a precision becomes the default only
where its trees, over seeds, match float32's (the rule for defaults of
`benchmarks/parsing_quality.py`; benchmarks/README.md, docs/results.md).
"""


import contextlib

from keras_ordered._cpu import CPUINFO
from keras_ordered._cpu import cpu_flags
from keras_ordered.training.options import PRECISIONS
from keras_ordered import backend

tf = backend.tensorflow_on_use("the recipes' precision settings")


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
        gpus = backend.gpu_visible()
    if mixed_precision:
        return "mixed_float16" if gpus else "mixed_bfloat16"
    if precision != "auto":
        return precision
    if gpus:
        return "float32"
    if native_bfloat16 is None:
        native_bfloat16 = cpu_has_native_bfloat16()
    return "mixed_bfloat16" if native_bfloat16 else "float32"


def emulated_bfloat16_warning(policy, gpus=None, native_bfloat16=None):
    """A warning when `policy` would train in bfloat16 that the CPU emulates.

    On a CPU without AVX512_BF16 or AMX, TensorFlow computes bfloat16
    products through conversions from and to float32: training is slower
    than in float32 (ON-LSTM `medium` on a 2-core AVX2 EPYC: 60 steps in
    180 s against 84 s; benchmarks/README.md), and a preset's time per
    epoch, measured with native bfloat16, does not hold.

    Args:
        policy: the Keras dtype policy name the run trains under.
        gpus: whether a GPU is visible (default: asks TensorFlow).
        native_bfloat16: whether the CPU has native bfloat16 arithmetic
            (default: `cpu_has_native_bfloat16()`).

    Returns:
        The warning, or None (another policy, a GPU, or native bfloat16).
    """
    if policy != "mixed_bfloat16":
        return None
    if gpus is None:
        gpus = backend.gpu_visible()
    if native_bfloat16 is None:
        native_bfloat16 = cpu_has_native_bfloat16()
    if gpus or native_bfloat16:
        return None
    return (
        "warning: this CPU has no native bfloat16 arithmetic (AVX512_BF16 "
        "or AMX), so mixed_bfloat16 is emulated here: expect training "
        "about 2x slower than with --precision float32, and slower than "
        "the preset's time per epoch (measured with native bfloat16). "
        "--precision float32 is faster here; the presets that default to "
        "mixed_bfloat16 do so for their trees (docs/training.md, "
        "'Precision and optimizer')."
    )


@contextlib.contextmanager
def global_policy(policy=None):
    """Sets Keras' global dtype policy for a block and puts the previous
    one back after it, however the block ends.

    Args:
        policy: str, the policy inside the block (None: leave it, only put
            it back after; e.g. around keras-tuner's search, whose
            `clear_session()` before each trial resets it).

    Example:

    ```python
    import keras
    from keras_ordered.training.precision import global_policy

    with global_policy("mixed_bfloat16"):
        assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
    assert keras.mixed_precision.global_policy().name == "float32"
    ```
    """
    import keras

    previous = keras.mixed_precision.global_policy().name
    if policy is not None:
        keras.mixed_precision.set_global_policy(policy)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
