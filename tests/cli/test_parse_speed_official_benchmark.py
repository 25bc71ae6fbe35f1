"""benchmarks/parse_speed_official.py on a few sentences and a small
model: the official ON-LSTM and PRPN loops and `keras-ordered parse` give
the same trees from the same weights, and every rate is reported."""

import importlib.util
import os

import pytest

from conftest import DATA
from conftest import load_benchmark
from conftest import require_data

pytestmark = pytest.mark.slow

OFFICIAL = os.path.join(os.path.dirname(os.path.abspath(DATA)), "reference")


def test_same_trees_as_the_official_loop_and_each_rate(tmp_path):
    treebank = require_data("wsj_sample", "mrg")
    if not os.path.exists(os.path.join(OFFICIAL, "onlstm", "model.py")):
        pytest.skip(f"no official ON-LSTM code in {OFFICIAL}")
    for module in ("torch", "matplotlib"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the official code needs {module}")
    benchmark = load_benchmark("parse_speed_official")
    record = tmp_path / "speed.json"
    result = benchmark.main([
        "--official", OFFICIAL, "--treebank", treebank, "--limit", "6",
        "--emb", "20", "--hidden", "40", "--record", str(record)])
    assert result["sentences"] == 6
    assert result["same_trees"] == "6 of 6", result["first_differences"]
    for key in ("parse_file", "evaluate_parsing"):
        assert result[key]["sentences_per_s"] > 0
        assert result["times_official"][key] > 0
    assert result["official_test_phrase_grammar"]["sentences_per_s"] > 0
    assert record.exists()


def test_prpn_same_trees_as_the_official_python2_loop(tmp_path):
    # PRPN's test_phrase_grammar.py is Python 2: read through lib2to3's
    # print fixer, its loop parses the WSJ10 sentences (at most 10 words).
    treebank = require_data("wsj_sample", "mrg")
    for path in (("prpn", "test_phrase_grammar.py"),
                 ("harness", "ref_prpn_torch.py")):
        if not os.path.exists(os.path.join(OFFICIAL, *path)):
            pytest.skip(f"no official PRPN code in {OFFICIAL}")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the official code needs torch")
    benchmark = load_benchmark("parse_speed_official")
    result = benchmark.main([
        "--official", OFFICIAL, "--treebank", treebank, "--family", "prpn",
        "--limit", "5", "--emb", "20", "--hidden", "40"])
    assert result["model"]["family"] == "prpn"
    assert result["sentences"] == 5
    assert result["same_trees"] == "5 of 5", result["first_differences"]
    assert result["official_test_phrase_grammar"]["sentences_per_s"] > 0


def test_python2_prints_become_calls(tmp_path):
    source = tmp_path / "old.py"
    source.write_text("def f(x):\n    print 'value: %d' % x\n    return x\n")
    module = load_benchmark("parse_speed_official").python3_module(
        str(source), "old")
    assert module.f(3) == 3


def test_official_trees_are_read_as_brackets():
    benchmark = load_benchmark("parse_speed_official")
    assert benchmark.official_brackets([["the", "cat"], ["sat", "."]]) == (
        "((the cat) (sat .))")
    assert benchmark.official_brackets("word") == "word"


def test_the_stand_in_gflags_has_no_module_names(monkeypatch):
    # The stand-in module stays in sys.modules after the benchmark runs in
    # a test process; tools that scan sys.modules read each module's
    # `__file__` (hypothesis failed on a function there).
    import sys

    benchmark = load_benchmark("parse_speed_official")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.delitem(sys.modules, "gflags", raising=False)
    benchmark._let_the_official_modules_import()
    stub = sys.modules["gflags"]
    assert getattr(stub, "__file__", None) is None
    assert stub.DEFINE_string("x", "", "help") is None


def test_each_time_is_the_least_of_its_repeats():
    benchmark = load_benchmark("parse_speed_official")
    times = iter([5.0, 3.0, 4.0])
    calls = []

    def run():
        calls.append(1)
        return f"result {len(calls)}", next(times)

    assert benchmark._least_of(3, run) == ("result 1", 3.0)
    assert len(calls) == 3
    assert benchmark._least_of(1, lambda: ("once", 2.0)) == ("once", 2.0)
