"""Greedy and beam search for sequence-to-sequence models, batched.

Both searches drive a step function

```
step_fn(previous_ids, states, constants) -> (log_probs, new_states, weights)
```

(`previous_ids` `(N,)` int32, `states` a list of `(N, ...)` tensors,
`constants` a list of per-sentence tensors such as the encoder's states,
`log_probs` `(N, V)` float32 normalised log-probabilities, `weights`
`(N, S)` float32 attention weights) inside one loop, so they run without
Python per step where the backend compiles loops. A sentence stops at
`<eos>` or after `max_lengths[b]` symbols (then its output is cut there,
without `<eos>`); after that it emits `<pad>` (0).

Beam search keeps the `beam_size` best prefixes of each sentence by total
log-probability (no length normalisation: the paper mentions none); a
finished prefix keeps its score and competes with the others. Scores only
decrease as prefixes grow, so once the best prefix of a sentence is
finished no other can overtake it: the search stops then (for the whole
batch, when every sentence's best prefix is finished). With
`beam_size=1` this is greedy search, step for step.

Backends
========

Each search has two implementations that make the same choices and give
the same scores (`implementation=`):

- `"tensorflow"`, the fast path and the default on TensorFlow: a
  `tf.while_loop` with `tf.TensorArray`s and a history that grows, which
  runs inside a `tf.function` (and a SavedModel) with unknown batch and
  lengths;
- `"ops"`, the default on JAX and PyTorch: `keras.ops.while_loop` over
  buffers of `max_steps` columns written in place (`keras.ops.slice_update`),
  cut to the steps actually run at the end. It needs the lengths' maximum
  as a Python int (`max_steps`, else read from `max_lengths`, which must
  then hold values, not symbols), and with `constants` the attention
  buffer's width is `constants[0]`'s second dimension (the source length).
  With `trim=False` it returns the whole buffers and the number of steps
  run (`steps`, a tensor), so that it can run inside a compiled function
  (`jax.jit`), which cannot read that number; the caller cuts them.
  The tests run it on TensorFlow too and compare it with the fast path.
"""

import contextlib
import sys

import keras
import numpy as np
from keras import ops

from keras_ordered.layers._checks import check_positive_int
from keras_ordered import backend

_NEG = -1e9

IMPLEMENTATIONS = ("auto", "tensorflow", "ops")


def _implementation(implementation):
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(
            "`implementation` must be 'auto', 'tensorflow' or 'ops'. "
            f"Received: implementation={implementation!r}"
        )
    if implementation == "auto":
        return "tensorflow" if backend.is_tensorflow() else "ops"
    if implementation == "tensorflow" and not backend.is_tensorflow():
        raise ValueError(
            "implementation='tensorflow' needs the TensorFlow backend "
            f"(running: {backend.name()}); use 'ops' or 'auto'."
        )
    return implementation


def _tensorflow(feature):
    """The `tensorflow` module for the TensorFlow path. Inside a
    `tf.function` AutoGraph converts every function called, importlib's
    too: the module already imported (as it is whenever Keras runs on
    TensorFlow) is taken as it is."""
    tf = sys.modules.get("tensorflow")
    return tf if tf is not None else backend.require_tensorflow(feature)


def _max_steps(max_lengths, max_steps):
    if max_steps is None:
        values = keras.ops.convert_to_numpy(max_lengths)
        max_steps = int(np.max(values, initial=0))
    return max(int(max_steps), 0)


def no_grad():
    """A context without gradient recording where the backend records them
    eagerly (PyTorch): decoding needs none."""
    if backend.name() == "torch":
        import torch

        return torch.no_grad()
    return contextlib.nullcontext()


