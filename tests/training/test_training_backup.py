"""TrainingBackup: a kill in the middle of a save leaves the last backup whole."""

import json
import os
import time

import numpy as np
import pytest

from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.training.callbacks import TrainingBackup

VOCAB = ["<eos>", "<unk>", "a", "b", "c"]


def make_model():
    model = ONLSTMLanguageModel.from_preset("tiny", VOCAB, seed=0)
    model.configure_bptt(2, 2)
    model.compile(optimizer="sgd")
    return model


@pytest.mark.parametrize("kill_at", ["state arrays", "metadata"])
def test_interrupted_save_keeps_the_previous_backup(tmp_path, monkeypatch,
                                                    kill_at):
    model = make_model()
    backup = TrainingBackup(str(tmp_path), fingerprint={"m": 1})
    backup.set_model(model)
    first = [w.numpy().copy() for w in model.weights]
    model._bptt.train[0].assign(np.ones_like(model._bptt.train[0].numpy()))
    backup.save(0, 3)

    # New weights, then a "kill" while the state arrays are being written.
    for w in model.trainable_weights:
        w.assign(w.numpy() + 1.0)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed during the save")

    if kill_at == "state arrays":
        monkeypatch.setattr(np, "savez", killed)
    else:
        # Everything else written; killed as the metadata goes into place.
        replace = os.replace

        def replace_or_die(source, target):
            if os.path.basename(target) == "backup.json":
                killed()
            replace(source, target)

        monkeypatch.setattr(os, "replace", replace_or_die)
    with pytest.raises(KeyboardInterrupt):
        backup.save(0, 5)
    monkeypatch.undo()

    meta = json.load(open(os.path.join(tmp_path, "backup.json")))
    assert (meta["epoch"], meta["next_batch"]) == (0, 3)
    fresh = make_model()
    assert TrainingBackup(str(tmp_path), fingerprint={"m": 1}).restore(fresh) == (0, 3)
    for restored, saved in zip(fresh.weights, first):
        np.testing.assert_array_equal(restored.numpy(), saved)
    np.testing.assert_array_equal(fresh._bptt.train[0].numpy(), 1.0)

    # The next complete save replaces it and removes the older folders.
    backup.save(1, 0)
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith("save-")) == [
        json.load(open(os.path.join(tmp_path, "backup.json")))["folder"]
    ]
    with pytest.raises(ValueError, match="another configuration"):
        TrainingBackup(str(tmp_path), fingerprint={"m": 2}).restore(make_model())


def test_plateau_schedule_and_best_checkpoint_survive_a_resume(tmp_path):
    from keras_ordered.training.callbacks import ResumableModelCheckpoint
    from keras_ordered.training.callbacks import ResumableReduceLROnPlateau

    def callbacks(model):
        plateau = ResumableReduceLROnPlateau(monitor="val_loss", factor=0.5,
                                             patience=2, verbose=0)
        best = ResumableModelCheckpoint(
            str(tmp_path / "best.weights.h5"), monitor="val_loss",
            save_best_only=True, save_weights_only=True,
        )
        for callback in (plateau, best):
            callback.set_model(model)
        return plateau, best

    model = make_model()
    model.optimizer.build(model.trainable_variables)
    model.optimizer.learning_rate = 1.0
    plateau, best = callbacks(model)
    backup = TrainingBackup(str(tmp_path / "backup"), extra_state=[plateau, best])
    backup.set_model(model)
    plateau.on_train_begin()
    for epoch, loss in enumerate([5.0, 4.0, 4.5]):  # best 4.0, then 1 bad epoch
        plateau.on_epoch_end(epoch, {"val_loss": loss})
        best.on_epoch_end(epoch, {"val_loss": loss})
    backup.save(3, 0)
    assert float(model.optimizer.learning_rate) == 1.0

    # A new process: fresh callbacks, state from the backup, a new `fit`.
    model = make_model()
    plateau, best = callbacks(model)
    TrainingBackup(str(tmp_path / "backup"),
                   extra_state=[plateau, best]).restore(model)
    assert float(model.optimizer.learning_rate) == 1.0
    plateau.on_train_begin()  # must not forget the bad epoch
    os.remove(tmp_path / "best.weights.h5")
    plateau.on_epoch_end(3, {"val_loss": 4.6})
    best.on_epoch_end(3, {"val_loss": 4.6})
    # Second epoch without improvement over 4.0: halved now, not 2 later.
    assert float(model.optimizer.learning_rate) == 0.5
    # 4.6 is worse than the 4.0 before the crash: the best weights stay.
    assert not os.path.exists(tmp_path / "best.weights.h5")


