"""The carried-state training step of the language models.

`CarriedStateMixin` gives a functional language model whose inputs are
`[token_ids, *states]` and whose outputs are `[logits, *new_states]` a
`train_step` / `test_step` that carry the recurrent state from one window
of truncated back-propagation through time to the next, in replica-local
variables (Keras' `stateful=True` keeps state in mirrored variables that
the replicas of a `tf.distribute.MirroredStrategy` overwrite with each
other's rows). With it live the pieces of that step: gradient clipping by
the global norm of the gradients summed over replicas, per-replica dropout
streams, and reading / writing the carried state of every replica (what a
training backup saves). The batches it reads are made in
`keras_ordered.training.batching`.
"""

import keras
import numpy as np
from keras import ops

from keras_ordered import backend
from keras_ordered._keras_private import SymbolicBuildWithoutData
from keras_ordered.models.losses import token_cross_entropy

# The carried-state step is written for TensorFlow (`tf.GradientTape`,
# `tf.distribute` replica contexts): TensorFlow is imported when it runs.
tf = backend.tensorflow_on_use("training a language model (its carried-state "
                               "training step)")


class CarriedStateMixin(SymbolicBuildWithoutData):
    """`train_step` / `test_step` carrying recurrent state across windows.

    For functional language models whose inputs are `[token_ids, *states]`
    and whose outputs are `[logits, *new_states]`. The class mixing this in
    provides `state_shapes()` (a list of per-example shapes) and may
    override `split_outputs(outputs) -> (logits, new_states)`.

    Call `configure_bptt(batch_size, eval_batch_size)` (inside the
    distribution strategy's scope) before `fit`. Each replica keeps the
    states of its own rows of the batch in replica-local variables.

    Loss: mean token cross-entropy (Keras' sparse cross-entropy, or with
    `fused_token_loss = True` on the model class the XLA-compiled
    `keras_ordered.models.losses.token_cross_entropy`) plus the model's
    regularisation losses (e.g. AR/TAR); gradients clipped to a global norm
    (`clip_norm`, of the true gradients also under a loss-scaling
    optimizer) and multiplied by the window's `lr_scale` (equivalent, for
    SGD, to scaling the learning rate by `T / bptt`, as AWD-LSTM does).
    """

    clip_norm = None
    # Whether the token loss is `keras_ordered.models.losses.
    # token_cross_entropy` (XLA-compiled; equal to the plain op to float32
    # rounding) instead of Keras' sparse cross-entropy. A model class opts
    # in where its learning with it was checked (benchmarks/README.md).
    fused_token_loss = False

    def initial_state(self, batch_size):
        """The zero state (the start of a text): one float32 array
        `(batch_size, *shape)` per entry of `state_shapes()`."""
        return [np.zeros((batch_size, *shape), "float32")
                for shape in self.state_shapes()]

    def configure_bptt(self, batch_size, eval_batch_size=None, clip_norm=None):
        """Creates the carried-state variables.

        Args:
            batch_size: int, global training batch size (streams).
            eval_batch_size: int or None, global evaluation batch size.
            clip_norm: float or None, gradient global-norm clipping.
        """
        replicas = backend.replicas_in_sync()
        self.clip_norm = clip_norm

        def make(global_batch, prefix):
            if global_batch is None:
                return None
            if global_batch % replicas:
                raise ValueError(
                    f"The batch size {global_batch} must be a multiple of the "
                    f"number of replicas ({replicas})."
                )
            local = global_batch // replicas
            shapes = [(local, *shape) for shape in self.state_shapes()]
            if not backend.is_tensorflow():
                # JAX and PyTorch: plain non-trainable variables holding the
                # whole batch (a batch sharded over devices by
                # `keras.distribution` is one array).
                return [
                    keras.Variable(np.zeros(shape, "float32"),
                                   trainable=False, dtype="float32",
                                   name=f"{prefix}_state_{i}")
                    for i, shape in enumerate(shapes)
                ]
            return [
                tf.Variable(
                    tf.zeros(shape, dtype="float32"),
                    trainable=False,
                    synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                    name=f"{prefix}_state_{i}",
                )
                for i, shape in enumerate(shapes)
            ]

        # A plain holder keeps these out of the model's weights (they are
        # training state, not parameters, and never saved with the model).
        self._bptt = _Holder(
            train=make(batch_size, "train"), eval=make(eval_batch_size, "eval")
        )
        if getattr(self, "_token_loss_tracker", None) is None:
            self._token_loss_tracker = keras.metrics.Mean(name="loss")

    def split_outputs(self, outputs):
        return outputs[0], list(outputs[1:])

    def _carried_variables(self, kind):
        holder = getattr(self, "_bptt", None)
        variables = getattr(holder, kind, None) if holder else None
        if variables is None:
            raise ValueError(
                f"Call `model.configure_bptt(...)` with a {kind} batch size "
                "before `fit` / `evaluate`: the model carries its recurrent "
                "state from one window to the next in variables of that size."
            )
        return variables

    @staticmethod
    def _reset(values, reset):
        """`values` with the rows whose `reset` is 1 set to zero."""
        keep = 1.0 - ops.reshape(ops.cast(reset, "float32"), (-1, 1))
        return [
            ops.reshape(keep, (-1,) + (1,) * (len(v.shape) - 1)) * v
            for v in values
        ]

    def _carried(self, kind, reset):
        variables = self._carried_variables(kind)
        return variables, self._reset(variables, reset)

    @property
    def non_trainable_variables(self):
        # On JAX the training step is a pure function of the model's state:
        # the carried state travels in it as non-trainable variables (after
        # the model's own, so that saving, which reads each layer's own
        # variables, never sees them).
        variables = super().non_trainable_variables
        holder = getattr(self, "_bptt", None)
        if holder is None or backend.name() != "jax":
            return variables
        return variables + [v for kind in ("train", "eval")
                            for v in (getattr(holder, kind) or [])]

    def _token_loss_sum(self, targets, logits, mask=None):
        """Summed token cross-entropy of a batch (over `mask` if given)."""
        if self.fused_token_loss:
            loss = token_cross_entropy(targets, logits)
        else:
            loss = keras.losses.sparse_categorical_crossentropy(
                targets, ops.cast(logits, "float32"), from_logits=True
            )
        if mask is None:
            return ops.sum(loss)
        return ops.sum(loss * ops.cast(mask, "float32"))

    def _token_count(self, x, y):
        """Number of predicted tokens of a batch (the 1s of `loss_mask`)."""
        if x.get("loss_mask") is not None:
            return ops.sum(ops.cast(x["loss_mask"], "float32"))
        return ops.cast(ops.size(y), "float32")

    def _token_loss(self, targets, logits, mask=None):
        """Mean token cross-entropy of a batch (over `mask` if given)."""
        total = self._token_loss_sum(targets, logits, mask)
        if mask is None:
            count = ops.cast(ops.size(targets), "float32")
        else:
            count = ops.sum(ops.cast(mask, "float32"))
        return total / ops.maximum(count, 1.0)

    def _window_loss(self, x, y, outputs, losses, total_count, replicas=1):
        """The loss to differentiate, the summed token loss, the new states.

        The loss is this replica's share of the mean over the *global*
        batch: its summed cross-entropy over all replicas' tokens (the
        gradients the optimizer sums over replicas are then those of the
        global mean, also when the replicas hold different numbers of
        tokens under a `loss_mask`); the regularisation `losses` are means
        over this replica's equal share of the batch.
        """
        logits, new_states = self.split_outputs(outputs)
        local_sum = self._token_loss_sum(y, logits, x.get("loss_mask"))
        loss = local_sum / ops.maximum(total_count, 1.0)
        if losses:
            loss = loss + ops.sum(ops.stack(losses)) / replicas
        return loss, local_sum, new_states

    def train_step(self, *args):
        """One window: forward, loss, clipped gradients, update, new state.

        Keras calls it as `train_step(data)` on TensorFlow and PyTorch and
        as `train_step(state, data)` (a pure function, for `jax.jit`) on
        JAX; each backend has its own way to take gradients, and the rest
        (loss, clipping, window scaling, metrics) is shared.
        """
        name = backend.name()
        if name == "jax":
            return self._jax_train_step(*args)
        if name == "torch":
            return self._torch_train_step(*args)
        return self._tf_train_step(*args)

    def _tf_train_step(self, data):
        x, y = data
        variables, states = self._carried("train", x["reset"])
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        (total_count,) = _sum_over_replicas(
            [self._token_count(x, y)], replicas
        )
        generators = seed_generators(self) if replicas > 1 else []
        # Each replica draws its own dropout masks (see offset_seeds).
        offset_seeds(generators, 1)
        with tf.GradientTape() as tape:
            outputs = self([x["token_ids"], *states], training=True)
            loss, local_sum, new_states = self._window_loss(
                x, y, outputs, self.losses, total_count, replicas
            )
            scaled = loss
            if self.optimizer is not None:
                scaled = self.optimizer.scale_loss(scaled)
        offset_seeds(generators, -1)
        weights = self.trainable_weights
        grads = tape.gradient(scaled, weights)
        if self.clip_norm:
            grads = clip_by_global_norm_across_replicas(
                grads, self.clip_norm * self._loss_scale(), replicas
            )
        lr_scale = ops.mean(x["lr_scale"])
        grads = [_scale_gradient(g, lr_scale) for g in grads]
        self.optimizer.apply_gradients(zip(grads, weights))
        for variable, state in zip(variables, new_states):
            variable.assign(ops.cast(state, "float32"))
        (total_sum,) = _sum_over_replicas([local_sum], replicas)
        token_loss = total_sum / ops.maximum(total_count, 1.0)
        return self._update_metrics(token_loss, total_count)

    def _torch_train_step(self, data):
        import torch  # the PyTorch step: gradients by `backward()`

        x, y = data
        variables, states = self._carried("train", x["reset"])
        total_count = self._token_count(x, y)
        self.zero_grad()
        outputs = self([x["token_ids"], *states], training=True)
        loss, local_sum, new_states = self._window_loss(
            x, y, outputs, self.losses, total_count
        )
        if self.optimizer is not None:
            loss = self.optimizer.scale_loss(loss)
        weights = self.trainable_weights
        loss.backward()
        grads = [w.value.grad for w in weights]
        with torch.no_grad():
            grads = self._clip_and_scale(grads, x["lr_scale"],
                                         self._loss_scale())
            self.optimizer.apply(grads, weights)
            for variable, state in zip(variables, new_states):
                variable.assign(ops.cast(state, "float32"))
            token_loss = local_sum / ops.maximum(total_count, 1.0)
            return self._update_metrics(token_loss, total_count)

    def _jax_train_step(self, state, data):
        import jax  # the JAX step: `jax.value_and_grad` of a pure function

        trainable, non_trainable, optimizer_variables, metric_variables = state
        x, y = data
        where = self._carried_positions("train")
        states = self._reset([non_trainable[i] for i in where], x["reset"])
        total_count = self._token_count(x, y)
        optimizer_state = list(zip(self.optimizer.variables,
                                   optimizer_variables))

        def scaled_loss(trainable, non_trainable):
            outputs, non_trainable, losses = self.stateless_call(
                trainable, non_trainable, [x["token_ids"], *states],
                training=True, return_losses=True,
            )
            loss, local_sum, new_states = self._window_loss(
                x, y, outputs, losses, total_count
            )
            with keras.StatelessScope(state_mapping=optimizer_state):
                loss = self.optimizer.scale_loss(loss)
                loss_scale = self._loss_scale()
            return loss, (local_sum, new_states, non_trainable, loss_scale)

        (_, aux), grads = jax.value_and_grad(scaled_loss, has_aux=True)(
            trainable, non_trainable
        )
        local_sum, new_states, non_trainable, loss_scale = aux
        grads = self._clip_and_scale(grads, x["lr_scale"], loss_scale)
        trainable, optimizer_variables = self.optimizer.stateless_apply(
            optimizer_variables, grads, trainable
        )
        non_trainable = self._with_states(non_trainable, where, new_states)
        token_loss = local_sum / ops.maximum(total_count, 1.0)
        logs, metric_variables = self._stateless_metrics(
            metric_variables, token_loss, total_count
        )
        return logs, (trainable, non_trainable, optimizer_variables,
                      metric_variables)

    def _clip_and_scale(self, grads, lr_scale, loss_scale):
        """Clips `grads` to `clip_norm` (of the true gradients under loss
        scaling) and multiplies them by the window's `lr_scale`."""
        if self.clip_norm:
            grads = clip_by_global_norm(grads, self.clip_norm * loss_scale)
        factor = ops.mean(lr_scale)
        return [None if g is None else g * ops.cast(factor, g.dtype)
                for g in grads]

    def _carried_positions(self, kind):
        """Where the `kind` carried states are in `non_trainable_variables`
        (JAX's pure step reads and returns them there)."""
        ids = [id(v) for v in self.non_trainable_variables]
        return [ids.index(id(v)) for v in self._carried_variables(kind)]

    @staticmethod
    def _with_states(non_trainable, where, new_states):
        """JAX's non-trainable state with the carried states at `where`
        replaced by `new_states` (float32, no gradient through them)."""
        non_trainable = list(non_trainable)
        for i, new in zip(where, new_states):
            non_trainable[i] = ops.cast(ops.stop_gradient(new), "float32")
        return non_trainable

    def _stateless_metrics(self, metric_variables, token_loss, tokens):
        tracker = self._token_loss_tracker
        metric_variables = tracker.stateless_update_state(
            metric_variables, token_loss,
            sample_weight=ops.cast(tokens, "float32"),
        )
        value = tracker.stateless_result(metric_variables)
        return {"loss": value, "perplexity": ops.exp(value)}, metric_variables

    def _loss_scale(self):
        """The factor the optimizer multiplied the loss by (1 without one).

        Under `mixed_float16` Keras wraps the optimizer in a
        `LossScaleOptimizer`, which divides the gradients by its loss scale
        only when it applies them: clipping the still-scaled gradients at
        `clip_norm * scale` is clipping the true gradients at `clip_norm`
        (non-finite gradients stay non-finite, so the optimizer still skips
        that step and lowers its scale).
        """
        optimizer = self.optimizer
        if optimizer is None or not hasattr(optimizer, "dynamic_scale"):
            return 1.0
        scale = optimizer.dynamic_scale if optimizer.built else (
            optimizer.initial_scale
        )
        return ops.cast(scale, "float32")

    def test_step(self, *args):
        if backend.name() == "jax":
            return self._jax_test_step(*args)
        (data,) = args
        x, y = data
        variables, states = self._carried("eval", x["reset"])
        outputs = self([x["token_ids"], *states], training=False)
        logits, new_states = self.split_outputs(outputs)
        local_sum = self._token_loss_sum(y, logits, x.get("loss_mask"))
        replicas = backend.replicas_in_sync()
        total_sum, total_count = _sum_over_replicas(
            [local_sum, self._token_count(x, y)], replicas
        )
        for variable, state in zip(variables, new_states):
            variable.assign(ops.cast(state, "float32"))
        token_loss = total_sum / ops.maximum(total_count, 1.0)
        return self._update_metrics(token_loss, total_count)

    def _jax_test_step(self, state, data):
        trainable, non_trainable, metric_variables = state
        x, y = data
        where = self._carried_positions("eval")
        states = self._reset([non_trainable[i] for i in where], x["reset"])
        outputs, non_trainable = self.stateless_call(
            trainable, non_trainable, [x["token_ids"], *states],
            training=False,
        )
        logits, new_states = self.split_outputs(outputs)
        local_sum = self._token_loss_sum(y, logits, x.get("loss_mask"))
        total_count = self._token_count(x, y)
        non_trainable = self._with_states(non_trainable, where, new_states)
        token_loss = local_sum / ops.maximum(total_count, 1.0)
        logs, metric_variables = self._stateless_metrics(
            metric_variables, token_loss, total_count
        )
        return logs, (trainable, non_trainable, metric_variables)

    def _update_metrics(self, token_loss, tokens):
        # Token-weighted running mean of the cross-entropy: over an epoch it
        # is the corpus loss, and `perplexity = exp(loss)`.
        tokens = ops.cast(tokens, "float32")
        tracker = self._token_loss_tracker
        tracker.update_state(token_loss, sample_weight=tokens)
        value = tracker.result()
        return {"loss": value, "perplexity": ops.exp(value)}

    @property
    def metrics(self):
        tracker = getattr(self, "_token_loss_tracker", None)
        return [tracker] if tracker is not None else []


