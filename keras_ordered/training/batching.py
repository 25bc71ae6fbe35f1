"""Every batching of the recipes, in one place.

- `BPTTBatches`: windows of a token stream for truncated back-propagation
  through time (the language models; below);
- `SentenceBatches`: one sentence per row, for the presets that train on
  sentences;
- `BucketedBatches`, the base of the sentence-level batches bucketed by
  length: `GFLBatches` (linearized trees) and `TreeBatches` (dependency
  trees).

Truncated back-propagation through time with explicitly carried state:
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

import keras
import numpy as np

from keras_ordered.models.gfl.vocabulary import EOS_ID
from keras_ordered.models.gfl.vocabulary import GO_ID
from keras_ordered.models.tdtreelstm.inputs import SCHEDULE_ROWS
from keras_ordered.models.tdtreelstm.inputs import batch_arrays
from keras_ordered import backend

tf = backend.tensorflow_on_use("the tf.data batch pipelines")



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
    return keras.tree.map_structure(np.array, window)


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

        if not backend.is_tensorflow():
            return WindowSequence(generate, end - start_batch)
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

        if not backend.is_tensorflow():
            # One iterator over all epochs, as `model.fit` keeps it.
            return generate()
        ds = tf.data.Dataset.from_generator(
            generate, output_signature=self._signature()
        )
        return _with_options(ds.prefetch(2))


class WindowSequence(keras.utils.PyDataset):
    """The windows of one epoch on JAX and PyTorch (no `tf.data`): a
    `keras.utils.PyDataset` that `model.fit` and `model.evaluate` read on
    every backend, again at every epoch (validation data).

    Windows are read in order (`__getitem__(0)` starts the epoch again):
    the carried state needs them so.

    Args:
        generate: function returning a generator of the epoch's batches.
        length: int, the number of batches it yields.
    """

    def __init__(self, generate, length):
        super().__init__()
        self._generate = generate
        self._length = int(length)
        self._iterator = None
        self._next = 0

    @property
    def num_batches(self):
        return self._length

    def __len__(self):
        return self._length

    def __getitem__(self, index):
        if index >= self._length:
            raise IndexError(f"An epoch of {self._length} windows.")
        if index == 0 or self._iterator is None:
            self._iterator, self._next = self._generate(), 0
        if index != self._next:
            raise IndexError(
                f"Windows are read in order: window {self._next} comes "
                f"next, not {index}.")
        self._next += 1
        return next(self._iterator)


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


class BucketedBatches:
    """Batches of items of varied lengths, in a fixed order per epoch.

    The base of the sentence-level batches of the GFL parser
    (`GFLBatches`) and of the TD-TreeLSTM (`TreeBatches`). Each training
    epoch shuffles the items with `[seed, epoch]`, sorts chunks of
    `50 * batch_size` items by length (so that a batch holds items of
    similar length and little padding), cuts them into batches and
    shuffles the batches. Epoch `e`'s order depends only on `seed` and
    `e`, so a run resumed at epoch `e` trains on what it would have.

    A subclass says how long an item is (`length`), how a batch of items
    becomes arrays (`arrays`), their `tf.TensorSpec`s (`output_signature`)
    and, with `sort_unshuffled`, whether evaluation batches (`shuffle=False`)
    keep the input order or sort by length.

    Args:
        count: int, the number of items.
        batch_size: int.
        shuffle: bool (False: evaluation order).
        seed: int.
    """

    empty_message = "No item: the split is empty."
    sort_unshuffled = False

    def __init__(self, count, batch_size, shuffle=True, seed=0):
        if not count:
            raise ValueError(self.empty_message)
        if batch_size < 1:
            raise ValueError(f"The batch size must be >= 1. Received: {batch_size}")
        self.count = int(count)
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.seed = int(seed)

    def __len__(self):
        return math.ceil(self.count / self.batch_size)

    def length(self, index):
        """The length item `index` is sorted by."""
        raise NotImplementedError

    def arrays(self, indices):
        """The arrays of the batch of items `indices`."""
        raise NotImplementedError

    def output_signature(self):
        """The `tf.TensorSpec` structure of `arrays`' result."""
        raise NotImplementedError

    def batch_indices(self, epoch):
        """The list of index lists of epoch `epoch`'s batches."""
        n, size = self.count, self.batch_size
        if not self.shuffle:
            order = list(range(n))
            if self.sort_unshuffled:
                order.sort(key=self.length)
            return [order[i:i + size] for i in range(0, n, size)]
        rng = np.random.default_rng([self.seed, epoch])
        order = rng.permutation(n)
        chunk = 50 * size
        batches = []
        for first in range(0, n, chunk):
            part = sorted(order[first:first + chunk], key=self.length)
            batches += [part[i:i + size] for i in range(0, len(part), size)]
        return [batches[i] for i in rng.permutation(len(batches))]

    def epoch(self, epoch, steps=None):
        """Yields epoch `epoch`'s batches (its first `steps`; None: all)."""
        for indices in self.batch_indices(epoch)[:steps]:
            yield self.arrays(indices)

    def stream(self, start_epoch, steps):
        """Epochs `start_epoch`, `start_epoch + 1`, ..., `steps` batches each."""
        epoch = start_epoch
        while True:
            yield from self.epoch(epoch, steps)
            epoch += 1

    def dataset(self, generator, batches=None):
        """A `tf.data.Dataset` of a generator function of batches.

        Each batch the generator yields is built fresh (`arrays`), so no
        buffer is shared with TensorFlow: a NumPy array that TensorFlow
        still reads is never written again.

        Args:
            generator: function returning an iterator of batches (e.g.
                `lambda: batches.epoch(0)`).
            batches: how many the generator yields (None: endless); Keras
                reads a finite dataset's length from it.
        """
        dataset = tf.data.Dataset.from_generator(
            generator, output_signature=self.output_signature()
        )
        if batches is not None:
            dataset = dataset.apply(
                tf.data.experimental.assert_cardinality(batches))
        return dataset.prefetch(2)


