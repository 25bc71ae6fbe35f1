"""The search journey of docs/tour.md: the command the search prints is the
page's next command, and it runs in a fresh process."""

import pytest

from checks import assert_one_tree
from tour import run_journey

pytestmark = pytest.mark.slow


def test_search_then_parse_with_its_best_model(tmp_path):
    (search, search_out, _), (parse, parse_out, _) = run_journey(
        "A hyperparameter search", tmp_path)
    printed = [line.strip() for line in search_out.splitlines()
               if line.strip().startswith("keras-ordered parse")]
    import shlex

    assert [shlex.split(p) for p in printed] == [parse], search_out
    assert (tmp_path / "checkout" / "runs" / "tour_tune" / "best_model.keras").exists()
    assert_one_tree(parse_out, ["the", "cat", "sat", "on", "the", "mat"])
