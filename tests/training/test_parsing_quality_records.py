"""benchmarks/parsing_quality.py --record: a seed study spread over machines.

A seed's scores recorded in a committed folder count as a finished seed on
a machine whose `--output` folder is gone: not trained again, in the
summary's statistics, left out of self-F1 (which needs the trees).
"""

import json
import os

import pytest

from conftest import load_benchmark

TREES = {
    "wsj_0001.mrg": "((S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) "
                    "(NP (DT the) (NN mat))))))\n",
    "wsj_0100.mrg": "((S (NP (DT a) (NN dog)) (VP (VBD ran) (ADVP (RB "
                    "away)))))\n",
}
DISTANCE = "layer2/forget"


def _load_script():
    return load_benchmark("parsing_quality")


@pytest.fixture
def study(tmp_path):
    treebank = tmp_path / "mrg"
    treebank.mkdir()
    for name, text in TREES.items():
        (treebank / name).write_text(text)
    return tmp_path, treebank


def _entry(seed, dev_f1, with_spans=True):
    def scores(f1):
        return {name: {"sentence_f1": f1, "corpus_f1": f1,
                       "wsj10_sentence_f1": f1}
                for name in (DISTANCE, DISTANCE + "@shift1")}

    entry = {"parsing": load_benchmark("parsing_quality").PARSING,
             "seed": seed, "valid_perplexity": 100.0 + seed,
             "train_seconds": 1.0, "precision": "float32",
             "default_distance": DISTANCE,
             "splits": {"dev": {"scores": scores(dev_f1)},
                        "test": {"scores": scores(dev_f1 - 1.0)}}}
    if with_spans:
        entry["splits"]["dev"]["spans"] = [[[0, 2], [2, 6], [3, 6], [4, 6]]]
        entry["splits"]["test"]["spans"] = [[[0, 2], [2, 4]]]
    return entry


def _argv(tmp_path, treebank, *more):
    return ["--family", "onlstm", "--preset", "small", "--treebank",
            str(treebank), "--output", str(tmp_path / "out"), "--record",
            str(tmp_path / "records"), *more]


def _never_train(args, seed, extra):
    raise AssertionError(f"recorded seed {seed} was trained again")


def _finished_only(args, seed, extra):
    """train_seed for a seed whose parsing.json is in --output."""
    if not os.path.exists(os.path.join(args.output, f"seed_{seed}",
                                       "parsing.json")):
        raise AssertionError(f"seed {seed} was trained")
    return {}


def test_recorded_seeds_are_finished_and_summarized(study, monkeypatch,
                                                     capsys):
    tmp_path, treebank = study
    script = _load_script()
    args = script.main.__globals__["argparse"].Namespace(
        family="onlstm", preset="small", precision="float32",
        record=str(tmp_path / "records"))
    # Seeds 1 and 2 finished on a machine whose --output is gone: only
    # their records are left. Seed 3's trees are in --output.
    for seed, f1 in ((1, 30.0), (2, 50.0)):
        script.write_record(args, [], _entry(seed, f1))
    recorded = json.load(open(tmp_path / "records" / "seed_1.json"))
    assert "spans" not in recorded["splits"]["dev"]  # no trees committed
    assert recorded["study"]["preset"] == "small"
    seed_3 = tmp_path / "out" / "seed_3"
    seed_3.mkdir(parents=True)
    (seed_3 / "parsing.json").write_text(json.dumps(_entry(3, 40.0)))
    monkeypatch.setattr(script, "train_seed", _finished_only)

    assert script.main(_argv(tmp_path, treebank, "--seeds", "1", "2", "3",
                             "--markdown")) == 0
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["seeds"] == [1, 2, 3]
    stats = summary["splits"]["dev"]["distances"][DISTANCE]["sentence_f1"]
    assert stats["mean"] == pytest.approx(40.0)
    assert stats["min"] == 30.0 and stats["max"] == 50.0
    # Self-F1 needs two seeds' trees: only seed 3 has them here.
    assert summary["splits"]["dev"]["self_f1"] is None
    assert summary["splits"]["dev"]["self_f1_seeds"] == [3]
    out = capsys.readouterr().out
    assert "[seed 1] recorded in" in out and "n/a" in out
    # The multi-seed recipe's choice: the best seed on the development
    # split, here a recorded one whose model is not on this machine.
    assert summary["best_on_dev"] == {"seed": 2, "dev_sentence_f1": 50.0,
                                      "model": None}
    assert "best on the development split: seed 2" in out


