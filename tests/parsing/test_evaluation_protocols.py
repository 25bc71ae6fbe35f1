"""Named evaluation protocols, the LDC layout of the full WSJ, and several
models (seeds) at once."""

import json
import os
import shutil

import nltk
import numpy as np
import pytest
from conftest import HAND_SCORED_GOLD
from conftest import require_data

import keras_ordered_cli as cli
from keras_ordered_cli import _common
from keras_ordered.datasets import treebank as treebank_lib
from keras_ordered.parsing import baselines as baselines_lib
from keras_ordered.parsing import evaluate
from keras_ordered.parsing import metrics

pytestmark = pytest.mark.backends

# Four gold sentences whose scores are computed by hand below.
GOLD = HAND_SCORED_GOLD


@pytest.fixture
def pairs():
    return [
        treebank_lib.make_sentence_pair(nltk.Tree.fromstring(text), "x", i)
        for i, text in enumerate(GOLD)
    ]


def right_branching(records):
    return baselines_lib.baseline_predictor("right-branching")(
        [r.words for r in records]
    )


# --- each protocol against a hand-computed example ---------------------------


def test_pairs_with_and_without_punctuation(pairs):
    assert [p[0].words for p in pairs] == [
        "the cat sat on the mat".split(), ["it", "rained"],
        ["the", "big", "dog"], ["go"],
    ]
    assert [len(p[1].words) for p in pairs] == [7, 3, 3, 2]
    assert pairs[0][1].words[-1] == "."
    assert pairs[0][1].spans == {(0, 7), (0, 2), (2, 6), (3, 6), (4, 6)}


def test_on_lstm_and_prpn_protocols_by_hand(pairs):
    records = [p[0] for p in pairs]
    # Right-branching, whole span and one-word spans left out:
    # the cat ...: gold {(0,2),(2,6),(3,6),(4,6)}, predicted
    # {(1,6),(2,6),(3,6),(4,6)}: 3 matched of 4 and 4, F1 0.75;
    # it rained: nothing to score on either side, F1 1;
    # the big dog: gold none, predicted {(1,3)}: recall 1, precision 0, F1 0;
    # go: nothing to score, F1 1.  Mean: 2.75 / 4.
    for name in ("on-lstm", "prpn"):
        scores = evaluate.evaluate_protocol(
            records, right_branching(records), name
        )
        for bucket in ("<=10", "<=20", "<=40", "all"):
            assert scores[bucket]["sentences"] == 4
            assert scores[bucket]["sentence_f1"] == pytest.approx(68.75)
        # corpus counts without the whole span: 3 matched, 5 predicted, 4 gold
        assert scores["all"]["corpus_f1"] == pytest.approx(100 * 6 / 9)
    assert evaluate.headline(scores, "prpn") == pytest.approx(68.75)
    assert evaluate.PROTOCOLS["prpn"].headline == 10


def test_a_prediction_given_as_its_spans_scores_as_its_tree(pairs):
    # Every spans protocol, with and without punctuation, the random
    # baseline (its trees and its spans), then the spans that do not fit.
    for name, protocol in evaluate.PROTOCOLS.items():
        records = [p[1] if protocol.punctuation else p[0] for p in pairs]
        words = [r.words for r in records]
        trees = baselines_lib.baseline_predictor("random", seed=2)(words)
        spans = baselines_lib.baseline_predictor("random", seed=2,
                                                 spans=True)(words)
        if protocol.scorer == "evalb":
            with pytest.raises(ValueError, match="scores trees with EVALB"):
                evaluate.evaluate_protocol(records, spans, name)
            continue
        assert evaluate.evaluate_protocol(records, spans, name) == (
            evaluate.evaluate_protocol(records, trees, name)), name
    records = [p[0] for p in pairs]
    fitting = baselines_lib.baseline_predictor("balanced", spans=True)(
        [r.words for r in records])
    for wrong in ({(0, 2), (1, 6)}, {(0, 6), (4, 7)}):
        with pytest.raises(ValueError, match="not those of a tree over the "
                                             "sentence's 6 words"):
            evaluate.evaluate_protocol(records, [wrong, *fitting[1:]],
                                       "on-lstm")