def _sum_over_replicas(values, replicas):
    """`values` summed over the replicas (themselves with one replica)."""
    if replicas == 1:
        return values
    context = tf.distribute.get_replica_context()
    if context is None:  # cross-replica context: nothing to sum
        return values
    return context.all_reduce(tf.distribute.ReduceOp.SUM, values)


def _scale_gradient(gradient, factor):
    """`gradient * factor`, keeping an `IndexedSlices` gradient sparse."""
    if gradient is None:
        return None
    if isinstance(gradient, tf.IndexedSlices):
        return tf.IndexedSlices(
            gradient.values * tf.cast(factor, gradient.values.dtype),
            gradient.indices,
            gradient.dense_shape,
        )
    return gradient * ops.cast(factor, gradient.dtype)


def clip_by_global_norm(gradients, clip_norm):
    """`tf.clip_by_global_norm`'s arithmetic in `keras.ops` (any backend).

    The gradients are multiplied by `clip_norm * min(1 / norm, 1 /
    clip_norm)`, `norm` being the global norm of all of them; a non-finite
    norm makes every gradient non-finite (a loss-scaling optimizer then
    skips the step).

    Args:
        gradients: list of tensors or None.
        clip_norm: float or scalar tensor, the largest global norm.

    Returns:
        The list of clipped gradients (None stays None).

    Example:

    ```python
    keras_ordered.models.carried_state.clip_by_global_norm(
        [keras.ops.convert_to_tensor([3.0, 4.0])], 1.0
    )  # [[0.6, 0.8]]
    ```
    """
    present = [g for g in gradients if g is not None]
    half_squares = [ops.sum(ops.square(ops.cast(g, "float32"))) / 2.0
                    for g in present]
    norm = ops.sqrt(ops.sum(ops.stack(half_squares)) * 2.0)
    clip_norm = ops.cast(clip_norm, norm.dtype)
    factor = clip_norm * ops.minimum(1.0 / norm, 1.0 / clip_norm)
    factor = factor + (norm - norm)
    return [None if g is None else g * ops.cast(factor, g.dtype)
            for g in gradients]


