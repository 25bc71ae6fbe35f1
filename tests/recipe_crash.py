"""A Keras callback the recipe tests use to kill training mid-run."""

import keras
import numpy as np


class CrashAtEpoch(keras.callbacks.Callback):
    """Kills training (Ctrl-C) when epoch `at` begins; keeps the weights
    the epochs before it ended with (`weights[epoch]`)."""

    def __init__(self, at):
        super().__init__()
        self.at = at
        self.weights = {}

    def on_epoch_end(self, epoch, logs=None):
        self.weights[epoch] = [np.array(w) for w in self.model.get_weights()]

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.at:
            raise KeyboardInterrupt