def test_compound_pcfg_protocol_skips_one_word_sentences(pairs):
    records = [p[0] for p in pairs]
    scores = evaluate.evaluate_protocol(
        records, right_branching(records), "compound-pcfg"
    )
    assert scores["all"]["sentences"] == 3
    # harvardnlp/compound-pcfg eval.py (main): "go" is skipped (one word);
    # "it rained" (no span either side) and "the big dog" (no gold span)
    # are left out of the sentence-level mean, so only "the cat ..." (0.75)
    # counts; the corpus counts keep them: tp 3, fp 1 + 1, fn 1.
    assert scores["all"]["sentence_f1"] == pytest.approx(75.0)
    assert scores["all"]["corpus_precision"] == pytest.approx(60.0)
    assert scores["all"]["corpus_recall"] == pytest.approx(75.0)
    assert scores["all"]["corpus_f1"] == pytest.approx(200 * 0.45 / 1.35)


def test_compound_pcfg_keeps_whole_span_of_unary_gold_root(pairs):
    # compound-pcfg's eval.py drops only the outermost gold span: with
    # S -> VP over the whole sentence, VP's (0, 3) stays in the gold set.
    extra = treebank_lib.make_sentence_pair(nltk.Tree.fromstring(
        "( (S (VP (VB Eat) (NP (DT the) (NN cake))) (. .)) )"), "x", 9)[0]
    records = [p[0] for p in pairs] + [extra]
    scores = evaluate.evaluate_protocol(
        records, right_branching(records), "compound-pcfg"
    )
    # eat the cake: gold {(1,3), (0,3)}, predicted {(1,3)}: F1 2/3.
    assert scores["all"]["sentence_f1"] == pytest.approx(
        100 * (0.75 + 2 / 3) / 2)
    # corpus: tp 3 + 1, fp 2 + 0, fn 1 + 1
    assert scores["all"]["corpus_f1"] == pytest.approx(100 * 4 / 6)
    # the PRPN rule keeps the sentence at F1 1 (whole span never counted)
    on_lstm = evaluate.evaluate_protocol(
        records, right_branching(records), "on-lstm")
    assert on_lstm["all"]["sentence_f1"] == pytest.approx(
        100 * (0.75 + 1 + 0 + 1 + 1) / 5)


def test_evalb_protocol_by_hand(pairs):
    records = [p[0] for p in pairs]
    scores = evaluate.evaluate_protocol(records, right_branching(records),
                                        "evalb")
    # EVALB, unlabelled, punctuation gone; every bracket counts, the top
    # one, one-word ones and each level of a unary chain included:
    # the cat sat on the mat: gold S NP VP PP NP = 5, test 5, matched 4;
    # it rained: gold S (0,2), NP (0,1), VP (1,2) = 3, test 1, matched 1;
    # the big dog: gold 1, test (0,3) (1,3) = 2, matched 1;
    # go: gold S and VP over (0,1) = 2, test (X (VB go)) = 1, matched 1.
    assert scores["all"]["corpus_precision"] == pytest.approx(700 / 9)
    assert scores["all"]["corpus_recall"] == pytest.approx(700 / 11)
    assert scores["all"]["corpus_f1"] == pytest.approx(70.0)
    assert scores["all"]["sentence_f1"] == pytest.approx(
        100 * (0.8 + 0.5 + 2 / 3 + 2 / 3) / 4
    )
    assert evaluate.headline(scores, "evalb") == scores["all"]["corpus_f1"]
    # The same figures straight from the EVALB report of the same trees.
    from keras_ordered.parsing import evalb
    gold = [r.tree for r in records]  # punctuation gone
    test = ["(X (DT the) (X (NN cat) (X (VBD sat) (X (IN on) (X (DT the) "
            "(NN mat))))))", "(X (PRP it) (VBD rained))",
            "(X (DT the) (X (JJ big) (NN dog)))", "(X (VB go))"]
    report = evalb.evaluate_trees(gold, test, evalb.EvalbParams(labeled=False))
    assert report.summary.f_measure == pytest.approx(70.0)


