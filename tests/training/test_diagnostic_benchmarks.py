"""Scripts of benchmarks/ that no other test runs: averaged_trees.py,
inference_precision.py, loop_kernels.py, preset_epoch_time.py and
tf_iterator_stress.py, on tiny models, tiny treebanks and few
iterations."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import command_server
from conftest import REPO
from conftest import load_benchmark
from harness import tiny_onlstm_lm

DEV = ("((S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
       "(NN mat))))))\n((S (NP (DT a) (NN dog)) (VP (VBD ran))))\n")


def _treebank(tmp_path):
    folder = tmp_path / "mrg"
    folder.mkdir()
    (folder / "wsj_0001.mrg").write_text(DEV)
    (folder / "wsj_0100.mrg").write_text("((S (NN x)))\n")
    return str(folder)


def _script(path, *args):
    """The JSON a script prints, run as a process from the repository."""
    process = subprocess.run(
        command_server.argv([sys.executable, path, *args]), cwd=REPO,
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert process.returncode == 0, process.stderr[-2000:]
    return json.loads(process.stdout[process.stdout.index("{"):])


def test_inference_precision_scores_each_model_under_each_policy(
        tmp_path, capsys):
    script = load_benchmark("inference_precision")
    path = str(tmp_path / "model.keras")
    tiny_onlstm_lm().save(path)
    script.main(["--model", path, "--treebank", _treebank(tmp_path)])
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "dev" and result["sentences"] == 2
    assert [r["policy"] for r in result["results"]] == [
        "float32", "mixed_bfloat16"]
    float32, bfloat16 = (r["sentence_f1"] for r in result["results"])
    assert set(float32) == set(bfloat16) and "layer2/forget" in float32
    import keras

    assert keras.mixed_precision.global_policy().name == "float32"


def _backup(run, model, averages):
    """A run folder as the recipes leave it: model.keras and the backup of
    `TrainingBackup` holding NT-ASGD's state (`averages`: None, or one
    array per trainable weight)."""
    from keras_ordered.training.callbacks import NTASGD

    os.makedirs(run / "backup" / "save-2-0-1")
    model.save(str(run / "model.keras"))
    model.save_weights(str(run / "backup" / "save-2-0-1" / "model.weights.h5"))
    ntasgd = NTASGD()
    if averages is not None:
        ntasgd.averaging, ntasgd._average = True, averages
    state, arrays = ntasgd.get_state()
    np.savez(run / "backup" / "save-2-0-1" / "state.npz",
             **{f"extra0_{name}": a for name, a in arrays.items()})
    (run / "backup" / "backup.json").write_text(json.dumps(
        {"epoch": 2, "next_batch": 0, "folder": "save-2-0-1",
         "extra": [state]}))


def test_averaged_trees_parses_with_the_raw_and_the_averaged_weights(
        tmp_path, capsys):
    script = load_benchmark("averaged_trees")
    model = tiny_onlstm_lm()
    treebank = _treebank(tmp_path)
    # The averages are the raw weights: the two parses agree.
    same = tmp_path / "same"
    _backup(same, model, [np.array(w) for w in model.trainable_weights])
    script.main(["--run", str(same), "--treebank", treebank])
    result = json.loads(capsys.readouterr().out)
    assert result["epoch"] == 2 and result["dev_sentences"] == 2
    assert result["raw"] == result["averaged"]
    assert "layer2/forget" in result["raw"]
    # A run that never averaged says so.
    never = tmp_path / "never"
    _backup(never, model, None)
    with pytest.raises(SystemExit, match="never started NT-ASGD"):
        script.main(["--run", str(never), "--treebank", treebank])


@pytest.mark.slow  # a TensorFlow process
def test_loop_kernels_times_both_token_losses():
    result = _script(os.path.join(REPO, "benchmarks", "loop_kernels.py"),
                     "--only", "token_loss", "--repeats", "1")
    times = result["token_loss_forward_backward_ms"]
    assert set(times) == {"keras_sparse_cross_entropy",
                          "token_cross_entropy_xla"}
    assert all(value > 0 for value in times.values())


@pytest.mark.slow  # a TensorFlow process
def test_tf_iterator_stress_reports_its_iterations():
    # Each iterator read to its end: the variant that does not crash.
    result = _script(os.path.join(REPO, "benchmarks", "tf_iterator_stress.py"),
                     "--iterations", "3", "--length", "4", "--read-all")
    assert result["iterations"] == 3 and result["crashed"] is False
    assert result["strategy"] and result["read_all"]


def test_preset_epoch_time_scales_the_timed_windows_to_an_epoch():
    script = load_benchmark("preset_epoch_time")
    from keras_ordered.models import onlstm

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(48)]
    rng = np.random.default_rng(0)
    data = ((rng.integers(0, 50, 4000).astype("int32"),
             rng.integers(0, 50, 1000).astype("int32"), None), vocabulary)
    result = script.time_preset(onlstm.ONLSTMLanguageModel,
                                onlstm.get_preset, "tiny", data, steps=1,
                                warmup=1)
    assert result["preset"] == "tiny" and result["parameters"] > 0
    assert result["train_windows_per_epoch"] > 1
    epoch = (result["seconds_per_train_window"]
             * result["train_windows_per_epoch"]
             + result["seconds_per_valid_window"] * result["valid_windows"])
    assert result["minutes_per_epoch"] == pytest.approx(epoch / 60, abs=0.1)
