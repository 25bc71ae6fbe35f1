"""Greedy and beam search for sequence-to-sequence models, batched, in graph.

Both searches drive a step function

```
step_fn(previous_ids, states, constants) -> (log_probs, new_states, weights)
```

(`previous_ids` `(N,)` int32, `states` a list of `(N, ...)` tensors,
`constants` a list of per-sentence tensors such as the encoder's states,
`log_probs` `(N, V)` float32 normalised log-probabilities, `weights`
`(N, S)` float32 attention weights) inside one `tf.while_loop`, so they run
inside a `tf.function` without Python per step. A sentence stops at
`<eos>` or after `max_lengths[b]` symbols (then its output is cut there,
without `<eos>`); after that it emits `<pad>` (0).

Beam search keeps the `beam_size` best prefixes of each sentence by total
log-probability (no length normalisation: the paper mentions none); a
finished prefix keeps its score and competes with the others. Scores only
decrease as prefixes grow, so once the best prefix of a sentence is
finished no other can overtake it: the search stops then (for the whole
batch, when every sentence's best prefix is finished). With
`beam_size=1` this is greedy search, step for step.
"""

import tensorflow as tf

_NEG = -1e9


def greedy_search(step_fn, states, constants, max_lengths, go_id, eos_id, pad_id=0):
    """Greedy decoding of a batch.

    Args:
        step_fn: see the module docstring.
        states: list of tensors `(B, ...)`, the initial state.
        constants: list of tensors `(B, ...)` passed to every step.
        max_lengths: int32 `(B,)`, the most symbols per sentence.
        go_id, eos_id, pad_id: int, the special symbols.

    Returns:
        dict with `tokens` int32 `(B, steps)` (`<eos>` included when
        produced, `<pad>` after), `lengths` int32 `(B,)` (symbols before
        `<eos>`), `scores` float32 `(B,)` (log-probability of the output,
        `<eos>` included) and `attention` float32 `(B, steps, S)` (zeros
        after the end).
    """
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
):
    """Beam search decoding of a batch.

    Args:
        step_fn, states, constants, max_lengths, go_id, eos_id, pad_id: as
            `greedy_search`.
        beam_size: int, prefixes kept per sentence (the paper's 10).

    Returns:
        dict with `tokens` int32 `(B, steps)`, `lengths` int32 `(B,)`,
        `scores` float32 `(B,)` of the best prefix, and `beam_tokens`
        `(B, K, steps)`, `beam_scores` `(B, K)`, `beam_lengths` `(B, K)` of
        all `K = beam_size` final prefixes, best first.
    """
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(
            f"`beam_size` must be a positive integer. Received: {beam_size!r}"
        )
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
    return {
        "tokens": history[:, 0],
        "lengths": lengths[:, 0],
        "scores": scores[:, 0],
        "beam_tokens": history,
        "beam_scores": scores,
        "beam_lengths": lengths,
    }
