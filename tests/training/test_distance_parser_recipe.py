"""The distance-parser recipe (recipes/ptb_distance_parser.py): the
teacher's silver trees (kept, resumed, without the treebank's sentences),
options generated from the typed config, training, the gold evaluation,
and the student through `parse`, `evaluate-parsing` and `export`."""

import json
import os

import numpy as np
import pytest
from conftest import load_benchmark
from conftest import require_data

import keras_ordered_cli as cli
from keras_ordered import saving
from keras_ordered.datasets import ptb
from keras_ordered.datasets import treebank as treebank_lib
from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.training import options
from keras_ordered.training.config import DistanceParserExperiment
from keras_ordered.training.tasks import distance_parser as task


def test_every_config_field_with_option_metadata_is_an_option():
    parser = task.build_parser()
    text = " ".join(parser.format_help().split())
    for option in ("--teacher", "--teacher-batch-size", "--exclude-treebank",
                   "--treebank", "--max-lines", "--epochs", "--batch-size",
                   "--learning-rate", "--clip-norm", "--steps-per-epoch",
                   "--preset", "--data", "--output", "--seed"):
        assert option in text, option
    assert "(default: 128)" in text  # the field's default, shown once
    args = parser.parse_args(["--teacher", "a.keras", "b.keras:all",
                              "--epochs", "3", "--output", "runs/x"])
    config = options.config_from_options(DistanceParserExperiment, args)
    assert config.teacher == ("a.keras", "b.keras:all")
    assert config.epochs == 3 and config.output == "runs/x"
    assert config.schedule({"epochs": 6, "batch_size": 64})["epochs"] == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["--epochs", "0"])


def test_silver_trees_resume_where_the_file_stops(tmp_path):
    sentences = [["a", "b"], ["c", "d", "e"], ["f"], ["g", "h"], ["i", "j"]]
    asked = []

    def predict(part):
        asked.extend(map(tuple, part))
        return [distances_to_tree(s, np.zeros(len(s)), decoder="gap")
                for s in part]

    path = tmp_path / "train.txt"
    path.write_text("(a b)\n(c (d e))\n")
    trees = task.silver_trees(predict, sentences, str(path), chunk=2,
                              verbose=0)
    assert asked == [("f",), ("g", "h"), ("i", "j")]
    assert trees == ["(a b)", "(c (d e))", "(f)", "(g h)", "(i j)"]
    assert path.read_text().splitlines() == trees
    # Another text's file is refused, not silently reused.
    with pytest.raises(ValueError, match="belongs to another text"):
        task.silver_trees(predict, [["x", "y"]] + sentences[1:], str(path),
                          verbose=0)


@pytest.fixture(scope="module")
def student_run(tmp_path_factory):
    data = require_data("ptb")
    sample = require_data("wsj_sample", "mrg")
    output = tmp_path_factory.mktemp("student")
    argv = ["--preset", "tiny", "--data", data, "--treebank", sample,
            "--teacher", "prpn_ptb_quick", "--max-lines", "40",
            "--epochs", "2", "--steps-per-epoch", "2", "--verbose", "0",
            "--output", str(output)]
    assert task.main(argv) == 0
    return output, argv, data, sample


@pytest.mark.slow
def test_the_recipe_trains_on_silver_trees_without_the_treebank(student_run):
    output, argv, data, sample = student_run
    files = ptb.locate_files(data, download=False)
    lines = ptb.read_words(files["train"])
    vocabulary = ptb.build_vocabulary(lines)
    known = set(vocabulary)
    excluded = {tuple(w if w in known else "<unk>" for w in s)
                for s in treebank_lib.lm_text_sentences(sample)}
    silver = (output / "silver" / "train.txt").read_text().splitlines()
    # The first 40 sentences once the treebank's are left out: most of
    # the text's first 40 lines are the WSJ sample's.
    kept = [s for s in lines if s and tuple(s) not in excluded][:40]
    assert sum(tuple(s) in excluded for s in lines[:40]) > 30
    assert len(silver) == len(kept) == 40
    assert [brackets_to_tree(t).leaves() for t in silver] == kept
    results = json.loads((output / "results.json").read_text())
    assert results["silver_trees"]["train"] == len(kept)
    splits = results["parsing"]["splits"]
    assert splits["dev"]["sentences"] == 1921
    assert splits["test"]["sentences"] == 1332
    assert results["parsing"]["decoder"] == "gap"
    model = saving.load_model(str(output / "model.keras"))
    assert model.default_decoder == "gap"
    # Run again: finished, the silver trees untouched.
    stamp = os.path.getmtime(output / "silver" / "train.txt")
    assert task.main(argv) == 0
    assert os.path.getmtime(output / "silver" / "train.txt") == stamp


