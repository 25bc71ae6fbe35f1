"""Training on several devices and machines: the recipes' `--strategy`.

Two ways to train on more than one device:

- one machine, several GPUs (or a CPU split into logical devices):
  `tf.distribute.MirroredStrategy` and Keras' own `model.fit`, which the
  recipes use for `--strategy auto`, `mirrored` and `one-device`;
- several machines: `tf.distribute.MultiWorkerMirroredStrategy`, configured
  by the `TF_CONFIG` environment variable as TensorFlow documents it. Keras
  3's `model.fit` fails under that strategy (keras-team/keras#20585), so
  `CustomTrainingLoop` here runs the model's own `train_step` /
  `test_step` (`keras_ordered.models.carried_state.CarriedStateMixin`: the same loss,
  carried state, clipping by the global norm across replicas) inside
  `strategy.run`, over datasets that hand every replica its rows of each
  global batch, and drives the same Keras callbacks `model.fit` would.

What several replicas change, and what keeps them equal to one
==============================================================

With the same global batch and seed, N replicas train the model that one
device trains (tests/training/test_distributed_replicas.py measures it):

- each replica carries the recurrent state of its own rows (the streams it
  always receives) in replica-local variables;
  `keras_ordered.models.carried_state.carried_state` gathers them in batch order
  (what a backup saves), `set_carried_state` splits them again;
- the loss is each replica's summed cross-entropy over the token count of
  the *global* batch, so that the optimizer's sum over replicas is the
  gradient of the global mean, and the logged loss is the global one;
- gradients are clipped by the norm of their sum over the replicas, not
  each replica's part by its own norm
  (`keras_ordered.models.carried_state.clip_by_global_norm_across_replicas`);
- PRPN's batch normalisations take their statistics over the global batch
  (`PRPNLanguageModel(synchronized_batch_norm=None)` turns that on under
  several replicas).

Dropout masks are the one thing that does not match: Keras layers draw
them from a seed every replica shares (a mirrored variable), so the
replicas of a step would draw the same masks for their rows; the training
step shifts each replica's seeds by its id for the forward pass
(`keras_ordered.models.carried_state.offset_seeds`), so each draws its own, and a
run with dropout trains as well, on other masks than one device's.

Multi-worker runs: who writes, and a killed worker
==================================================

Only the chief (the `chief` task of `TF_CONFIG`, else worker 0) writes
backups, checkpoints, TensorBoard logs, `model.keras` and `results.json`;
the other workers take part in every collective (gradients, gathering the
carried state for a backup) and write nowhere. The workers read the chief's
backup when they start, so `--output` must name a folder every worker can
read (a shared filesystem, as TensorFlow's own multi-worker backups need).

When a worker dies, the others are blocked in the next collective until
TensorFlow's coordination service notices the missing heartbeat and fails
them (an error that names the lost task, after some seconds), or until they
are killed. Nothing is lost but the steps since the chief's last backup
(`--save-freq`): start every worker again with the same command and
`TF_CONFIG`; they restore the chief's latest backup (weights, optimizer
state, every replica's carried state, NT-ASGD and learning-rate schedule
state, the window to resume at) and go on from there.

Example (two workers on one machine; on several machines, their addresses):

```
TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:12345", "127.0.0.1:12346"]},
            "task": {"type": "worker", "index": 0}}' \\
    python recipes/ptb_onlstm.py --preset small --strategy multi-worker &
TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:12345", "127.0.0.1:12346"]},
            "task": {"type": "worker", "index": 1}}' \\
    python recipes/ptb_onlstm.py --preset small --strategy multi-worker
```
"""

import contextlib
import json
import os
import sys
import time

import keras
import numpy as np

from keras_ordered.training.options import STRATEGIES
from keras_ordered import backend

tf = backend.tensorflow_on_use("tf.distribute training")


def split_cpu(count):
    """Splits the CPU into `count` logical devices (`/cpu:0 .. /cpu:N-1`).

    Lets `MirroredStrategy` run `count` replicas on a machine without GPUs,
    to try or test a multi-device run. TensorFlow accepts this only before
    it initialises its devices (before the first operation).

    Args:
        count: int >= 1.

    Raises:
        ValueError: when TensorFlow has already initialised its devices.

    Example:

    ```python
    # needs: a process whose TensorFlow has not started yet
    keras_ordered.training.distributed.split_cpu(2)
    strategy = keras_ordered.training.distributed.make_strategy("mirrored")
    ```
    """
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"`count` must be an integer >= 1. Received {count}")
    if not backend.is_tensorflow():
        if len(_backend_devices()) != count:
            raise ValueError(
                f"Splitting the CPU into {count} devices is TensorFlow's; on "
                "JAX start the process with XLA_FLAGS=--xla_force_host_"
                f"platform_device_count={count} instead."
            )
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if current is not None and len(current) == count:
        return
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * count
        )
    except RuntimeError as error:
        raise ValueError(
            f"Cannot split the CPU into {count} devices: TensorFlow has "
            "already initialised its devices in this process. Split it "
            "before any TensorFlow operation runs (in a new process)."
        ) from error


