"""The top-down parse of syntactic distances, in the graph.

`distances_to_brackets` gives, for a batch of padded distance vectors, the
same bracketed trees as
`keras_ordered.parsing.tree_to_brackets(keras_ordered.parsing.distances_to_tree(words, d))`
and their spans, with core TensorFlow ops only (no loop, no Python), so it
runs inside a `tf.function` with unknown batch and time sizes and inside a
SavedModel served by TF Serving.

How: the greedy top-down parser splits a span at its *first* maximum, so
word `k` is the split point of exactly one recursive call, over
`[s_k, e_k)` where `s_k` is one past the last earlier word with a distance
`>= d_k` and `e_k` the first later word with a distance `> d_k` (a
Cartesian tree with first-maximum tie-breaking). That call makes the
constituent `(s_k, e_k)` (when it holds two words or more) and, when `k`
has words on both sides, the constituent `(k, e_k)` of `k` and the right
part. A binary tree's bracketed string is then every word preceded by one
`(` per constituent it starts and followed by one `)` per constituent it
ends. `s_k` and `e_k` come from a table of range maxima by binary lifting:
`O(batch * time * 24)` operations and memory, a fixed number of vectorized
steps (nothing sequential over the words), so a sentence of 10,000 words
parses as well as one of 10.
"""

import tensorflow as tf


def _escape(words):
    words = tf.strings.regex_replace(words, r"\(", "-LRB-")
    return tf.strings.regex_replace(words, r"\)", "-RRB-")


def _as_lengths(lengths, batch, name="lengths"):
    lengths = tf.convert_to_tensor(lengths)
    if not lengths.dtype.is_integer:
        raise ValueError(
            f"`{name}` must be integers (words per sentence), got dtype "
            f"{lengths.dtype.name}."
        )
    if lengths.shape.rank is not None and lengths.shape.rank != 1:
        raise ValueError(
            f"`{name}` must have shape [batch], got shape {lengths.shape}."
        )
    return tf.cast(lengths, tf.int32)


MAX_LEVELS = 24
"""Levels of the range-maximum table: sentences up to `2**24 - 1` words."""


def _shift_left(values, shift, fill):
    # values[:, i + shift], or `fill` past the end; shape kept.
    time = tf.shape(values)[1]
    pad = tf.fill(
        tf.stack([tf.shape(values)[0], tf.minimum(shift, time)]), fill
    )
    return tf.concat([values[:, shift:], pad], axis=1)


def _split_spans(d, length):
    """For every word k: `s_k` and `e_k` of the module docstring.

    `s_k` is one past the last earlier word with a distance `>= d_k`
    (else 0), `e_k` the first later word of the sentence with a distance
    `> d_k` (else `length`). Binary lifting over a table of range maxima
    (`table[l][i] = max(d[i : i + 2**l])`): `O(batch * time * MAX_LEVELS)`
    time and memory, so sentences of 10,000 words and more parse.
    """
    batch = tf.shape(d)[0]
    time = tf.shape(d)[1]
    lowest = tf.constant(float("-inf"), d.dtype)
    tables = [d]
    for level in range(1, MAX_LEVELS):
        previous = tables[-1]
        tables.append(
            tf.maximum(previous, _shift_left(previous, 2 ** (level - 1), lowest))
        )
    k = tf.broadcast_to(tf.range(time)[None, :], tf.stack([batch, time]))
    last = tf.maximum(time - 1, 0)

    def window_max(level, first):
        index = tf.clip_by_value(first, 0, last)
        return tf.gather(tables[level], index, batch_dims=1)

    # s_k: the smallest p <= k with max(d[p:k]) < d_k.
    start = k
    for level in reversed(range(MAX_LEVELS)):
        candidate = start - 2 ** level
        move = (candidate >= 0) & (window_max(level, candidate) < d)
        start = tf.where(move, candidate, start)
    # e_k: the largest p >= k + 1 with max(d[k+1:p]) <= d_k, p <= length.
    end = k + 1
    for level in reversed(range(MAX_LEVELS)):
        move = (end + 2 ** level <= length[:, None]) & (
            window_max(level, end) <= d
        )
        end = tf.where(move, end + 2 ** level, end)
    return start, tf.minimum(end, length[:, None])