def test_a_finished_seed_is_recorded_and_self_f1_names_its_seeds(
        study, monkeypatch):
    tmp_path, treebank = study
    script = _load_script()
    for seed in (4, 5):
        folder = tmp_path / "out" / f"seed_{seed}"
        folder.mkdir(parents=True)
        (folder / "parsing.json").write_text(json.dumps(_entry(seed, 45.0)))
    monkeypatch.setattr(script, "train_seed", _finished_only)
    script.main(_argv(tmp_path, treebank, "--seeds", "4", "5"))
    # Both seeds ran here: recorded (no trees), and self-F1 covers both.
    for seed in (4, 5):
        record = json.load(open(tmp_path / "records" / f"seed_{seed}.json"))
        assert record["splits"]["test"] == {
            "scores": _entry(seed, 45.0)["splits"]["test"]["scores"]}
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["splits"]["dev"]["self_f1"] == pytest.approx(100.0)
    assert summary["splits"]["dev"]["self_f1_seeds"] == [4, 5]


def test_a_record_of_another_study_is_refused(study, monkeypatch):
    tmp_path, treebank = study
    script = _load_script()
    args = script.main.__globals__["argparse"].Namespace(
        family="onlstm", preset="small", precision="mixed_bfloat16",
        record=str(tmp_path / "records"))
    script.write_record(args, [], _entry(1, 30.0))
    monkeypatch.setattr(script, "train_seed", _never_train)
    with pytest.raises(SystemExit, match="records another study"):
        script.main(_argv(tmp_path, treebank, "--seeds", "1",
                          "--summary-only"))


def test_without_record_a_finished_seed_is_summarized(study, monkeypatch):
    """No --record: the study reads --output only (and writes no record)."""
    tmp_path, treebank = study
    script = _load_script()
    folder = tmp_path / "out" / "seed_1"
    folder.mkdir(parents=True)
    (folder / "parsing.json").write_text(json.dumps(_entry(1, 42.0)))
    monkeypatch.setattr(script, "train_seed", _finished_only)
    argv = ["--family", "onlstm", "--preset", "small", "--treebank",
            str(treebank), "--output", str(tmp_path / "out"), "--seeds", "1"]
    assert script.main(argv) == 0
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["seeds"] == [1]
    assert not (tmp_path / "records").exists()


def test_an_existing_record_is_not_rewritten(study, monkeypatch):
    """A seed both recorded and in --output keeps its record (and the
    commit that trained it), whatever the checkout running the study."""
    tmp_path, treebank = study
    script = _load_script()
    args = script.main.__globals__["argparse"].Namespace(
        family="onlstm", preset="small", precision="float32",
        record=str(tmp_path / "records"))
    monkeypatch.setattr(script, "_commit", lambda: "the training commit")
    script.write_record(args, [], _entry(1, 42.0))
    folder = tmp_path / "out" / "seed_1"
    folder.mkdir(parents=True)
    (folder / "parsing.json").write_text(json.dumps(_entry(1, 42.0)))
    monkeypatch.setattr(script, "_commit", lambda: "another checkout")
    monkeypatch.setattr(script, "train_seed", _finished_only)
    script.main(_argv(tmp_path, treebank, "--seeds", "1"))
    record = json.load(open(tmp_path / "records" / "seed_1.json"))
    assert record["commit"] == "the training commit"