class GFLBatches(BucketedBatches):
    """Teacher-forcing batches of linearized trees (the GFL parser).

    Batches of `((source, target_in), target_out)`, int32, padded with 0:
    `target_in` starts with GO, `target_out` ends with EOS. Training
    batches are bucketed by target length (`BucketedBatches`); evaluation
    batches (`shuffle=False`) keep the input order.

    Args:
        source_ids: list of lists of int (reversed sentences).
        target_ids: list of lists of int (linearized trees, no specials).
        batch_size: int.
        shuffle: bool (False: the input order, for validation).
        seed: int.

    Example:

    ```python
    from keras_ordered.training.batching import GFLBatches
    batches = GFLBatches([[4, 5], [6]], [[3, 4, 5], [3, 5]], batch_size=2)
    (source, target_in), target_out = next(batches.epoch(0))
    ```
    """

    empty_message = "No training pair: the split is empty."

    def __init__(self, source_ids, target_ids, batch_size, shuffle=True,
                 seed=0):
        if len(source_ids) != len(target_ids):
            raise ValueError("One target sequence per source sentence.")
        super().__init__(len(source_ids), batch_size, shuffle, seed)
        self.source_ids = [list(s) for s in source_ids]
        self.target_ids = [list(t) for t in target_ids]

    def length(self, index):
        return len(self.target_ids[index])

    def arrays(self, indices):

        rows = len(indices)
        source_width = max(len(self.source_ids[i]) for i in indices)
        target_width = max(len(self.target_ids[i]) for i in indices) + 1
        source = np.zeros((rows, source_width), "int32")
        target_in = np.zeros((rows, target_width), "int32")
        target_out = np.zeros((rows, target_width), "int32")
        for row, i in enumerate(indices):
            s, t = self.source_ids[i], self.target_ids[i]
            source[row, :len(s)] = s
            target_in[row, :len(t) + 1] = [GO_ID] + t
            target_out[row, :len(t) + 1] = t + [EOS_ID]
        return (source, target_in), target_out

    def output_signature(self):
        spec = tf.TensorSpec((None, None), tf.int32)
        return (spec, spec), spec


