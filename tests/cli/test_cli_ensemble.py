"""`keras-ordered parse` and `evaluate-parsing` with several models: the
members' trees averaged (keras_ordered.parsing.ensemble)."""

import json
import re

import numpy as np
import pytest

from conftest import require_data
from keras_ordered import saving
from keras_ordered import shipped
from keras_ordered_cli import main


class Rising:
    """Distances rising along the sentence: left-branching trees."""

    distance_names = ["layer1/rising", "layer1/flat"]
    default_distance = "layer1/rising"
    vocabulary = ["<eos>", "<unk>", "a"]

    def sentence_distances(self, sentences, batch_size=64, progress=None):
        if progress is not None:
            progress(len(sentences))
        return {"layer1/rising": [np.arange(len(s), dtype=float)
                                  for s in sentences],
                "layer1/flat": [np.zeros(len(s)) for s in sentences]}


class Flat(Rising):
    """The default distance is flat: right-branching trees."""

    default_distance = "layer1/flat"
    vocabulary = ["<eos>", "<unk>", "b"]


@pytest.fixture
def fakes(monkeypatch):
    models = {"rising.keras": Rising(), "flat.keras": Flat()}
    monkeypatch.setattr(saving, "load_model",
                        lambda path, compile=False: models[path])
    return models


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


TWO = ["parse", "--model", "rising.keras", "--model", "flat.keras"]


def test_two_members_tie_and_the_tie_rule_decides(fakes, capsys):
    status, out, err = run(TWO + ["a b c"], capsys)
    assert status == 0
    assert out == "(a (b c))\n"  # one vote each: ties towards right
    assert "averaged the trees of 2 members (rising.keras:layer1/rising, " \
        "flat.keras:layer1/flat), right decoder, ties towards " \
        "right-branching" in err
    # Each member reads the words its own way: said once.
    assert "vocabularies differ" in err
    status, out, _ = run(TWO + ["--tie", "left", "a b c"], capsys)
    assert out == "((a b) c)\n"
    status, out, _ = run(TWO + ["--weights", "2,1", "a b c"], capsys)
    assert out == "((a b) c)\n"  # the heavier member wins


def test_smoothing_lets_a_member_far_from_a_tie_win(fakes, capsys):
    # The rising member, weighted 1.5, outvotes the flat one. Smoothed, its
    # distances (0, 1, 2) meet noise five times their spread and its vote
    # for ((a b) c) falls to about a third; the flat member's zeros have
    # no spread, so its vote stays whole.
    weighted = TWO + ["--weights", "1.5,1"]
    status, out, _ = run(weighted + ["a b c"], capsys)
    assert status == 0 and out == "((a b) c)\n"
    status, out, err = run(weighted + ["--smoothing", "5", "a b c"], capsys)
    assert status == 0 and out == "(a (b c))\n"
    assert "votes smoothed (5)" in err
    # Shares of the votes, labelled to two decimals.
    status, out, _ = run(weighted + ["--smoothing", "5", "--votes", "a b c"],
                         capsys)
    labels = re.findall(r"\(([0-9.]+)/2\.5 ", out)
    assert labels[0] == "2.5" and len(labels) == 2, out
    assert re.fullmatch(r"[0-9]+\.[0-9]{1,2}", labels[1]), out
    with pytest.raises(SystemExit):
        main(TWO + ["--smoothing", "-1", "a b c"])
    assert "--smoothing: must be a number, 0 or more, got '-1'" in \
        capsys.readouterr().err
    status, out, err = run(["parse", "--model", "rising.keras", "--smoothing",
                            "0.5", "a b c"], capsys)
    assert status == 2 and "--smoothing applies to ensembles" in err


def test_votes_label_each_constituent(fakes, capsys):
    status, out, _ = run(TWO + ["--votes", "a b c"], capsys)
    assert status == 0
    assert out == "(2/2 (XX a) (1/2 (XX b) (XX c)))\n"
    status, out, _ = run(TWO + ["--votes", "--format", "text", "a b c"],
                         capsys)
    assert "2/2" in out and "1/2" in out


def test_one_model_with_all_its_distances_is_an_ensemble(fakes, capsys):
    status, out, err = run(["parse", "--model", "rising.keras:all",
                            "a b c"], capsys)
    assert status == 0 and out == "(a (b c))\n"
    assert "2 members" in err


