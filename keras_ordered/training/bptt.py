"""Truncated back-propagation through time with explicitly carried state.

The corpus (one long stream of token ids) is cut into `batch_size`
contiguous streams; each training step reads the next window of every
stream, and the recurrent state reached at the end of a window is the
initial state of the next one. That state is carried *explicitly*: the
models take it as inputs and return it as outputs, and
`CarriedStateMixin.train_step` keeps it in replica-local variables between
steps. (Keras' `stateful=True` keeps it in mirrored variables that the
replicas of a `tf.distribute.MirroredStrategy` overwrite with each other's
rows; with replica-local variables each replica keeps the rows of the
streams it always receives.)
"""

import math

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from keras_ordered.training.losses import token_cross_entropy


def batchify(ids, batch_size):
    """Cuts a 1-D id stream into `batch_size` contiguous streams.

    Args:
        ids: 1-D int array.
        batch_size: int.

    Returns:
        int32 array `(batch_size, len(ids) // batch_size)`; the remainder
        tokens are dropped, as in the reference code.
    """
    ids = np.asarray(ids, dtype="int32")
    if ids.ndim != 1:
        raise ValueError(f"`ids` must be 1-D. Received shape {ids.shape}")
    steps = len(ids) // batch_size
    if steps < 2:
        raise ValueError(
            f"A stream of {len(ids)} tokens is too short for batch_size="
            f"{batch_size}: each of the streams needs at least 2 tokens."
        )
    return ids[: steps * batch_size].reshape(batch_size, steps)


def awd_window_lengths(num_tokens, bptt, rng, variable=True, p_full=0.95,
                       stddev=5.0, min_length=5):
    """Window lengths covering a stream of `num_tokens` (inputs + 1 target).

    With `variable=True`, the AWD-LSTM schedule: a base length of `bptt`
    with probability `p_full`, else `bptt / 2`, then a draw from
    `N(base, stddev)`, at least `min_length`. The number of windows per
    epoch is kept constant (`round((num_tokens - 1) / E[length])`, so that
    `model.fit` sees a fixed number of steps) and the drawn lengths are
    rescaled by the same factor (typically within 1 %) so that together they
    cover every token exactly once.

    Returns:
        list of int window lengths summing to `num_tokens - 1`.
    """
    total = num_tokens - 1
    if not variable:
        lengths = [bptt] * (total // bptt)
        if total % bptt:
            lengths.append(total % bptt)
        return lengths
    expected = p_full * bptt + (1 - p_full) * bptt / 2
    count = max(1, int(round(total / expected)))
    base = np.where(rng.random(count) < p_full, bptt, bptt / 2)
    drawn = np.maximum(min_length, rng.normal(base, stddev).astype(int))
    # Rescale so that the windows tile the stream exactly: round the
    # cumulative boundaries (not each length, whose rounding errors would
    # pile up on the last window).
    boundaries = np.round(np.cumsum(drawn) * (total / drawn.sum())).astype(int)
    scaled = np.diff(np.concatenate([[0], boundaries]))
    if scaled.min() < 1:
        raise ValueError(
            f"A stream of {num_tokens} tokens is too short for {count} windows."
        )
    return [int(n) for n in scaled]


def _with_options(dataset):
    """The options of every window dataset.

    A generator-backed dataset has no graph definition, so tf.data's static
    optimisations and `MirroredStrategy`'s auto-sharding rewrite cannot
    apply to it (each printed a warning before every evaluation). Neither
    is wanted: the windows are already whole global batches in order, which
    the strategy splits across its replicas.
    """
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.OFF
    )
    options.experimental_optimization.apply_default_optimizations = False
    return dataset.with_options(options)


def owned_arrays(window):
    """`window` (a structure of numpy arrays) with every array a copy.

    A `tf.data` generator may hand its numpy arrays to TensorFlow without
    copying them, and TensorFlow may then write an op's result into an
    input's buffer that it believes no other tensor holds. Two components
    backed by one array (a sentence batch's `reset` and `lr_scale` were
    the same column of ones), or a component that is a view of the corpus
    (a window of the token streams), would then be overwritten behind the
    model's back: under 2 replicas that made `lr_scale` 0 on one replica in
    about one run of three (its gradients lost for that step). Each array
    yielded is a fresh copy, owned by that batch alone.

    Args:
        window: a nested structure of numpy arrays (an `(x, y)` batch).

    Returns:
        The same structure, each array copied.
    """
    return tf.nest.map_structure(np.array, window)


