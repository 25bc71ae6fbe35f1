"""One runner for every recipe: a `Task` says what trains, `Runner` runs it.

After TF Model Garden's split of a task (`official/core/base_task.py`:
inputs, model, losses, evaluation) from the loop that drives it
(`train_lib.py`). A `Task` implements hooks; `Runner.run` does, once for
every recipe, what surrounds them:

1. the strategy (`Task.make_strategy`), the dtype policy (`Task.policy`)
   and float32 matrix products (`backend.float32_matmuls`, unless the
   config's `tf32`), set for the run and put back after; the seed;
2. the task's inputs and model (`build_inputs`, `build_model`,
   `compile_model`), built under the strategy;
3. the callbacks every run has, around the task's own: Ctrl-C, the
   learning rate in the logs, TensorBoard (epoch summaries, and every
   `Task.log_every` steps), the best checkpoint (`best.weights.h5`,
   watching `Task.best_monitor`), `history.csv`, and crash-safe backups
   (`backup/`) that keep the state of every task callback with
   `get_state` / `set_state`;
4. the resume: a backup restored, then "finished", "resuming" or a clear
   refusal when the options would change the epoch it stopped in;
5. training with `model.fit`, or with `CustomTrainingLoop` under a
   multi-worker strategy (Keras' `fit` fails there): the two ways, chosen
   here; a run resumed inside an epoch finishes it first;
6. the best checkpoint's weights, a float32 copy of a model trained under
   a mixed policy (the evaluation follows the official float32 protocol),
   the task's evaluation, then `model.keras` and `results.json`, written
   by the chief only.

Under a multi-worker strategy only the chief writes files; the other
workers run the callbacks that change training and join the backups'
collectives.

Example:

```python
from keras_ordered.training.config import RunConfig
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task


class Regression(Task):
    \"\"\"A linear model fitted to y = 2x.\"\"\"

    def build_inputs(self, replicas):
        x = np.linspace(-1, 1, 64).reshape(-1, 1).astype("float32")
        self.data = (x, 2 * x)
        self.steps_per_epoch, self.epochs = 4, 3

    def build_model(self):
        return keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])

    def compile_model(self, model):
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")

    def train_data(self, epoch, start_batch):
        x, y = self.data
        while True:  # endless: the runner asks for steps_per_epoch batches
            for start in range(0, len(x), 16):
                yield x[start:start + 16], y[start:start + 16]

    def validation_data(self):
        return self.data

    def evaluate(self, model, results, loop):
        results["weight"] = float(model.layers[0].kernel.numpy()[0, 0])
        return model


config = RunConfig(output="runs/regression", seed=0, verbose=0)
assert Runner(Regression(config)).run() == 0  # results.json, model.keras
# Run again: "The run in runs/regression is finished (3 epochs) ..."
assert Runner(Regression(config)).run() == 0
```
"""

import json
import math
import os
import sys
import time

import keras
from keras import ops

from keras_ordered import _environment
from keras_ordered import backend
from keras_ordered.training.callbacks import EpochHistory
from keras_ordered.training.callbacks import LearningRateLogger
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import RunProgbar
from keras_ordered.training.callbacks import StepLogger
from keras_ordered.training.callbacks import StopOnCtrlC
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.crash_safety import save_run
from keras_ordered.training.distributed import CustomTrainingLoop
from keras_ordered.training.distributed import barrier
from keras_ordered.training.distributed import is_chief
from keras_ordered.training.distributed import is_multi_worker
from keras_ordered.training.distributed import make_strategy
from keras_ordered.training.precision import global_policy