def test_f1_per_epoch_over_the_seeds_from_their_history(study, monkeypatch,
                                                        capsys):
    """--parse-eval: each seed's history.csv (the recipe's per-epoch F1)
    gives the summary's F1 per epoch over the seeds, and enters the record."""
    tmp_path, treebank = study
    script = _load_script()
    key = f"parse_f1/{DISTANCE}"
    for seed, f1s in ((1, (30.0, 44.0)), (2, (34.0, 40.0))):
        folder = tmp_path / "out" / f"seed_{seed}"
        folder.mkdir(parents=True)
        (folder / "parsing.json").write_text(json.dumps(_entry(seed, 42.0)))
        rows = "".join(f"{epoch},{f1},{200.0 - 50 * epoch},5.0\n"
                       for epoch, f1 in enumerate(f1s))
        (folder / "history.csv").write_text(
            f"epoch,{key},val_perplexity,loss\n" + rows)
    # Seed 3 ran without --parse-eval: no curve, left out of the table.
    folder = tmp_path / "out" / "seed_3"
    folder.mkdir(parents=True)
    (folder / "parsing.json").write_text(json.dumps(_entry(3, 42.0)))
    monkeypatch.setattr(script, "train_seed", _finished_only)
    assert script.main(_argv(tmp_path, treebank, "--seeds", "1", "2", "3",
                             "--markdown", "--parse-eval", str(treebank))
                       ) == 0
    curve = json.load(open(tmp_path / "out" / "summary.json"))["per_epoch"]
    assert curve["seeds"] == [1, 2] and curve["distance"] == DISTANCE
    # The reference: right-branching on the callback's sentences (the two
    # of TREES). Cat: gold [0,2] [2,6] [3,6] [4,6], right-branching [1,6]
    # [2,6] [3,6] [4,6]: F1 3/4. Dog: gold [0,2] [2,4], right-branching
    # [1,4] [2,4]: F1 1/2. Mean 62.5.
    assert curve["right_branching"] == {"sentences": 2,
                                        "sentence_f1": pytest.approx(62.5)}
    first, second = curve["epochs"]
    assert (first["epoch"], first["seeds"]) == (1, 2)
    assert first["parse_f1"]["mean"] == pytest.approx(32.0)
    assert second["parse_f1"]["min"] == 40.0
    assert second["parse_f1"]["max"] == 44.0
    assert second["val_perplexity"]["mean"] == pytest.approx(150.0)
    out = capsys.readouterr().out
    assert "| 2 | 2 | 150.00 +- 0.00 (150.00-150.00) | 42.0 +- 2.8 " \
           "(40.0-44.0) |" in out
    assert "epoch 1: valid ppl 200.00" in out
    assert "right-branching 62.5 on those 2 sentences" in out
    # The record keeps the curve (not the training loss), so a fresh
    # clone's summary has it too.
    record = json.load(open(tmp_path / "records" / "seed_1.json"))
    assert record["epochs"][1] == {"epoch": 1, key: 44.0,
                                   "val_perplexity": 150.0}
    assert "epochs" not in json.load(
        open(tmp_path / "records" / "seed_3.json"))


def test_f1_per_epoch_of_several_distances_and_which_leads(
        study, monkeypatch, capsys):
    """--epoch-distances: each named distance's F1 per epoch over the
    seeds, and at each epoch how many seeds each one leads (which layer's
    forget gate parses best, epoch by epoch)."""
    tmp_path, treebank = study
    script = _load_script()
    other = "layer3/forget"
    # (layer 2, layer 3) per epoch: seed 1 moves from layer 3 to layer 2,
    # seed 2 stays with layer 3.
    for seed, pairs in ((1, ((30.0, 40.0), (46.0, 41.0))),
                        (2, ((34.0, 44.0), (38.0, 45.0)))):
        folder = tmp_path / "out" / f"seed_{seed}"
        folder.mkdir(parents=True)
        (folder / "parsing.json").write_text(json.dumps(_entry(seed, 42.0)))
        rows = "".join(f"{epoch},{f2},{f3},{200.0 - 50 * epoch}\n"
                       for epoch, (f2, f3) in enumerate(pairs))
        (folder / "history.csv").write_text(
            f"epoch,parse_f1/{DISTANCE},parse_f1/{other},val_perplexity\n"
            + rows)
    monkeypatch.setattr(script, "train_seed", _finished_only)
    assert script.main(_argv(tmp_path, treebank, "--seeds", "1", "2",
                             "--markdown", "--parse-eval", str(treebank),
                             "--epoch-distances", DISTANCE, other)) == 0
    curve = json.load(open(tmp_path / "out" / "summary.json"))["per_epoch"]
    assert curve["distances"] == [DISTANCE, other]
    first, second = curve["epochs"]
    assert first["best"] == {DISTANCE: 0, other: 2}
    assert second["best"] == {DISTANCE: 1, other: 1}
    assert second["parse_f1_by_distance"][DISTANCE]["mean"] == \
        pytest.approx(42.0)
    assert second["parse_f1_by_distance"][other]["mean"] == \
        pytest.approx(43.0)
    assert second["parse_f1"] == second["parse_f1_by_distance"][DISTANCE]
    out = capsys.readouterr().out
    assert ("| 1 | 2 | 200.00 +- 0.00 (200.00-200.00) | 32.0 +- 2.8 "
            "(30.0-34.0) | 42.0 +- 2.8 (40.0-44.0) | layer2/forget 0, "
            "layer3/forget 2 |") in out
    assert "epoch 2: valid ppl 150.00" in out and \
        "leads: layer2/forget 1, layer3/forget 1 (2 seeds)" in out


