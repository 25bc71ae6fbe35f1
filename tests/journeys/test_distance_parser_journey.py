"""The distilled parser's journey of docs/tour.md, each command in a fresh
process: train a student on a teacher's trees, parse, evaluate, export,
call the SavedModel, load."""

import pytest

from checks import TOKENS
from checks import assert_exported
from checks import assert_one_tree
from checks import assert_trained
from tour import run_journey

pytestmark = pytest.mark.slow


def test_train_then_parse_evaluate_export_serve_and_load(tmp_path):
    steps = run_journey("The distilled parser", tmp_path)
    commands = [words[1] for words, _, _ in steps]
    assert commands == ["recipes/ptb_distance_parser.py", "parse",
                        "evaluate-parsing", "export", "-c", "-c"]
    checkout = tmp_path / "checkout"
    (_, train, _), (_, parse, parse_err), (_, table, _), (_, export, _), (
        _, served, _), (_, loaded, _) = steps
    assert_trained(train, checkout, "tour_student")
    assert (checkout / "runs" / "tour_student" / "silver" / "train.txt").exists()
    assert_one_tree(parse)
    assert "parsed with gap/distance" in parse_err and "gap decoder" in parse_err
    assert "gap/distance" in table and "right-branching" in table
    assert_exported(export, checkout, "tour_student")
    assert "tf.Tensor([b'(" in served and all(t in served for t in TOKENS)
    assert loaded.startswith("gap {'gap/distance': [array([")
