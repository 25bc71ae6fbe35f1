"""Callbacks of the language-model recipes: NT-ASGD, crash-safe backups,
and the learning rate in the logs."""

import contextlib
import json
import os
import shutil

import keras
import numpy as np

from keras_ordered.models.carried_state import carried_state
from keras_ordered.models.carried_state import set_carried_state
from keras_ordered.training.crash_safety import atomic_path
from keras_ordered.training.crash_safety import writing


class NTASGD(keras.callbacks.Callback):
    """Non-monotonically triggered averaged SGD (Merity et al., 2018).

    Training runs plain SGD until the validation loss of an epoch is worse
    than the best of the checks made before the last `nonmono` ones; from
    then on the callback keeps the running average of the weights after
    every step (Polyak averaging, as PyTorch's `ASGD(t0=0, lambd=0)`), and
    the model is evaluated with the averaged weights (they are swapped in
    for every validation pass and swapped back for training).
    `finalize()` leaves the averaged weights in the model for good.

    Args:
        nonmono: int, the non-monotone interval (the paper: 5).
        monitor: str, the validation loss in the logs.
        verbose: int, print when averaging starts.

    Example:

    ```python
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    ids = np.random.default_rng(0).integers(0, 32, 3000).astype("int32")
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary
    )
    model.configure_bptt(batch_size=10, eval_batch_size=10, clip_norm=0.25)
    model.compile(optimizer=keras.optimizers.SGD(30.0))
    train = keras_ordered.training.BPTTBatches(ids[:2500], 10, 35)
    valid = keras_ordered.training.BPTTBatches(ids[2500:], 10, 35,
                                               variable_length=False)
    ntasgd = keras_ordered.training.NTASGD(nonmono=5)
    model.fit(train.stream(), steps_per_epoch=train.steps(), epochs=3,
              validation_data=valid.dataset(), callbacks=[ntasgd],
              shuffle=False)
    ntasgd.finalize()  # keeps the averaged weights once averaging started
    ```

    Reference:
        Merity, Keskar, Socher. "Regularizing and Optimizing LSTM Language
        Models". ICLR 2018, section 3.
    """

    def __init__(self, nonmono=5, monitor="val_loss", verbose=1):
        super().__init__()
        if nonmono < 0:
            raise ValueError(f"`nonmono` must be >= 0. Received {nonmono}")
        self.nonmono = int(nonmono)
        self.monitor = monitor
        self.verbose = verbose
        self.history = []
        self.averaging = False
        self.count = 0
        self._average = None
        self._swapped = None

    # -- state ---------------------------------------------------------------
    def _weights(self):
        return self.model.trainable_weights

    def _ensure_average(self):
        if self._average is None:
            self._average = [np.array(w.numpy()) for w in self._weights()]

    def start_averaging(self):
        self.averaging = True
        self.count = 0
        self._average = [np.array(w.numpy()) for w in self._weights()]
        if self.verbose:
            print("\nNT-ASGD: validation loss stopped improving; switching to "
                  "averaged SGD.")

    def get_state(self):
        state = {
            "history": list(self.history),
            "averaging": self.averaging,
            "count": self.count,
        }
        arrays = {} if self._average is None else {
            f"average_{i}": a for i, a in enumerate(self._average)
        }
        return state, arrays

    def set_state(self, state, arrays):
        self.history = list(state["history"])
        self.averaging = bool(state["averaging"])
        self.count = int(state["count"])
        if arrays:
            self._average = [arrays[f"average_{i}"] for i in range(len(arrays))]

    # -- hooks ---------------------------------------------------------------
    def on_train_batch_end(self, batch, logs=None):
        if not self.averaging:
            return
        self.count += 1
        rate = 1.0 / self.count
        for average, weight in zip(self._average, self._weights()):
            average += rate * (weight.numpy() - average)

    def on_test_begin(self, logs=None):
        if self.averaging and self._swapped is None and self.count > 0:
            self._swapped = [w.numpy() for w in self._weights()]
            for weight, average in zip(self._weights(), self._average):
                weight.assign(average)

    def on_test_end(self, logs=None):
        if self._swapped is not None:
            for weight, value in zip(self._weights(), self._swapped):
                weight.assign(value)
            self._swapped = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        value = logs.get(self.monitor)
        if value is None:
            return
        if (
            not self.averaging
            and len(self.history) > self.nonmono
            and value > min(self.history[: len(self.history) - self.nonmono])
        ):
            self.start_averaging()
        self.history.append(float(value))
        logs["averaging"] = float(self.averaging)

    @contextlib.contextmanager
    def validated_weights(self):
        """Within it, the model holds the weights validation runs on.

        The averaged weights once averaging has begun (and taken a step),
        else the weights as they are. `ResumableModelCheckpoint(...,
        weights_context=ntasgd.validated_weights)` saves those, so that the
        best checkpoint holds what reached the best validation loss.
        """
        if self.averaging and self.count > 0 and self._swapped is None:
            self.on_test_begin()
            try:
                yield
            finally:
                self.on_test_end()
        else:
            yield

    def finalize(self):
        """Puts the averaged weights into the model (if averaging began)."""
        if self.averaging and self.count > 0:
            for weight, average in zip(self._weights(), self._average):
                weight.assign(average)


