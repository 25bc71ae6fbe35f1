"""benchmarks/float32_accuracy.py tells faithful float32 from reduced
precision: its measures, on NumPy results whose errors are known."""

import numpy as np
from ml_dtypes import bfloat16

from conftest import load_benchmark

accuracy = load_benchmark("float32_accuracy")


def test_products_in_float32_and_from_bfloat16_inputs_are_told_apart():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 800)).astype(np.float32)
    b = rng.standard_normal((800, 480)).astype(np.float32)
    truth = a.astype(np.float64) @ b.astype(np.float64)
    faithful = accuracy.relative_error(a @ b, truth)
    reduced = accuracy.relative_error(
        (a.astype(bfloat16).astype(np.float32)
         @ b.astype(bfloat16).astype(np.float32)), truth)
    assert faithful < 5e-6
    assert reduced > 1e-3


def test_ulp_errors_measure_rounding_and_show_a_bias():
    x = np.linspace(-8, 8, 10001)
    truth = np.tanh(x)
    rounded = truth.astype(np.float32)
    errors = accuracy.ulp_errors(rounded, truth)
    assert np.abs(errors).max() <= 0.5
    assert abs(errors.mean()) < 0.05
    # One ulp up everywhere: a bias of +1.
    biased = np.nextafter(rounded, np.float32(np.inf))
    assert accuracy.ulp_errors(biased, truth).mean() > 0.9
