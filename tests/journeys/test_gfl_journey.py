"""The GFL journey of docs/tour.md, each command in a fresh process."""

import re

import pytest

from checks import TOKENS
from checks import assert_exported
from checks import assert_trained
from tour import run_journey

pytestmark = pytest.mark.slow


def test_train_then_parse_evaluate_export_serve_and_load(tmp_path):
    steps = run_journey("Grammar as a Foreign Language", tmp_path)
    checkout = tmp_path / "checkout"
    (_, train, _), (_, parse, _), (_, report, report_err), (_, export, _), (
        _, served, _), (_, loaded, _) = steps
    assert_trained(train, checkout, "tour_gfl")
    (tree,) = parse.splitlines()
    assert re.findall(r"\(XX ([^()\s]+)\)", tree) == TOKENS, tree
    assert "Bracketing FMeasure" in report and "20 sentences parsed" in report_err
    assert_exported(export, checkout, "tour_gfl")
    assert "tf.Tensor([b'(" in served and "(XX mat)" in served
    assert loaded.strip().splitlines()[-1] == "GFLParser"
