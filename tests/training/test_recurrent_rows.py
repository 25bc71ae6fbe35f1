"""`benchmarks/recurrent_rows.py`: a recurrent product's rate by rows."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import command_server
from conftest import REPO
from conftest import load_benchmark

recurrent_rows = load_benchmark("recurrent_rows")


@pytest.mark.parametrize("library", ["tensorflow", "jax", "torch"])
def test_each_library_runs_the_chain_numpy_runs(library):
    pytest.importorskip(library)
    rng = np.random.default_rng(3)
    kernel = (rng.standard_normal((6, 10)) / 3).astype("float32")
    x = rng.standard_normal((4, 6)).astype("float32")
    expected = x.astype("float64")
    for _ in range(5):  # written out, apart from the script's own chain
        expected = np.tanh(expected @ kernel.astype("float64"))[:, :6]
    run, total = recurrent_rows.chain(library, kernel, 6)
    got = run(x, 5)
    np.testing.assert_allclose(np.asarray(got), expected, atol=1e-5)
    # Three steps are not five: the step count is honoured.
    fewer = run(x, 3)
    assert np.abs(np.asarray(fewer) - expected).max() > 1e-3
    assert total() == pytest.approx(float(kernel.astype("float64").sum()),
                                  abs=1e-4)


@pytest.mark.slow  # a process per library
def test_the_script_prints_a_line_per_library_and_rows():
    process = subprocess.run(
        command_server.argv([
         sys.executable, os.path.join(REPO, "benchmarks",
                                      "recurrent_rows.py"),
         "--libraries", "numpy", "tensorflow", "--rows", "2", "5",
         "--hidden", "8", "--width", "24", "--steps", "3",
         "--repeats", "1"]),
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert process.returncode == 0, process.stderr[-2000:]
    lines = [json.loads(x) for x in process.stdout.splitlines()]
    assert [(x["library"], x["rows"]) for x in lines] == [
        ("numpy", 2), ("numpy", 5), ("tensorflow", 2), ("tensorflow", 5)]
    for line in lines:
        assert "error" not in line
        assert line["gflops"] > 0 and line["kernel_gbytes_per_s"] > 0
        assert line["sum_gbytes_per_s"] > 0
        # The kernel's bytes per step over the step's time.
        assert line["kernel_gbytes_per_s"] == pytest.approx(
            8 * 24 * 4 / line["seconds_per_step"] / 1e9, rel=1e-6)
        assert line["cpu"]


def test_bad_sizes_are_refused():
    with pytest.raises(SystemExit):
        recurrent_rows.main(["--rows", "0"])
    with pytest.raises(SystemExit):
        recurrent_rows.main(["--hidden", "10", "--width", "5"])