class _Batches:
    """What the batch sources share: `tf.data` datasets of `windows()`."""

    batch_size = None

    def windows(self, epoch, start_batch=0):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def _signature(self):
        return (
            {
                "token_ids": tf.TensorSpec((self.batch_size, None), tf.int32),
                "reset": tf.TensorSpec((self.batch_size, 1), tf.float32),
                "lr_scale": tf.TensorSpec((self.batch_size, 1), tf.float32),
                "loss_mask": tf.TensorSpec((self.batch_size, None), tf.float32),
            },
            tf.TensorSpec((self.batch_size, None), tf.int32),
        )

    def steps(self, steps_per_epoch=None):
        """Windows per epoch, optionally capped at `steps_per_epoch`."""
        if steps_per_epoch:
            return min(len(self), int(steps_per_epoch))
        return len(self)

    def dataset(self, epoch=0, start_batch=0, steps_per_epoch=None):
        """The windows of one epoch, from `start_batch`, as a finite dataset.

        Args:
            epoch: int, the epoch whose window layout to use.
            start_batch: int, first window (a resumed partial epoch).
            steps_per_epoch: int or None, cap on the windows of the epoch.
        """
        end = self.steps(steps_per_epoch)
        if not 0 <= start_batch <= end:
            raise ValueError(f"`start_batch` must be in [0, {end}].")

        def generate():
            for i, window in enumerate(self.windows(epoch, start_batch)):
                if start_batch + i >= end:
                    return
                yield owned_arrays(window)

        ds = tf.data.Dataset.from_generator(
            generate, output_signature=self._signature()
        )
        ds = ds.apply(tf.data.experimental.assert_cardinality(end - start_batch))
        return _with_options(ds.prefetch(2))

    def stream(self, start_epoch=0, steps_per_epoch=None):
        """Epochs `start_epoch, start_epoch + 1, ...` back to back, endless.

        For `model.fit(stream, steps_per_epoch=batches.steps(...),
        initial_epoch=start_epoch)`: Keras keeps one iterator over all
        epochs, so epoch `e` is exactly the window layout of epoch `e`
        (which a resumed run relies on), whatever Keras prefetches.
        """
        end = self.steps(steps_per_epoch)

        def generate():
            epoch = start_epoch
            while True:
                for i, window in enumerate(self.windows(epoch)):
                    if i >= end:
                        break
                    yield owned_arrays(window)
                epoch += 1

        ds = tf.data.Dataset.from_generator(
            generate, output_signature=self._signature()
        )
        return _with_options(ds.prefetch(2))