def greedy_search(
    step_fn,
    states,
    constants,
    max_lengths,
    go_id,
    eos_id,
    pad_id=0,
    max_steps=None,
    implementation="auto",
    trim=True,
):
    """Greedy decoding of a batch.

    Args:
        step_fn: see the module docstring.
        states: list of tensors `(B, ...)`, the initial state.
        constants: list of tensors `(B, ...)` passed to every step.
        max_lengths: int32 `(B,)`, the most symbols per sentence.
        go_id, eos_id, pad_id: int, the special symbols.
        max_steps: int or None, `max(max_lengths)` (the `"ops"`
            implementation's buffer size; None reads it from
            `max_lengths`).
        implementation: `"auto"`, `"tensorflow"` or `"ops"` (module
            docstring).
        trim: bool, with `"ops"`: cut `tokens` and `attention` to the
            steps run (False: the `max_steps` columns and an int32 `steps`,
            for a compiled function; see `trim_steps`).

    Returns:
        dict with `tokens` int32 `(B, steps)` (`<eos>` included when
        produced, `<pad>` after), `lengths` int32 `(B,)` (symbols before
        `<eos>`), `scores` float32 `(B,)` (log-probability of the output,
        `<eos>` included) and `attention` float32 `(B, steps, S)` (zeros
        after the end).

    Example:

    ```python
    from keras_ordered.models.gfl.decoding import greedy_search

    def step_fn(previous, states, constants):
        log_probs = keras.ops.log_softmax(keras.ops.ones((2, 5)), axis=-1)
        return log_probs, states, keras.ops.ones((2, 3)) / 3
    memory = np.zeros((2, 3, 4), "float32")
    result = greedy_search(step_fn, [], [memory], np.array([2, 4]), 1, 2)
    ```
    """
    if _implementation(implementation) == "tensorflow":
        return _greedy_search_tensorflow(
            step_fn, states, constants, max_lengths, go_id, eos_id, pad_id
        )
    result = _greedy_search_ops(
        step_fn, states, constants, max_lengths, go_id, eos_id, pad_id,
        _max_steps(max_lengths, max_steps),
    )
    return trim_steps(result) if trim else result


def _greedy_search_ops(
    step_fn, states, constants, max_lengths, go_id, eos_id, pad_id, max_steps
):
    """`greedy_search` in `keras.ops` (the generic path)."""
    max_lengths = ops.cast(ops.convert_to_tensor(max_lengths), "int32")
    batch = ops.shape(max_lengths)[0]
    source_steps = ops.shape(constants[0])[1] if constants else 0

    def cond(t, previous, states, finished, *_):
        return ops.logical_and(
            ops.less(t, max_steps), ops.logical_not(ops.all(finished))
        )

    def body(t, previous, states, finished, scores, lengths, tokens, attention):
        log_probs, new_states, weights = step_fn(previous, states, constants)
        log_probs = ops.cast(log_probs, "float32")
        # The argmax of `scores + log_probs`, the very numbers beam search
        # ranks, so that a beam of one makes the same choices bit for bit.
        candidates = ops.expand_dims(scores, 1) + log_probs
        token = ops.cast(ops.argmax(candidates, axis=-1), "int32")
        new_scores = ops.take_along_axis(
            candidates, ops.expand_dims(token, 1), axis=1
        )[:, 0]
        token = ops.where(finished, pad_id, token)
        scores = ops.where(finished, scores, new_scores)
        is_eos = ops.equal(token, eos_id)
        lengths = lengths + ops.cast(
            ops.logical_not(ops.logical_or(finished, is_eos)), "int32"
        )
        weights = ops.where(
            ops.expand_dims(finished, 1), 0.0, ops.cast(weights, "float32")
        )
        finished = ops.logical_or(
            ops.logical_or(finished, is_eos),
            ops.greater_equal(t + 1, max_lengths),
        )
        tokens = ops.slice_update(tokens, (0, t), ops.expand_dims(token, 1))
        attention = ops.slice_update(
            attention, (0, t, 0), ops.expand_dims(weights, 1)
        )
        return (
            t + 1, token, list(new_states), finished, scores, lengths, tokens,
            attention,
        )

    loop_vars = (
        ops.convert_to_tensor(0, "int32"),
        ops.full((batch,), go_id, dtype="int32"),
        list(states),
        ops.less_equal(max_lengths, 0),
        ops.zeros((batch,), "float32"),
        ops.zeros((batch,), "int32"),
        ops.zeros((batch, max_steps), "int32"),
        ops.zeros((batch, max_steps, source_steps), "float32"),
    )
    steps, _, _, _, scores, lengths, tokens, attention = ops.while_loop(
        cond, body, loop_vars
    )
    return {
        "tokens": tokens,
        "lengths": lengths,
        "scores": scores,
        "attention": attention,
        "steps": steps,
    }