def clip_by_global_norm_across_replicas(gradients, clip_norm, replicas=None):
    """Clips this replica's gradients by the global norm of their *sum*.

    Under `tf.distribute` each replica holds the gradients of its share of
    the batch and the optimizer sums them over the replicas when it applies
    them. `tf.clip_by_global_norm` (and the optimizers' `global_clipnorm`)
    in a `train_step` would clip each replica's part by its own norm, which
    is not clipping the gradient of the global batch: with 2 replicas a
    tiny ON-LSTM ended 3 clipped SGD steps 0.013 away from the 1-replica
    weights. Here the gradients are summed over the replicas first (one
    extra all-reduce, only with several replicas), the clipping factor
    `clip_norm / max(norm, clip_norm)` is taken from the norm of that sum,
    and each replica's part is multiplied by it, so that the optimizer's sum
    is the clipped global gradient. With one replica this is
    `tf.clip_by_global_norm`. `IndexedSlices` gradients (an embedding's
    sparse path) stay sparse.

    Args:
        gradients: list of tensors, `IndexedSlices` or None, this replica's.
        clip_norm: float or scalar tensor, the largest global norm.
        replicas: int or None, replicas in sync (None: the current
            strategy's).

    Returns:
        The list of clipped gradients (None stays None).

    Example:

    ```python
    import tensorflow as tf

    grads = [tf.constant([3.0, 4.0])]
    clipped = keras_ordered.models.carried_state.clip_by_global_norm_across_replicas(
        grads, 1.0
    )  # [[0.6, 0.8]]
    ```
    """
    if replicas is None:
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas == 1 or tf.distribute.get_replica_context() is None:
        clipped, _ = tf.clip_by_global_norm(gradients, clip_norm)
        return clipped
    present = [g for g in gradients if g is not None]
    summed = tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.SUM, present
    )
    norm = tf.linalg.global_norm(summed)
    clip_norm = tf.cast(clip_norm, norm.dtype)
    # As tf.clip_by_global_norm: a non-finite norm gives non-finite
    # gradients (a loss-scaling optimizer then skips the step).
    factor = clip_norm / tf.maximum(norm, clip_norm)
    return [_scale_gradient(g, factor) for g in gradients]