class TreeBatches(BucketedBatches):
    """Batches of encoded dependency trees (the TD-TreeLSTM).

    Training batches are bucketed by sentence length (`BucketedBatches`);
    evaluation batches (`shuffle=False`) are sorted by length.

    Args:
        encoded: list of `keras_ordered.models.tdtreelstm.encode_tree`
            dicts.
        batch_size: int.
        shuffle: bool (False: the input order sorted by length, for
            evaluation).
        seed: int.
        left_context: bool, include LdTreeLSTM's input.
        pad_to: int, see `keras_ordered.models.tdtreelstm.batch_arrays`.
        schedule_rows: int or None, see `batch_arrays` (default
            `SCHEDULE_ROWS`: every batch carries its action-homogeneous
            `schedule`; None: the model runs the generation order).

    Example:

    ```python
    from keras_ordered.models.tdtreelstm import encode_tree
    from keras_ordered.training.batching import TreeBatches
    trees = [encode_tree([5, 6, 7], [2, 3, 0]), encode_tree([8], [0])]
    inputs = next(TreeBatches(trees, batch_size=2).epoch(0))
    ```
    """

    empty_message = "No tree: the split is empty."
    sort_unshuffled = True

    def __init__(self, encoded, batch_size, shuffle=True, seed=0,
                 left_context=True, pad_to=8, schedule_rows=SCHEDULE_ROWS):
        super().__init__(len(encoded), batch_size, shuffle, seed)
        self.encoded = list(encoded)
        self.left_context = left_context
        self.pad_to = pad_to
        self.schedule_rows = schedule_rows

    @property
    def words(self):
        """The number of words of all the trees."""
        return sum(len(e["targets"]) for e in self.encoded)

    def length(self, index):
        return len(self.encoded[index]["targets"])

    def arrays(self, indices):
        inputs, _ = batch_arrays([self.encoded[i] for i in indices],
                                 self.pad_to, self.left_context,
                                 self.schedule_rows)
        return inputs

    def output_signature(self):
        spec = {name: tf.TensorSpec((None, None), tf.int32)
                for name in ("words", "actions", "sources", "targets")}
        if self.left_context:
            spec["left_context"] = tf.TensorSpec((None, None, None), tf.int32)
        if self.schedule_rows is not None:
            spec["schedule"] = tf.TensorSpec((None, None), tf.int32)
        return spec


class DistanceBatches(BucketedBatches):
    """Batches of sentences and their gap heights (the distance parser).

    Each item is a sentence's token ids as the parser reads them (`<eos>`
    or `<s>`, the words, `<eos>`) and its target heights, one per word
    (`keras_ordered.parsing.tree_to_distances`). A batch is
    `((token_ids, mask), targets)`: ids padded with `pad_id`, the mask
    true on the sentence's positions, the targets `(rows, width)` float32
    with word `k`'s height at position `k` (`k >= 2`: the first word's
    gap is not read) and `-1` elsewhere (`ranking_loss` skips those).
    Training batches are bucketed by length (`BucketedBatches`).

    Args:
        token_ids: list of lists of int (with the opening and closing ids).
        heights: list of float sequences, one per word of each sentence.
        batch_size: int.
        pad_id: the id of the padding (the `<eos>` id).
        shuffle: bool (False: the input order, for validation).
        seed: int.

    Example:

    ```python
    from keras_ordered.training.batching import DistanceBatches
    batches = DistanceBatches([[0, 4, 5, 6, 0]], [[0.0, 1.0, 2.0]], 2)
    (ids, mask), targets = next(batches.epoch(0))
    assert targets.tolist() == [[-1, -1, 1, 2, -1]]
    ```
    """

    empty_message = "No silver tree: the training text is empty."

    def __init__(self, token_ids, heights, batch_size, pad_id=0,
                 shuffle=True, seed=0):
        if len(token_ids) != len(heights):
            raise ValueError("One list of heights per sentence.")
        super().__init__(len(token_ids), batch_size, shuffle, seed)
        for ids, values in zip(token_ids, heights):
            if len(ids) != len(values) + 2:
                raise ValueError(
                    f"A sentence of {len(ids) - 2} words has {len(values)} "
                    "heights: give one per word.")
        self.token_ids = [list(ids) for ids in token_ids]
        self.heights = [list(values) for values in heights]
        self.pad_id = int(pad_id)

    def length(self, index):
        return len(self.token_ids[index])

    def arrays(self, indices):
        rows = len(indices)
        width = max(len(self.token_ids[i]) for i in indices)
        ids = np.full((rows, width), self.pad_id, "int32")
        mask = np.zeros((rows, width), "bool")
        targets = np.full((rows, width), -1.0, "float32")
        for row, i in enumerate(indices):
            sentence = self.token_ids[i]
            ids[row, :len(sentence)] = sentence
            mask[row, :len(sentence)] = True
            heights = self.heights[i]
            targets[row, 2:len(heights) + 1] = heights[1:]
        return (ids, mask), targets

    def output_signature(self):
        return ((tf.TensorSpec((None, None), tf.int32),
                 tf.TensorSpec((None, None), tf.bool)),
                tf.TensorSpec((None, None), tf.float32))
