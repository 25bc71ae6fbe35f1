"""The private Keras APIs of `keras_ordered._keras_private`: still there,
still behaving as the layers expect, and a loud error naming the Keras
version when one moves."""

import importlib
import json
import os
import shutil
import sys

import keras
import numpy as np
import pytest
from keras import ops

from keras_ordered import _keras_private


def test_every_private_api_is_present():
    for name, (module, attribute) in _keras_private.PRIVATE_APIS.items():
        found = getattr(importlib.import_module(module), attribute)
        assert getattr(_keras_private, name) is found


def test_dropout_rnn_cell_keeps_one_mask_per_sequence():
    # The contract the cells rely on: get_recurrent_dropout_mask draws once
    # and returns the same mask until reset_recurrent_dropout_mask.
    class Cell(keras.layers.Layer, _keras_private.DropoutRNNCell):
        def __init__(self):
            super().__init__()
            self.dropout = 0.0
            self.recurrent_dropout = 0.5
            self.seed_generator = keras.random.SeedGenerator(1)

    cell = Cell()
    x = ops.ones((4, 8))
    first = cell.get_recurrent_dropout_mask(x)
    assert np.array_equal(first, cell.get_recurrent_dropout_mask(x))
    assert 0 < float(ops.mean(ops.cast(first == 0, "float32"))) < 1
    cell.reset_recurrent_dropout_mask()
    assert cell._recurrent_dropout_mask is None


def test_backend_rnn_runs_a_step_function():
    def step(x, states):
        total = states[0] + x
        return total, [total]

    inputs = np.arange(6, dtype="float32").reshape(1, 3, 2)
    last, outputs, states = _keras_private.backend_rnn(
        step, ops.convert_to_tensor(inputs), [ops.zeros((1, 2))]
    )
    np.testing.assert_allclose(outputs, np.cumsum(inputs, axis=1))
    np.testing.assert_allclose(last, inputs.sum(axis=1))


def test_a_moved_private_api_fails_loudly_naming_the_keras_version(monkeypatch):
    backend = importlib.import_module("keras.src.backend")
    monkeypatch.delattr(backend, "rnn")  # as if a release had moved it
    monkeypatch.delitem(sys.modules, "keras_ordered._keras_private")
    with pytest.raises(ImportError) as raised:
        importlib.import_module("keras_ordered._keras_private")
    message = str(raised.value)
    assert f"Keras {keras.__version__}" in message
    assert "`keras.src.backend.rnn`" in message
    assert "keras_ordered/_keras_private.py" in message


def _count_iterators(model_class, strategy):
    """How many times `fit` (with validation) opens the dataset's generator."""
    import tensorflow as tf

    opened = []

    def generator():
        opened.append(1)
        for _ in range(4):
            yield np.ones((2, 3), "float32"), np.zeros((2, 1), "float32")

    spec = (tf.TensorSpec((None, 3), tf.float32),
            tf.TensorSpec((None, 1), tf.float32))

    def dataset():
        return tf.data.Dataset.from_generator(
            generator, output_signature=spec).prefetch(2)

    with strategy.scope():
        inputs = keras.Input((3,))
        model = model_class(inputs, keras.layers.Dense(1)(inputs))
        model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset(), epochs=1, steps_per_epoch=2, verbose=0)
    after_fit = len(opened)
    model.evaluate(dataset(), verbose=0)
    return after_fit, len(opened) - after_fit


def test_symbolic_build_without_data_reads_no_extra_batch():
    """Where TensorFlow crashed: Keras' symbolic build under a strategy opens
    an iterator, reads one batch and drops it half-read; the mixin builds
    without it once everything is built."""
    import tensorflow as tf

    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    assert hasattr(TensorFlowTrainer, "_maybe_symbolic_build")
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

    class Mixed(_keras_private.SymbolicBuildWithoutData, keras.Model):
        pass

    # First fit: the compiled loss is not built yet, so both read a batch.
    # Keras alone reads one more on every later fit and evaluate.
    plain = _count_iterators(keras.Model, strategy)
    mixed = _count_iterators(Mixed, strategy)
    assert plain[1] == 2, plain
    assert mixed[1] == 1, mixed