def _repeat(values, repeats):
    """`tf.repeat(values, repeats)` for a 1-D `values`, in linear memory.

    `tf.repeat` builds a `[len(values), max(repeats)]` mask: 10 GB for
    the 10,000 brackets closing a right-branching tree of 10,000 words.
    Here each output element finds its source by a binary search in the
    running totals of `repeats`.
    """
    ends = tf.cumsum(repeats)
    total = tf.reduce_sum(repeats)
    source = tf.searchsorted(ends, tf.range(total), side="right")
    return tf.gather(values, source)


def distances_to_brackets(tokens, distances, lengths=None, escape=True,
                          decoder="right"):
    """Parses a batch of syntactic distances into bracketed trees, in-graph.

    Each sentence gets exactly the string
    `tree_to_brackets(distances_to_tree(words, d, decoder))` of
    `keras_ordered.parsing` (first maximum wins on ties; with the right
    decoder the split word opens the right part; a one-word sentence gives
    `"(word)"`), where `words` are the sentence's tokens and `d` its first
    `length` distances.

    The gap decoder (a distance parser's) reuses the same table: with the
    first word's distance raised to the sentence's maximum, the gap before
    word `k` splits the span `(s_k - 1, e_k)`, and those spans are the
    tree's constituents.

    Args:
        tokens: the words, as a `tf.RaggedTensor [batch, None]` of strings
            (lengths are its row lengths unless `lengths` is given), or a
            dense string tensor `[batch, time']` padded at the end (then
            `lengths` is required).
        distances: float tensor `[batch, time]`, padded at the end; the
            padding is ignored.
        lengths: int tensor `[batch]`, words per sentence, or `None` with
            ragged `tokens`.
        escape: write `(` and `)` inside words as `-LRB-` and `-RRB-`, so
            that the string reads back with `brackets_to_tree` (the Python
            `tree_to_brackets` refuses such words). Words must otherwise be
            non-empty and hold no whitespace, as `tokenize` makes them.
        decoder: `"right"` (the language models' published parser) or
            `"gap"` (a distance parser's), as `distances_to_tree`.

    Returns:
        A dict:
        - `trees`: string `[batch]`, the bracketed trees; `""` for a
          sentence of length 0, longer than `time`, or with a NaN or
          infinite distance (`valid` says which);
        - `spans`: `tf.RaggedTensor [batch, None, 2]` of int32
          `(start, end)` pairs (end-exclusive), the constituents of two
          words or more, root included, as
          `keras_ordered.parsing.tree_to_spans(tree)`; sorted by start,
          then longest first (the order of their opening brackets);
        - `valid`: bool `[batch]`.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export.trees import distances_to_brackets
    out = distances_to_brackets(
        tf.ragged.constant([["the", "cat", "sat"], ["hi"]]),
        tf.constant([[0.0, 0.1, 0.9], [0.5, 0.0, 0.0]]))
    assert out["trees"].numpy().tolist() == [b"((the cat) sat)", b"(hi)"]
    assert out["spans"].to_list() == [[[0, 3], [0, 2]], []]
    ```
    """
    if decoder not in ("right", "gap"):
        raise ValueError(
            f"The in-graph parser has the right and gap decoders, not "
            f"{decoder!r}.")
    distances = tf.convert_to_tensor(distances)
    if not distances.dtype.is_floating:
        distances = tf.cast(distances, tf.float64)
    if distances.shape.rank is not None and distances.shape.rank != 2:
        raise ValueError(
            "`distances` must have shape [batch, time], got shape "
            f"{distances.shape}."
        )
    batch = tf.shape(distances)[0]
    time = tf.shape(distances)[1]
    if isinstance(tokens, tf.RaggedTensor):
        if lengths is None:
            lengths = tokens.row_lengths()
        lengths = _as_lengths(lengths, batch)
    else:
        tokens = tf.convert_to_tensor(tokens)
        if lengths is None:
            raise ValueError(
                "Dense `tokens` need `lengths` (words per sentence); or "
                "pass the tokens as a tf.RaggedTensor."
            )
        lengths = _as_lengths(lengths, batch)
        if tokens.shape.rank is not None and tokens.shape.rank != 2:
            raise ValueError(
                "`tokens` must have shape [batch, time], got shape "
                f"{tokens.shape}."
            )
        tokens = tf.RaggedTensor.from_tensor(
            tokens,
            lengths=tf.minimum(
                tf.maximum(lengths, 0), tf.shape(tokens, out_type=tf.int32)[1]
            ),
        )
    if tokens.dtype != tf.string:
        raise ValueError(
            f"`tokens` must be strings, got dtype {tokens.dtype.name}."
        )
    token_counts = tf.cast(tokens.row_lengths(), tf.int32)
    positions = tf.range(time)
    in_sentence = positions[None, :] < lengths[:, None]
    finite = tf.reduce_all(
        tf.logical_or(tf.math.is_finite(distances), tf.logical_not(in_sentence)),
        axis=1,
    )
    valid = (
        (lengths >= 1) & (lengths <= time) & (token_counts >= lengths) & finite
    )
    length = tf.where(valid, lengths, 0)
    in_sentence = positions[None, :] < length[:, None]
    # Safe values for the padding and for refused sentences.
    d = tf.where(in_sentence, distances, tf.zeros_like(distances))
    word = positions[None, :]
    if decoder == "gap":
        # The first word's distance is not read: raised to the maximum, it
        # bounds every gap's span on the left.
        top = tf.reduce_max(d, axis=1, keepdims=True)
        d = tf.where(tf.equal(word, 0), top + tf.zeros_like(d), d)

    start, end = _split_spans(d, length)
    if decoder == "gap":
        start = tf.maximum(start - 1, 0)
        whole = in_sentence & (word >= 1)
        head = tf.zeros_like(whole)
    else:
        whole = in_sentence & (end - start >= 2)
        head = in_sentence & (word > start) & (word + 1 < end)
    one_word = in_sentence & tf.equal(length, 1)[:, None]

    # Brackets: one "(" per constituent a word starts, one ")" per one it
    # ends; the root of a one-word sentence is a constituent too.
    bracketed = whole | one_word
    all_starts = tf.concat([start, word + tf.zeros_like(start)], axis=1)
    all_ends = tf.concat([end, end], axis=1)
    all_kept = tf.concat([bracketed, head], axis=1)
    kept = tf.reshape(tf.cast(all_kept, tf.int32), [-1])
    row_offsets = tf.range(batch)[:, None] * time

    def count_per_word(positions_of_brackets):
        # Entries not kept count 0; clipping keeps their index in range.
        index = row_offsets + tf.clip_by_value(
            positions_of_brackets, 0, tf.maximum(time - 1, 0)
        )
        counts = tf.math.unsorted_segment_sum(
            kept, tf.reshape(index, [-1]), batch * time
        )
        return tf.reshape(counts, [batch, time])

    opens = count_per_word(all_starts)
    closes = count_per_word(all_ends - 1)

    words = tokens.to_tensor(default_value="", shape=tf.stack([batch, time]))
    if escape:
        words = _escape(words)
    pieces = tf.stack(
        [
            tf.fill(tf.shape(words), "("),
            words,
            tf.fill(tf.shape(words), ")"),
            tf.fill(tf.shape(words), " "),
        ],
        axis=2,
    )
    in_sentence_int = tf.cast(in_sentence, tf.int32)
    separator = tf.cast(word + 1 < length[:, None], tf.int32)
    repeats = tf.stack(
        [opens * in_sentence_int, in_sentence_int, closes * in_sentence_int,
         separator],
        axis=2,
    )
    rows = tf.broadcast_to(
        tf.range(batch)[:, None, None], tf.shape(repeats)
    )
    flat_repeats = tf.reshape(repeats, [-1])
    flat_pieces = _repeat(tf.reshape(pieces, [-1]), flat_repeats)
    flat_rows = _repeat(tf.reshape(rows, [-1]), flat_repeats)
    trees = tf.strings.unsorted_segment_join(
        flat_pieces, flat_rows, num_segments=batch
    )

    # Spans of two words or more, sorted by start, then longest first.
    span_kept = tf.concat([whole, head], axis=1)
    time64 = tf.cast(time, tf.int64)
    key = tf.cast(all_starts, tf.int64) * (time64 + 1) + (
        time64 - tf.cast(all_ends, tf.int64)
    )
    key = tf.where(span_kept, key, (time64 + 1) * (time64 + 1))
    order = tf.argsort(key, axis=1, stable=True)
    sorted_spans = tf.stack(
        [
            tf.gather(all_starts, order, batch_dims=1),
            tf.gather(all_ends, order, batch_dims=1),
        ],
        axis=2,
    )
    spans = tf.RaggedTensor.from_tensor(
        sorted_spans,
        lengths=tf.reduce_sum(tf.cast(span_kept, tf.int32), axis=1),
    )
    return {"trees": trees, "spans": spans, "valid": valid}


__all__ = ["distances_to_brackets"]
