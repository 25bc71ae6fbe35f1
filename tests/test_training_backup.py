"""TrainingBackup: a kill in the middle of a save leaves the last backup whole."""

import json
import os

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