def test_punctuation_protocols_by_hand(pairs):
    plain = [p[0] for p in pairs]
    punct = [p[1] for p in pairs]
    lengths = [len(r.words) for r in plain]
    trees = right_branching(punct)
    sentence = evaluate.evaluate_protocol(punct, trees, "sentence-punct",
                                          bucket_lengths=lengths)
    # the cat ... .: gold {(0,2),(2,6),(3,6),(4,6)}, predicted (1,7)..(5,7):
    # F1 0; it rained .: gold none, predicted {(1,3)}: 0; the big dog: 0;
    # go !: nothing to score: 1.
    assert sentence["all"]["sentence_f1"] == pytest.approx(25.0)
    corpus = evaluate.evaluate_protocol(punct, trees, "corpus-punct",
                                        bucket_lengths=lengths)
    # matched 1 + 1 + 1 + 1, predicted 6 + 2 + 2 + 1, gold 5 + 1 + 1 + 1
    assert corpus["all"]["corpus_f1"] == pytest.approx(100 * 8 / 19)


def test_binarized_gold_upper_bound_by_hand(pairs):
    records = [p[0] for p in pairs]
    gold = evaluate.binarized_gold_trees(records)
    assert [nltk.Tree.leaves(t) for t in gold] == [r.words for r in records]
    scores = evaluate.evaluate_protocol(records, gold, "on-lstm")
    # Every sentence binary already but the flat NP, whose one binary split
    # is not a gold span: 1 + 1 + 0 + 1.
    assert scores["all"]["sentence_f1"] == pytest.approx(75.0)
    tree = baselines_lib.binarized_gold_tree(
        nltk.Tree.fromstring("(S (NP (DT a) (NN b)) (VB c) (NP (NN d) (NN e)))")
    )
    from keras_ordered.parsing import tree_to_brackets

    assert tree_to_brackets(tree) == "((a b) (c (d e)))"


def test_length_buckets_by_hand():
    predicted = [{(0, 2), (0, 3)}, {(0, 12), (0, 2)}]
    gold = [{(0, 2), (0, 3)}, {(0, 12), (1, 12)}]
    scores = metrics.protocol_scores(predicted, gold, [3, 12])
    assert scores["<=10"]["sentences"] == 1
    assert scores["<=10"]["sentence_f1"] == 1.0
    assert scores["<=20"]["sentences"] == 2
    assert scores["<=20"]["sentence_f1"] == 0.5
    assert scores["all"] == scores["<=40"] == scores["<=20"]
    # Bucket lengths other than the scored lengths (punctuation kept).
    scores = metrics.protocol_scores(predicted, gold, [3, 12],
                                     bucket_lengths=[3, 9])
    assert scores["<=10"]["sentences"] == 2


def test_protocols_choices_are_stated():
    for name, protocol in evaluate.PROTOCOLS.items():
        choices = protocol.choices()
        assert any("F1" in c for c in choices), name
        assert any("punctuation" in c for c in choices), name
        assert any("whole-sentence span" in c for c in choices), name
        assert protocol.source
    assert "scores 100" in " ".join(evaluate.PROTOCOLS["on-lstm"].choices())
    from keras_ordered_cli import evaluate_parsing

    assert evaluate_parsing.PROTOCOL_NAMES == tuple(evaluate.PROTOCOLS)
    for name, protocol in evaluate.PROTOCOLS.items():
        assert evaluate_parsing.PROTOCOL_PUNCTUATION[name] == protocol.punctuation
    with pytest.raises(ValueError, match="on-lstm"):
        evaluate.get_protocol("nope")