def trim_steps(result):
    """An `"ops"` search's `trim=False` result cut to the steps it ran.

    Args:
        result: dict of the search's tensors, with `steps` (int32 scalar).

    Returns:
        The dict without `steps`, `tokens`, `attention` and `beam_tokens`
        cut to `steps` columns.

    Example:

    ```python
    from keras_ordered.models.gfl.decoding import greedy_search, trim_steps

    def step_fn(previous, states, constants):
        log_probs = keras.ops.log_softmax(keras.ops.ones((2, 5)), axis=-1)
        return log_probs, states, keras.ops.ones((2, 3)) / 3
    memory = np.zeros((2, 3, 4), "float32")
    full = greedy_search(step_fn, [], [memory], np.array([2, 4]), 1, 2,
                         max_steps=8, implementation="ops", trim=False)
    trim_steps(full)["tokens"].shape  # (2, 4)
    ```
    """
    result = dict(result)
    steps = int(ops.convert_to_numpy(result.pop("steps")))
    for name in ("tokens", "attention"):
        if name in result:
            result[name] = result[name][:, :steps]
    if "beam_tokens" in result:
        result["beam_tokens"] = result["beam_tokens"][:, :, :steps]
    return result


# TensorFlow fast path --------------------------------------------------------
def _greedy_search_tensorflow(
    step_fn, states, constants, max_lengths, go_id, eos_id, pad_id=0
):
    """`greedy_search` as one `tf.while_loop` (the TensorFlow fast path)."""
    tf = _tensorflow("TensorFlow greedy search")
    max_lengths = tf.cast(max_lengths, tf.int32)
    batch = tf.shape(max_lengths)[0]
    max_steps = tf.reduce_max(tf.concat([max_lengths, [0]], 0))

    def cond(t, previous, states, finished, *_):
        return tf.logical_and(t < max_steps, tf.logical_not(tf.reduce_all(finished)))

    def body(t, previous, states, finished, scores, lengths, tokens_ta, weights_ta):
        log_probs, new_states, weights = step_fn(previous, states, constants)
        log_probs = tf.cast(log_probs, tf.float32)
        # The argmax of `scores + log_probs`, the very numbers beam search
        # ranks, so that a beam of one makes the same choices bit for bit.
        candidates = scores[:, None] + log_probs
        token = tf.argmax(candidates, axis=-1, output_type=tf.int32)
        new_scores = tf.gather(candidates, token[:, None], batch_dims=1)[:, 0]
        token = tf.where(finished, pad_id, token)
        scores = tf.where(finished, scores, new_scores)
        is_eos = tf.equal(token, eos_id)
        lengths += tf.cast(
            tf.logical_not(tf.logical_or(finished, is_eos)), tf.int32
        )
        weights = tf.where(finished[:, None], 0.0, tf.cast(weights, tf.float32))
        finished = finished | is_eos | (t + 1 >= max_lengths)
        return (
            t + 1,
            token,
            new_states,
            finished,
            scores,
            lengths,
            tokens_ta.write(t, token),
            weights_ta.write(t, weights),
        )

    loop_vars = (
        tf.constant(0),
        tf.fill([batch], tf.constant(go_id, tf.int32)),
        list(states),
        max_lengths <= 0,
        tf.zeros([batch], tf.float32),
        tf.zeros([batch], tf.int32),
        tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[None]),
        tf.TensorArray(
            tf.float32, size=0, dynamic_size=True, element_shape=[None, None]
        ),
    )
    _, _, _, _, scores, lengths, tokens_ta, weights_ta = tf.while_loop(
        cond, body, loop_vars
    )
    steps = tokens_ta.size()
    tokens = tf.cond(
        steps > 0,
        lambda: tf.transpose(tokens_ta.stack(), [1, 0]),
        lambda: tf.zeros([batch, 0], tf.int32),
    )
    source_steps = tf.shape(constants[0])[1] if constants else 0
    attention = tf.cond(
        steps > 0,
        lambda: tf.transpose(weights_ta.stack(), [1, 0, 2]),
        lambda: tf.zeros([batch, 0, source_steps], tf.float32),
    )
    return {
        "tokens": tokens,
        "lengths": lengths,
        "scores": scores,
        "attention": attention,
    }


