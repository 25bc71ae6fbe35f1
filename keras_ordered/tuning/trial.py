"""A search trial as a `keras_ordered.training.runner.Task`: the runner
trains it as it trains a recipe.

keras-tuner builds a trial's model (`LanguageModelHyperModel.build`) and
hands it to `LanguageModelHyperModel.fit`, which runs a `TrialTask` with
`keras_ordered.training.runner.Runner`. The runner does for a trial what it
does for every run: the dtype policy (the search's precision) and float32
matrix products, set for the trial and put back after; the seed; Ctrl-C;
TensorBoard; the best checkpoint of the trial's objective; `history.csv`;
a backup at every epoch end (a trial interrupted and run again resumes from
it); the best epoch's weights in a float32 model, saved with the trial's
`results.json` in the trial's folder. keras-tuner's own callbacks (its
report of each epoch to the oracle, its checkpoint, its HParams logs) run
after the runner's.

What is the trial's own: the training text's windows from the epoch
Hyperband continues a trial at (`initial_epoch`), the callbacks that log
the trial's metrics (`elapsed_seconds`, `parse_f1`) and its learning-rate
schedule, and the epochs' logs keras-tuner reads the objective from
(`outcome`).

Example:

```python
# needs: ptb
import keras_tuner

from keras_ordered.training.config import RunConfig
from keras_ordered.tuning.trial import TrialTask

(train, valid, _), vocabulary = keras_ordered.datasets.ptb.load_data(
    max_lines=200
)
hypermodel = keras_ordered.tuning.PRPNHyperModel(vocabulary, "tiny")
hp = keras_tuner.HyperParameters()
model = hypermodel.build(hp)
task = TrialTask(RunConfig(output="trial_example", verbose=0), hypermodel,
                 hp, model, train, valid, epochs=1, steps_per_epoch=3,
                 validation_steps=2)
keras_ordered.training.runner.Runner(task).run()
history = task.outcome()  # what keras-tuner reads the objective from
```
"""

import json
import os
import time

import keras

from keras_ordered import backend
from keras_ordered.training.batching import BPTTBatches
from keras_ordered.training.callbacks import ParsingEvaluation
from keras_ordered.training.callbacks import make_plateau
from keras_ordered.training.callbacks import read_epoch_history
from keras_ordered.training.distributed import make_strategy
from keras_ordered.training.precision import emulated_bfloat16_warning
from keras_ordered.training.runner import Task


class ParseF1(ParsingEvaluation):
    """`ParsingEvaluation` that also logs `parse_f1`: the sentence-level F1
    of the model's default distance, the metric a search can optimise."""

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if logs is not None and self.results:
            name = self.model.default_distance
            logs["parse_f1"] = float(self.results[name]["sentence_f1"])


class ElapsedSeconds(keras.callbacks.Callback):
    """Logs `elapsed_seconds` at every epoch end: the trial's training and
    validation wall time so far (keras-tuner records the metrics of a
    trial's best epoch, so this is the time it took to reach it)."""

    def on_train_begin(self, logs=None):
        self._started = time.time()

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["elapsed_seconds"] = time.time() - self._started