class Task:
    """What one recipe trains: the hooks `Runner.run` calls.

    A task implements `build_inputs` (which sets `steps_per_epoch` and
    `epochs`), `build_model`, `compile_model`, `train_data` and
    `evaluate`; the other hooks have defaults.

    Class attributes:
        save_freq: int, training steps between mid-epoch backups (0: at
            epoch ends only).
        best_monitor: str, the epoch log the best checkpoint watches.
        best_mode: `"min"` or `"max"`.
        log_every: int, steps between TensorBoard points of the training
            loss (0: epoch summaries only).
        initial_epoch: int, the epoch a run without a backup starts at
            (0; a search trial that continues another trial's weights
            starts later).

    Args:
        config: the run's configuration: a
            `keras_ordered.training.config.RunConfig` (or a dataclass
            extending it), or any object with its fields: the runner reads
            `output` (the run's folder), `seed`, `verbose` and `strategy`.
    """

    save_freq = 0
    best_monitor = "val_loss"
    best_mode = "min"
    log_every = 0
    initial_epoch = 0

    def __init__(self, config):
        self.config = config
        self.steps_per_epoch = None
        self.epochs = None

    # Where the run trains, and in which precision.

    def make_strategy(self):
        """The strategy (or the device holder off TensorFlow) of the run."""
        return make_strategy(self.config.strategy)

    def policy(self):
        """The dtype policy training runs under (default: float32)."""
        return "float32"

    def warnings(self, policy):
        """Lines the chief prints on stderr before training (default: none)."""
        return []

    # Inputs and model.

    def build_inputs(self, replicas):
        """Reads the data and makes the batches; sets `steps_per_epoch` and
        `epochs`. `replicas`: the strategy's replicas in sync."""
        raise NotImplementedError

    def build_model(self):
        """The model, uncompiled (called under the strategy's scope and the
        run's dtype policy)."""
        raise NotImplementedError

    def compile_model(self, model):
        """Compiles `model` as the task trains it (also the float32 copy of
        a model trained under a mixed policy)."""
        raise NotImplementedError

    def announce(self, model, strategy, policy):
        """Prints what trains where (default: nothing)."""

    def fingerprint(self, model):
        """What a backup must match to be resumed into this run."""
        return {"model": type(model).__name__,
                "parameters": int(model.count_params())}

    # Callbacks.

    def callbacks(self, model, log_dir, chief):
        """The task's callbacks, run before the best checkpoint.

        Those with `get_state` / `set_state` are kept in the backups.
        `log_dir` is the TensorBoard folder (None without TensorFlow);
        `chief` is False on a multi-worker run's other workers, which
        must write nothing.
        """
        return []

    def late_callbacks(self):
        """The task's callbacks run after the backup (default: none)."""
        return []

    def validated_weights(self):
        """A context manager under which validation and the best checkpoint
        see the weights to keep (NT-ASGD's average), or None."""
        return None

    # Training.

    def train_data(self, epoch, start_batch):
        """The training batches from window `start_batch` of `epoch`: the
        rest of that epoch when `start_batch` > 0, else every epoch from
        `epoch` on."""
        raise NotImplementedError

    def validation_data(self):
        """The validation batches of one epoch, or None."""
        return None

    def training_done(self, start_epoch):
        """Whether a run restored at `start_epoch` has no training left."""
        return start_epoch >= self.epochs

    # Evaluation.

    def results(self, model, facts):
        """The first entries of `results.json`. `facts`: `start_epoch`,
        `epochs_run`, `train_seconds` (over every resume)."""
        return {}

    def restore_best(self, model, checkpoint, chief, results):
        """Puts the best checkpoint's weights into `model` for the final
        evaluation, as the official code does; notes which in `results`."""
        path, best = checkpoint.filepath, checkpoint.best
        known = best is not None and math.isfinite(float(best))
        # Off the chief `best` is unknown: every worker reads the file.
        if os.path.exists(path) and (known or not chief):
            model.load_weights(path)
            results["weights"] = "best checkpoint"
            if known:
                results[f"best_{self.best_monitor}"] = float(best)
                print(f"Evaluating the best checkpoint ({path}, "
                      f"{self.best_monitor} {float(best):.4f} during "
                      "training).")
            return True
        results["weights"] = "final"
        return False

    def evaluate(self, model, results, loop):
        """The final figures into `results`; returns the model to save.

        `loop` is the `CustomTrainingLoop` of a multi-worker run, else None.
        """
        raise NotImplementedError


