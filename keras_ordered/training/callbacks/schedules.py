"""Learning-rate schedules of the official codes, resumable: NT-ASGD
(ON-LSTM), the plateau halving of PRPN (`make_plateau`) and of TD-TreeLSTM."""

import contextlib

import keras
import numpy as np


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

    def __init__(self, nonmono=5, monitor="val_loss", verbose=1,
                 average_from_epoch=None):
        super().__init__()
        if nonmono < 0:
            raise ValueError(f"`nonmono` must be >= 0. Received {nonmono}")
        if average_from_epoch is not None and average_from_epoch < 1:
            raise ValueError("`average_from_epoch` must be >= 1 (epochs "
                             f"count from 1). Received {average_from_epoch}")
        self.average_from_epoch = average_from_epoch
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

    def start_averaging(self, reason="validation loss stopped improving"):
        self.averaging = True
        self.count = 0
        self._average = [np.array(w.numpy()) for w in self._weights()]
        if self.verbose:
            print(f"\nNT-ASGD: {reason}; switching to averaged SGD.")

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
    def on_epoch_begin(self, epoch, logs=None):
        if (self.average_from_epoch is not None and not self.averaging
                and epoch + 1 >= self.average_from_epoch):
            self.start_averaging(f"epoch {epoch + 1} (average_from_epoch)")

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

def make_plateau(training, verbose=0):
    """The learning-rate plateau schedule of the official PRPN code.

    The official code uses PyTorch's `ReduceLROnPlateau(mode="min",
    factor, patience, threshold=0)`: the rate is multiplied by `factor`
    once more than `patience` epochs in a row brought no improvement
    (improvement: strictly lower than the best so far). Keras' callback
    reduces after `patience` such epochs and wants an improvement of
    `min_delta` (1e-4 by default), so it gets `patience + 1` and
    `min_delta=0`.

    Args:
        training: `keras_ordered.training.config.LanguageModelTraining`:
            `reduce_lr_patience` (None: no schedule), `reduce_lr_factor`,
            `reduce_lr_monitor` (`val_loss` by default; the `up` preset
            watches the training `loss`).
        verbose: int, print when the rate changes.

    Returns:
        A `ResumableReduceLROnPlateau`, or None.
    """
    patience = training.reduce_lr_patience
    if patience is None:
        return None
    return ResumableReduceLROnPlateau(
        monitor=training.reduce_lr_monitor,
        factor=training.reduce_lr_factor,
        patience=int(patience) + 1,
        min_delta=0.0,
        verbose=verbose,
    )

class HalveLearningRateOnPlateau(keras.callbacks.Callback):
    """The official TD-TreeLSTM learning-rate schedule (SGD).

    After every epoch, with `v` the validation loss:

    - if `v` is the best so far, the weights are kept as the best; else the
      best weights are put back into the model (training restarts from
      them);
    - if `v * min_improvement > v_previous` (an improvement by less than
      the factor `min_improvement`, 1.0001), the learning rate starts being
      halved, and is halved after every epoch from then on (the official
      code's `divLR`); the second time it happens, training stops.

    At the end of training the best weights are put back. `get_state` /
    `set_state` carry its progress in a `TrainingBackup`.

    Args:
        min_improvement: float, the factor (official 1.0001).
        monitor: str, the validation loss in the logs.
        verbose: int, print when the rate changes or training stops.

    Example:

    ```python
    schedule = keras_ordered.training.callbacks.HalveLearningRateOnPlateau()
    ```
    """

    def __init__(self, min_improvement=1.0001, monitor="val_loss", verbose=1):
        super().__init__()
        if min_improvement < 1.0:
            raise ValueError(
                f"`min_improvement` must be >= 1. Received {min_improvement}")
        self.min_improvement = float(min_improvement)
        self.monitor = monitor
        self.verbose = verbose
        self.best = None
        self.previous = None
        self.halving = False
        self.stopped = False
        self.best_weights = None

    def _set_rate(self, value):
        self.model.optimizer.learning_rate.assign(value)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        value = logs.get(self.monitor)
        if value is None:
            return
        value = float(value)
        if self.best is None or value < self.best:
            self.best = value
            self.best_weights = [np.array(w) for w in self.model.get_weights()]
        elif self.best_weights is not None:
            self.model.set_weights(self.best_weights)
        if self.previous is not None and value * self.min_improvement > self.previous:
            if self.halving:
                self.stopped = True
                self.model.stop_training = True
                if self.verbose:
                    print(f"\nNo significant improvement twice (val {value:.4f}, "
                          f"best {self.best:.4f}): training stops.")
            else:
                self.halving = True
        if self.halving and not self.stopped:
            rate = float(np.asarray(self.model.optimizer.learning_rate)) / 2
            self._set_rate(rate)
            if self.verbose:
                print(f"\nLearning rate halved to {rate:.4g}.")
        self.previous = value
        logs["learning_rate"] = float(np.asarray(self.model.optimizer.learning_rate))

    def on_train_end(self, logs=None):
        if self.best_weights is not None:
            self.model.set_weights(self.best_weights)

    def get_state(self):
        state = {"best": self.best, "previous": self.previous,
                 "halving": self.halving, "stopped": self.stopped}
        arrays = {} if self.best_weights is None else {
            f"best_{i}": w for i, w in enumerate(self.best_weights)}
        return state, arrays

    def set_state(self, state, arrays):
        self.best = state["best"]
        self.previous = state["previous"]
        self.halving = bool(state["halving"])
        self.stopped = bool(state["stopped"])
        if arrays:
            self.best_weights = [arrays[f"best_{i}"] for i in range(len(arrays))]