def test_training_time_adds_up_over_resumes(tmp_path, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    first = TrainingBackup(str(tmp_path), fingerprint={"m": 1})
    first.set_model(make_model())
    first.on_train_begin()
    clock[0] = 130.0
    first.save(0, 3)  # killed after this backup: 30 s of training kept
    assert json.load(open(tmp_path / "backup.json"))["train_seconds"] == 30.0

    clock[0] = 500.0  # the resumed run starts later
    resumed = TrainingBackup(str(tmp_path), fingerprint={"m": 1})
    model = make_model()
    resumed.set_model(model)
    assert resumed.restore(model) == (0, 3)
    assert resumed.trained_seconds() == 30.0  # before training begins
    resumed.on_train_begin()
    clock[0] = 510.0
    assert resumed.trained_seconds() == 40.0
    resumed.save(1, 0)
    assert json.load(open(tmp_path / "backup.json"))["train_seconds"] == 40.0


def test_only_the_chief_writes_the_best_checkpoint(tmp_path, monkeypatch):
    # The workers of a multi-worker run save at the same moment: two
    # processes writing one HDF5 file (or its temporary name) failed on
    # the file's lock ("unable to lock file, errno = 11") about one run in
    # several. Off the chief, the save goes to a folder of its own.
    import tempfile

    from keras_ordered.training.callbacks import ResumableModelCheckpoint

    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    model = make_model()
    written = {}
    for write in (False, True):
        folder = tmp_path / f"write_{write}"
        folder.mkdir()
        best = ResumableModelCheckpoint(
            str(folder / "best.weights.h5"), monitor="val_loss",
            save_best_only=True, save_weights_only=True, write=write)
        best.set_model(model)
        best.on_epoch_end(0, {"val_loss": 5.0})
        assert best.best == 5.0
        written[write] = sorted(os.listdir(folder))
    assert written == {False: [], True: ["best.weights.h5"]}
    assert os.listdir(private) == []  # the worker's copy is deleted

    # The runner gives the flag: the chief writes, the other workers not.
    from keras_ordered.training.config import RunConfig
    from keras_ordered.training.runner import Runner
    from keras_ordered.training.runner import Task

    run = Runner(Task(RunConfig(output=str(tmp_path / "run"))))
    for chief in (True, False):
        run._callbacks(model, {}, chief)
        assert run.best.write is chief


def test_the_runner_trains_with_float32_products_unless_tf32(tmp_path):
    # TensorFloat-32 (the GPUs' default for float32 products) is off while
    # a run's task builds and trains, unless the config asks for it, and
    # the setting comes back after the run.
    import tensorflow as tf

    from keras_ordered.training.config import RunConfig
    from keras_ordered.training.runner import Runner
    from keras_ordered.training.runner import Task

    seen = []

    class Probe(Task):
        def build_inputs(self, replicas):
            seen.append(
                tf.config.experimental.tensor_float_32_execution_enabled())
            raise KeyboardInterrupt  # the probe needs no training

    before = tf.config.experimental.tensor_float_32_execution_enabled()
    for tf32 in (False, True):
        config = RunConfig(output=str(tmp_path / str(tf32)), tf32=tf32)
        with pytest.raises(KeyboardInterrupt):
            Runner(Probe(config)).run()
        assert tf.config.experimental.tensor_float_32_execution_enabled() is (
            before)
    assert before is True
    assert seen == [False, True]
