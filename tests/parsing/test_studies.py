"""keras_ordered.parsing.studies: seed records and the rule for defaults."""

import json

import pytest

from keras_ordered.parsing import studies

pytestmark = pytest.mark.backends


def test_stats_of_a_few_values_and_of_one():
    assert studies.stats([1.0, 2.0, 3.0]) == {
        "mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0}
    assert studies.stats([4.0])["std"] == 0.0


def test_records_are_read_in_seed_order_and_other_files_left_out(tmp_path):
    for seed in (10, 2, 1):
        (tmp_path / f"seed_{seed}.json").write_text(json.dumps({"seed": seed}))
    (tmp_path / "NOTE.md").write_text("a note")
    (tmp_path / "summary.json").write_text("{}")
    assert [r["seed"] for r in studies.read_records(tmp_path)] == [1, 2, 10]


RIGHT = 40.0  # right-branching's F1: seeds short of 42 count as collapses


def _seeds(f1s, perplexity=100.0):
    return [(f1, perplexity) for f1 in f1s]


def test_an_equal_candidate_passes():
    seeds = _seeds([45, 46, 47, 48, 41])
    rule = studies.rule_verdict("onlstm", seeds, seeds, RIGHT)
    assert rule["verdict"] == "passes"
    assert rule["candidate"]["short_of_right_branching"] == 1


@pytest.mark.parametrize("candidate, failed", [
    # 2 points lower on average: more than the 1.5 allowed.
    (_seeds([43, 44, 45, 46, 39]), "sentence_f1"),
    # Two collapses against one.
    (_seeds([48, 48, 48, 41, 41]), "collapses"),
    # 4 % higher perplexity: more than the 3 % allowed.
    (_seeds([45, 46, 47, 48, 41], 104.0), "perplexity"),
])
def test_each_check_can_fail_the_candidate(candidate, failed):
    reference = _seeds([45, 46, 47, 48, 41])
    rule = studies.rule_verdict("onlstm", candidate, reference, RIGHT)
    assert rule["verdict"] == f"fails: {failed}"
    assert rule["checks"][failed] is False


def test_too_few_seeds_leave_the_rule_undecided():
    seeds = _seeds([45] * 5)
    rule = studies.rule_verdict("prpn", seeds, seeds, RIGHT)
    assert rule["seeds_needed"] == 10
    assert rule["verdict"] == "undecided: fewer than 10 seeds"


def test_rule_lines_name_the_reference_and_the_figures():
    rule = studies.rule_verdict("onlstm", _seeds([45] * 5, 103.0),
                                _seeds([45] * 5), RIGHT)
    first, second = studies.rule_lines(rule, "records/x")
    assert first == "Rule for defaults against records/x: passes"
    assert "short of right-branching + 2: 0 of 5" in second
    assert "103.00 against 100.00 (+3.0 %)" in second