class TrialTask(Task):
    """The hooks of one search trial (see the module's docstring).

    Args:
        config: a `keras_ordered.training.config.RunConfig`: the trial's
            folder (`output`), the seed, the verbosity, `tf32`.
        hypermodel: the `LanguageModelHyperModel` of the search.
        hp: the trial's `keras_tuner.HyperParameters`.
        model: the model keras-tuner built for the trial (`hypermodel.build`
            under the tuner's strategy; with a continued trial's weights).
        train_ids, valid_ids: 1-D int arrays, the training and validation
            texts' token ids.
        epochs: int, the epoch training stops at.
        initial_epoch: int, the epoch a trial without a backup starts at
            (Hyperband continues a trial from its weights at this epoch).
        steps_per_epoch: int or None, cap on the training windows per epoch.
        validation_steps: int or None, validate on the first windows only.
    """

    def __init__(self, config, hypermodel, hp, model, train_ids, valid_ids,
                 epochs=1, initial_epoch=0, steps_per_epoch=None,
                 validation_steps=None):
        super().__init__(config)
        self.hypermodel = hypermodel
        self.hp = hp
        self.model = model
        self.train_ids = train_ids
        self.valid_ids = valid_ids
        self.requested_epochs = int(epochs)
        self.initial_epoch = int(initial_epoch)
        self.requested_steps = steps_per_epoch
        self.validation_steps = validation_steps
        self.best_monitor = hypermodel.objective.name
        self.best_mode = hypermodel.objective.direction
        _, self.training = hypermodel.configuration(hp)
        self.history = keras.callbacks.History()

    def make_strategy(self):
        """The strategy keras-tuner built the model under (TensorFlow), or
        one device."""
        if backend.is_tensorflow():
            return self.model.distribute_strategy
        return make_strategy("one-device")

    def policy(self):
        """The search's dtype policy (the hypermodel's), else the model's."""
        return self.hypermodel.policy or self.model.dtype_policy.name

    def warnings(self, policy):
        warning = emulated_bfloat16_warning(policy)
        return [warning] if warning else []

    def build_inputs(self, replicas):
        training = self.training
        self.train_batches = BPTTBatches(
            self.train_ids, training.batch_size, training.bptt,
            variable_length=training.variable_length,
            seed=self.hypermodel.seed)
        self.valid_batches = BPTTBatches(
            self.valid_ids, training.eval_batch_size, training.bptt,
            variable_length=False)
        self.steps_per_epoch = self.train_batches.steps(self.requested_steps)
        self.epochs = self.requested_epochs

    def build_model(self):
        return self.model

    def compile_model(self, model):
        """Compiles `model` as the trial trains (the runner's float32 copy
        of a model trained under a mixed policy)."""
        self.hypermodel.compile_model(model, self.training)

    def callbacks(self, model, log_dir, chief):
        own = [ElapsedSeconds()]
        plateau = make_plateau(self.training)
        if plateau is not None:
            own.append(plateau)
        if self.hypermodel.treebank is not None:
            own.append(ParseF1(self.hypermodel.records(), log_dir=None,
                               max_sentences=self.hypermodel.parse_sentences))
        return own + [self.history]

    def train_data(self, epoch, start_batch):
        if start_batch:
            return self.train_batches.dataset(epoch, start_batch,
                                              self.steps_per_epoch)
        return self.train_batches.stream(epoch, self.steps_per_epoch)

    def validation_data(self):
        return self.valid_batches.dataset(
            0, steps_per_epoch=self.validation_steps)

    def results(self, model, facts):
        return {"hyperparameters": dict(self.hp.values), **facts}

    def evaluate(self, model, results, loop):
        """The epochs' logs into `results` (the objective is measured
        every epoch; no further evaluation): this process's, or, when it
        trained no epoch (a trial killed after its last epoch's backup and
        run again), the trial's `history.csv`, every epoch it trained."""
        results["history"] = {name: [float(v) for v in values]
                              for name, values in
                              self.history.history.items()}
        if not results["history"]:
            rows = read_epoch_history(
                os.path.join(self.config.output, "history.csv"))
            results["history"] = {
                name: [row[name] for row in rows]
                for name in (rows[0] if rows else ()) if name != "epoch"}
        return model

    def outcome(self):
        """What keras-tuner reads the objective from: the `History` of the
        epochs trained now, or, when the runner found the trial already
        finished (a search stopped before the oracle heard of it), the
        best epoch's logs from the trial's `results.json`."""
        if self.history.history:
            return self.history
        path = os.path.join(self.config.output, "results.json")
        with open(path) as f:
            history = json.load(f).get("history") or {}
        scores = history.get(self.best_monitor)
        if not scores:
            raise ValueError(f"The trial in {self.config.output} recorded "
                             f"no {self.best_monitor}.")
        pick = min if self.best_mode == "min" else max
        best = scores.index(pick(scores))
        return {name: values[best] for name, values in history.items()
                if len(values) > best}