def make_strategy(name="auto"):
    """The `tf.distribute` strategy a recipe's `--strategy` names.

    Args:
        name: str, one of:
            - `"auto"`: every visible GPU (`MirroredStrategy`), else the CPU
              (one replica);
            - `"mirrored"`: `MirroredStrategy` over every visible GPU, else
              over every logical CPU device (`split_cpu`);
            - `"one-device"`: `OneDeviceStrategy` on the first GPU, else
              the CPU;
            - `"multi-worker"`: `MultiWorkerMirroredStrategy` configured by
              `TF_CONFIG` (train with `CustomTrainingLoop`, not `fit`).

    Returns:
        A `tf.distribute.Strategy`.

    Example:

    ```python
    strategy = keras_ordered.training.distributed.make_strategy("auto")
    with strategy.scope():
        model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
            "tiny", vocabulary=["<eos>", "<unk>", "a"]
        )
    ```
    """
    if name not in STRATEGIES:
        raise ValueError(
            f"Unknown strategy {name!r}: use one of {', '.join(STRATEGIES)}."
        )
    if not backend.is_tensorflow():
        return BackendDevices(name)
    if name == "multi-worker":
        if not os.environ.get("TF_CONFIG"):
            raise ValueError(
                "--strategy multi-worker needs the TF_CONFIG environment "
                "variable (the cluster's worker addresses and this task's "
                'type and index: {"cluster": {"worker": ["host1:port", '
                '"host2:port"]}, "task": {"type": "worker", "index": 0}}).'
            )
        # Before anything initialises TensorFlow's devices: the strategy
        # configures the collective ops, which only a fresh runtime accepts.
        try:
            return tf.distribute.MultiWorkerMirroredStrategy()
        except RuntimeError as error:
            raise ValueError(
                "MultiWorkerMirroredStrategy must be created before any "
                "TensorFlow operation runs in the process "
                f"({error})."
            ) from error
    gpus = [d.name for d in tf.config.list_logical_devices("GPU")]
    if name == "auto":
        return tf.distribute.MirroredStrategy(gpus or ["/cpu:0"])
    if name == "mirrored":
        cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(gpus or cpus)
    return tf.distribute.OneDeviceStrategy(gpus[0] if gpus else "/cpu:0")


class BackendDevices:
    """What the recipes use of a strategy, on JAX and PyTorch.

    One process trains on the backend's devices. On JAX with several
    devices, `"auto"` and `"mirrored"` set `keras.distribution.DataParallel`
    over them (each batch sharded along its rows, the weights replicated);
    the batch stays one array, so the carried-state step sees one replica
    (`num_replicas_in_sync` is 1). `"one-device"` keeps the first device;
    `"multi-worker"` is TensorFlow's.

    Args:
        name: a `make_strategy` name.

    Example:

    ```python
    # KERAS_BACKEND=jax, XLA_FLAGS=--xla_force_host_platform_device_count=2
    devices = keras_ordered.training.distributed.make_strategy("auto")
    devices.extended.worker_devices  # ['cpu:0', 'cpu:1']
    ```
    """

    num_replicas_in_sync = 1

    def __init__(self, name="auto"):
        if name == "multi-worker":
            raise ValueError(
                "--strategy multi-worker is TensorFlow's "
                "(MultiWorkerMirroredStrategy): train with KERAS_BACKEND="
                "tensorflow, or on one machine's devices with --strategy auto."
            )
        devices = _backend_devices()
        self.distribution = None
        if name in ("auto", "mirrored") and len(devices) > 1:
            if backend.name() != "jax":
                raise ValueError(
                    f"{len(devices)} devices on {backend.name()}: this "
                    "package trains on several devices with JAX "
                    "(keras.distribution) or TensorFlow (tf.distribute); use "
                    "--strategy one-device here."
                )
            self.distribution = keras.distribution.DataParallel(
                devices=devices)
            keras.distribution.set_distribution(self.distribution)
        else:
            devices = devices[:1]
        self.extended = _Extended(worker_devices=[str(d) for d in devices])

    def scope(self):
        """A context for building the model (the distribution is set for
        the whole process)."""
        return contextlib.nullcontext()


class _Extended:
    def __init__(self, worker_devices):
        self.worker_devices = worker_devices