def test_mean_std_max_and_self_f1():
    assert evaluate.mean_std_max([40.0, 42.0, 44.0]) == {
        "mean": 42.0, "std": 2.0, "max": 44.0
    }
    assert evaluate.mean_std_max([5.0]) == {"mean": 5.0, "std": 0.0,
                                            "max": 5.0}
    same = ["(a (b (c d)))"]
    assert evaluate.trees_self_f1([same, same]) == pytest.approx(100.0)
    # (a (b (c d))) against (((a b) c) d): no shared inner span.
    assert evaluate.trees_self_f1([same, ["(((a b) c) d)"]]) == 0.0
    assert evaluate.trees_self_f1([same]) is None


# --- the official scripts' computation, reproduced on the sample --------------


def _official_brackets(node, start=0):
    """Spans of every node below the root of more than one word, the way
    the ON-LSTM / PRPN evaluation scripts walk their nested lists."""
    if isinstance(node, str):
        return set(), start + 1
    found, position = set(), start
    for child in node:
        inner, end = _official_brackets(child, position)
        if end - position > 1:
            found.add((position, end))
            found.update(inner)
        position = end
    return found, position


def _as_lists(node):
    """A tree as nested lists of words, POS removed, unary chains collapsed
    (as the scripts' data loader builds the gold trees)."""
    if isinstance(node, str):
        return node
    if len(node) == 1 and isinstance(node[0], str):
        return node[0]
    children = [_as_lists(child) for child in node]
    return children[0] if len(children) == 1 else children


def _official_f1(gold, predicted):
    gold_spans, _ = _official_brackets(_as_lists(gold))
    model_spans, _ = _official_brackets(_as_lists(predicted))
    overlap = len(gold_spans & model_spans)
    precision = overlap / (len(model_spans) + 1e-8)
    recall = overlap / (len(gold_spans) + 1e-8)
    if not gold_spans:
        recall = 1.0
        if not model_spans:
            precision = 1.0
    return 2 * precision * recall / (precision + recall + 1e-8)


@pytest.mark.parametrize("baseline,expected_all,expected_wsj10", [
    ("right-branching", 40.05, 59.33),
    ("left-branching", 8.71, 19.55),
])
def test_sample_baselines_as_the_official_scripts_compute_them(
        baseline, expected_all, expected_wsj10):
    """The published baseline figures are on the full WSJ; on the sample the
    same choices (ON-LSTM / PRPN scripts: sentence F1, no punctuation, no
    whole span, short sentences kept) must give what a direct
    re-implementation of those scripts' loop gives."""
    records = treebank_lib.load_treebank(require_data("wsj_sample", "mrg"))
    trees = baselines_lib.baseline_predictor(baseline)(
        [r.words for r in records]
    )
    official = [_official_f1(r.tree, t) for r, t in zip(records, trees)]
    official_wsj10 = [f for f, r in zip(official, records) if len(r.words) <= 10]
    scores = evaluate.evaluate_protocol(records, trees, "on-lstm")
    assert scores["all"]["sentence_f1"] == pytest.approx(
        100 * np.mean(official), abs=1e-4
    )
    assert scores["<=10"]["sentence_f1"] == pytest.approx(
        100 * np.mean(official_wsj10), abs=1e-4
    )
    assert scores["all"]["sentence_f1"] == pytest.approx(expected_all, abs=0.01)
    assert evaluate.headline(
        evaluate.evaluate_protocol(records, trees, "prpn"), "prpn"
    ) == pytest.approx(expected_wsj10, abs=0.01)


# --- the LDC layout -----------------------------------------------------------


@pytest.fixture
def ldc_tree(tmp_path):
    """treebank_3/parsed/mrg/wsj/SS/wsj_SSNN.mrg, each section one sample
    file (copied at test time; no treebank text is committed)."""
    sample = require_data("wsj_sample", "mrg")
    wsj = tmp_path / "treebank_3" / "parsed" / "mrg" / "wsj"
    for n in range(25):
        section = wsj / f"{n:02d}"
        section.mkdir(parents=True)
        source = os.path.join(sample, f"wsj_{n + 1:04d}.mrg")
        shutil.copy(source, section / f"wsj_{n:02d}01.mrg")
    return tmp_path / "treebank_3", wsj, sample


