"""What a run writes as it goes: the learning rate in the epoch logs,
TensorBoard scalars every few steps."""

import csv
import os

import keras
import numpy as np

from keras_ordered.training.crash_safety import atomic_path


class LearningRateLogger(keras.callbacks.Callback):
    """Adds the optimizer's learning rate to the epoch logs (TensorBoard)."""

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None and self.model.optimizer is not None:
            logs["learning_rate"] = float(
                np.asarray(self.model.optimizer.learning_rate)
            )

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
        if not self.every or not logs or not self.log_dir:
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


class RunProgbar(keras.callbacks.ProgbarLogger):
    """Keras' progress bar, counting the epochs of the whole run.

    A run resumed in the middle of an epoch calls `fit` twice: once for
    the rest of the interrupted epoch (`epochs=start_epoch + 1`), then for
    the epochs after it. Keras' own bar would announce the first call's
    epoch as the last one ("Epoch 6/6" in a run of 12); this one says
    "Epoch 6/12". `fit` uses it instead of its own bar when it is among
    the callbacks, with `fit`'s `verbose`.

    Args:
        epochs: int, the run's number of epochs.

    Example:

    ```python
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((8, 3)), np.zeros((8, 1))
    bar = keras_ordered.training.callbacks.RunProgbar(epochs=3)
    model.fit(x, y, epochs=1, verbose=2, callbacks=[bar])  # "Epoch 1/3"
    ```
    """

    def __init__(self, epochs):
        super().__init__()
        self.run_epochs = int(epochs)

    def set_params(self, params):
        super().set_params(params)
        self.epochs = self.run_epochs


class EpochHistory(keras.callbacks.CSVLogger):
    """Every epoch's logs as one row of a CSV file that survives resumption.

    Keras' `CSVLogger` with `append=True`, made safe for a run that resumes
    from a backup: before the first epoch it drops the rows of epochs the
    run is about to train again (`epoch >= initial_epoch`), so a crash
    between an epoch's row and its backup leaves no duplicate. Rows hold
    what the epoch logs hold: the loss and perplexity, their validation
    values, the learning rate and, with a parsing callback placed before
    this one, `parse_f1/<distance>`: F1 per epoch, the curve a seed study
    compares across seeds (`benchmarks/parsing_quality.py`).

    Args:
        filename: str, the CSV file (epochs numbered from 0).
        initial_epoch: int, epochs already trained (a resumed run sets it
            before `fit`).

    Example:

    ```python
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((8, 3)), np.zeros((8, 1))
    history = keras_ordered.training.callbacks.EpochHistory("history.csv")
    model.fit(x, y, epochs=2, verbose=0, callbacks=[history])
    rows = keras_ordered.training.callbacks.read_epoch_history("history.csv")
    [row["epoch"] for row in rows]  # [0, 1]; each row has "loss"
    ```
    """

    def __init__(self, filename, initial_epoch=0):
        super().__init__(filename, append=True)
        self.initial_epoch = int(initial_epoch)
        self._trimmed = False

    def on_train_begin(self, logs=None):
        if not self._trimmed:
            # Once per run: a resumed run calls `fit` twice (the rest of
            # the interrupted epoch, then the next ones).
            _drop_epochs_from(self.filename, self.initial_epoch)
            self._trimmed = True
        super().on_train_begin(logs)


def read_epoch_history(filename):
    """The rows of an `EpochHistory` file: a list of dicts, numbers as floats.

    `epoch` is an int (from 0); a value Keras wrote as `NA` is None. A
    missing file reads as no rows.
    """
    if not os.path.exists(filename):
        return []
    with open(filename, newline="") as f:
        rows = list(csv.DictReader(f))
    history = []
    for row in rows:
        entry = {}
        for key, value in row.items():
            if key == "epoch":
                entry[key] = int(value)
            elif value in ("", "NA", None):
                entry[key] = None
            else:
                try:
                    entry[key] = float(value)
                except ValueError:
                    entry[key] = value
        history.append(entry)
    return history


def _drop_epochs_from(filename, first):
    """Removes the rows of epochs `first` and later (the header stays)."""
    if not os.path.exists(filename):
        return
    with open(filename, newline="") as f:
        lines = f.readlines()
    # The first column is the epoch number (an int: no quotes, no commas).
    kept = lines[:1] + [line for line in lines[1:]
                        if int(line.split(",", 1)[0]) < first]
    if len(kept) < len(lines):
        with atomic_path(filename) as partial:
            with open(partial, "w", newline="") as f:
                f.writelines(kept)
