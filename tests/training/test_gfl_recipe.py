"""The GFL recipe (recipes/wsj_gfl.py, training/gfl_task.py), its data and
inference helpers, and the `keras-ordered parse` / `evaluate` GFL paths."""

import json
import os
import subprocess
import sys

import keras
import nltk
import numpy as np
import pytest
import command_server
from conftest import REPO
from recipe_crash import CrashAtEpoch
from conftest import require_data

import keras_ordered_cli as cli
from keras_ordered.datasets import treebank_files
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary
from keras_ordered.models.gfl.inference import evaluate_parser
from keras_ordered.models.gfl.inference import parse_sentences
from keras_ordered.parsing import linearize
from keras_ordered.training.tasks import gfl as gfl_task
from keras_ordered.training.batching import GFLBatches

QUICK = ["--preset", "tiny", "--max-sentences", "12", "--steps-per-epoch", "1",
         "--eval-batch-size", "16", "--verbose", "0"]


def sample():
    return require_data("wsj_sample", "mrg")


def recipe(output, *extra, callbacks=()):
    argv = ["--treebank", sample(), "--output", str(output), *QUICK, *extra]
    return gfl_task.main(argv, callbacks=callbacks)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """One recipe run of two steps (two epochs of one batch) on the sample."""
    output = tmp_path_factory.mktemp("gfl_run")
    png = output / "attention.png"
    status = recipe(output, "--epochs", "2", "--attention-map", str(png))
    assert status == 0
    return output


# --- data -------------------------------------------------------------------
def test_sample_splits_are_the_documented_files():
    directory = sample()
    sizes = {}
    for split, patterns in treebank_files.SAMPLE_SPLITS.items():
        files = treebank_files.resolve_split_files(directory, patterns, split)
        names = [os.path.basename(f) for f in files]
        sizes[split] = (names[0], names[-1], len(names))
    assert sizes == {
        "train": ("wsj_0001.mrg", "wsj_0129.mrg", 129),
        "valid": ("wsj_0130.mrg", "wsj_0139.mrg", 10),
        "test": ("wsj_0140.mrg", "wsj_0149.mrg", 10),
    }


def test_folder_patterns_read_mrg_files_recursively(tmp_path):
    for section, text in (("02", "(S (NP (DT a) (NN b)) (. .))"),
                          ("22", "(S (VP (VB go)))"), ("23", "(NP (NN x))")):
        folder = tmp_path / "wsj" / section
        folder.mkdir(parents=True)
        (folder / f"wsj_{section}01.mrg").write_text(f"( {text} )\n")
    (tmp_path / "wsj" / "22" / "notes.txt").write_text("not a tree")
    trees, files = treebank_files.load_split(tmp_path / "wsj", ["0[2-9]", "2[01]"])
    assert [os.path.basename(f) for f in files] == ["wsj_0201.mrg"]
    assert str(trees[0]) == "(S (NP (DT a) (NN b)) (. .))"
    trees, _ = treebank_files.load_split(tmp_path / "wsj", "22")
    assert linearize.linearize(trees[0]) == ["(S", "(VP", "XX", ")VP", ")S"]
    with pytest.raises(ValueError, match="The test split is empty: no .mrg file "
                       "matches '24'"):
        treebank_files.load_split(tmp_path / "wsj", ["24"], "test")


def test_batches_cover_every_pair_once_per_epoch_in_a_fixed_order():
    sources = [[i + 3] * (1 + i % 4) for i in range(23)]
    targets = [[3 + (i % 5)] * (2 + i % 7) for i in range(23)]
    batches = GFLBatches(sources, targets, batch_size=5, seed=7)
    assert len(batches) == 5
    first = batches.batch_indices(0)
    assert sorted(i for b in first for i in b) == list(range(23))
    assert first == GFLBatches(sources, targets, 5, seed=7).batch_indices(0)
    assert first != batches.batch_indices(1)
    (source, target_in), target_out = next(batches.epoch(0))
    rows = first[0]
    for row, i in enumerate(rows):
        n, m = len(sources[i]), len(targets[i])
        assert list(source[row, :n]) == sources[i] and not source[row, n:].any()
        assert list(target_in[row, :m + 1]) == [1] + targets[i]  # <go>
        assert list(target_out[row, :m + 1]) == targets[i] + [2]  # <eos>
        assert not target_out[row, m + 1:].any()