def beam_search(
    step_fn,
    states,
    constants,
    max_lengths,
    go_id,
    eos_id,
    beam_size=10,
    pad_id=0,
    max_steps=None,
    implementation="auto",
    trim=True,
):
    """Beam search decoding of a batch.

    Args:
        step_fn, states, constants, max_lengths, go_id, eos_id, pad_id,
            max_steps, implementation, trim: as `greedy_search`.
        beam_size: int, prefixes kept per sentence (the paper's 10).

    Returns:
        dict with `tokens` int32 `(B, steps)`, `lengths` int32 `(B,)`,
        `scores` float32 `(B,)` of the best prefix, and `beam_tokens`
        `(B, K, steps)`, `beam_scores` `(B, K)`, `beam_lengths` `(B, K)` of
        all `K = beam_size` final prefixes, best first.

    Example:

    ```python
    from keras_ordered.models.gfl.decoding import beam_search

    def step_fn(previous, states, constants):
        log_probs = keras.ops.log_softmax(
            keras.ops.convert_to_tensor(np.random.rand(6, 5), "float32"))
        return log_probs, states, keras.ops.ones((6, 3)) / 3
    result = beam_search(step_fn, [], [], np.array([2, 4]), 1, 2, beam_size=3)
    ```
    """
    check_positive_int("beam_size", beam_size)
    if _implementation(implementation) == "tensorflow":
        return _beam_search_tensorflow(
            step_fn, states, constants, max_lengths, go_id, eos_id, beam_size,
            pad_id,
        )
    result = _beam_search_ops(
        step_fn, states, constants, max_lengths, go_id, eos_id, beam_size,
        pad_id, _max_steps(max_lengths, max_steps),
    )
    return trim_steps(result) if trim else result


def _beam_search_ops(
    step_fn, states, constants, max_lengths, go_id, eos_id, beam_size, pad_id,
    max_steps,
):
    """`beam_search` in `keras.ops` (the generic path)."""
    k = beam_size
    max_lengths = ops.cast(ops.convert_to_tensor(max_lengths), "int32")
    batch = ops.shape(max_lengths)[0]

    def tile(x):
        return ops.repeat(x, k, axis=0)  # sentence b -> rows b*K .. b*K+K-1

    states = [tile(s) for s in states]
    constants = [tile(c) for c in constants]
    offsets = ops.expand_dims(ops.arange(batch, dtype="int32") * k, 1)

    def cond(t, previous, states, scores, finished, *_):
        return ops.logical_and(
            ops.less(t, max_steps), ops.logical_not(ops.all(finished[:, 0]))
        )

    def body(t, previous, states, scores, finished, lengths, history):
        log_probs, new_states, _ = step_fn(previous, states, constants)
        vocabulary = log_probs.shape[-1]
        log_probs = ops.reshape(ops.cast(log_probs, "float32"), (-1, k, vocabulary))
        # A finished prefix extends only by <pad>, at no cost.
        only_pad = ops.where(ops.arange(vocabulary) == pad_id, 0.0, _NEG)
        log_probs = ops.where(ops.expand_dims(finished, 2), only_pad, log_probs)
        candidates = ops.reshape(
            ops.expand_dims(scores, 2) + log_probs, (-1, k * vocabulary)
        )
        # The k best, best first, the lower index first among equals (as
        # `tf.math.top_k`): a stable sort, the same on every backend.
        best = ops.cast(ops.argsort(-candidates, axis=-1)[:, :k], "int32")
        scores = ops.take_along_axis(candidates, best, axis=1)
        parent = ops.floor_divide(best, vocabulary)
        token = ops.mod(best, vocabulary)
        parent_finished = ops.take_along_axis(finished, parent, axis=1)
        token = ops.where(parent_finished, pad_id, token)
        is_eos = ops.equal(token, eos_id)
        lengths = ops.take_along_axis(lengths, parent, axis=1) + ops.cast(
            ops.logical_not(ops.logical_or(parent_finished, is_eos)), "int32"
        )
        finished = ops.logical_or(
            ops.logical_or(parent_finished, is_eos),
            ops.greater_equal(t + 1, ops.expand_dims(max_lengths, 1)),
        )
        rows = ops.reshape(parent + offsets, (-1,))
        states = [ops.take(s, rows, axis=0) for s in new_states]
        history = ops.reshape(
            ops.take(ops.reshape(history, (-1, max_steps)), rows, axis=0),
            (-1, k, max_steps),
        )
        history = ops.slice_update(history, (0, 0, t), ops.expand_dims(token, 2))
        return (
            t + 1, ops.reshape(token, (-1,)), states, scores, finished, lengths,
            history,
        )

    first = ops.convert_to_tensor([0.0] + [_NEG] * (k - 1), "float32")
    loop_vars = (
        ops.convert_to_tensor(0, "int32"),
        ops.full((batch * k,), go_id, dtype="int32"),
        states,
        ops.tile(ops.expand_dims(first, 0), (batch, 1)),
        ops.tile(ops.expand_dims(ops.less_equal(max_lengths, 0), 1), (1, k)),
        ops.zeros((batch, k), "int32"),
        ops.zeros((batch, k, max_steps), "int32"),
    )
    steps, _, _, scores, _, lengths, history = ops.while_loop(
        cond, body, loop_vars
    )
    return {**_beam_result(history, scores, lengths), "steps": steps}