def seed_generators(model):
    """Every `keras.random.SeedGenerator` of the layers of `model`."""
    found, seen = [], set()
    for layer in model._flatten_layers(include_self=True):
        for generator in getattr(layer, "_seed_generators", ()):
            if id(generator) not in seen:
                seen.add(id(generator))
                found.append(generator)
    return found


def offset_seeds(generators, sign):
    """Shifts the seeds of `generators` by this replica's id (`sign` +1),
    or back (`sign` -1).

    Keras layers draw their dropout masks from a `SeedGenerator` whose state
    is a mirrored variable: every replica of a `tf.distribute` strategy
    would draw the same masks for its rows (measured: 2 replicas, identical
    `Dropout` masks), where one device draws independent masks for all rows.
    Between `offset_seeds(g, 1)` and `offset_seeds(g, -1)` replica `r`'s
    copy of each seed is shifted by `r * 1000003` (its own random stream);
    the shift is taken back afterwards, so that the copies agree again (the
    draws advanced each by the same count). Outside a replica context, or
    with replica 0, nothing changes.

    Args:
        generators: list of `keras.random.SeedGenerator` (`seed_generators`).
        sign: +1 to shift, -1 to shift back.
    """
    context = tf.distribute.get_replica_context()
    if not generators or context is None or context.num_replicas_in_sync == 1:
        return
    for generator in generators:
        state = generator.state
        replica = tf.cast(context.replica_id_in_sync_group, state.dtype)
        shift = tf.stack([replica * sign * 1000003, tf.zeros_like(replica)])
        state.assign(state.value + shift)