def _sample_records(sample, numbers):
    return treebank_lib.load_treebank(
        sample, fileids=[f"wsj_{n:04d}.mrg" for n in numbers]
    )


def test_ldc_splits_by_section(ldc_tree):
    root, wsj, sample = ldc_tree
    for directory in (root, wsj, root / "parsed"):
        assert treebank_lib.find_ldc_wsj_dir(directory) == str(wsj)
    assert treebank_lib.find_ldc_wsj_dir(sample) is None
    expected = {
        "test": [24], "dev": [23], "train": list(range(3, 23)),
    }
    for split, numbers in expected.items():
        records, files, layout = treebank_lib.load_treebank_split(root, split)
        assert layout == "ldc"
        assert [os.path.basename(f) for f in files] == [
            f"wsj_{n - 1:02d}01.mrg" for n in numbers
        ]
        reference = _sample_records(sample, numbers)
        assert [r.words for r in records] == [r.words for r in reference]
        assert [r.spans for r in records] == [r.spans for r in reference]
    records, _, _ = treebank_lib.load_treebank_split(root, "test")
    assert records[0].file_id == "23/wsj_2301.mrg"
    # WSJ10: every section, sentences of <= 10 words without punctuation.
    records, files, _ = treebank_lib.load_treebank_split(wsj, "wsj10")
    assert len(files) == 25
    reference = [r for r in _sample_records(sample, range(1, 26))
                 if len(r.words) <= 10]
    assert [r.words for r in records] == [r.words for r in reference]
    assert records and all(len(r.words) <= 10 for r in records)


def test_ldc_missing_or_empty_sections(ldc_tree):
    root, wsj, _ = ldc_tree
    shutil.rmtree(wsj / "22")
    with pytest.raises(ValueError) as error:
        treebank_lib.load_treebank_split(root, "dev")
    message = str(error.value)
    assert "section 22" in message and "no folder for section(s) 22" in message
    assert str(wsj) in message and "wsj_SSNN.mrg" in message
    for path in (wsj / "05").iterdir():
        path.unlink()
    with pytest.raises(ValueError) as error:
        treebank_lib.load_treebank_split(root, "train")
    message = str(error.value)
    assert "sections 02-21" in message
    assert "no .mrg file in section(s) 05" in message
    # test still works
    records, _, _ = treebank_lib.load_treebank_split(root, "test")
    assert records