# TensorFlow fast path --------------------------------------------------------
def _beam_search_tensorflow(
    step_fn, states, constants, max_lengths, go_id, eos_id, beam_size, pad_id
):
    """`beam_search` as one `tf.while_loop` (the TensorFlow fast path)."""
    tf = _tensorflow("TensorFlow beam search")
    k = beam_size
    max_lengths = tf.cast(max_lengths, tf.int32)
    batch = tf.shape(max_lengths)[0]
    max_steps = tf.reduce_max(tf.concat([max_lengths, [0]], 0))

    def tile(x):
        return tf.repeat(x, k, axis=0)  # sentence b -> rows b*K .. b*K+K-1

    states = [tile(s) for s in states]
    constants = [tile(c) for c in constants]
    offsets = tf.range(batch)[:, None] * k

    def cond(t, previous, states, scores, finished, *_):
        return tf.logical_and(
            t < max_steps, tf.logical_not(tf.reduce_all(finished[:, 0]))
        )

    def body(t, previous, states, scores, finished, lengths, history):
        log_probs, new_states, _ = step_fn(previous, states, constants)
        vocabulary = tf.shape(log_probs)[-1]
        log_probs = tf.reshape(tf.cast(log_probs, tf.float32), [batch, k, -1])
        # A finished prefix extends only by <pad>, at no cost.
        only_pad = tf.where(tf.range(vocabulary) == pad_id, 0.0, _NEG)
        log_probs = tf.where(finished[:, :, None], only_pad, log_probs)
        candidates = tf.reshape(scores[:, :, None] + log_probs, [batch, -1])
        scores, best = tf.math.top_k(candidates, k=k)
        parent = best // vocabulary
        token = best % vocabulary
        parent_finished = tf.gather(finished, parent, batch_dims=1)
        token = tf.where(parent_finished, pad_id, token)
        is_eos = tf.equal(token, eos_id)
        lengths = tf.gather(lengths, parent, batch_dims=1) + tf.cast(
            tf.logical_not(parent_finished | is_eos), tf.int32
        )
        finished = parent_finished | is_eos | (t + 1 >= max_lengths[:, None])
        rows = tf.reshape(parent + offsets, [-1])
        states = [tf.gather(s, rows) for s in new_states]
        history = tf.concat(
            [tf.gather(history, parent, batch_dims=1), token[:, :, None]], axis=-1
        )
        return t + 1, tf.reshape(token, [-1]), states, scores, finished, lengths, history

    first = tf.concat([[0.0], tf.fill([k - 1], _NEG)], 0)
    loop_vars = (
        tf.constant(0),
        tf.fill([batch * k], tf.constant(go_id, tf.int32)),
        states,
        tf.tile(first[None, :], [batch, 1]),
        tf.tile((max_lengths <= 0)[:, None], [1, k]),
        tf.zeros([batch, k], tf.int32),
        tf.zeros([batch, k, 0], tf.int32),
    )
    invariants = (
        tf.TensorShape([]),
        tf.TensorShape([None]),
        [tf.TensorShape([None]).concatenate(s.shape[1:]) for s in states],
        tf.TensorShape([None, k]),
        tf.TensorShape([None, k]),
        tf.TensorShape([None, k]),
        tf.TensorShape([None, k, None]),
    )
    _, _, _, scores, _, lengths, history = tf.while_loop(
        cond, body, loop_vars, shape_invariants=invariants
    )
    return _beam_result(history, scores, lengths)


def _beam_result(history, scores, lengths):
    """A beam search's result: the best beam (index 0) and all of them."""
    return {
        "tokens": history[:, 0],
        "lengths": lengths[:, 0],
        "scores": scores[:, 0],
        "beam_tokens": history,
        "beam_scores": scores,
        "beam_lengths": lengths,
    }
