"""benchmarks/learning_parity.py --treebank: the trees of a parity run,
scored on the development split only."""

import pytest

from conftest import load_benchmark

DEV = ("((S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
       "(NN mat))))))\n((S (NP (DT a) (NN dog)) (VP (VBD ran))))\n")
TEST = "((S (NP (DT the) (NN dog)) (VP (VBD sat))))\n" * 5


def _load_script():
    return load_benchmark("learning_parity")


def _treebank(folder, test_text):
    folder.mkdir()
    (folder / "wsj_0001.mrg").write_text(DEV)
    (folder / "wsj_0100.mrg").write_text(test_text)
    return str(folder)


def test_dev_tree_scores_read_the_development_split_only(tmp_path):
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.models import ONLSTMLanguageModel
    from keras_ordered.parsing import evaluate_model

    script = _load_script()
    vocabulary = ["<eos>", "<unk>", "the", "a", "cat", "dog", "sat", "ran",
                  "on", "mat"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary)
    one = script.dev_tree_scores(model, _treebank(tmp_path / "one", TEST))
    # Another test split changes nothing: it is never read.
    other = script.dev_tree_scores(
        model, _treebank(tmp_path / "two", "((S (NN x)))\n"))
    assert one == other
    assert one["sentences"] == 2
    assert set(one["sentence_f1"]) == set(model.distance_names)
    dev = load_treebank(str(tmp_path / "one"), fileids=r"wsj_0001\.mrg")
    expected = evaluate_model(dev, model)
    for name, f1 in one["sentence_f1"].items():
        assert f1 == pytest.approx(expected[name]["sentence_f1"], abs=0.01)
    # Right-branching on the two gold trees, counted by hand: "the cat sat
    # on the mat" has gold spans {0-2, 2-6, 3-6, 4-6}, right-branching
    # {1-6, 2-6, 3-6, 4-6}: 3 of 4 each way, F1 75; "a dog ran": gold
    # {0-2}, right-branching {1-3}: 0. The mean over sentences: 37.5.
    assert one["right_branching"] == pytest.approx(37.5)



def _records(folder, runs):
    import json

    folder.mkdir()
    for seed, (ppl, f1) in enumerate(runs, start=1):
        result = {"seed": seed, "steps": 1500,
                  "valid_perplexity": {"300": 480.0, "1500": ppl}}
        if f1 is not None:
            result["dev_trees"] = {
                "sentences": 2000, "right_branching": 40.0,
                "sentence_f1": {"layer2/forget": f1, "layer3/forget": 50.0}}
        (folder / f"seed_{seed}.json").write_text(json.dumps(result))
    return str(folder)


REFERENCE = [(220.0, 43.0), (210.0, 41.0), (230.0, 44.0), (215.0, 39.0),
             (225.0, 45.0)]


def test_rule_over_parity_records_judges_the_default_distance(tmp_path):
    script = _load_script()
    reference = _records(tmp_path / "float32", REFERENCE)
    # As good: within 1.5 points, no more seeds short of 42, +1 % ppl.
    same = _records(tmp_path / "same", [(p * 1.01, f - 1.0)
                                        for p, f in REFERENCE])
    lines, rule = script.rule_summary(same, reference)
    assert rule["verdict"] == "passes"
    assert rule["candidate"]["short_of_right_branching"] == 2
    assert rule["candidate"]["dev_sentence_f1"] == pytest.approx(41.4)
    assert rule["candidate"]["valid_perplexity"] == pytest.approx(222.2)
    assert lines[-2].endswith(": passes")
    # One seed's trees collapse (layer 3 still parses: not what is read).
    collapsed = [(p, f) for p, f in REFERENCE[:4]] + [(225.0, 20.0)]
    _, rule = script.rule_summary(_records(tmp_path / "bad", collapsed),
                                  reference)
    assert rule["verdict"] == "fails: sentence_f1, collapses"
    # Perplexity alone (the old parity criterion) fails too.
    worse = [(p * 1.05, f) for p, f in REFERENCE]
    _, rule = script.rule_summary(_records(tmp_path / "ppl", worse),
                                  reference)
    assert rule["verdict"] == "fails: perplexity"


def test_rule_over_parity_records_needs_their_trees(tmp_path):
    script = _load_script()
    reference = _records(tmp_path / "float32", REFERENCE)
    blind = _records(tmp_path / "blind", [(220.0, None)] * 5)
    with pytest.raises(ValueError, match="without --treebank"):
        script.rule_summary(blind, reference)


def test_record_writes_the_printed_result(tmp_path, monkeypatch, capsys):
    import json
    import sys

    script = _load_script()
    result = {"seed": 3, "steps": 1500, "valid_perplexity": {"1500": 210.0},
              "dev_trees": None}
    calls = []

    def fake_run(data, seed, steps, every, **kwargs):
        calls.append((seed, steps, every, kwargs["precision"]))
        return dict(result)

    monkeypatch.setattr(script, "run", fake_run)
    monkeypatch.setattr(script.ptb, "load_data", lambda *a, **k: None)
    folder = tmp_path / "records"
    monkeypatch.setattr(sys, "argv", [
        "learning_parity.py", "--seed", "3", "--precision", "mixed_bfloat16",
        "--record", str(folder)])
    script.main()
    assert calls == [(3, 1500, 300, "mixed_bfloat16")]
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == result
    assert json.loads((folder / "seed_3.json").read_text()) == result
    # --rule without --against is refused before anything runs.
    monkeypatch.setattr(sys, "argv", ["learning_parity.py", "--rule",
                                      str(folder)])
    with pytest.raises(SystemExit):
        script.main()
    assert len(calls) == 1