def test_split_of_the_sample_folder():
    sample = require_data("wsj_sample", "mrg")
    records, files, layout = treebank_lib.load_treebank_split(sample, "test")
    assert layout == "folder" and len(files) == 50
    assert os.path.basename(files[0]) == "wsj_0100.mrg"
    records, _, _ = treebank_lib.load_treebank_split(sample, "wsj10")
    assert len(records) == 472
    with pytest.raises(ValueError, match="not the LDC layout"):
        treebank_lib.load_treebank_split(sample, "train")


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_ldc_split(ldc_tree, capsys):
    root, wsj, sample = ldc_tree
    status, out, err = run(
        ["evaluate-parsing", "--treebank", str(root), "--split", "test",
         "--baseline", "right-branching", "--json"], capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == ["treebank", "split", "baselines"]
    assert result["treebank"] == str(wsj) and result["split"] == "test"
    reference = _sample_records(sample, [24])
    assert result["baselines"]["right-branching"]["sentences"] == len(reference)

    shutil.rmtree(wsj / "23")
    status, out, err = run(
        ["evaluate-parsing", "--treebank", str(root), "--split", "test",
         "--baseline", "right-branching"], capsys,
    )
    assert status == 2 and out == ""
    assert "section 23" in err and str(wsj) in err


# --- the command: protocols and several models ---------------------------------


SMALL = "\n".join(f"( {text} )" for text in GOLD)


@pytest.fixture
def small_treebank(tmp_path):
    directory = tmp_path / "mrg"
    directory.mkdir()
    (directory / "wsj_0001.mrg").write_text(SMALL)
    return str(directory)


class ConstantModel:
    """A distance model: constant distances (right-branching trees) or
    increasing ones (left-branching)."""

    distance_names = ["layer1/forget", "layer2/forget"]
    default_distance = "layer2/forget"

    def __init__(self, increasing):
        self.increasing = increasing
        self.seen = []

    def sentence_distances(self, sentences, batch_size=64):
        self.seen.append([list(s) for s in sentences])
        make = ((lambda s: np.arange(len(s), dtype=float)) if self.increasing
                else (lambda s: np.zeros(len(s))))
        return {
            "layer1/forget": [np.zeros(len(s)) for s in sentences],
            "layer2/forget": [make(s) for s in sentences],
        }


@pytest.fixture
def three_models(monkeypatch):
    models = {
        "a.keras": ConstantModel(False), "b.keras": ConstantModel(False),
        "c.keras": ConstantModel(True),
    }
    monkeypatch.setattr(_common, "load_model",
                        lambda path, args=None: models[path])
    return models


def test_cli_protocol_prints_its_choices(small_treebank, capsys):
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--protocol",
         "on-lstm", "evalb", "--random-seeds", "3"], capsys,
    )
    assert status == 0, err
    assert "protocol on-lstm: Shen et al., 2019" in out
    assert "  - sentence-level F1 (F1 of each sentence, averaged)" in out
    assert "  - whole-sentence span not counted" in out
    assert "protocol evalb:" in out
    assert "  - every bracket EVALB counts: the top one" in out
    assert "random (3 seeds)" in out and "binarized gold" in out
    block = out.split("protocol on-lstm:")[1].split("protocol evalb:")[0]
    rows = {line.split()[0]: line.split()[1:] for line in block.splitlines()
            if line.startswith(("right-branching", "binarized"))}
    assert rows["right-branching"] == ["68.75"] * 4  # by hand above
    assert rows["binarized"] == ["gold"] + ["75.00"] * 4
    evalb = out.split("protocol evalb:")[1]
    assert [line.split()[-1] for line in evalb.splitlines()
            if line.startswith("right-branching")] == ["70.00"]

    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--protocol",
         "all", "--baseline", "right-branching", "--json"], capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == ["treebank", "baselines", "protocols"]
    assert list(result["protocols"]) == list(evaluate.PROTOCOLS)
    evalb = result["protocols"]["evalb"]
    assert evalb["baselines"]["right-branching"]["all"]["corpus_f1"] == (
        pytest.approx(70.0)
    )
    assert list(evalb["baselines"]) == ["right-branching"]
    assert result["protocols"]["corpus-punct"]["baselines"][
        "right-branching"]["all"]["corpus_f1"] == pytest.approx(100 * 8 / 19)
    assert result["protocols"]["on-lstm"]["binarized_gold"]["all"][
        "sentence_f1"] == pytest.approx(75.0)


def test_cli_random_baseline_is_a_mean_over_seeds(small_treebank, capsys):
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--protocol",
         "on-lstm", "--baseline", "random", "--seed", "2", "--random-seeds",
         "4", "--json"], capsys,
    )
    assert status == 0, err
    entry = json.loads(out)["protocols"]["on-lstm"]["baselines"]["random"]
    assert entry["seeds"] == [2, 3, 4, 5]
    records = treebank_lib.load_treebank(small_treebank)
    values = [
        evaluate.evaluate_protocol(
            records,
            baselines_lib.baseline_predictor("random", seed=s)(
                [r.words for r in records]),
            "on-lstm")["all"]["sentence_f1"]
        for s in range(2, 6)
    ]
    assert entry["mean"]["all"]["sentence_f1"] == pytest.approx(np.mean(values))
    assert entry["std"]["all"]["sentence_f1"] == pytest.approx(
        np.std(values, ddof=1)
    )