class ResumableReduceLROnPlateau(keras.callbacks.ReduceLROnPlateau):
    """`keras.callbacks.ReduceLROnPlateau` whose progress survives a resume.

    Keras' callback forgets its best value and its patience counter at
    every `fit` call (`on_train_begin`), and a `TrainingBackup` could not
    save them: a run resumed after a crash (or a recipe that finishes an
    interrupted epoch with one `fit` and goes on with another) would wait
    `patience` more epochs before halving the learning rate. This one
    resets only on its first `fit` and has `get_state` / `set_state` for
    `TrainingBackup(extra_state=...)`.

    Args: those of `keras.callbacks.ReduceLROnPlateau`.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._started = False

    def on_train_begin(self, logs=None):
        if not self._started:
            super().on_train_begin(logs)
            self._started = True

    def get_state(self):
        best = None if self.best is None else float(self.best)
        return {"best": best, "wait": int(self.wait),
                "cooldown_counter": int(self.cooldown_counter)}, {}

    def set_state(self, state, arrays):
        del arrays
        self._started = True  # the next `fit` must not reset what follows
        self.best = state["best"]
        self.wait = int(state["wait"])
        self.cooldown_counter = int(state["cooldown_counter"])


class ResumableModelCheckpoint(keras.callbacks.ModelCheckpoint):
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

    Args:
        *args, **kwargs: those of `keras.callbacks.ModelCheckpoint`.
        weights_context: callable returning a context manager, or None.
    """

    def __init__(self, *args, weights_context=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.weights_context = weights_context

    def _save_model(self, epoch, batch, logs):
        target = self.filepath
        with writing(), atomic_path(
            self._get_file_path(epoch, batch, logs)
        ) as partial:
            self.filepath = partial
            try:
                super()._save_model(epoch, batch, logs)
            finally:
                self.filepath = target

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


class LearningRateLogger(keras.callbacks.Callback):
    """Adds the optimizer's learning rate to the epoch logs (TensorBoard)."""

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None and self.model.optimizer is not None:
            logs["learning_rate"] = float(
                np.asarray(self.model.optimizer.learning_rate)
            )


class TrainingBackup(keras.callbacks.Callback):
    """Crash-safe training state, saved every `save_freq` steps and epoch.

    Like `keras.callbacks.BackupAndRestore`, but a run killed in the middle
    of an epoch resumes at the *window* it stopped at, not at the start of
    the epoch: with the weights and optimizer state, it saves the carried
    recurrent state (`configure_bptt`), the NT-ASGD state and the position
    `(epoch, next window)`; `restore()` loads all of it and returns that
    position, which `keras_ordered.training.runner.train` feeds to
    `BPTTBatches.dataset(epoch, start_batch)`. Each save writes a new
    folder, then replaces `backup.json` (which names that folder)
    atomically: a kill during a save leaves the previous backup whole.

    A backup records the model configuration; restoring into a model of
    another configuration is a ValueError that says so.

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

    @property
    def _meta_path(self):
        return os.path.join(self.directory, "backup.json")

    def on_epoch_begin(self, epoch, logs=None):
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
        self.restored = meta
        return meta["epoch"], meta["next_batch"]


class StepLogger(keras.callbacks.Callback):
    """Training loss, perplexity and learning rate in TensorBoard every N steps.

    Keras' `TensorBoard` callback writes epoch summaries only (or, with
    `update_freq`, batch summaries numbered from 0 at every `fit` call, so
    a resumed run draws over its own curve). This one numbers the points by
    the global training step `epoch * steps_per_epoch + window`, which a
    resumed run continues, and adds the learning rate.

    The loss and perplexity are those of the progress bar: the running mean
    over the epoch so far.

    Args:
        log_dir: str, the TensorBoard directory the summaries go to.
        every: int, steps between points (0 writes nothing).
        steps_per_epoch: int, training windows per epoch.

    Example:

    ```python
    logger = keras_ordered.training.callbacks.StepLogger(
        "logs/steps", every=50, steps_per_epoch=415
    )
    ```
    """

    def __init__(self, log_dir, every=50, steps_per_epoch=1):
        super().__init__()
        if every < 0:
            raise ValueError(f"`every` must be >= 0. Received {every}")
        self.log_dir = log_dir
        self.every = int(every)
        self.steps_per_epoch = int(steps_per_epoch)
        self.epoch = 0
        self.start_batch = 0  # set by a resumed run for its first epoch
        self._writer = None

    def on_epoch_begin(self, epoch, logs=None):
        if epoch != self.epoch:
            self.start_batch = 0
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self.start_batch = 0

    def on_train_batch_end(self, batch, logs=None):
        if not self.every or not logs:
            return
        step = self.epoch * self.steps_per_epoch + self.start_batch + batch + 1
        if step % self.every:
            return
        import tensorflow as tf

        if self._writer is None:
            self._writer = tf.summary.create_file_writer(self.log_dir)
        with self._writer.as_default(step=step):
            for name in ("loss", "perplexity"):
                if name in logs:
                    tf.summary.scalar(f"step_{name}", float(logs[name]))
            if self.model.optimizer is not None:
                tf.summary.scalar(
                    "step_learning_rate",
                    float(np.asarray(self.model.optimizer.learning_rate)),
                )
        self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.flush()
