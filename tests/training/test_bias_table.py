"""benchmarks/bias_table.py: the distance is chosen on the development
split, and the figures are the seeds' mean and sample std."""

import json

import numpy as np
import pytest

from conftest import load_benchmark

pytestmark = pytest.mark.backends


def _record(folder, seed, scores):
    splits = {split: {"scores": {name: {"sentence_f1": value[split]}
                                 for name, value in scores.items()}}
              for split in ("dev", "test")}
    record = {"seed": seed, "study": {"family": "onlstm", "preset": "small"},
              "splits": splits}
    (folder / f"seed_{seed}.json").write_text(json.dumps(record))


def test_distance_chosen_on_dev_and_seed_statistics(tmp_path):
    table = load_benchmark("bias_table")
    # layer2 is better on test, layer3 on dev: layer3 is chosen.
    for seed, shift in ((1, 0.0), (2, 2.0), (10, 4.0)):
        _record(tmp_path, seed, {
            "layer2/forget": {"dev": 40 + shift, "test": 60},
            "layer2/forget@left": {"dev": 20, "test": 20},
            "layer3/forget": {"dev": 44 + shift, "test": 45 + shift},
            "layer3/forget@left": {"dev": 30 + shift, "test": 31},
            "layer3/forget@shift1": {"dev": 90, "test": 90},
        })
    row = table.study_row(str(tmp_path))
    assert row["distance"] == "layer3/forget" and row["seeds"] == 3
    assert row["dev_right"]["mean"] == pytest.approx(46.0)
    assert row["dev_right"]["std"] == pytest.approx(
        np.std([44, 46, 48], ddof=1))
    assert row["dev_left"]["mean"] == pytest.approx(32.0)
    assert row["test_left"] == {"mean": 31.0, "std": 0.0}
    assert "| 3 | layer3/forget | 46.0 +- 2.0 | 32.0 +- 2.0 |" in (
        table.markdown([row]))


def test_a_study_without_left_scores_is_one_line(tmp_path):
    table = load_benchmark("bias_table")
    _record(tmp_path, 1, {"layer1/forget": {"dev": 30, "test": 30}})
    with pytest.raises(SystemExit, match="no left-decoder scores"):
        table.study_row(str(tmp_path))