def _backend_devices():
    """The devices training uses on JAX or PyTorch: the accelerators if
    any, else the CPUs."""
    if backend.name() == "jax":
        import jax

        accelerators = [d for d in jax.devices() if d.platform != "cpu"]
        return accelerators or jax.devices("cpu")
    if backend.name() == "torch":
        import torch

        if torch.cuda.is_available():
            return [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    return ["cpu:0"]


def is_multi_worker(strategy):
    """Whether `strategy` spans several workers (needs `CustomTrainingLoop`)."""
    if isinstance(strategy, BackendDevices):
        return False
    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def model_scope(model):
    """The scope variables of `model` are created in: its strategy's on
    TensorFlow, none on the other backends."""
    if not backend.is_tensorflow():
        return contextlib.nullcontext()
    return model.distribute_strategy.scope()


def is_chief(strategy=None):
    """Whether this process writes the run's files.

    True outside a multi-worker strategy; under one, for the `chief` task of
    `TF_CONFIG`, or worker 0 of a cluster without a chief.
    """
    if strategy is not None and not is_multi_worker(strategy):
        return True
    config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = config.get("task") or {}
    kind = task.get("type")
    if kind in (None, "chief"):
        return True
    has_chief = bool((config.get("cluster") or {}).get("chief"))
    return kind == "worker" and not has_chief and int(task.get("index", 0)) == 0


def barrier(strategy):
    """Returns once every worker has reached it (one small all-reduce)."""
    def one():
        return tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.SUM, tf.constant(1.0)
        )

    strategy.experimental_local_results(strategy.run(one))[0].numpy()


