"""The TD-TreeLSTM recipe (recipes/wsj_tdtreelstm.py,
training/tdtreelstm_task.py), its schedule, its evaluation, and
`keras-ordered score`."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import command_server
from conftest import DATA
from conftest import REPO
from recipe_crash import CrashAtEpoch

import keras_ordered_cli as cli
from keras_ordered.datasets import dependency
from keras_ordered.models import TDTreeLSTMLanguageModel
from keras_ordered.models.tdtreelstm import evaluation
from keras_ordered.training import callbacks
from keras_ordered.training.tasks import tdtreelstm as tdtreelstm_task

QUICK = ["--preset", "tiny", "--max-sentences", "12", "--steps-per-epoch", "1",
         "--batch-size", "6", "--eval-batch-size", "16", "--verbose", "0",
         "--no-jit"]


def sample():
    """The WSJ sample's dependency trees: a missing copy fails (not skips)."""
    path = os.path.join(DATA, "wsj_sample", "dep")
    if not os.path.isdir(path):
        pytest.fail(f"The TD-TreeLSTM recipe tests need the WSJ sample at {path} "
                    "(set KERAS_ORDERED_DATA)")
    return path


def recipe(output, *extra, callbacks=()):
    argv = ["--data", sample(), "--output", str(output), *QUICK, *extra]
    return tdtreelstm_task.main(argv, callbacks=callbacks)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """One LdTreeLSTM recipe run of two steps (two epochs of one batch)."""
    output = tmp_path_factory.mktemp("tdtreelstm_run")
    assert recipe(output, "--ld", "--epochs", "2") == 0
    return output


@pytest.mark.slow
def test_recipe_runs_two_steps_and_writes_results(trained_run):
    results = json.loads((trained_run / "results.json").read_text())
    assert results["model"] == "LdTreeLSTM" and results["epochs_run"] == 2
    assert results["sentences"] == {"train": 12, "valid": 12}
    valid = results["valid"]
    assert valid["sentences"] == 12 and valid["words"] > 100
    assert 1.0 < valid["perplexity"] < 1e4
    # Twelve training trees leave no word seen 5 times to blank out.
    assert valid["completion_questions"] == 0 and valid["completion_accuracy"] is None
    assert 0.0 <= valid["gold_tree_preferred"] <= 100.0 and valid["tree_pairs"] > 12
    model = keras.saving.load_model(trained_run / "model.keras")
    assert isinstance(model, TDTreeLSTMLanguageModel) and model.ld
    assert any(f.startswith("events.out") for _, _, names
               in os.walk(trained_run / "logs") for f in names)


@pytest.mark.slow
def test_finished_run_says_so(trained_run, capsys):
    assert recipe(trained_run, "--ld", "--epochs", "2") == 0
    assert "is finished (2 epochs)" in capsys.readouterr().out


@pytest.mark.slow
def test_sequential_baseline_is_a_chain_model(tmp_path):
    assert recipe(tmp_path, "--sequential", "--epochs", "1") == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["model"] == "sequential LSTM (chains)"
    assert "gold_tree_preferred" not in results["valid"]
    # Under chains, a TD-TreeLSTM reads the sentence left to right with
    # GEN-R only: a word's score does not depend on the words after it.
    model = keras.saving.load_model(tmp_path / "model.keras")
    words = ["the", "cat", "sat", "on", "the", "mat"]
    other = words[:3] + ["in", "a", "box"]
    a, b = model.score([(words, evaluation.chain_heads(6)),
                        (other, evaluation.chain_heads(6))])
    assert a["word_log_probs"][:3] == pytest.approx(b["word_log_probs"][:3])


def test_clear_errors(tmp_path, capsys):
    status = tdtreelstm_task.main(["--data", str(tmp_path / "nowhere"),
                                     "--output", str(tmp_path / "o"), *QUICK])
    assert status == 2
    assert "No dependency folder at" in capsys.readouterr().err
    assert recipe(tmp_path / "o", "--valid", "x*.dp") == 2
    assert "The valid split is empty: no file matches 'x*.dp'" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.dp").write_text("a\tDT\t2\nb\tNN\t0\n\nc\tNN\t0\nd\tNN\t0\n")
    status = tdtreelstm_task.main(["--data", str(bad), "--train", "a.dp",
                                     "--valid", "a.dp", "--output",
                                     str(tmp_path / "o2"), *QUICK])
    assert status == 2
    err = capsys.readouterr().err
    assert "a.dp, sentence 2 (line 4): 2 roots" in err and err.count("\n") == 1
    assert recipe(tmp_path / "o", "--ld", "--sequential") == 2
    assert "exclude each other" in capsys.readouterr().err


def test_schedule_halves_then_stops_and_restores_the_best_weights():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(1.0), "mse")
    schedule = callbacks.HalveLearningRateOnPlateau(verbose=0)
    schedule.set_model(model)
    rates = []
    for epoch, val in enumerate([5.0, 4.0, 4.2, 3.9, 3.95]):
        model.layers[0].kernel.assign([[float(epoch)]])
        schedule.on_epoch_end(epoch, {"val_loss": val})
        rates.append(float(np.asarray(model.optimizer.learning_rate)))
        if epoch == 2:  # worse than the best: the best weights come back
            assert float(model.layers[0].kernel.numpy()[0, 0]) == 1.0
        if model.stop_training:
            break
    # 4.2 is no improvement: halving starts (and goes on every epoch);
    # 3.95 the second time: stop.
    assert rates == [1.0, 1.0, 0.5, 0.25, 0.25]
    assert schedule.stopped and schedule.best == 3.9
    schedule.on_train_end()
    assert float(model.layers[0].kernel.numpy()[0, 0]) == 3.0
    state, arrays = schedule.get_state()
    other = callbacks.HalveLearningRateOnPlateau()
    other.set_state(json.loads(json.dumps(state)), arrays)
    assert other.halving and other.best == 3.9 and len(other.best_weights) == 2