def test_parse_sentences_keeps_the_order_and_matches_one_by_one():
    trees = [nltk.Tree.fromstring(t) for t in (
        "(S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))",
        "(S (NP (NNP Mary)) (VP (VBZ runs)))",
        "(NP (DT the) (NN cat))",
    )]
    source = SourceVocabulary.from_sentences(t.leaves() for t in trees)
    target = TargetVocabulary.from_sequences(linearize.linearize(t) for t in trees)
    parser = GFLParser.from_preset("tiny", source, target, seed=0)
    words = [t.leaves() for t in trees]
    together = parse_sentences(parser, words, batch_size=2)
    for index, sentence in enumerate(words):
        alone = parse_sentences(parser, [sentence])
        assert alone.symbols[0] == together.symbols[index]
        assert together.trees[index].leaves() == sentence
    beam = parse_sentences(parser, words, beam_size=2, batch_size=3)
    assert [t.leaves() for t in beam.trees] == words
    result, parsed = evaluate_parser(parser, trees)
    assert result.summary.sentences == 3 and result.summary.error_sentences == 0
    assert result.summary.tagging_accuracy == 100.0  # gold tags put back
    with pytest.raises(ValueError, match="Sentence 2 is empty"):
        parse_sentences(parser, [["a"], []])


# --- the recipe -------------------------------------------------------------
@pytest.mark.slow
def test_recipe_writes_results_model_and_attention_map(trained_run):
    results = json.loads((trained_run / "results.json").read_text())
    assert results["preset"] == "tiny" and results["epochs"] == 2
    assert results["sentences"] == {"train": 12, "valid": 12, "test": 12}
    assert results["evalb_params"] == "COLLINS.prm"
    for name in ("greedy", "beam"):
        figures = results["test"][name]
        for key in ("evalb_f1", "evalb_f1_len_le_40", "evalb_recall",
                    "evalb_precision", "malformed_rate", "sentences_per_second"):
            assert isinstance(figures[key], float), (name, key)
        assert 0.0 <= figures["evalb_f1"] <= 100.0
        assert 0.0 <= figures["malformed_rate"] <= 1.0
        assert figures["sentences"] == 12
        assert figures["sentences_len_le_40"] <= 12
    assert results["test"]["beam"]["beam_size"] == 3  # the tiny preset's
    model = keras.saving.load_model(trained_run / "model.keras")
    assert isinstance(model, GFLParser) and len(model.target_vocabulary) > 3
    png = (trained_run / "attention.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    # TensorBoard: epoch summaries with the validation EVALB F1.
    logs = trained_run / "logs"
    events = [f for _, _, names in os.walk(logs) for f in names
              if f.startswith("events.out")]
    assert events
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(str(logs / "validation"))
    accumulator.Reload()
    tags = accumulator.Tags()["tensors"] + accumulator.Tags()["scalars"]
    assert any("evalb_f1" in tag for tag in tags), tags


@pytest.mark.slow
def test_finished_run_says_so(trained_run, capsys):
    status = recipe(trained_run, "--epochs", "2")
    assert status == 0
    assert "is finished (2 epochs)" in capsys.readouterr().out


class _Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []
        self.initial = None

    def on_train_begin(self, logs=None):
        self.initial = [np.array(w) for w in self.model.get_weights()]

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)


@pytest.mark.slow
def test_killed_run_resumes_from_the_last_epoch(tmp_path, capsys):
    crash = CrashAtEpoch(at=1)
    status = recipe(tmp_path, "--epochs", "2", callbacks=[crash])
    assert status == 130
    err = capsys.readouterr().err
    assert "is whole (start of epoch 2): run the same command again" in err
    assert not (tmp_path / "results.json").exists()

    recorder = _Recorder()
    status = recipe(tmp_path, "--epochs", "2", callbacks=[recorder])
    assert status == 0
    assert "Resuming at the start of epoch 2 of 2" in capsys.readouterr().out
    assert recorder.epochs == [1]  # only the epoch left
    for restored, saved in zip(recorder.initial, crash.weights[0]):
        np.testing.assert_array_equal(restored, saved)
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["resumed_from_epoch"] == 1

    # Another configuration in the same folder is refused, not mixed in.
    status = recipe(tmp_path, "--epochs", "3", "--no-attention")
    assert status == 2
    assert "written by another configuration" in capsys.readouterr().err