def test_cli_several_models(three_models, small_treebank, capsys):
    argv = ["evaluate-parsing", "--treebank", small_treebank, "--model",
            "a.keras", "b.keras", "c.keras"]
    status, out, err = run(argv + ["--json"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == ["treebank", "models", "shift", "decoder",
                            "summary", "self_f1"]
    assert [m["model"] for m in result["models"]] == [
        "a.keras", "b.keras", "c.keras"
    ]
    records = treebank_lib.load_treebank(small_treebank)
    right = evaluate.evaluate_parsing(
        records, baselines_lib.baseline_predictor("right-branching"))
    left = evaluate.evaluate_parsing(
        records, baselines_lib.baseline_predictor("left-branching"))
    summary = result["summary"]["layer2/forget"]["sentence_f1"]
    values = [right["sentence_f1"]] * 2 + [left["sentence_f1"]]
    assert summary["mean"] == pytest.approx(np.mean(values))
    assert summary["std"] == pytest.approx(np.std(values, ddof=1))
    assert summary["max"] == pytest.approx(max(values))
    assert result["summary"]["layer1/forget"]["sentence_f1"]["std"] == 0.0
    # self-F1: pairs (a, b) agree fully, (a, c) and (b, c) as right- vs
    # left-branching trees do.
    lengths = [len(r.words) for r in records]
    rb = baselines_lib.baseline_predictor("right-branching")(
        [r.words for r in records])
    lb = baselines_lib.baseline_predictor("left-branching")(
        [r.words for r in records])
    from keras_ordered.parsing import tree_to_spans

    cross = metrics.sentence_f1([tree_to_spans(t) for t in rb],
                                [tree_to_spans(t) for t in lb], lengths)
    assert result["self_f1"]["layer2/forget"] == pytest.approx(
        100 * (1 + 2 * cross) / 3
    )
    assert result["self_f1"]["layer1/forget"] == pytest.approx(100.0)

    status, out, err = run(argv + ["--baseline", "right-branching"], capsys)
    assert status == 0, err
    assert "model [1]: a.keras (default distance: layer2/forget)" in out
    assert "model [3]: c.keras" in out
    assert "[3] layer2/forget" in out
    assert "over the 3 models: mean +- std (n - 1), [max]" in out
    summary_line = [line for line in out.splitlines()
                    if line.startswith("layer2/forget ")]
    assert len(summary_line) == 1
    mean = np.mean(values)
    assert f"{mean:.2f} +- {np.std(values, ddof=1):.2f}" in summary_line[0]

    status, out, err = run(argv + ["--protocol", "on-lstm", "--json"], capsys)
    assert status == 0, err
    protocol = json.loads(out)["protocols"]["on-lstm"]
    assert len(protocol["models"]) == 3
    stats = protocol["summary"]["layer2/forget"]["all"]
    assert stats["max"] == pytest.approx(68.75)


class PRPNLikeModel:
    distance_names = ["parser/distance"]
    default_distance = "parser/distance"

    def sentence_distances(self, sentences, batch_size=64):
        return {"parser/distance": [np.zeros(len(s)) for s in sentences]}


def test_cli_models_without_shared_distances(monkeypatch, small_treebank,
                                             capsys):
    models = {"a.keras": ConstantModel(False), "p.keras": PRPNLikeModel()}
    monkeypatch.setattr(_common, "load_model",
                        lambda path, args=None: models[path])
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--model",
         "a.keras", "p.keras", "--protocol", "on-lstm", "--json"], capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    # No distance in common: each model's default distance is summarised.
    assert list(result["summary"]) == ["default"]
    assert result["summary"]["default"]["sentence_f1"]["std"] == 0.0
    assert result["self_f1"] == {"default": pytest.approx(100.0)}
    assert list(result["protocols"]["on-lstm"]["summary"]) == ["default"]
