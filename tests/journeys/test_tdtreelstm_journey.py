"""The TD-TreeLSTM journey of docs/tour.md, each command in a fresh process."""

import re

import pytest

from checks import assert_exported
from checks import assert_trained
from tour import run_journey

pytestmark = pytest.mark.slow


def test_train_then_score_export_serve_and_load(tmp_path):
    steps = run_journey("TD-TreeLSTM", tmp_path)
    checkout = tmp_path / "checkout"
    (_, train, _), (_, scores, _), (_, export, _), (_, served, _), (
        _, loaded, _) = steps
    assert_trained(train, checkout, "tour_td")
    total = [line for line in scores.splitlines() if line.startswith("total")]
    assert len(total) == 1 and float(total[0].split("\t")[1]) < 0, scores
    assert_exported(export, checkout, "tour_td")
    log_prob = float(re.search(r"tf\.Tensor\(\[(-[0-9.e+]+)\]", served).group(1))
    assert log_prob < 0, served
    assert loaded.strip().splitlines()[-1] == "TDTreeLSTMLanguageModel"