def carried_state(model, kind="train"):
    """The carried recurrent state of all replicas, as global numpy arrays.

    Each replica keeps the rows of its share of the batch (its streams) in
    replica-local variables; reading such a variable outside a replica
    gives the first replica's rows only. This gathers every replica's rows
    (of every worker, under `MultiWorkerMirroredStrategy`: a collective that
    all workers must call) in batch order, the order in which the strategy
    splits a global batch, so that the result is what one replica carrying
    the whole batch would hold.

    Args:
        model: a model with `configure_bptt` called.
        kind: `"train"` or `"eval"`.

    Returns:
        list of float32 arrays `(global_batch, *state_shape)`, or None when
        the model has no state of that kind.

    Example:

    ```python
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", ["<eos>", "<unk>", "a"]
    )
    model.configure_bptt(batch_size=4)
    states = keras_ordered.models.carried_state.carried_state(model)  # (4, ...) each
    keras_ordered.models.carried_state.set_carried_state(model, states)
    ```
    """
    variables = _state_variables(model, kind)
    if variables is None:
        return None
    if not backend.is_tensorflow():
        _sync_jax_state(model)
        return [np.array(ops.convert_to_numpy(v), "float32") for v in variables]
    strategy = model.distribute_strategy
    if strategy.num_replicas_in_sync == 1:
        return [np.asarray(v.numpy()) for v in variables]
    holder = model._bptt
    cache = holder.__dict__.setdefault("_gather", {})
    if kind not in cache:
        # One traced function per state kind (eager `strategy.run` is slow
        # and would retrace the gather at every backup).
        @tf.function
        def gather():
            local = strategy.run(lambda: [tf.identity(v) for v in variables])
            return [strategy.gather(part, axis=0) for part in local]

        cache[kind] = gather
    return [np.asarray(state) for state in cache[kind]()]


