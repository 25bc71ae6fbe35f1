"""Crash-safe backups a run resumes from, and the best-model checkpoint."""

import contextlib
import json
import os
import shutil
import tempfile
import time

import keras
import numpy as np

from keras_ordered._keras_private import CheckpointSavingHook
from keras_ordered.models.carried_state import carried_state
from keras_ordered.models.carried_state import set_carried_state
from keras_ordered.training.crash_safety import atomic_path
from keras_ordered.training.crash_safety import writing


class ResumableModelCheckpoint(CheckpointSavingHook,
                               keras.callbacks.ModelCheckpoint):
    """`keras.callbacks.ModelCheckpoint` whose best value survives a resume,
    and which saves the weights that were validated.

    With `save_best_only`, a resumed run must not overwrite the best weights
    with a worse epoch because it forgot the best value seen before the
    crash: `get_state` / `set_state` carry it in a `TrainingBackup`.

    Under NT-ASGD, validation runs on the averaged weights; Keras' callback
    would save the raw SGD weights under their validation loss. Given
    `weights_context` (e.g. `NTASGD.validated_weights`), the epoch-end save
    happens inside it, so the checkpoint holds what was validated (as the
    official AWD-LSTM / ON-LSTM code saves the averaged model).

    The file is written to a temporary name and moved into place, so a
    kill or Ctrl-C during the save leaves the previous best weights whole.

    Under a multi-worker strategy only the chief writes the file
    (`write=False` on the other workers): the workers save at the same
    moment, and two processes writing one HDF5 file fail on its lock. The
    others write to a folder of their own, deleted after, as
    `tf.distribute`'s workers do.

    Args:
        *args, **kwargs: those of `keras.callbacks.ModelCheckpoint`.
        weights_context: callable returning a context manager, or None.
        write: False on a worker that is not the chief.
    """

    def __init__(self, *args, weights_context=None, write=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.weights_context = weights_context
        self.write = write

    @contextlib.contextmanager
    def saving(self, path):
        """Writes a checkpoint to a temporary name moved to `path` after,
        with Ctrl-C held until it is whole (off the chief: to a private
        folder, discarded)."""
        if not self.write:
            with tempfile.TemporaryDirectory(prefix="worker_") as folder:
                yield os.path.join(folder, os.path.basename(path))
            return
        with writing(), atomic_path(path) as partial:
            yield partial

    def on_epoch_end(self, epoch, logs=None):
        if self.weights_context is None:
            return super().on_epoch_end(epoch, logs)
        with self.weights_context():
            return super().on_epoch_end(epoch, logs)

    def get_state(self):
        return {"best": None if self.best is None else float(self.best)}, {}

    def set_state(self, state, arrays):
        del arrays
        self.best = state["best"]

class TrainingBackup(keras.callbacks.Callback):
    """Crash-safe training state, saved every `save_freq` steps and epoch.

    Like `keras.callbacks.BackupAndRestore`, but a run killed in the middle
    of an epoch resumes at the *window* it stopped at, not at the start of
    the epoch: with the weights and optimizer state, it saves the carried
    recurrent state (`configure_bptt`), the NT-ASGD state and the position
    `(epoch, next window)`; `restore()` loads all of it and returns that
    position, which `keras_ordered.training.tasks.language_model.train` feeds to
    `BPTTBatches.dataset(epoch, start_batch)`. Each save writes a new
    folder, then replaces `backup.json` (which names that folder)
    atomically: a kill during a save leaves the previous backup whole.

    A backup records the model configuration; restoring into a model of
    another configuration is a ValueError that says so. It also records
    the seconds of training up to it, over every resume
    (`trained_seconds()`), so a run's training time survives its crashes.

    Args:
        directory: str, where the backup lives.
        save_freq: int, steps between saves (and at every epoch end).
        fingerprint: dict, the configuration the backup belongs to.
        extra_state: list of objects with `get_state()` / `set_state()`
            (e.g. an `NTASGD` callback).
        steps_per_epoch: int or None, recorded in each backup (a resumed
            run must use the window layout it stopped in).
        write: bool, False for a worker of a multi-worker run that is not
            the chief: it takes part in gathering the carried state (a
            collective every worker must join) and writes nothing.
    """

    def __init__(self, directory, save_freq=100, fingerprint=None,
                 extra_state=(), steps_per_epoch=None, write=True):
        super().__init__()
        self.write = bool(write)
        self.directory = directory
        self.save_freq = int(save_freq)
        self.fingerprint = fingerprint or {}
        self.extra_state = list(extra_state)
        self.steps_per_epoch = steps_per_epoch
        self.restored = None  # the metadata of the backup `restore` loaded
        self.epoch = 0
        self.start_batch = 0
        self._steps = 0
        self._saves = 0  # makes every save's folder name new
        self.seconds_before = 0.0  # training time up to the restored backup
        self._started = None

    def trained_seconds(self):
        """Seconds of training so far: up to the backup this run resumed
        from (0 for a new run), plus this run's since training began."""
        if self._started is None:
            return self.seconds_before
        return self.seconds_before + time.monotonic() - self._started

    def on_train_begin(self, logs=None):
        self._started = time.monotonic()

    @property
    def _meta_path(self):
        return os.path.join(self.directory, "backup.json")

    def on_epoch_begin(self, epoch, logs=None):
        if self._started is None:  # a loop that does not begin training
            self._started = time.monotonic()
        if epoch != self.epoch:
            self.start_batch = 0
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self._steps += 1
        next_batch = self.start_batch + batch + 1
        if self.steps_per_epoch and next_batch >= self.steps_per_epoch:
            # The epoch-end backup follows; a backup after the last window
            # (before validation and the epoch-end callbacks) would resume
            # into an epoch with no window left.
            return
        if self.save_freq and self._steps % self.save_freq == 0:
            self.save(self.epoch, next_batch)

    def on_epoch_end(self, epoch, logs=None):
        self.start_batch = 0
        self.save(epoch + 1, 0)

    def save(self, epoch, next_batch):
        """Writes a backup that resumes at window `next_batch` of `epoch`.

        A Ctrl-C during the save waits until it has ended (`writing()`).
        """
        with writing():
            self._save(epoch, next_batch)

    def _save(self, epoch, next_batch):
        # Every save writes a fresh folder; `backup.json`, replaced
        # atomically and last, names the folder of the latest complete
        # save. A kill at any point leaves a consistent backup: the previous
        # one until the new metadata is in place, the new one after.
        # Gathering the replicas' carried state first: under a multi-worker
        # strategy every worker must join it, the writing ones or not.
        states = carried_state(self.model) or []
        if not self.write:
            return
        os.makedirs(self.directory, exist_ok=True)
        self._saves += 1
        folder = f"save-{epoch}-{next_batch}-{self._saves}"
        path = os.path.join(self.directory, folder)
        os.makedirs(path, exist_ok=True)
        self.model.save_weights(os.path.join(path, "model.weights.h5"))
        arrays = {}
        # Every replica's rows (a replica-local variable read here would
        # give the first replica's only).
        for i, state in enumerate(states):
            arrays[f"carried_{i}"] = state
        extra = []
        for k, obj in enumerate(self.extra_state):
            state, extra_arrays = obj.get_state()
            extra.append(state)
            arrays.update({f"extra{k}_{n}": a for n, a in extra_arrays.items()})
        np.savez(os.path.join(path, "state.npz"), **arrays)
        meta = {
            "epoch": int(epoch),
            "next_batch": int(next_batch),
            "folder": folder,
            "steps_per_epoch": self.steps_per_epoch,
            "fingerprint": self.fingerprint,
            "extra": extra,
            "train_seconds": self.trained_seconds(),
        }
        with open(self._meta_path + ".tmp", "w") as f:
            json.dump(meta, f)
        os.replace(self._meta_path + ".tmp", self._meta_path)
        for name in os.listdir(self.directory):
            if name.startswith("save-") and name != folder:
                shutil.rmtree(os.path.join(self.directory, name),
                              ignore_errors=True)

    def latest(self):
        """The metadata of the latest complete backup, or None."""
        try:
            with open(self._meta_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def remove_partial_saves(self):
        """Deletes save folders that no complete backup names (a save cut
        short by a kill or Ctrl-C); the latest backup stays whole."""
        if not os.path.isdir(self.directory):
            return
        keep = (self.latest() or {}).get("folder")
        for name in os.listdir(self.directory):
            if name.startswith("save-") and name != keep:
                shutil.rmtree(os.path.join(self.directory, name),
                              ignore_errors=True)

    def restore(self, model):
        """Loads a backup into `model` (built, compiled, BPTT-configured).

        Returns:
            `(epoch, next_batch)` to resume from, or `(0, 0)` when there is
            no backup.
        """
        if not os.path.exists(self._meta_path):
            return 0, 0
        with open(self._meta_path) as f:
            meta = json.load(f)
        if meta.get("fingerprint") != self.fingerprint:
            raise ValueError(
                f"The backup in {self.directory} was written by another "
                f"configuration ({meta.get('fingerprint')}), not this one "
                f"({self.fingerprint}). Use another --output directory, or "
                "delete the backup to start over."
            )
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        path = os.path.join(self.directory, meta.get("folder", ""))
        model.load_weights(os.path.join(path, "model.weights.h5"))
        arrays = dict(np.load(os.path.join(path, "state.npz")))
        holder = getattr(model, "_bptt", None)
        if holder is not None and holder.train is not None:
            saved = [arrays.get(f"carried_{i}") for i in range(len(holder.train))]
            if all(state is not None for state in saved):
                set_carried_state(model, saved)
        for k, obj in enumerate(self.extra_state):
            if k >= len(meta["extra"]):
                break  # a backup of an older version, with fewer states
            prefix = f"extra{k}_"
            obj.set_state(
                meta["extra"][k],
                {n[len(prefix):]: a for n, a in arrays.items() if n.startswith(prefix)},
            )
        self.epoch, self.start_batch = meta["epoch"], meta["next_batch"]
        # Backups of older versions do not have it.
        self.seconds_before = float(meta.get("train_seconds", 0.0))
        self.restored = meta
        return meta["epoch"], meta["next_batch"]
