"""Truncated back-propagation through time with explicitly carried state.

The corpus (one long stream of token ids) is cut into `batch_size`
contiguous streams; each training step reads the next window of every
stream, and the recurrent state reached at the end of a window is the
initial state of the next one. That state is carried *explicitly*: the
models take it as inputs and return it as outputs, and
`CarriedStateMixin.train_step` (`keras_ordered.models.carried_state`)
keeps it in replica-local variables between steps; this module makes the
batches it reads. (Keras' `stateful=True` keeps it in mirrored variables that the
replicas of a `tf.distribute.MirroredStrategy` overwrite with each other's
rows; with replica-local variables each replica keeps the rows of the
streams it always receives.)
"""

import math

import numpy as np
import tensorflow as tf



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


def epoch_steps(dataset):
    """Number of steps of a finite dataset (its cardinality)."""
    n = int(dataset.cardinality())
    return n if n >= 0 else None


def perplexity(loss):
    """`exp(loss)`, capped to stay finite for very bad models."""
    return float(math.exp(min(loss, 50.0)))