@pytest.mark.parametrize("candidate_f1s, verdict", [
    ([79.0] * 5, "passes"),
    ([80.0, 80.0, 80.0, 80.0, 70.0], "fails: sentence_f1, collapses"),
    ([79.0] * 3, "undecided: fewer than 5 seeds"),
])
def test_rule_for_defaults_against_the_reference_records(
        study, monkeypatch, capsys, candidate_f1s, verdict):
    """--rule-against: the candidate's seeds (here bfloat16) against the
    float32 records. Right-branching on the development tree is 75.0, so
    a seed below 77.0 counts as short of right-branching + 2."""
    tmp_path, treebank = study
    script = _load_script()
    namespace = script.main.__globals__["argparse"].Namespace
    reference = namespace(family="onlstm", preset="small",
                          precision="float32",
                          record=str(tmp_path / "float32"))
    for seed in range(1, 6):
        script.write_record(reference, [], _entry(seed, 80.0))
    candidate = namespace(family="onlstm", preset="small",
                          precision="mixed_bfloat16",
                          record=str(tmp_path / "records"))
    seeds = [str(seed) for seed in range(1, len(candidate_f1s) + 1)]
    for seed, f1 in enumerate(candidate_f1s, start=1):
        script.write_record(candidate, [], _entry(seed, f1))
    monkeypatch.setattr(script, "train_seed", _never_train)
    assert script.main(_argv(tmp_path, treebank, "--precision",
                             "mixed_bfloat16", "--seeds", *seeds,
                             "--summary-only", "--rule-against",
                             str(tmp_path / "float32"))) == 0
    rule = json.load(open(tmp_path / "out" / "summary.json"))[
        "rule_for_defaults"]
    assert rule["verdict"] == verdict
    assert rule["reference"]["dev_sentence_f1"] == pytest.approx(80.0)
    assert rule["reference"]["short_of_right_branching"] == 0
    assert rule["candidate"]["seeds"] == len(candidate_f1s)
    assert f"Rule for defaults against {tmp_path / 'float32'}: {verdict}" \
        in capsys.readouterr().out


def test_trees_of_another_model_are_parsed_again(study, monkeypatch, capsys):
    # A seed's parsing.json from an earlier model of its folder (a run
    # trained on since, or a copied folder) is not reused: the seed's
    # model of results.json is parsed again.
    tmp_path, _ = study
    script = _load_script()
    folder = tmp_path / "out" / "seed_1"
    folder.mkdir(parents=True)
    (folder / "parsing.json").write_text(json.dumps(_entry(1, 42.0)))
    args = script.main.__globals__["argparse"].Namespace(
        output=str(tmp_path / "out"))

    class Parsed(Exception):
        pass

    def load_model(path, compile=True):
        raise Parsed(path)

    monkeypatch.setattr(script, "load_model", load_model)
    same = script.parse_seed(args, 1, {}, {"valid_perplexity": 101.0})
    assert same["splits"]["dev"]["scores"][DISTANCE]["sentence_f1"] == 42.0
    with pytest.raises(Parsed):
        script.parse_seed(args, 1, {}, {"valid_perplexity": 90.5})
    assert "holds the trees of another model" in capsys.readouterr().out


def test_a_seed_is_parsed_exactly_under_both_decoders(study, monkeypatch,
                                                      capsys):
    # A parsing.json made another way (before exact lookups and the left
    # decoder) is parsed again; the model reads the treebank's words as
    # they are, and every distance is scored under both decoders.
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.models import ONLSTMLanguageModel
    from keras_ordered.parsing import distances_to_tree
    from keras_ordered.parsing import evaluate_trees

    tmp_path, treebank = study
    script = _load_script()
    records = load_treebank(str(treebank))
    words = sorted({w for r in records for w in r.words})
    model = ONLSTMLanguageModel.from_preset(
        "tiny", ["<eos>", "<unk>"] + words, seed=2)
    folder = tmp_path / "out" / "seed_1"
    folder.mkdir(parents=True)
    model.save(folder / "model.keras")
    old = _entry(1, 42.0)
    del old["parsing"]
    (folder / "parsing.json").write_text(json.dumps(old))
    args = script.main.__globals__["argparse"].Namespace(
        output=str(tmp_path / "out"))
    entry = script.parse_seed(args, 1, {"dev": records},
                              {"valid_perplexity": 101.0})
    assert "was parsed another way" in capsys.readouterr().out
    assert entry["parsing"] == script.PARSING
    scores = entry["splits"]["dev"]["scores"]
    distances = model.sentence_distances([list(r.words) for r in records],
                                         normalized=True)
    for name in model.distance_names:
        for decoder, key in (("right", name), ("left", f"{name}@left")):
            trees = [distances_to_tree(r.words, d, decoder=decoder)
                     for r, d in zip(records, distances[name])]
            expected = evaluate_trees(records, trees)["sentence_f1"]
            assert scores[key]["sentence_f1"] == pytest.approx(expected)
