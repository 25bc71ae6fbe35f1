"""Callbacks that end training early: Ctrl-C at the next batch, a time limit."""

import time

import keras

from keras_ordered.training.crash_safety import check_interrupt


class StopOnCtrlC(keras.callbacks.Callback):
    """Raises the Ctrl-C of an active `CtrlC` at the next batch or epoch end
    (training, validation, evaluation). Does nothing outside `CtrlC`."""

    def _check(self, *args, **kwargs):
        check_interrupt()

    on_train_batch_end = _check
    on_test_batch_end = _check
    on_predict_batch_end = _check
    on_epoch_end = _check

class TimeLimit(keras.callbacks.Callback):
    """Stops training after `minutes` of training time (between two steps).

    Gives models compared "in the same time" the same budget.
    """

    def __init__(self, minutes):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.started = None
        self.reached = False

    def on_train_begin(self, logs=None):
        self.started = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if time.time() - self.started > self.seconds:
            self.reached = True
            self.model.stop_training = True