def test_completion_questions_and_perturbed_trees_are_deterministic():
    tree = dependency.DependencyTree(
        ("the", "cat", "sat", "on", "the", "mat"),
        ("DT", "NN", "VBD", "IN", "DT", "NN"), (2, 3, 0, 3, 6, 4), "x", 1, 1)
    vocabulary = dependency.DependencyVocabulary(
        ["the", "cat", "sat", "on", "mat", "dog", "rug", "box", "hat", "ran"])
    counts = {"the": 50, "cat": 9, "sat": 8, "on": 20, "mat": 7, "dog": 10,
              "rug": 6, "box": 30, "hat": 5, "ran": 8}
    tags = {w: "NN" for w in counts}
    tags.update({"the": "DT", "sat": "VBD", "on": "IN", "ran": "VBD"})
    (question,) = evaluation.completion_questions([tree], vocabulary, counts, tags)
    # The content word nearest the middle is "sat" (VBD), but only one other
    # VBD exists; the next nearest content word, "cat", has four NN impostors
    # not in the sentence, nearest in frequency.
    assert question["position"] == 1
    assert question["candidates"] == ["cat", "dog", "rug", "hat", "box"]
    others = evaluation.perturbed_heads(tree.heads, 3, seed=0)
    assert others == evaluation.perturbed_heads(tree.heads, 3, seed=0)
    assert len(others) == 3
    for heads in others:
        dependency.check_heads(heads)
        assert sum(a != b for a, b in zip(heads, tree.heads)) == 1


@pytest.mark.slow
def test_every_option_has_help_and_the_script_runs():
    parser = tdtreelstm_task.build_parser()
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.dest
    text = " ".join(parser.format_help().split())
    assert "(default: wsj_014*.dp)" in text and "--sequential" in text
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "recipes", "wsj_tdtreelstm.py"),
         "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "top-down TreeLSTM" in result.stdout


# --- keras-ordered score ------------------------------------------------------
@pytest.mark.slow
def test_cli_score_prints_log_probabilities_and_perplexity(trained_run, capsys,
                                                           tmp_path):
    model_path = str(trained_run / "model.keras")
    path = tmp_path / "trees.conllu"
    path.write_text(
        "1\tThe\t_\tDT\tDT\t_\t2\tdet\t_\t_\n2\tcat\t_\tNN\tNN\t_\t0\troot\t_\t_\n\n"
        "1\tPierre\t_\tNNP\tNNP\t_\t0\troot\t_\t_\n\n")
    status = cli.main(["score", "--model", model_path, str(path), "--per-word"])
    out, err = capsys.readouterr()
    assert status == 0, err
    lines = out.splitlines()
    model = keras.saving.load_model(model_path)
    expected = model.score([(["The", "cat"], [2, 0]), (["Pierre"], [0])])
    first = lines[0].split("\t")
    assert first[0] == "1" and float(first[1]) == pytest.approx(
        expected[0]["log_prob"], abs=1e-3)
    assert float(first[3]) == pytest.approx(expected[0]["perplexity"], rel=1e-3)
    pairs = [item.rsplit("/", 1) for item in first[4].split()]
    assert [w for w, _ in pairs] == ["The", "cat"]
    assert [float(p) for _, p in pairs] == pytest.approx(
        expected[0]["word_log_probs"], abs=1e-3)
    assert lines[-1].startswith("total\t")
    assert "2 sentences, 3 words" in err

    path.write_text("The\tDT\t2\ncat\tNN\t5\n")
    status = cli.main(["score", "--model", model_path, str(path)])
    assert status == 2
    err = capsys.readouterr().err
    assert "sentence 1 (line 1)" in err and "out of range" in err
    status = cli.main(["score", "--model", str(tmp_path / "none.keras"), str(path)])
    assert status == 2


@pytest.mark.slow
def test_throughput_benchmark_prints_json():
    script = os.path.join(REPO, "benchmarks", "tdtreelstm_throughput.py")
    result = subprocess.run(
        command_server.argv(
            [sys.executable, script, "--preset", "tiny", "--batches", "1",
             "--repeats", "1", "--batch-size", "4", "--no-jit"]),
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["data"] == "random trees" and not figures["jit_compile"]
    for name in ("tree_gates", "tree_states", "sequential_lstm"):
        assert figures[name]["train_words_per_second"] > 0
        assert figures[name]["score_sentences_per_second"] > 0
    assert figures["tree_gates"]["train_cost_per_word_vs_sequential"] > 0


@pytest.mark.slow
def test_killed_run_resumes_from_the_last_epoch(tmp_path, capsys):
    crash = CrashAtEpoch(at=1)
    assert recipe(tmp_path, "--epochs", "2", callbacks=[crash]) == 130
    assert "is whole (start of epoch 2)" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()
    assert recipe(tmp_path, "--epochs", "2") == 0
    out = capsys.readouterr().out
    assert "Resuming at the start of epoch 2" in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["resumed_from_epoch"] == 1 and results["epochs_run"] == 2
    # Another configuration in the same folder is refused.
    assert recipe(tmp_path, "--epochs", "3", "--ld") == 2
    assert "written by another configuration" in capsys.readouterr().err
