"""benchmarks/parse_stream_memory.py on two short files: every line is
printed and each run's peak memory is read."""

import pytest

from conftest import load_benchmark
from conftest import require_data

pytestmark = pytest.mark.slow


def test_each_run_prints_every_line_and_reports_its_peak(tmp_path):
    treebank = require_data("wsj_sample", "mrg")
    benchmark = load_benchmark("parse_stream_memory")
    record = tmp_path / "memory.json"
    result = benchmark.main(["--treebank", treebank, "--model",
                             "distilled_ptb", "--lines", "30", "5",
                             "--record", str(record)])
    assert [run["lines"] for run in result["runs"]] == [5, 30]
    for run in result["runs"]:
        assert run["peak_rss_mib"] > 50  # TensorFlow and the model at least
        assert run["sentences_per_s"] > 0
    assert result["peak_ratio_longest_to_shortest"] > 0
    assert record.exists()


def test_peak_of_a_gone_process_is_none():
    benchmark = load_benchmark("parse_stream_memory")
    assert benchmark.peak_mib(2 ** 22 + 12345) is None