@pytest.mark.parametrize("extra, message", [
    (["--model", "rising.keras:layer9/gate"],
     "rising.keras has no distance 'layer9/gate'; available: "
     "layer1/rising, layer1/flat (or 'all')."),
    (["--model", "rising.keras:layer1/flat"],
     "An ensemble needs two members or more, got 1"),
    (["--model", "rising.keras", "--model", "flat.keras", "--weights",
      "1,2,3"], "3 weights for 2 members"),
    (["--model", "rising.keras", "--model", "flat.keras", "--layer", "1"],
     "--layer and --distance pick one model's distance"),
    (["--model", "rising.keras", "--model", "flat.keras", "--format",
      "text", "--distances"], "use --votes"),
    (["--model", "rising.keras", "--weights", "1"],
     "--weights applies to ensembles"),
    (["--model", "rising.keras", "--votes"], "--votes applies to ensembles"),
])
def test_bad_ensembles_are_one_line(fakes, capsys, extra, message):
    status, out, err = run(["parse", *extra, "a b c"], capsys)
    assert status == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("keras-ordered parse: error: ")
    assert message in line, line


def test_evaluate_parsing_scores_the_ensemble_beside_its_members(
        fakes, capsys):
    treebank = require_data("wsj_sample/mrg")
    status, out, _ = run(
        ["evaluate-parsing", "--treebank", treebank, "--limit", "30",
         "--model", "rising.keras", "flat.keras", "--ensemble", "--tie",
         "both", "--baseline", "right-branching", "left-branching", "--json"],
        capsys)
    assert status == 0
    result = json.loads(out)
    rows = result["ensemble"]["rows"]
    assert result["ensemble"]["smoothing"] == 0.0
    assert list(rows) == ["rising.keras:layer1/rising",
                          "flat.keras:layer1/flat",
                          "ensemble, ties right", "ensemble, ties left"]
    baselines = result["baselines"]
    # Two members that always tie: each tie rule gives one baseline.
    assert rows["ensemble, ties right"]["sentence_f1"] == pytest.approx(
        baselines["right-branching"]["sentence_f1"])
    assert rows["ensemble, ties left"]["sentence_f1"] == pytest.approx(
        baselines["left-branching"]["sentence_f1"])


def test_the_shipped_ensemble_parses_by_name(capsys):
    names = shipped.ensemble_names()
    assert "ensemble_ptb" in names
    status, out, err = run(["parse", "--model", "ensemble_ptb",
                            "The cat sat on the mat."], capsys)
    assert status == 0
    assert out.startswith("(") and out.count("(") == out.count(")")
    card = shipped.ensemble_card("ensemble_ptb")
    assert f"averaged the trees of {len(card['expanded_members'])} members" \
        in err
    status, out, _ = run(["list-models"], capsys)
    assert "ensemble_ptb" in out
    ensemble = saving.load_shipped("ensemble_ptb")
    assert [m.name for m in ensemble.members] == card["expanded_members"]


