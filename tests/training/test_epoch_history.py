"""`EpochHistory`: one CSV row per epoch, none twice across a resumption."""

import keras
import numpy as np

from keras_ordered.training.callbacks import EpochHistory
from keras_ordered.training.callbacks import read_epoch_history


class _AddsF1(keras.callbacks.Callback):
    """A stand-in for the parsing callback: adds to the epoch logs."""

    def on_epoch_end(self, epoch, logs=None):
        logs["parse_f1/layer1"] = 10.0 + epoch


def _fit(history, initial_epoch, epochs):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model.fit(x, y, epochs=epochs, initial_epoch=initial_epoch, verbose=0,
              validation_data=(x, y), callbacks=[_AddsF1(), history])


def test_rows_per_epoch_with_the_logs_of_earlier_callbacks(tmp_path):
    path = str(tmp_path / "history.csv")
    _fit(EpochHistory(path), 0, 3)
    rows = read_epoch_history(path)
    assert [row["epoch"] for row in rows] == [0, 1, 2]
    assert [row["parse_f1/layer1"] for row in rows] == [10.0, 11.0, 12.0]
    assert all(row["val_loss"] is not None for row in rows)


def test_a_resumed_run_drops_the_rows_it_trains_again(tmp_path):
    path = str(tmp_path / "history.csv")
    # Killed after epoch 2's row was written but before its backup: the
    # backup says 1 epoch done, so epoch index 1 is trained again.
    _fit(EpochHistory(path), 0, 2)
    resumed = EpochHistory(path, initial_epoch=1)
    # A resumed run calls fit twice (the interrupted epoch, then the rest):
    # the rows of the first call are kept by the second.
    _fit(resumed, 1, 2)
    _fit(resumed, 2, 4)
    rows = read_epoch_history(path)
    assert [row["epoch"] for row in rows] == [0, 1, 2, 3]
    with open(path) as f:
        assert f.read().count("epoch,") == 1  # one header


def test_missing_file_reads_as_no_rows(tmp_path):
    assert read_epoch_history(str(tmp_path / "none.csv")) == []
