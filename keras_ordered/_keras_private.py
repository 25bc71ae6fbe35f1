"""The private Keras and keras-tuner APIs this package uses, in one place.

Keras 3, with keras-tuner, keeps eight things this package needs out of
their public API. Each is imported or overridden here, and only here, so
that a release that moves one breaks this module (and
`tests/test_keras_private.py`) with one clear error instead of a
traceback deep inside a layer or a search:

- `DropoutRNNCell` (`keras.src.layers.rnn.dropout_rnn_cell`): the mixin of
  `keras.layers.LSTMCell` that draws a cell's dropout masks once per call
  of the `keras.layers.RNN` around it and reuses them at every step.
  `ONLSTMCell` and `PRPNReadingCell` mix it in so that their DropConnect /
  recurrent dropout masks follow the same contract as Keras' own cells
  (`keras.layers.RNN` resets them through it). There is no public
  replacement.
- `rnn` (`keras.src.backend.rnn`, the backend's step loop behind
  `keras.layers.RNN`): `ONLSTM` runs its fused input projection then the
  recurrence through it, as `keras.layers.LSTM` does, so that masking,
  `go_backwards`, `unroll` and XLA compilation behave as in Keras' layers.
  Re-implementing the loop would give up that parity; there is no public
  `keras.ops` equivalent.
- `Trainer._maybe_symbolic_build` (a private method of Keras' TensorFlow
  trainer): `SymbolicBuildWithoutData` overrides it so that `fit` and
  `evaluate` under a strategy do not leave a dataset iterator half-read
  (TensorFlow crashes when such an iterator is dropped), and so that
  without a strategy the optimizer is built before the training step is
  traced, not inside it (which traces the step twice; see the class).
- `BatchNormalization._moments` (the batch statistics of Keras' batch
  norm): `BatchMomentsHook` overrides it so that
  `keras_ordered.layers.parsing_conv.GlobalBatchNormalization` gives the
  statistics of the global batch, in two passes (see that class). There is
  no public hook for the statistics.
- `ModelCheckpoint._save_model` and `_get_file_path` (where Keras'
  checkpoint callback writes): `CheckpointSavingHook` overrides the first,
  so that `keras_ordered.training.callbacks.ResumableModelCheckpoint`
  writes each checkpoint to a temporary name and moves it into place (a
  kill during a save leaves the previous file whole). There is no public
  hook for where the file is written.
- `Oracle._random_values` (how keras-tuner's oracles draw a new trial's
  values: random search, Bayesian optimisation's first points,
  Hyperband's first round): `FirstValuesHook` overrides it so that the
  first trial of a search takes `first_values()` (the preset's values in
  `keras_ordered.tuning.search`). `Oracle.populate_space`, the public
  method, would also replace Hyperband's bracket bookkeeping.
- `Oracle._save_trial`, `_get_trial_dir`, `_get_oracle_fname` and
  `Tuner._get_tuner_fname`, `_is_worker` (where keras-tuner writes its
  state files): `StateFilesHook` and `TunerStateFileHook` override the
  first and the public `save` methods, so that every state file is written
  by the class's `write_state(path, state)` (whole, in
  `keras_ordered.tuning.search`). keras-tuner has no hook for how a file
  is written. `StateFilesHook.reload` also puts a trial left running by a
  killed search on the private `_retry_queue`, so that it runs again.
- `keras_tuner.Hyperband.__init__`, skipped: `HyperbandWithOracle` gives
  keras-tuner's Hyperband tuner (epochs per round, continued trials) an
  oracle made elsewhere by calling `keras_tuner.Tuner.__init__`, since
  `Hyperband.__init__` only builds its own `HyperbandOracle`.

Every override of a private method of Keras (or keras-tuner) is in this
module; the classes that need one mix in its hook and implement a public
method of their own. The keras-tuner hooks import nothing of keras-tuner
at import time (it is the `tensorflow` extra's).

`tests/test_keras_private.py` checks that each still exists (with the
signature these hooks call) and behaves as these classes expect, and that
a missing one fails here, naming the Keras version.

The third private import once used (`RandomInitializer`, the base of
`keras_ordered.layers.FanInUniform`) was replaced by the public
`keras.initializers.Initializer`.
"""

