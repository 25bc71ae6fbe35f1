"""The GPU run (benchmarks/gpu/run.sh) works, dry, on the CPU: so that the
command a GPU machine runs cannot rot between the windows that lend one.

The dry run takes the same path as the real one, on JAX: the throughput
lines of both models beside the official code's (tiny presets, one step)
and a PRPN training with the parsing callback, whose results it reads.
"""

import json
import os
import subprocess

import pytest

from conftest import DATA
from conftest import REPO
from conftest import require_data
from parity import require_backend

pytestmark = pytest.mark.slow


def test_the_gpu_run_works_dry_on_the_cpu(tmp_path):
    require_backend("jax")
    require_backend("torch")  # the official code's harness
    require_data("ptb", "train.txt")
    reference = os.path.join(REPO, "..", "shared", "reference")
    if not os.path.isdir(reference):
        pytest.skip(f"no official code at {reference}")
    env = dict(os.environ, OUT=str(tmp_path), KERAS_ORDERED_DATA=DATA,
               REFERENCE=reference, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        ["bash", "benchmarks/gpu/run.sh", "--dry-run"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in
             (tmp_path / "throughput.jsonl").read_text().splitlines()]
    kinds = {(line["kind"], line.get("model")) for line in lines}
    assert kinds == {("matmul", None), ("official", "onlstm"),
                     ("official", "prpn"), ("package", "onlstm"),
                     ("package", "prpn")}, lines
    for line in lines:
        assert "error" not in line, line
        if line["kind"] == "package":
            assert line["backend"] == "jax"
            assert line["device"].startswith("cpu: ")
            assert line["tokens_per_second"] > 0
            assert 0 < line["fraction_of_matmul"] < 1
            assert line["times_official"] > 0
    results = json.loads((tmp_path / "prpn_quick" / "results.json")
                         .read_text())
    assert results["valid_perplexity"] > 1
    assert results["parse_f1"]["parser/distance"]["sentence_f1"] > 0