@pytest.mark.slow
def test_the_span_preset_learns_the_spans_and_parses_by_cky(student_run,
                                                            tmp_path):
    # The same silver trees (copied: the teacher parses nothing again),
    # learnt by the span head with its own loss.
    output, argv, _, _ = student_run
    (tmp_path / "silver").mkdir()
    for name in ("train.txt", "valid.txt"):
        (tmp_path / "silver" / name).write_text(
            (output / "silver" / name).read_text())
    span_argv = list(argv)
    span_argv[span_argv.index("--preset") + 1] = "span_tiny"
    span_argv[span_argv.index("--output") + 1] = str(tmp_path)
    assert task.main(span_argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["head"] == "span"
    assert results["selection"].startswith(
        "the epoch with the lowest span cross-entropy")
    assert results["parsing"]["splits"]["dev"]["sentence_f1"] > 0
    model = saving.load_model(str(tmp_path / "model.keras"))
    assert model.head == "span" and model.default_decoder == "gap"


@pytest.mark.slow
def test_parse_and_evaluate_parsing_read_the_student_with_its_decoder(
        student_run, capsys):
    output, _, _, sample = student_run
    path = str(output / "model.keras")
    assert cli.main(["parse", "--model", path, "the cat sat on the mat"]) == 0
    captured = capsys.readouterr()
    model = saving.load_model(path)
    words = "the cat sat on the mat".split()
    distances = model.sentence_distances([words])["gap/distance"][0]
    assert captured.out.strip() == tree_to_brackets(
        distances_to_tree(words, distances, decoder="gap"))
    assert "gap decoder" in captured.err
    assert cli.main(["evaluate-parsing", "--model", path, "--treebank",
                     sample, "--limit", "30", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["decoder"] == "gap"


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_the_student_exports_a_parse_signature_with_the_same_trees(
        student_run, tmp_path):
    import tensorflow as tf

    output, _, _, _ = student_run
    path = str(output / "model.keras")
    assert cli.main(["export", "--model", path, "--output",
                     str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served" / "1"))
    assert sorted(served.signatures) == ["parse", "serving_default"]
    sentences = ["The cat sat on the mat .", "Stocks fell 3 % ."]
    out = served.signatures["parse"](tf.constant(sentences))
    model = saving.load_model(path)
    from keras_ordered.parsing import distance_predictor

    expected = distance_predictor(model)([s.split() for s in sentences])
    assert [t.decode() for t in out["tree"].numpy()] == [
        tree_to_brackets(t) for t in expected]


@pytest.mark.slow
def test_student_trees_benchmark_scores_teacher_members_and_students(
        student_run, tmp_path, capsys):
    output, _, _, sample = student_run
    student = str(output / "model.keras")
    record = tmp_path / "record.json"
    script = load_benchmark("student_trees")
    assert script.main(["--treebank", sample, "--teacher", "prpn_ptb_quick",
                        "prpn_ptb_small", "--student", student, "--student",
                        student, "--limit", "40", "--record",
                        str(record), "--markdown"]) == 0
    table = capsys.readouterr().out
    result = json.loads(record.read_text())
    dev = result["splits"]["dev"]
    assert dev["sentences"] == 40 and len(dev["members"]) == 2
    assert dev["best_member_sentence_f1"] == max(
        m["sentence_f1"] for m in dev["members"].values())
    # The same student twice: no spread, the same speed figures' keys.
    assert dev["students_sentence_f1"]["std"] == 0.0
    assert set(result["speed"]["students"]) == {student}
    assert "| dev |" in table and "x)." in table
    # With XLA: the same trees, and the teacher's speed the better of its
    # two.
    compiled = tmp_path / "compiled.json"
    assert script.main(["--treebank", sample, "--teacher", "prpn_ptb_quick",
                        "prpn_ptb_small", "--student", student, "--limit",
                        "40", "--jit-compile", "--repeats", "2", "--record",
                        str(compiled)]) == 0
    capsys.readouterr()
    xla = json.loads(compiled.read_text())
    assert xla["splits"]["dev"]["students"] == dev["students"]
    speed = xla["speed"]
    assert speed["xla"] is True and speed["teacher_sentences_per_second"] == (
        max(speed["teacher_with_xla"], speed["teacher_without_xla"]))
    rates = speed["students"][student]
    assert rates["sentences_per_second"] == max(rates["with_xla"],
                                                rates["without_xla"])
    assert speed["repeats"] == 2