import importlib
import os

import keras

PRIVATE_APIS = {
    "DropoutRNNCell": ("keras.src.layers.rnn.dropout_rnn_cell", "DropoutRNNCell"),
    "backend_rnn": ("keras.src.backend", "rnn"),
}
"""Each private name this module provides -> `(module, attribute)` in Keras."""


def _import(module_name, attribute):
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute)
    except (ImportError, AttributeError) as error:
        raise ImportError(
            f"keras-ordered needs Keras' private `{module_name}.{attribute}`, "
            f"which Keras {keras.__version__} does not have ({error}). "
            "keras-ordered was written against Keras 3.15: install a Keras "
            "version that has it (pip install 'keras>=3.15,<3.16'), or update "
            "keras_ordered/_keras_private.py."
        ) from None


DropoutRNNCell = _import(*PRIVATE_APIS["DropoutRNNCell"])
backend_rnn = _import(*PRIVATE_APIS["backend_rnn"])


class SymbolicBuildWithoutData:
    """Model mixin: `fit` / `evaluate` under a strategy read no extra batch.

    Under an explicit `tf.distribute` strategy (`OneDeviceStrategy`,
    `MirroredStrategy`), Keras' TensorFlow trainer builds the model
    symbolically at the start of every `fit` and `evaluate`
    (`Trainer._maybe_symbolic_build`, a private method): it opens a fresh
    iterator on the dataset, takes one batch, and drops the iterator
    half-read. For the recipes' datasets (`from_generator`, prefetched,
    distributed) dropping such an iterator while its generator still runs
    in a tf.data thread is where TensorFlow crashed with a segmentation
    fault (in `epoch_iterator.reset` right after the symbolic build, in
    `fit` and in the validation `evaluate`;
    `benchmarks/tf_iterator_stress.py` reproduces it in plain TensorFlow). The batch is only needed
    to build layers, compiled metrics or a compiled loss that are not
    built yet. When everything is built (the package's models are built
    when they are made, and compile no loss or metric objects that need
    data), this mixin builds without data: no batch is read, no iterator
    left half-read. Otherwise Keras' own path runs unchanged.

    Without a strategy, Keras builds nothing here and leaves the
    optimizer's slots to be made inside the first traced training step. A
    `tf.function` that makes variables on its first call is traced twice
    (once making them, once more without), and a recurrent language
    model's training step takes seconds to trace. Once every layer is
    built, this mixin builds the optimizer when `fit` makes its training
    function, as Keras does under a strategy: its slots start at the same
    zeros, and the step is traced once. (`evaluate` and `predict` alone
    build no optimizer.)

    `tests/test_keras_private.py` checks that Keras still calls the
    private method with the iterator, that a model with this mixin opens
    one iterator per `fit` where Keras alone opens two, and that it
    traces its training step once where Keras alone traces it twice.
    """

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if iterator is not None and data_batch is None and _built(self):
            iterator = None
        return super()._maybe_symbolic_build(iterator=iterator,
                                             data_batch=data_batch)

    def make_train_function(self, force=False):
        """Keras', with the optimizer built first where Keras would build
        it inside the first traced step (see the class)."""
        optimizer = getattr(self, "optimizer", None)
        if (getattr(self, "_distribute_strategy", None) is None
                and optimizer is not None and not optimizer.built
                and _layers_built(self)):
            optimizer.build(self.trainable_variables)
        return super().make_train_function(force)


def _layers_built(model):
    """Whether every layer of `model` has made its weights."""
    return all(layer.built for layer in model._flatten_layers())


def _built(model):
    """Whether `model`'s symbolic build needs no data (Keras' own test)."""
    metrics = getattr(model, "_compile_metrics", None)
    loss = getattr(model, "_compile_loss", None)
    return (_layers_built(model) and (metrics is None or metrics.built)
            and (loss is None or loss.built))


class BatchMomentsHook:
    """`keras.layers.BatchNormalization` mixin: its batch statistics come
    from `self.batch_moments(inputs, mask)`.

    Keras' batch norm computes the mean and variance of a training batch in
    its private `_moments(inputs, mask)`; this hook routes that call to the
    subclass's public `batch_moments`, and gives Keras' own computation as
    `keras_moments`. `tests/test_keras_private.py` checks that Keras still
    calls `_moments` in training mode.
    """

    def _moments(self, inputs, mask):
        return self.batch_moments(inputs, mask)

    def keras_moments(self, inputs, mask):
        """Keras' own batch mean and variance."""
        return super()._moments(inputs, mask)


