"""The ON-LSTM journey of docs/tour.md, each command in a fresh process."""

import re

import pytest

from checks import assert_exported
from checks import assert_one_tree
from checks import assert_trained
from tour import run_journey

pytestmark = pytest.mark.slow


def test_train_then_parse_evaluate_export_serve_and_load(tmp_path):
    steps = run_journey("ON-LSTM", tmp_path)
    checkout = tmp_path / "checkout"
    (_, train, _), (_, parse, parse_err), (_, table, _), (_, export, _), (
        _, served, _), (_, loaded, _) = steps
    assert_trained(train, checkout, "tour_onlstm")
    assert_one_tree(parse)
    assert "parsed with layer1/forget (picked by --layer 1 --distance forget)" in parse_err
    for name in ("layer1/forget", "layer2/input", "right-branching"):
        assert name in table
    assert_exported(export, checkout, "tour_onlstm")
    perplexity = float(re.search(r"tf\.Tensor\(\[([0-9.e+]+)\]", served).group(1))
    assert 1 < perplexity < 1e5, served
    assert "layer1/forget" in loaded and "layer2/input" in loaded