def _ensemble_trees_script():
    import importlib.util
    import os

    from conftest import REPO

    spec = importlib.util.spec_from_file_location(
        "ensemble_trees", os.path.join(REPO, "benchmarks", "ensemble_trees.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_ensembles_card_is_its_record():
    """ensemble.json's figures are those of the record it names, and its
    README.md is the one the script writes from it."""
    import os

    from conftest import REPO

    script = _ensemble_trees_script()
    for name in shipped.ensemble_names():
        card = shipped.ensemble_card(name)
        with open(os.path.join(REPO, card["record"]), encoding="utf-8") as f:
            record = json.load(f)
        members = card["expanded_members"]
        weights = card.get("weights") or [1.0] * len(members)
        chosen = [key for key, entry in record["ensembles"].items()
                  if entry["members"] == members
                  and [float(w) for w in entry["weights"]] == weights]
        assert len(chosen) == 1, chosen
        entry = record["ensembles"][chosen[0]]
        dev = {k: e["splits"]["dev"]["ensemble"][script.DEFAULT]["sentence_f1"]
               for k, e in record["ensembles"].items()}
        assert max(dev, key=dev.get) == chosen[0]  # chosen on dev alone
        for split in script.SPLITS:
            assert card["parsing"]["splits"][split]["sentence_f1"] == \
                entry["splits"][split]["ensemble"][script.DEFAULT][
                    "sentence_f1"]
        with open(os.path.join(shipped.saved_models_dir(), name, "README.md"),
                  encoding="utf-8") as f:
            assert f.read() == script.ensemble_readme(card)


def test_the_drawn_ensemble_shows_each_spans_votes(fakes, capsys, tmp_path):
    pytest.importorskip("svgling")
    target = tmp_path / "tree.svg"
    status, out, _ = run(TWO + ["--votes", "--format", "svg", "--output",
                                str(target), "a b c"], capsys)
    assert status == 0 and out == f"{target}\n"
    svg = target.read_text()
    assert ">2/2<" in svg and ">1/2<" in svg
    for word in ("a", "b", "c"):
        assert f">{word}<" in svg


def _short_splits(monkeypatch, count):
    """`benchmarks/ensemble_trees.py` as a module whose splits hold their
    first `count` sentences, and the WSJ sample's folder."""
    script = _ensemble_trees_script()
    read = script.load_treebank_split
    monkeypatch.setattr(script, "load_treebank_split",
                        lambda folder, split: (read(folder, split)[0][:count],))
    return script, require_data("wsj_sample", "mrg")


def test_ensemble_trees_fits_weights_on_the_development_split(
        fakes, monkeypatch, tmp_path, capsys):
    """`--fit-weights NAME` adds NAME_fitted, its weights fitted on dev."""
    # 60 sentences a split: the fitting's CKY passes in a second.
    script, treebank = _short_splits(monkeypatch, 60)
    record = tmp_path / "record.json"
    # Two left-branching votes against one right-branching.
    command = ["--treebank", treebank, "--ensemble",
               "pair=rising.keras+rising.keras+flat.keras",
               "--fit-weights", "pair", "--record", str(record)]
    assert script.main(command) == 0
    written = json.loads(record.read_text())
    ensembles = written["ensembles"]
    plain, fitted = ensembles["pair"], ensembles["pair_fitted"]
    assert fitted["fitted_on"] == "dev"
    assert fitted["members"] == plain["members"]
    assert plain["weights"] == [1.0, 1.0, 1.0]
    default = script.DEFAULT

    def f1(entry, split):
        return entry["splits"][split]["ensemble"][default]["sentence_f1"]

    # Right-branching beats left-branching on English: the fitted weights
    # let the flat member's trees win (ties go right), on dev and on test.
    assert fitted["weights"][2] >= sum(fitted["weights"][:2])
    for split in ("dev", "test"):
        right = written["splits"][split]["right_branching"]["sentence_f1"]
        assert f1(fitted, split) == right > f1(plain, split) + 10
    with pytest.raises(SystemExit):
        script.main(command[:4] + ["--fit-weights", "other"])
    assert "--fit-weights other: no --ensemble other=" in capsys.readouterr().err


def test_ensemble_trees_smooths_the_votes_of_a_named_ensemble(
        fakes, monkeypatch, tmp_path, capsys):
    """`--smoothing NAME=S`: the rising member, weighted 1.5, outvotes the
    flat one with hit counts; smoothed, its noisy trees scatter and the
    flat member's right-branching trees win (`--fit-weights` then fits
    on the smoothed votes)."""
    script, treebank = _short_splits(monkeypatch, 40)
    record = tmp_path / "record.json"
    command = ["--treebank", treebank,
               "--ensemble", "plain=rising.keras+flat.keras",
               "--ensemble", "smooth=rising.keras+flat.keras",
               "--weights", "plain=1.5,1", "--weights", "smooth=1.5,1",
               "--smoothing", "smooth=5", "--fit-weights", "smooth",
               "--record", str(record)]
    assert script.main(command) == 0
    written = json.loads(record.read_text())
    ensembles = written["ensembles"]
    assert "smoothing" not in ensembles["plain"]
    assert ensembles["smooth"]["smoothing"] == 5.0
    assert ensembles["smooth_fitted"]["smoothing"] == 5.0
    default = script.DEFAULT
    for split in ("dev", "test"):
        right = written["splits"][split]["right_branching"]["sentence_f1"]
        plain, smooth = (ensembles[name]["splits"][split]["ensemble"][
            default]["sentence_f1"] for name in ("plain", "smooth"))
        assert plain < right - 10 and smooth > right - 3, (plain, smooth)
    with pytest.raises(SystemExit):
        script.main(command[:4] + ["--smoothing", "other=1"])
    assert "--smoothing other: no --ensemble other=" in capsys.readouterr().err
