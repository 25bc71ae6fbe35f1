"""benchmarks/serve_load.py, bounded to a few requests: it starts the
server, counts what it sends, and reports latency, throughput, errors and
memory."""

import json

import pytest

from conftest import load_benchmark

pytestmark = pytest.mark.slow

TREES = """( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on)
 (NP (DT the) (NN mat)))) (. .)) )
( (S (NP-SBJ (NNS Stocks) (-NONE- *)) (VP (VBD fell)) (. .)) )
"""


def test_bounded_load_run_reports_each_count_of_clients(tmp_path):
    pytest.importorskip("aiohttp")
    benchmark = load_benchmark("serve_load")
    (tmp_path / "wsj_0001.mrg").write_text(TREES)
    assert benchmark.treebank_sentences(str(tmp_path)) == [
        "The cat sat on the mat .", "Stocks fell ."]
    record = tmp_path / "records" / "load.json"
    result = benchmark.main(["--treebank", str(tmp_path), "--clients", "1,3",
                             "--requests", "4", "--max-seconds", "60",
                             "--record", str(record)])
    assert json.loads(record.read_text()) == result
    assert [run["clients"] for run in result["runs"]] == [1, 3]
    assert [run["requests_sent"] for run in result["runs"]] == [4, 12]
    for run in result["runs"]:
        assert run["errors"] == 0 and not run["stopped_by_time"]
        assert 0 < run["p50_ms"] <= run["p99_ms"]
        assert run["sentences_per_s"] > 0 and run["rss_mib_after"] > 0
    assert result["requests_in_all"] == 16 and result["cpu"]
