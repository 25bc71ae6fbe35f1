"""Linearized trees back to labelled bracketed trees, in the graph.

`delinearize` is `keras_ordered.parsing.linearize.delinearize` written with
core TensorFlow ops (one `tf.while_loop` over the symbols, vectorized over
the batch; no Python, no `py_function`), for the SavedModel of the GFL
parser (`keras_ordered.export.gfl`). For every sentence it gives exactly
the string the command line prints for the Python tree,
`tree.pformat(margin=sys.maxsize)` (every POS tag `XX`), and the same
repair counts (`linearize.Repairs`), on every well-formed and every
malformed symbol sequence.

How. The repairs of the Python function turn a malformed sequence into a
well-nested sequence of events (`open LABEL`, `word k`, `close`):

1. A loop over the symbols keeps the stack of open constituents: it finds
   the closing brackets that have no open constituent (`missing_open`:
   their constituent opens at the very start, around everything before
   it, so their openings go first, the last one outermost) and those whose
   label differs from the open constituent's (`mismatched_close`: they
   close it all the same, and its label is kept).
2. The events are put in order by sort keys: the added openings, the
   symbols' events (an `XX` is the next word while words remain, else
   dropped; tokens that are neither brackets nor `XX` are dropped), the
   words no `XX` took (at the end inside the innermost open constituent;
   when none is open, inside the last top-level constituent, else at the
   end), and the closings of the constituents left open.
3. In a well-nested sequence the openings and closings of one depth
   alternate, so sorting the brackets by (depth, position) puts every
   opening right before its closing: a constituent with no word between
   the two is removed (with everything in it, all empty too).
4. The top-level items that remain are one constituent (the tree), or
   they are wrapped in a `root_label` constituent (`added_root`).

Cost: `O(batch)` work per symbol in the loop, then sorts of the events.
"""

import tensorflow as tf

WORD_SYMBOL = "XX"
"""The token that stands for every (POS tag, word) pair."""

REPAIR_KINDS = (
    "missing_open",
    "missing_close",
    "mismatched_close",
    "extra_words",
    "missing_words",
    "empty_constituents",
    "added_root",
    "unknown_tokens",
)
"""The columns of `delinearize`'s `repairs`: the fields of
`keras_ordered.parsing.linearize.Repairs`, in their order."""

_OPEN, _WORD, _CLOSE = 1, 2, 3


def _ragged_strings(values, name):
    if not isinstance(values, tf.RaggedTensor):
        values = tf.ragged.constant(values, dtype=tf.string) if isinstance(
            values, (list, tuple)
        ) else tf.RaggedTensor.from_tensor(tf.convert_to_tensor(values))
    if values.dtype != tf.string:
        raise ValueError(
            f"`{name}` must hold strings, got dtype {values.dtype.name}."
        )
    if values.ragged_rank != 1 or values.flat_values.shape.rank != 1:
        raise ValueError(
            f"`{name}` must have shape [batch, None] (one list of strings "
            f"per sentence), got shape {values.shape}."
        )
    return values


def symbols_from_ids(ids, symbols, eos_id=2, skip_ids=(0, 1)):
    """The decoded symbols of id rows: up to the first `<eos>`, specials dropped.

    The in-graph `TargetVocabulary.decode`.

    Args:
        ids: int tensor `[batch, steps]` (a decoder's `tokens`).
        symbols: list of str, the target vocabulary (index = id).
        eos_id: the id that ends a sequence.
        skip_ids: ids that are dropped (`<pad>`, `<go>`).

    Returns:
        A `tf.RaggedTensor [batch, None]` of symbol strings.
    """
    ids = tf.convert_to_tensor(ids)
    if not ids.dtype.is_integer or (
        ids.shape.rank is not None and ids.shape.rank != 2
    ):
        raise ValueError(
            f"`ids` must be a 2-D int tensor [batch, steps], got dtype "
            f"{ids.dtype.name} and shape {ids.shape}."
        )
    ids = tf.cast(ids, tf.int32)
    before_end = tf.equal(
        tf.cumsum(tf.cast(tf.equal(ids, eos_id), tf.int32), axis=1), 0
    )
    keep = before_end
    for skipped in skip_ids:
        keep = keep & tf.not_equal(ids, skipped)
    kept = tf.ragged.boolean_mask(ids, keep)
    table = tf.constant(list(symbols), tf.string)
    return kept.with_flat_values(tf.gather(table, kept.flat_values))