def set_carried_state(model, arrays, kind="train"):
    """Loads global carried-state arrays (as `carried_state` returns them).

    Each replica takes its own rows, so that a state saved with any number
    of replicas resumes with any other that divides the batch.

    Args:
        model: a model with `configure_bptt` called.
        arrays: list of arrays `(global_batch, *state_shape)`.
        kind: `"train"` or `"eval"`.
    """
    variables = _state_variables(model, kind)
    if variables is None:
        return
    if not backend.is_tensorflow():
        _sync_jax_state(model)
        for variable, array in zip(variables, arrays):
            if tuple(np.shape(array)) != tuple(variable.shape):
                raise ValueError(
                    f"A carried state of shape {np.shape(array)} does not "
                    f"fit the model's {tuple(variable.shape)}: resume with "
                    "the batch size it was saved with."
                )
            variable.assign(np.asarray(array, "float32"))
        return
    strategy = model.distribute_strategy
    if strategy.num_replicas_in_sync == 1:
        for variable, array in zip(variables, arrays):
            variable.assign(array)
        return
    tensors = [tf.constant(np.asarray(a, "float32")) for a in arrays]
    for variable, array in zip(variables, tensors):
        if array.shape[0] != variable.shape[0] * strategy.num_replicas_in_sync:
            raise ValueError(
                f"A carried state of {array.shape[0]} rows cannot be split "
                f"over {strategy.num_replicas_in_sync} replicas of "
                f"{variable.shape[0]} rows each: resume with the batch size "
                "it was saved with."
            )

    def assign_rows():
        context = tf.distribute.get_replica_context()
        replica = context.replica_id_in_sync_group
        for variable, array in zip(variables, tensors):
            rows = variable.shape[0]
            variable.assign(array[replica * rows : (replica + 1) * rows])

    strategy.run(assign_rows)


def _sync_jax_state(model):
    """Inside JAX's `fit` the variables hold no values between steps
    (the step's state lives in the trainer): put them back first."""
    sync = getattr(model, "jax_state_sync", None)
    if backend.name() == "jax" and sync is not None:
        sync()


def _state_variables(model, kind):
    holder = getattr(model, "_bptt", None)
    return getattr(holder, kind, None) if holder is not None else None


class _Holder:
    """Attribute bag that Keras does not track (no weights of the model)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
