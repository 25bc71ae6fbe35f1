"""What a run writes as it goes: the learning rate in the epoch logs,
TensorBoard scalars every few steps."""

import keras
import numpy as np


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