class CheckpointSavingHook:
    """`keras.callbacks.ModelCheckpoint` mixin: every checkpoint file is
    written inside `self.saving(path)`.

    `saving(path)` is a context manager the subclass gives; it yields the
    path to write to instead of `path` (e.g. a temporary name it moves into
    place afterwards). Keras' callback writes in its private
    `_save_model(epoch, batch, logs)` to the path its private
    `_get_file_path` formats; `tests/test_keras_private.py` checks that it
    still does.
    """

    def _save_model(self, epoch, batch, logs):
        target = self.filepath
        with self.saving(self._get_file_path(epoch, batch, logs)) as path:
            self.filepath = path
            try:
                super()._save_model(epoch, batch, logs)
            finally:
                self.filepath = target


class FirstValuesHook:
    """`keras_tuner.Oracle` mixin: the first trial of a search takes
    `self.first_values()`, the others what the oracle draws.

    keras-tuner's oracles draw a new trial's values in their private
    `_random_values()`; this hook answers with the subclass's public
    `first_values()` while the oracle has no trial yet (also after a
    reload of an empty search). `tests/test_keras_private.py` checks that
    a random search's first trial comes from it.
    """

    def _random_values(self):
        if not self.trials:
            return self.first_values()
        return super()._random_values()


class StateFilesHook:
    """`keras_tuner.Oracle` mixin: `oracle.json` and every `trial.json`
    are written by `self.write_state(path, state)`.

    keras-tuner writes them in `save()` and its private `_save_trial(trial)`,
    to the paths of its private `_get_oracle_fname()` and
    `_get_trial_dir(trial_id)`.
    """

    def save(self):
        """Writes the oracle's state with `write_state`."""
        self.write_state(self._get_oracle_fname(), self.get_state())

    def _save_trial(self, trial):
        self.write_state(
            os.path.join(self._get_trial_dir(trial.trial_id), "trial.json"),
            trial.get_state())

    def reload(self):
        """keras-tuner's reload, then every trial still marked running
        goes to the retry queue (keras-tuner's private `_retry_queue`).

        A new trial's `trial.json` is written before `oracle.json` names
        it as ongoing: a search killed in between reloads the trial as
        running but retries only the ones `oracle.json` names, so the trial
        never ran again and counted towards `max_trials`.
        """
        super().reload()
        for trial_id, trial in self.trials.items():
            if (str(trial.status) == "RUNNING"
                    and trial_id not in self._retry_queue):
                self._retry_queue.append(trial_id)


class TunerStateFileHook:
    """`keras_tuner.Tuner` mixin: the tuner's state file is written by
    `self.write_state(path, state)` (and the oracle's by its own `save`).

    keras-tuner writes it in `save()` to its private `_get_tuner_fname()`;
    a worker of a distributed search (its private `_is_worker()`) leaves
    the oracle's to the chief.
    """

    def save(self):
        """Saves the oracle (on the chief) and the tuner's state."""
        if not self._is_worker():
            self.oracle.save()
        self.write_state(self._get_tuner_fname(), self.get_state())


class HyperbandWithOracle:
    """`keras_tuner.Hyperband` mixin: `__init__(oracle, **kwargs)` takes an
    oracle made elsewhere (a `HyperbandOracle` subclass).

    `keras_tuner.Hyperband.__init__` builds its own `HyperbandOracle` and
    passes it to `keras_tuner.Tuner.__init__`; this calls the latter with
    the given oracle, keeping Hyperband's `run_trial` (epochs per round)
    and its loading of a continued trial's checkpoint.

    Args:
        oracle: a `keras_tuner.oracles.HyperbandOracle`.
        **kwargs: `keras_tuner.Tuner`'s (`hypermodel`, `directory`, ...).
    """

    def __init__(self, oracle, **kwargs):
        import keras_tuner

        keras_tuner.Tuner.__init__(self, oracle=oracle, **kwargs)