class BPTTBatches(_Batches):
    """Windows of a token stream for truncated BPTT, as a `tf.data` dataset.

    Each element is `(x, y)` with `x = {"token_ids": (batch, T),
    "reset": (batch, 1), "lr_scale": (batch, 1)}` and `y` the next tokens
    `(batch, T)`. `reset` is 1 on the first window of a pass over the data
    (the carried state restarts from zero), `lr_scale = T / bptt` (the
    AWD-LSTM learning-rate scaling of variable-length windows).

    The window layout of epoch `e` depends only on `(seed, e)`, so that a
    resumed run sees exactly the windows it would have seen.

    Args:
        ids: 1-D array of token ids.
        batch_size: int, number of contiguous streams.
        bptt: int, base window length.
        variable_length: bool, AWD-LSTM random window lengths.
        seed: int.

    Example:

    ```python
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    train_ids = np.random.default_rng(0).integers(0, 32, 5000).astype("int32")
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary
    )
    model.configure_bptt(batch_size=20, clip_norm=0.25)
    model.compile(optimizer=keras.optimizers.SGD(30.0))
    batches = keras_ordered.training.BPTTBatches(train_ids, 20, 70)
    # One iterator over all epochs, each with its own window lengths.
    model.fit(batches.stream(), steps_per_epoch=batches.steps(), epochs=2,
              shuffle=False)
    ```
    """

    def __init__(self, ids, batch_size, bptt, variable_length=True, seed=0):
        if bptt < 1:
            raise ValueError(f"`bptt` must be >= 1. Received: bptt={bptt}")
        self.streams = batchify(ids, batch_size)
        self.batch_size = batch_size
        self.bptt = bptt
        self.variable_length = variable_length
        self.seed = seed

    def window_lengths(self, epoch):
        rng = np.random.default_rng([self.seed, epoch])
        return awd_window_lengths(
            self.streams.shape[1], self.bptt, rng, self.variable_length
        )

    def __len__(self):
        return len(self.window_lengths(0))

    def windows(self, epoch, start_batch=0):
        """Yields the `(x, y)` numpy batches of an epoch from `start_batch`."""
        offsets = np.cumsum([0] + self.window_lengths(epoch))
        for i in range(start_batch, len(offsets) - 1):
            a, b = offsets[i], offsets[i + 1]
            x = self.streams[:, a:b]
            y = self.streams[:, a + 1 : b + 1]
            column = np.ones((self.batch_size, 1), dtype="float32")
            yield (
                {
                    "token_ids": x,
                    "reset": column * float(i == 0),
                    "lr_scale": column * float((b - a) / self.bptt),
                    "loss_mask": np.ones(x.shape, dtype="float32"),
                },
                y,
            )

class SentenceBatches(_Batches):
    """Whole sentences, each read from a zero state (sentence-level training).

    The stream is cut after every `<eos>`; each epoch shuffles the sentences
    (seeded by `(seed, epoch)`) and groups them `batch_size` at a time, each
    batch padded to its longest sentence. A sentence `w_1 .. w_n` is read as
    `<eos> w_1 .. w_n` and predicts `w_1 .. w_n <eos>`; `loss_mask` is 0 on
    the padding; `reset` is 1 on every batch (zero state). The last
    incomplete batch of an epoch is dropped (fixed batch shapes).

    Args:
        ids: 1-D array of token ids with `eos_id` after each sentence.
        batch_size: int.
        eos_id: int, the id of `<eos>`.
        shuffle: bool, shuffle the sentences every epoch (False: the order
            of `ids`, as the official unsupervised-parsing setup trains).
        seed: int.
        bos_id: int or None, the id of a start symbol (`<s>`) each sentence
            is read after; None reads `<eos>` there.
    """

    def __init__(self, ids, batch_size, eos_id=0, shuffle=True, seed=0,
                 bos_id=None):
        ids = np.asarray(ids, dtype="int32")
        ends = np.flatnonzero(ids == eos_id)
        starts = np.concatenate([[0], ends[:-1] + 1])
        self.sentences = [ids[a:b] for a, b in zip(starts, ends) if b > a]
        if len(self.sentences) < batch_size:
            raise ValueError(
                f"{len(self.sentences)} sentences are fewer than one batch "
                f"of {batch_size}."
            )
        self.batch_size = batch_size
        self.eos_id = int(eos_id)
        self.bos_id = self.eos_id if bos_id is None else int(bos_id)
        self.shuffle = shuffle
        self.seed = seed

    def __len__(self):
        return len(self.sentences) // self.batch_size

    def windows(self, epoch, start_batch=0):
        order = np.arange(len(self.sentences))
        if self.shuffle:
            np.random.default_rng([self.seed, epoch]).shuffle(order)
        column = np.ones((self.batch_size, 1), dtype="float32")
        for i in range(start_batch, len(self)):
            chosen = [self.sentences[k] for k in order[i * self.batch_size :][
                : self.batch_size]]
            width = max(len(sentence) for sentence in chosen) + 1
            x = np.full((self.batch_size, width), self.eos_id, "int32")
            x[:, 0] = self.bos_id
            y = np.full((self.batch_size, width), self.eos_id, "int32")
            mask = np.zeros((self.batch_size, width), "float32")
            for row, sentence in enumerate(chosen):
                x[row, 1 : len(sentence) + 1] = sentence
                y[row, : len(sentence)] = sentence
                mask[row, : len(sentence) + 1] = 1.0
            yield (
                {"token_ids": x, "reset": column, "lr_scale": column,
                 "loss_mask": mask},
                y,
            )