def test_clear_errors(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    status = gfl_task.main(["--treebank", str(missing), "--output",
                              str(tmp_path / "out"), *QUICK])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No treebank folder at") and "\n" == err[-1]
    assert err.count("\n") == 1

    status = recipe(tmp_path / "out", "--valid", "wsj_9*.mrg")
    assert status == 2
    err = capsys.readouterr().err
    assert "The valid split is empty: no .mrg file matches 'wsj_9*.mrg'" in err

    with pytest.raises(SystemExit) as exit_info:
        recipe(tmp_path / "out", "--epochs", "0")
    assert exit_info.value.code == 2
    assert "argument --epochs: must be a positive integer" in (
        capsys.readouterr().err)

    with pytest.raises(SystemExit):
        gfl_task.build_parser().parse_args(["--preset", "huge"])


def test_every_option_has_help_and_default():
    parser = gfl_task.build_parser()
    text = parser.format_help()
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.dest
    for option in ("--epochs", "--batch-size", "--learning-rate", "--beam-size",
                   "--no-attention", "--word-vectors", "--output", "--seed",
                   "--verbose", "--preset", "--attention-map", "--train",
                   "--valid", "--test"):
        assert option in text
    assert "(default: wsj_013*.mrg)" in text
    assert "(default: runs/gfl_wsj)" in text


@pytest.mark.slow
def test_recipe_script_help_runs():
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "recipes", "wsj_gfl.py"), "--help"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Grammar as a Foreign Language" in result.stdout


# --- the command line -----------------------------------------------------
@pytest.mark.slow
def test_cli_parse_prints_labelled_trees(trained_run, capsys):
    model = str(trained_run / "model.keras")
    status = cli.main(["parse", "--model", model, "The cat (a big one) sat."])
    out, err = capsys.readouterr()
    assert status == 0, err
    tree = nltk.Tree.fromstring(out.strip())
    assert tree.leaves() == ["The", "cat", "-LRB-", "a", "big", "one", "-RRB-",
                             "sat", "."]
    assert {tag for _, tag in tree.pos()} == {"XX"}
    assert "parsed with the GFL parser (greedy decoding); POS tags shown as XX" in err

    status = cli.main(["parse", "--model", model, "--beam-size", "2", "a b", "c"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert [nltk.Tree.fromstring(line).leaves() for line in out.splitlines()] == [
        ["a", "b"], ["c"]]
    assert "beam search, beam 2" in err

    status = cli.main(["parse", "--model", model, "--layer", "1", "a b"])
    assert status == 2 and "GFL parser" in capsys.readouterr().err
    status = cli.main(["parse", "--baseline", "balanced", "--beam-size", "2", "a b"])
    assert status == 2 and "--beam-size needs --model" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_evaluate_prints_the_evalb_report(trained_run, capsys):
    model = str(trained_run / "model.keras")
    argv = ["evaluate", "--treebank", sample(), "--files", "wsj_0149.mrg",
            "--model", model, "--limit", "5"]
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Bracketing FMeasure" in out and "-- len<=40 --" in out
    assert "Number of sentence        =      5" in out
    assert "Tagging accuracy          = 100.00" in out  # gold tags
    assert "5 sentences parsed with greedy decoding" in err and "sentences/s" in err

    # The same figures as the Python API on the same trees.
    gold, _ = treebank_files.load_split(sample(), ["wsj_0149.mrg"], max_sentences=5)
    result, _ = evaluate_parser(keras.saving.load_model(model), gold)
    assert f"Bracketing FMeasure       = {result.summary.f_measure:6.2f}" in out

    status = cli.main(["evaluate", "--treebank", sample(), "--files", "x*.mrg",
                       "--model", model])
    assert status == 2
    assert "no .mrg file matches 'x*.mrg'" in capsys.readouterr().err
    status = cli.main(["evaluate", "--treebank", sample(), "--files",
                       "wsj_0149.mrg", "--model", str(trained_run / "no.keras")])
    assert status == 2 and "No model at" in capsys.readouterr().err


@pytest.mark.slow
def test_parse_speed_benchmark_prints_json():
    script = os.path.join(REPO, "benchmarks", "gfl_parse_speed.py")
    result = subprocess.run(
        command_server.argv(
            [sys.executable, script, "--treebank", sample(), "--preset",
             "tiny", "--max-sentences", "4", "--beam-size", "2",
             "--batch-size", "2"]),
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["sentences"] == 4 and figures["model"].startswith("untrained tiny")
    for name in ("greedy", "beam_2"):
        assert figures[name]["sentences_per_second"] > 0