class Runner:
    """Runs a `Task`: strategy, precision, callbacks, resume, the loop,
    evaluation and the saved run (see the module's docstring).

    Args:
        task: the `Task`.
        callbacks: extra Keras callbacks for `fit`, after all others
            (tests use them).
    """

    def __init__(self, task, callbacks=()):
        self.task = task
        self.extra_callbacks = list(callbacks)

    @property
    def output(self):
        return self.task.config.output

    def run(self):
        """Trains, evaluates and saves; returns 0.

        Raises:
            keras_ordered._environment.OutputPathError: the output folder
                cannot be written (checked before anything is built).
        """
        task = self.task
        _environment.check_output_dir(self.output)
        strategy = task.make_strategy()
        policy = task.policy()
        with global_policy(policy), backend.float32_matmuls(
                tf32=task.config.tf32):
            return self._run(strategy, policy)

    def _run(self, strategy, policy):
        task, config = self.task, self.task.config
        chief = is_chief(strategy)
        keras.utils.set_random_seed(config.seed)
        if chief:
            for line in task.warnings(policy):
                print(line, file=sys.stderr)
        task.build_inputs(strategy.num_replicas_in_sync)
        with strategy.scope():
            model = task.build_model()
            task.compile_model(model)
        task.announce(model, strategy, policy)
        fingerprint = task.fingerprint(model)
        callbacks = self._callbacks(model, fingerprint, chief)

        with strategy.scope():
            # Restoring builds the optimizer's slot variables (Adam's
            # moments): they must be the strategy's mirrored variables.
            start_epoch, start_batch = self.backup.restore(model)
        if self.backup.restored is None:
            start_epoch = task.initial_epoch
        action = self._resume_action(start_epoch, start_batch)
        results_path = os.path.join(self.output, "results.json")
        model_path = os.path.join(self.output, "model.keras")
        if action == "finished":
            advice = (f"Pass --epochs {start_epoch + 1} or more to train it "
                      "further, or use another --output to start a new run."
                      if start_epoch >= task.epochs else
                      "Use another --output to start a new run.")
            print(f"The run in {self.output} is finished ({start_epoch} "
                  f"epochs): results in {results_path}, model in "
                  f"{model_path}. {advice}")
            return 0
        steps = task.steps_per_epoch
        if action == "evaluate":
            print(f"Training finished ({start_epoch} epochs) before the final "
                  "evaluation: running it now.")
        elif start_batch:
            print(f"Resuming from epoch {start_epoch + 1}, window "
                  f"{start_batch} of {steps} (backup in "
                  f"{self.backup.directory}).")
        elif start_epoch:
            print(f"Resuming at the start of epoch {start_epoch + 1} of "
                  f"{task.epochs} (backup in {self.backup.directory}).")
        if self.step_logger is not None:
            self.step_logger.epoch = start_epoch
            self.step_logger.start_batch = start_batch
        if self.history is not None:
            self.history.initial_epoch = start_epoch

        loop = None
        if is_multi_worker(strategy):
            # Keras 3's fit fails under MultiWorkerMirroredStrategy
            # (keras-team/keras#20585): the same train_step in a loop.
            loop = CustomTrainingLoop(model, strategy,
                                      verbose=config.verbose)
        started = time.time()
        epochs_run = start_epoch
        if action == "train":
            epochs_run += self._fit(model, loop, callbacks, start_epoch,
                                    start_batch)
        elapsed = time.time() - started
        if loop is not None:
            barrier(strategy)  # the chief's last checkpoint is written
        # Over every resume: the time up to the backup this run resumed
        # from (a crash loses the time since its last backup), plus this
        # run's.
        facts = {"start_epoch": start_epoch, "epochs_run": epochs_run,
                 "train_seconds": round(self.backup.seconds_before + elapsed,
                                        1)}
        results = task.results(model, facts)
        task.restore_best(model, self.best, chief, results)
        results["precision"] = policy
        if policy != "float32" and loop is None:
            # Trained under a mixed policy: evaluate and save a float32
            # copy, so that the figures follow the official (float32)
            # protocol and the saved model computes in float32 wherever it
            # is loaded.
            model = float32_copy(model, task.compile_model, strategy)
            print(f"Trained under {policy}; evaluating in float32.")
        results["evaluation_precision"] = "float32" if loop is None else policy
        model = task.evaluate(model, results, loop)
        if not chief:
            return 0
        save_run(model, model_path, results, results_path)
        print(json.dumps(results))
        return 0

    def _callbacks(self, model, fingerprint, chief):
        """Every callback of the run, in the order `fit` calls them."""
        task = self.task
        if chief:
            os.makedirs(self.output, exist_ok=True)
        # TensorBoard summaries are written through TensorFlow's
        # `tf.summary`: none without TensorFlow (JAX or PyTorch alone).
        log_dir = os.path.join(self.output, "logs")
        if not backend.tensorflow_installed():
            if chief:
                print("TensorBoard summaries need TensorFlow, which is not "
                      "installed: none are written (the epochs' figures are "
                      "in history.csv).")
            log_dir = None
        callbacks = [LearningRateLogger()]
        self.step_logger = None
        if task.log_every:
            self.step_logger = StepLogger(
                log_dir and os.path.join(log_dir, "steps"),
                every=task.log_every if chief else 0,
                steps_per_epoch=task.steps_per_epoch)
            callbacks.append(self.step_logger)
        own = list(task.callbacks(model, log_dir, chief))
        callbacks += own
        self.best = ResumableModelCheckpoint(
            os.path.join(self.output, "best.weights.h5"),
            monitor=task.best_monitor, mode=task.best_mode,
            save_best_only=True, save_weights_only=True,
            weights_context=task.validated_weights(), write=chief,
        )
        callbacks.append(self.best)
        self.history = None
        if chief:
            if log_dir:
                callbacks.append(keras.callbacks.TensorBoard(
                    log_dir, update_freq="epoch"))
            # After every callback that adds to the epoch logs (the
            # learning rate, NT-ASGD, validation F1): one row per epoch,
            # kept across resumptions.
            self.history = EpochHistory(os.path.join(self.output,
                                                     "history.csv"))
            callbacks.append(self.history)
        self.backup = TrainingBackup(
            os.path.join(self.output, "backup"),
            save_freq=task.save_freq,
            fingerprint=fingerprint,
            extra_state=[c for c in own if hasattr(c, "get_state")]
            + [self.best],
            steps_per_epoch=task.steps_per_epoch,
            write=chief,
        )
        callbacks.append(self.backup)
        return [StopOnCtrlC(), *callbacks, *task.late_callbacks(),
                *self.extra_callbacks]

    def _resume_action(self, start_epoch, start_batch):
        """What a restored run does next: 'train', 'evaluate' or 'finished'.

        Raises ValueError when the options would change the window layout
        of the epoch the backup stopped in, or end training inside it.
        """
        backup, steps = self.backup, self.task.steps_per_epoch
        epochs = self.task.epochs
        meta = backup.restored
        if meta is None:
            return "train"
        saved_steps = meta.get("steps_per_epoch")
        if start_batch and saved_steps is not None and saved_steps != steps:
            raise ValueError(
                f"The backup in {backup.directory} stopped at window "
                f"{start_batch} of an epoch of {saved_steps} windows; these "
                f"options make epochs of {steps} windows, which would skip "
                "or repeat part of it. Run with --steps-per-epoch "
                f"{saved_steps} (or the same --max-lines / --batch-size / "
                "--bptt) to finish that epoch, or use another --output (or "
                "delete the backup folder) to start over."
            )
        if start_batch and start_epoch >= epochs:
            raise ValueError(
                f"The backup in {backup.directory} stopped inside epoch "
                f"{start_epoch + 1}, but --epochs is {epochs}: pass --epochs "
                f"{start_epoch + 1} or more to finish it, or use another "
                "--output."
            )
        if self.task.training_done(start_epoch):
            if os.path.exists(os.path.join(self.output, "results.json")):
                return "finished"
            return "evaluate"
        return "train"

    def _fit(self, model, loop, callbacks, start_epoch, start_batch):
        """Trains from `(start_epoch, start_batch)` to the last epoch;
        returns the number of epochs trained."""
        task, verbose = self.task, self.task.config.verbose
        steps, epochs = task.steps_per_epoch, task.epochs

        def fit(dataset, steps_per_epoch, stop_epoch, initial_epoch):
            # Both calls count the run's epochs in their progress lines
            # ("Epoch 6/12", not "6/6", for the rest of an interrupted
            # epoch).
            if loop is not None:
                history = loop.fit(
                    dataset, steps_per_epoch, stop_epoch,
                    initial_epoch=initial_epoch,
                    validation_data=task.validation_data,
                    callbacks=callbacks, shown_epochs=epochs,
                )
            else:
                history = model.fit(
                    dataset, steps_per_epoch=steps_per_epoch,
                    epochs=stop_epoch, initial_epoch=initial_epoch,
                    validation_data=task.validation_data(),
                    callbacks=[*callbacks, RunProgbar(epochs)],
                    verbose=verbose, shuffle=False,
                )
            logs = getattr(history, "history", history) or {}
            return len(logs.get("loss", []))

        trained = 0
        if start_batch:
            # Finish the interrupted epoch from the window it stopped at.
            trained += fit(task.train_data(start_epoch, start_batch),
                           steps - start_batch, start_epoch + 1, start_epoch)
            start_epoch += 1
        if start_epoch < epochs:
            trained += fit(task.train_data(start_epoch, 0), steps, epochs,
                           start_epoch)
        return trained


def float32_copy(model, compile_model, strategy):
    """A float32 model of `model`'s config holding its weights and its
    optimizer's state, compiled by `compile_model`.

    The config is the same but for the dtype, so the variables (the
    optimizer's too) are the same in the same order: the copy can go on
    training.
    """
    with strategy.scope():
        copy = type(model).from_config({**model.get_config(),
                                        "dtype": "float32"})
        compile_model(copy)
    pairs = [(copy.weights, model.weights)]
    source_optimizer = getattr(model.optimizer, "inner_optimizer",
                               model.optimizer)
    if source_optimizer is not None and source_optimizer.built:
        with strategy.scope():
            copy.optimizer.build(copy.trainable_variables)
        pairs.append((copy.optimizer.variables, source_optimizer.variables))
    for targets, sources in pairs:
        if len(targets) != len(sources):
            raise ValueError("The float32 copy does not have the trained "
                             "model's variables.")
        for target, source in zip(targets, sources):
            if tuple(target.shape) != tuple(source.shape):
                raise ValueError(
                    f"The float32 copy's {target.path} has shape "
                    f"{target.shape}, the trained {source.path} "
                    f"{source.shape}.")
            target.assign(ops.cast(source.value, target.dtype))
    return copy