def _rows_cumsum(values, row_starts_of_values, exclusive=False):
    """Cumulative sums within rows of flat `values` (int32)."""
    total = tf.cumsum(values, exclusive=True)
    inclusive = total + values
    base = tf.gather(tf.concat([total, [0]], 0), row_starts_of_values)
    return (total if exclusive else inclusive) - base


def delinearize(symbols, words, root_label="S"):
    """Builds the labelled tree of each decoded symbol sequence, repairing it.

    In-graph twin of `keras_ordered.parsing.linearize.delinearize(symbols,
    words, root_label=root_label)` (tags `None`): the same repairs, the
    same counts, and the tree as the string `tree.pformat(margin=sys.maxsize)`
    (every POS tag `XX`: `(S (NP (XX John)) (VP (XX runs)))`).

    Args:
        symbols: `tf.RaggedTensor [batch, None]` of symbol strings (`"(NP"`,
            `")NP"`, `"XX"`), e.g. from `symbols_from_ids`; or a list of
            lists of str.
        words: `tf.RaggedTensor [batch, None]` of the sentences' words, in
            reading order (as they go into the tree: escape brackets first).
            A sentence needs one word or more (the Python function refuses
            an empty one; here its row gets a meaningless tree).
        root_label: the label of an added root (and of an unlabeled `"("`).

    Returns:
        A dict: `tree` (string `[batch]`), `repairs` (int32 `[batch, 8]`,
        columns `REPAIR_KINDS`) and `malformed` (bool `[batch]`, any
        repair).

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export.linearized import delinearize
    out = delinearize(
        tf.ragged.constant([["(S", "(NP", "XX", ")NP", "(VP", "XX"]]),
        tf.ragged.constant([["John", "runs", "."]]))
    assert out["tree"].numpy()[0] == b"(S (NP (XX John)) (VP (XX runs) (XX .)))"
    ```
    """
    symbols = _ragged_strings(symbols, "symbols")
    words = _ragged_strings(words, "words")
    root = tf.constant(root_label, tf.string)
    batch = symbols.nrows(out_type=tf.int32)
    num_words = tf.cast(words.row_lengths(), tf.int32)
    num_symbols = tf.cast(symbols.row_lengths(), tf.int32)
    padded = symbols.to_tensor(default_value="")
    steps = tf.shape(padded)[1]
    most_words = tf.reduce_max(tf.concat([num_words, [0]], 0))

    # --- 1. classify the symbols ---------------------------------------------
    in_row = tf.sequence_mask(num_symbols, steps)
    first = tf.strings.substr(padded, 0, 1)
    is_word = in_row & tf.equal(padded, WORD_SYMBOL)
    is_open = in_row & ~is_word & tf.equal(first, "(")
    is_close = in_row & ~is_word & tf.equal(first, ")")
    is_unknown = in_row & ~(is_word | is_open | is_close)
    label = tf.strings.regex_replace(padded, r"^[()]", "")
    open_label = tf.where(tf.equal(label, ""), root, label)
    word_rank = tf.cumsum(tf.cast(is_word, tf.int32), axis=1, exclusive=True)
    used_word = is_word & (word_rank < num_words[:, None])
    extra_word = is_word & ~used_word

    # --- 2. the stack of open constituents -----------------------------------
    # Time-major copies: step t reads row t.
    opens_by_step = tf.transpose(is_open)
    closes_by_step = tf.transpose(is_close)
    labels_by_step = tf.transpose(label)
    rows_index = tf.range(batch)

    def body(t, depth, stack, missing_ta, mismatched):
        opens = opens_by_step[t]
        closes = closes_by_step[t]
        top = tf.gather(stack, tf.maximum(depth - 1, 0), batch_dims=1)
        top_label = tf.gather(open_label, top, batch_dims=1)
        empty = tf.equal(depth, 0)
        missing = closes & empty
        wrong = (
            closes & ~empty & tf.not_equal(labels_by_step[t], "")
            & tf.not_equal(labels_by_step[t], top_label)
        )
        # Push t where an opening bracket comes (elsewhere rewrite the cell
        # above the top with what it holds).
        cells = tf.stack([rows_index, depth], axis=1)
        stack = tf.tensor_scatter_nd_update(
            stack, cells, tf.where(opens, t, tf.gather_nd(stack, cells))
        )
        depth = depth + tf.cast(opens, tf.int32) - tf.cast(closes & ~empty, tf.int32)
        return (t + 1, depth, stack, missing_ta.write(t, missing),
                mismatched + tf.cast(wrong, tf.int32))

    _, open_left, _, missing_ta, mismatched = tf.while_loop(
        lambda t, *_: t < steps,
        body,
        (
            tf.constant(0),
            tf.zeros([batch], tf.int32),
            tf.zeros([batch, steps + 1], tf.int32),
            tf.TensorArray(tf.bool, size=steps, element_shape=[None]),
            tf.zeros([batch], tf.int32),
        ),
    )
    missing_open = tf.cond(
        steps > 0,
        lambda: tf.transpose(missing_ta.stack()),
        lambda: tf.zeros([batch, 0], tf.bool),
    )
    positions = tf.range(steps)

    # --- 3. the events, in order ---------------------------------------------
    words_padded = words.to_tensor(default_value="")
    word_of_symbol = tf.gather(
        tf.concat([words_padded, tf.fill([batch, 1], "")], 1),
        tf.minimum(word_rank, most_words),
        batch_dims=1,
    )
    word_piece = tf.strings.join(["(", WORD_SYMBOL, " ", word_of_symbol, ")"])
    kept = is_open | used_word | is_close
    symbol_kind = tf.where(
        is_open, _OPEN, tf.where(used_word, _WORD, _CLOSE)
    )
    symbol_piece = tf.where(
        is_open,
        tf.strings.join(["(", open_label]),
        tf.where(used_word, word_piece, tf.constant(")")),
    )
    # The words no XX took: at the end of the innermost open constituent,
    # or of the last top-level constituent (before its closing), or last.
    used = tf.reduce_sum(tf.cast(used_word, tf.int32), axis=1)
    last_event = tf.reduce_max(
        tf.where(kept, positions[None, :], -1), axis=1
    )
    last_kind = tf.gather(
        tf.concat([symbol_kind, tf.zeros([batch, 1], tf.int32)], 1),
        tf.where(last_event < 0, steps, last_event),
        batch_dims=1,
    )
    inside_last = tf.equal(open_left, 0) & tf.equal(last_kind, _CLOSE)
    word_slots = tf.range(most_words)
    missing_word = (word_slots[None, :] >= used[:, None]) & (
        word_slots[None, :] < num_words[:, None]
    )
    missing_piece = tf.strings.join(["(", WORD_SYMBOL, " ", words_padded, ")"])
    close_slots = tf.range(steps)
    final_close = close_slots[None, :] < open_left[:, None]

    # Sort keys within a row: added openings (last first) < symbols (with
    # room for the words placed before the last closing) < words left <
    # closings left.
    stride = tf.cast(most_words + 2, tf.int64)
    base = tf.cast(steps + 1, tf.int64)
    t64 = tf.cast(positions, tf.int64)[None, :]
    ones = tf.ones([batch, 1], tf.int64)
    prefix_key = (tf.cast(steps, tf.int64) - t64) * ones
    symbol_key = (base + t64 + 1) * stride * ones
    w64 = tf.cast(word_slots, tf.int64)[None, :]
    missing_key = tf.where(
        inside_last[:, None],
        (base + tf.cast(last_event, tf.int64)[:, None]) * stride + 1 + w64,
        (base + tf.cast(steps, tf.int64) + 1) * stride + 1 + w64,
    )
    close_key = (base + tf.cast(steps, tf.int64) + 2) * stride + tf.cast(
        close_slots, tf.int64
    )[None, :] * ones

    def fill(value, like, dtype):
        return tf.fill(tf.shape(like), tf.constant(value, dtype))

    valid = tf.concat([missing_open, kept, missing_word, final_close], 1)
    kind = tf.concat([
        fill(_OPEN, missing_open, tf.int32), symbol_kind,
        fill(_WORD, missing_word, tf.int32), fill(_CLOSE, final_close, tf.int32),
    ], 1)
    piece = tf.concat([
        tf.strings.join(["(", open_label]), symbol_piece, missing_piece,
        fill(")", final_close, tf.string),
    ], 1)
    key = tf.concat([prefix_key, symbol_key, missing_key, close_key], 1)
    kind = tf.ragged.boolean_mask(kind, valid)
    row_lengths = tf.cast(kind.row_lengths(), tf.int32)
    rows = tf.cast(kind.value_rowids(), tf.int32)
    kind = kind.flat_values
    piece = tf.boolean_mask(piece, valid)
    key = tf.boolean_mask(key, valid)
    span = (base + tf.cast(steps, tf.int64) + 3) * stride + base
    order = tf.argsort(tf.cast(rows, tf.int64) * span + key, stable=True)
    kind = tf.gather(kind, order)
    piece = tf.gather(piece, order)
    row_starts = tf.gather(
        tf.cumsum(row_lengths, exclusive=True), rows
    )  # rows are sorted already: the order only moves values within a row

    # --- 4. constituents without a word --------------------------------------
    is_open_event = tf.equal(kind, _OPEN)
    is_close_event = tf.equal(kind, _CLOSE)
    is_word_event = tf.equal(kind, _WORD)
    delta = tf.cast(is_open_event, tf.int32) - tf.cast(is_close_event, tf.int32)
    depth_after = _rows_cumsum(delta, row_starts)
    depth_before = depth_after - delta
    level = tf.where(is_open_event, depth_after,
                     tf.where(is_close_event, depth_before, 0))
    words_so_far = tf.cumsum(tf.cast(is_word_event, tf.int32))
    count = tf.shape(kind, out_type=tf.int64)[0]
    most_levels = tf.cast(
        tf.reduce_max(tf.concat([level, [0]], 0)), tf.int64
    ) + 1
    index = tf.range(count)
    matching = tf.argsort(
        (tf.cast(rows, tf.int64) * most_levels + tf.cast(level, tf.int64))
        * count + index,
        stable=True,
    )
    sorted_kind = tf.gather(kind, matching)
    sorted_words = tf.gather(words_so_far, matching)
    following = tf.concat([sorted_words[1:], [0]], 0)
    preceding = tf.concat([[0], sorted_words[:-1]], 0)
    sorted_empty = tf.where(
        tf.equal(sorted_kind, _OPEN),
        tf.equal(following, sorted_words),
        tf.equal(sorted_kind, _CLOSE) & tf.equal(preceding, sorted_words),
    )
    empty = tf.gather(
        sorted_empty, tf.math.invert_permutation(tf.cast(matching, tf.int32))
    )
    keep = ~empty
    empty_constituents = tf.math.unsorted_segment_sum(
        tf.cast(is_open_event & empty, tf.int32), rows, batch
    )

    # --- 5. the root and the string ------------------------------------------
    top_level = keep & tf.equal(depth_before, 0)
    top_items = tf.math.unsorted_segment_sum(
        tf.cast(top_level & ~is_close_event, tf.int32), rows, batch
    )
    top_constituents = tf.math.unsorted_segment_sum(
        tf.cast(top_level & is_open_event, tf.int32), rows, batch
    )
    added_root = ~(tf.equal(top_items, 1) & tf.equal(top_constituents, 1))
    kept_before = _rows_cumsum(tf.cast(keep, tf.int32), row_starts, exclusive=True)
    spaced = tf.where(
        ~is_close_event & (kept_before > 0),
        tf.strings.join([" ", piece]),
        piece,
    )
    joined = tf.strings.unsorted_segment_join(
        tf.boolean_mask(spaced, keep), tf.boolean_mask(rows, keep), batch
    )
    tree = tf.where(
        added_root, tf.strings.join(["(", root, " ", joined, ")"]), joined
    )

    def total(mask):
        return tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)

    repairs = tf.stack([
        total(missing_open),
        open_left,
        mismatched,
        total(extra_word),
        num_words - used,
        empty_constituents,
        tf.cast(added_root, tf.int32),
        total(is_unknown),
    ], axis=1)
    return {
        "tree": tree,
        "repairs": repairs,
        "malformed": tf.reduce_any(repairs > 0, axis=1),
    }


__all__ = ["WORD_SYMBOL", "REPAIR_KINDS", "delinearize", "symbols_from_ids"]