def distribute_rows(strategy, dataset):
    """A distributed dataset giving every replica its rows of each batch.

    `dataset` yields whole global batches (every worker builds the same
    one, as `BPTTBatches.dataset` does); replica `r` of `R` receives rows
    `r * B / R .. (r + 1) * B / R - 1` of each, the split `model.fit`
    makes on one machine, so that each replica always receives the same
    streams (and carries their state).

    Args:
        strategy: a `tf.distribute.Strategy`.
        dataset: a `tf.data.Dataset` of global batches (nested tensors
            whose first axis is the batch, divisible by the replicas).

    Returns:
        A `tf.distribute.DistributedDataset`.
    """
    def dataset_fn(context):
        replicas = context.num_replicas_in_sync
        local = replicas // context.num_input_pipelines
        first = context.input_pipeline_id * local

        def split(*batch):
            def parts(tensor):
                shape = tf.shape(tensor)
                rows = tf.reshape(
                    tensor,
                    tf.concat([[replicas, shape[0] // replicas], shape[1:]], 0),
                )
                return rows[first : first + local]

            return tf.data.Dataset.from_tensor_slices(
                tf.nest.map_structure(parts, batch)
            )

        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = (
            tf.data.experimental.AutoShardPolicy.OFF
        )
        return dataset.flat_map(split).with_options(options)

    return strategy.distribute_datasets_from_function(dataset_fn)


class CustomTrainingLoop:
    """`fit` / `evaluate` of a carried-state model around `strategy.run`.

    Runs `model.train_step` and `model.test_step` (those of
    `keras_ordered.models.carried_state.CarriedStateMixin`) on every replica of any
    `tf.distribute` strategy, `MultiWorkerMirroredStrategy` included, where
    Keras 3's `model.fit` fails (keras-team/keras#20585). The callbacks get
    the hooks `model.fit` calls (`on_train_begin`, `on_epoch_begin`,
    `on_train_batch_end` with the logs, `on_test_begin` / `on_test_end`
    around validation, `on_epoch_end` with `val_` logs), so NT-ASGD,
    backups, learning-rate schedules and TensorBoard work unchanged; give
    the ones that write files to the chief only (`is_chief`).

    Args:
        model: a compiled model, built, `configure_bptt` called, all under
            `strategy.scope()`.
        strategy: the `tf.distribute.Strategy` the model was built under.
        verbose: int, 0 silent, else one line per epoch (the chief's).

    Example:

    ```python
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    ids = np.random.default_rng(0).integers(0, 32, 600).astype("int32")
    strategy = keras_ordered.training.distributed.make_strategy("auto")
    with strategy.scope():
        model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
            "tiny", vocabulary
        )
        model.compile(optimizer=keras.optimizers.SGD(30.0))
        model.configure_bptt(batch_size=4, eval_batch_size=4, clip_norm=0.25)
    loop = keras_ordered.training.distributed.CustomTrainingLoop(
        model, strategy
    )
    batches = keras_ordered.training.BPTTBatches(ids, 4, 35)
    history = loop.fit(batches.stream(), steps_per_epoch=batches.steps(),
                       epochs=1)  # {"loss": [...], "perplexity": [...]}
    ```
    """

    def __init__(self, model, strategy, verbose=0):
        self.model = model
        self.strategy = strategy
        self.verbose = verbose
        self._train = None
        self._test = None
        with strategy.scope():
            # Keras builds the optimizer lazily inside the first step; in a
            # replica context that would create its variables per replica.
            if model.optimizer is not None and not model.optimizer.built:
                model.optimizer.build(model.trainable_variables)

    def _step(self, kind):
        step = self.model.train_step if kind == "train" else self.model.test_step
        strategy = self.strategy

        @tf.function
        def run(iterator):
            logs = strategy.run(step, args=(next(iterator),))
            # The logs are global already (the step sums over replicas):
            # the first local replica's are everyone's.
            return tf.nest.map_structure(
                lambda value: strategy.experimental_local_results(value)[0],
                logs,
            )

        return run

    def _reset_metrics(self):
        for metric in self.model.metrics:
            metric.reset_state()

    def evaluate(self, dataset, steps=None, callbacks=None):
        """Mean token loss of a finite dataset of global batches.

        Args:
            dataset: `tf.data.Dataset` of whole global batches (every worker
                builds the same one).
            steps: int or None, at most this many batches.
            callbacks: a `keras.callbacks.CallbackList` or None (its
                `on_test_begin` / `on_test_end` are called).

        Returns:
            dict of logs (`loss`, `perplexity`), floats.
        """
        if self._test is None:
            self._test = self._step("test")
        if callbacks is not None:
            callbacks.on_test_begin()
        self._reset_metrics()
        logs = {}
        iterator = iter(distribute_rows(self.strategy, dataset))
        count = 0
        while steps is None or count < steps:
            try:
                values = self._test(iterator)
            except (StopIteration, tf.errors.OutOfRangeError):
                break
            logs = {k: float(v) for k, v in values.items()}
            count += 1
        if callbacks is not None:
            callbacks.on_test_end(logs)
        return logs

    def fit(self, dataset, steps_per_epoch, epochs, initial_epoch=0,
            validation_data=None, callbacks=(), validation_steps=None,
            shown_epochs=None):
        """Trains as `model.fit(dataset, steps_per_epoch=...)` would.

        Args:
            dataset: `tf.data.Dataset` of global batches, at least
                `(epochs - initial_epoch) * steps_per_epoch` of them (one
                iterator runs over all epochs, as in `model.fit`).
            steps_per_epoch: int.
            epochs: int, the epoch to stop at.
            initial_epoch: int, the epoch to start at.
            validation_data: a finite dataset (or a function returning one
                per epoch), evaluated after every epoch, or None.
            callbacks: list of `keras.callbacks.Callback`.
            validation_steps: int or None.
            shown_epochs: int or None, the epoch count the progress lines
                show ("Epoch 6/12"; default `epochs`): a run resumed in
                the middle of an epoch finishes it in a call of its own.

        Returns:
            dict `metric -> list of per-epoch values` (as `History.history`).
        """
        if self._train is None:
            self._train = self._step("train")
        model = self.model
        callback_list = keras.callbacks.CallbackList(
            list(callbacks), model=model, epochs=epochs,
            steps=steps_per_epoch, verbose=0,
        )
        history = {}
        model.stop_training = False
        iterator = iter(distribute_rows(self.strategy, dataset))
        callback_list.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            callback_list.on_epoch_begin(epoch)
            started = time.time()
            for batch in range(steps_per_epoch):
                callback_list.on_train_batch_begin(batch)
                logs = {k: float(v) for k, v in self._train(iterator).items()}
                callback_list.on_train_batch_end(batch, logs)
                if model.stop_training:
                    break
            epoch_logs = dict(logs)
            if validation_data is not None:
                data = (
                    validation_data() if callable(validation_data)
                    else validation_data
                )
                val = self.evaluate(data, validation_steps, callback_list)
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            for key, value in epoch_logs.items():
                history.setdefault(key, []).append(value)
            if self.verbose and is_chief(self.strategy):
                shown = " - ".join(
                    f"{k}: {v:.4f}" for k, v in epoch_logs.items()
                    if isinstance(v, float)
                )
                print(f"Epoch {epoch + 1}/{shown_epochs or epochs} - "
                      f"{time.time() - started:.0f}s - {shown}", flush=True)
            if model.stop_training:
                break
        callback_list.on_train_end(logs)
        return history


def print_worker_error(error):
    """One line on stderr for a multi-worker failure (a lost peer)."""
    lines = [x.strip() for x in str(error).splitlines() if x.strip()]
    named = [x for x in lines if "job:" in x or "task" in x.lower()]
    detail = (named or lines or [""])[0][:300]
    print(
        "error: a worker of the multi-worker run failed or disappeared "
        f"({type(error).__name__}: {detail}). "
        "Start every worker again with the same command and TF_CONFIG: the "
        "run resumes from the chief's latest backup.",
        file=sys.stderr,
    )
