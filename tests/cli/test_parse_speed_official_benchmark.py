"""benchmarks/parse_speed_official.py on a few sentences and a small
model: the official ON-LSTM loop and `keras-ordered parse` give the same
trees from the same weights, and every rate is reported."""

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


def test_official_trees_are_read_as_brackets():
    benchmark = load_benchmark("parse_speed_official")
    assert benchmark.official_brackets([["the", "cat"], ["sat", "."]]) == (
        "((the cat) (sat .))")
    assert benchmark.official_brackets("word") == "word"