def _trace_and_train(model_class):
    """`(times the training step was traced, weights)` of two epochs of
    Adam on a Dense model with a compiled loss."""
    traced = []

    class Counting(model_class):
        def train_step(self, data):
            traced.append(1)
            return super().train_step(data)

    keras.utils.set_random_seed(0)
    inputs = keras.Input((3,))
    model = Counting(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    # Evaluating alone builds no optimizer (no slots made for nothing).
    model.evaluate(x, x[:, :1], verbose=0)
    assert not model.optimizer.built
    model.fit(x, x[:, :1], batch_size=2, epochs=2, shuffle=False, verbose=0)
    return len(traced), model.get_weights()


def test_without_a_strategy_the_training_step_is_traced_once():
    """Keras alone builds the optimizer inside the first traced step, and
    TensorFlow traces a function that made variables a second time."""
    class Mixed(_keras_private.SymbolicBuildWithoutData, keras.Model):
        pass

    plain_traces, plain_weights = _trace_and_train(keras.Model)
    mixed_traces, mixed_weights = _trace_and_train(Mixed)
    assert plain_traces == 2
    assert mixed_traces == 1
    for plain, mixed in zip(plain_weights, mixed_weights):
        np.testing.assert_array_equal(plain, mixed)


def test_batch_norm_statistics_go_through_the_hook():
    calls = []

    class Spy(_keras_private.BatchMomentsHook,
              keras.layers.BatchNormalization):
        def batch_moments(self, inputs, mask):
            calls.append(tuple(inputs.shape))
            return self.keras_moments(inputs, mask)

    x = np.random.default_rng(0).normal(size=(6, 5)).astype("float32")
    spied = Spy()(x, training=True)
    plain = keras.layers.BatchNormalization()(x, training=True)
    assert calls == [(6, 5)]  # Keras still asks `_moments` in training
    np.testing.assert_allclose(spied, plain, atol=1e-6)


def test_checkpoints_are_written_inside_the_saving_hook(tmp_path):
    import contextlib

    written = []

    class Spy(_keras_private.CheckpointSavingHook,
              keras.callbacks.ModelCheckpoint):
        @contextlib.contextmanager
        def saving(self, path):
            partial = os.path.join(os.path.dirname(path),
                                   "partial-" + os.path.basename(path))
            yield partial
            written.append((path, os.path.exists(partial)))
            os.replace(partial, path)

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    path = str(tmp_path / "epoch{epoch}.weights.h5")
    model.fit(np.ones((4, 3)), np.zeros((4, 1)), epochs=2, verbose=0,
              callbacks=[Spy(path, save_weights_only=True)])
    assert written == [(str(tmp_path / f"epoch{e}.weights.h5"), True)
                       for e in (1, 2)]
    assert sorted(os.listdir(tmp_path)) == ["epoch1.weights.h5",
                                            "epoch2.weights.h5"]


def test_no_private_keras_method_is_overridden_outside_this_module():
    import inspect
    import pkgutil

    import keras_ordered

    found = []
    for info in pkgutil.walk_packages(keras_ordered.__path__,
                                      "keras_ordered."):
        if info.name in ("keras_ordered._keras_private",):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # a module of another backend's only
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != info.name:
                continue
            library = [base for base in cls.__mro__[1:] if base.__module__
                       .startswith(("keras.", "keras_tuner"))]
            # The class's own methods and those of its mixins of this
            # package (a mixin alone has no Keras base to compare with).
            owners = [owner for owner in cls.__mro__
                      if owner.__module__.startswith("keras_ordered")
                      and owner.__module__ != "keras_ordered._keras_private"]
            for owner in owners:
                for name in vars(owner):
                    if not name.startswith("_") or name.startswith("__"):
                        continue
                    for base in library:
                        if name in vars(base):
                            found.append(f"{owner.__qualname__}.{name} "
                                         f"({base.__qualname__})")
    assert sorted(set(found)) == []


# --- keras-tuner --------------------------------------------------------------
# Each private method the keras-tuner hooks override or call, with the
# parameters they pass: a keras-tuner release that renames one, or changes
# what it takes, fails here.
KERAS_TUNER_PRIVATE = {
    ("Oracle", "_random_values"): ["self"],
    ("Oracle", "_save_trial"): ["self", "trial"],
    ("Oracle", "_get_trial_dir"): ["self", "trial_id"],
    ("Oracle", "_get_oracle_fname"): ["self"],
    ("Tuner", "_get_tuner_fname"): ["self"],
    ("Tuner", "_is_worker"): ["self"],
}


@pytest.mark.parametrize("owner, name", sorted(KERAS_TUNER_PRIVATE))
def test_the_keras_tuner_private_methods_take_what_the_hooks_pass(owner,
                                                                    name):
    import inspect

    import keras_tuner as kt

    method = getattr(getattr(kt, owner), name)  # AttributeError: moved
    parameters = list(inspect.signature(method).parameters)
    assert parameters == KERAS_TUNER_PRIVATE[(owner, name)]


def test_keras_tuner_still_calls_the_overridden_methods():
    import inspect

    import keras_tuner as kt

    # Oracle.save writes to _get_oracle_fname; a trial is saved through
    # _save_trial; Tuner.save saves the oracle unless _is_worker, then its
    # own state to _get_tuner_fname; Hyperband.__init__ makes its own
    # oracle and passes it to Tuner.__init__, and Hyperband's run_trial and
    # _build_hypermodel (epochs per round, a continued trial's weights)
    # are what HyperbandWithOracle keeps.
    oracle_save = inspect.getsource(kt.Oracle.save)
    assert "_get_oracle_fname()" in oracle_save
    assert "_save_trial(" in inspect.getsource(kt.Oracle)
    tuner_save = inspect.getsource(kt.Tuner.save)
    assert "_is_worker()" in tuner_save and "oracle.save()" in tuner_save
    assert "_get_tuner_fname()" in tuner_save
    hyperband = inspect.getsource(kt.Hyperband.__init__)
    assert "HyperbandOracle(" in hyperband and "super().__init__(" in hyperband
    assert {"run_trial", "_build_hypermodel"} <= set(vars(kt.Hyperband))
    assert "oracle" in inspect.signature(kt.Tuner.__init__).parameters


def test_the_first_trial_comes_from_the_first_values_hook(tmp_path):
    import keras_tuner as kt

    class Oracle(_keras_private.FirstValuesHook,
                 kt.oracles.RandomSearchOracle):
        def first_values(self):
            return {hp.name: hp.default for hp in self.hyperparameters.space}

    hp = kt.HyperParameters()
    hp.Float("rate", 0.0, 1.0, default=0.25)
    hp.Choice("size", [1, 2, 3, 4, 5, 6, 7, 8], default=7)
    oracle = Oracle(objective="loss", max_trials=20, seed=3,
                    hyperparameters=hp)
    oracle._set_project_dir(str(tmp_path), "p")
    first = oracle.create_trial("t0").hyperparameters.values
    assert first == {"rate": 0.25, "size": 7}
    # Without the hook, keras-tuner draws the first trial's values too.
    plain = kt.oracles.RandomSearchOracle(objective="loss", max_trials=20,
                                          seed=3, hyperparameters=hp)
    plain._set_project_dir(str(tmp_path), "q")
    assert plain.create_trial("t0").hyperparameters.values != first


def test_state_files_go_through_write_state(tmp_path):
    import keras_tuner as kt

    written = []

    class Oracle(_keras_private.StateFilesHook,
                 kt.oracles.RandomSearchOracle):
        def write_state(self, path, state):
            written.append(os.path.basename(path))

    hp = kt.HyperParameters()
    hp.Float("rate", 0.0, 1.0)
    oracle = Oracle(objective="loss", max_trials=2, hyperparameters=hp)
    oracle._set_project_dir(str(tmp_path), "p")
    trial = oracle.create_trial("t0")
    oracle.update_trial(trial.trial_id, {"loss": 1.0})
    oracle.end_trial(trial)
    oracle.save()
    assert "trial.json" in written and "oracle.json" in written
    assert not os.path.exists(tmp_path / "p" / "oracle.json")


def test_a_trial_killed_before_the_oracle_named_it_runs_again(tmp_path):
    # A search killed after a new trial's trial.json (status RUNNING) was
    # written but before oracle.json named it as ongoing: reloaded, the
    # trial is retried, not left running and counted as tried.
    import keras_tuner as kt

    class Oracle(_keras_private.StateFilesHook,
                 kt.oracles.RandomSearchOracle):
        def write_state(self, path, state):
            with open(path, "w") as f:
                json.dump(state, f)

    hp = kt.HyperParameters()
    hp.Float("rate", 0.0, 1.0)

    def oracle():
        made = Oracle(objective="loss", max_trials=3, hyperparameters=hp,
                      seed=1)
        made._set_project_dir(str(tmp_path), "p")
        return made

    first = oracle()
    trial = first.create_trial("t0")
    first.update_trial(trial.trial_id, {"loss": 1.0})
    first.end_trial(trial)
    saved_state = json.load(open(tmp_path / "p" / "oracle.json"))
    second = first.create_trial("t0")  # its trial.json says RUNNING
    # The kill: oracle.json as it was before `second` was named ongoing.
    with open(tmp_path / "p" / "oracle.json", "w") as f:
        json.dump(saved_state, f)
    shutil.copytree(tmp_path / "p", tmp_path / "q")  # for keras-tuner alone

    resumed = oracle()
    resumed.reload()
    assert resumed.create_trial("t0").trial_id == second.trial_id
    # keras-tuner alone draws a new trial and never runs that one again.
    plain = kt.oracles.RandomSearchOracle(objective="loss", max_trials=3,
                                          hyperparameters=hp, seed=1)
    plain._set_project_dir(str(tmp_path), "q")
    plain.reload()
    assert plain.create_trial("t0").trial_id != second.trial_id


def test_the_docstring_counts_what_it_lists():
    import re

    from keras_ordered import _keras_private

    doc = _keras_private.__doc__
    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9}
    (said,) = re.findall(r"keeps (\w+) things", doc)
    listed = re.findall(r"^- `", doc, re.M)
    assert words[said] == len(listed), (said, len(listed))