class CarriedStateMixin:
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
    `keras_ordered.training.losses.token_cross_entropy`) plus the model's
    regularisation losses (e.g. AR/TAR); gradients clipped to a global norm
    (`clip_norm`, of the true gradients also under a loss-scaling
    optimizer) and multiplied by the window's `lr_scale` (equivalent, for
    SGD, to scaling the learning rate by `T / bptt`, as AWD-LSTM does).
    """

    clip_norm = None
    # Whether the token loss is `keras_ordered.training.losses.
    # token_cross_entropy` (XLA-compiled; equal to the plain op to float32
    # rounding) instead of Keras' sparse cross-entropy. A model class opts
    # in where its learning with it was checked (benchmarks/README.md).
    fused_token_loss = False

    def configure_bptt(self, batch_size, eval_batch_size=None, clip_norm=None):
        """Creates the carried-state variables.

        Args:
            batch_size: int, global training batch size (streams).
            eval_batch_size: int or None, global evaluation batch size.
            clip_norm: float or None, gradient global-norm clipping.
        """
        strategy = tf.distribute.get_strategy()
        replicas = strategy.num_replicas_in_sync
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
            return [
                tf.Variable(
                    tf.zeros((local, *shape), dtype="float32"),
                    trainable=False,
                    synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                    name=f"{prefix}_state_{i}",
                )
                for i, shape in enumerate(self.state_shapes())
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

    def _carried(self, kind, reset):
        holder = getattr(self, "_bptt", None)
        variables = getattr(holder, kind, None) if holder else None
        if variables is None:
            raise ValueError(
                f"Call `model.configure_bptt(...)` with a {kind} batch size "
                "before `fit` / `evaluate`: the model carries its recurrent "
                "state from one window to the next in variables of that size."
            )
        keep = 1.0 - ops.reshape(ops.cast(reset, "float32"), (-1, 1))
        states = [
            ops.reshape(keep, (-1,) + (1,) * (len(v.shape) - 1)) * v
            for v in variables
        ]
        return variables, states

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

    def train_step(self, data):
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
            logits, new_states = self.split_outputs(outputs)
            local_sum = self._token_loss_sum(y, logits, x.get("loss_mask"))
            # This replica's share of the mean over the *global* batch: its
            # summed cross-entropy over all replicas' tokens (the gradients
            # the optimizer sums over replicas are then those of the global
            # mean, also when the replicas hold different numbers of tokens
            # under a `loss_mask`); the regularisation losses are means
            # over this replica's equal share of the batch.
            loss = local_sum / ops.maximum(total_count, 1.0)
            if self.losses:
                loss = loss + ops.sum(self.losses) / replicas
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

    def test_step(self, data):
        x, y = data
        variables, states = self._carried("eval", x["reset"])
        outputs = self([x["token_ids"], *states], training=False)
        logits, new_states = self.split_outputs(outputs)
        local_sum = self._token_loss_sum(y, logits, x.get("loss_mask"))
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        total_sum, total_count = _sum_over_replicas(
            [local_sum, self._token_count(x, y)], replicas
        )
        for variable, state in zip(variables, new_states):
            variable.assign(ops.cast(state, "float32"))
        token_loss = total_sum / ops.maximum(total_count, 1.0)
        return self._update_metrics(token_loss, total_count)

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
    clipped = keras_ordered.training.bptt.clip_by_global_norm_across_replicas(
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
    states = keras_ordered.training.bptt.carried_state(model)  # (4, ...) each
    keras_ordered.training.bptt.set_carried_state(model, states)
    ```
    """
    variables = _state_variables(model, kind)
    if variables is None:
        return None
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


def _state_variables(model, kind):
    holder = getattr(model, "_bptt", None)
    return getattr(holder, kind, None) if holder is not None else None


class _Holder:
    """Attribute bag that Keras does not track (no weights of the model)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


def epoch_steps(dataset):
    """Number of steps of a finite dataset (its cardinality)."""
    n = int(dataset.cardinality())
    return n if n >= 0 else None


def perplexity(loss):
    """`exp(loss)`, capped to stay finite for very bad models."""
    return float(math.exp(min(loss, 50.0)))
