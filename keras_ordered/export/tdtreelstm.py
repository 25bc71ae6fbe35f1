"""SavedModels of the top-down TreeLSTM / LdTreeLSTM language model.

`export_tdtreelstm` writes a versioned SavedModel whose signature `score`
(also `serving_default`) takes a batch of sentences with their dependency
trees as strings (`trees`: `tf.string`, shape `[None]`), one block per
sentence, one token per line:

- Malt-TAB: `word TAB POS TAB head` (a fourth column, the label, is
  allowed), head 0 = the root, what `../shared/data/wsj_sample/dep` holds;
- CoNLL-X / CoNLL-U: 10 tab-separated columns `ID FORM LEMMA UPOS XPOS
  FEATS HEAD DEPREL DEPS MISC`; the word is FORM, the head HEAD; CoNLL-U
  multiword-token lines (`1-2`) and empty nodes (`1.1`) are left out, the
  other IDs must count 1, 2, ...

A line without a tab is split at whitespace (as `read_malt` does); a line
that starts with `#` and holds no tab is a comment (CoNLL-U's `# text =
...`) and is skipped, as are blank lines before and after the tokens.
Every line of a block has the same number of columns (3, 4 or 10). Line
breaks may be `\\n` or `\\r\\n`.

Everything runs in the graph with core TensorFlow ops: the lines and
columns are parsed (`tf.strings`), the tree is checked as
`keras_ordered.datasets.dependency.check_heads` does (the cycle check by
pointer jumping over the heads), the generation order and each step's
action, conditioning word and left context are computed as
`generation_steps` computes them (`tree_steps`), the model's inputs are
built as `keras_ordered.models.tdtreelstm.inputs` builds them (words looked
up in the model's `DependencyVocabulary`, lower-cased when it lower-cases,
`<unk>` for the others; the vocabulary file is the asset
`assets/tdtreelstm_vocabulary.txt`), the model runs in inference mode, and
each step's log-probability is put back at its word's position. The
generation LSTMs run in an action-homogeneous schedule built in the graph
(`action_schedule`, the greedy scheduling of
`keras_ordered.models.tdtreelstm.inputs.action_schedule`), one action per
loop iteration, as in training and `score`.

Outputs, the batch first: `words` (string `[batch, max_words]`, as
written, padded with `""`), `heads` (int32, padded with 0), `length`
(int32, the words of the sentence), `word_log_probs` (float32 `[batch,
max_words]`, `log P(w_i | D(w_i))` in sentence order, 0 after `length`),
`sentence_log_prob` (`log P(S | T)`, natural log), `perplexity`
(`exp(-sentence_log_prob / length)`), `valid` and `error`. A block that
is not a tree (an empty block, a blank line inside it, a wrong column
count, a token ID out of sequence, a head that is not an integer, more
words than the exported limit, a head out of range, a word its own head,
no root, two roots, a cycle, invalid UTF-8) gets `valid` false, an `error`
message naming the line or the words, and zeros; the other sentences of
the batch get the answers they would get alone. The numbers are those of
`TDTreeLSTMLanguageModel.score` (`tests/export/test_export_tdtreelstm.py`
checks them to 1e-5 in a process that cannot import keras_ordered).
"""

import os
import tempfile

import keras
import tensorflow as tf

from keras_ordered.export import text as text_lib
from keras_ordered.export.language_model import DEFAULT_MAX_LENGTH
from keras_ordered.export.layout import version_path
from keras_ordered.export.layout import write_version
from keras_ordered.models.tdtreelstm.tdtreelstm_language_model import (
    TDTreeLSTMLanguageModel,
)
from keras_ordered._tokens import ROOT_ID

VOCABULARY_FILE = "tdtreelstm_vocabulary.txt"
"""The name of the vocabulary under the SavedModel's `assets/`."""

TREES_SPEC = tf.TensorSpec([None], tf.string, name="trees")
"""The input of the signature: one dependency block per sentence."""

_BIG = 2 ** 30
_SPACE = text_lib._SPLIT_SPACE


def _segment_first(flags, segments, batch):
    """Per segment, the smallest flat index where `flags` holds (else _BIG)."""
    index = tf.range(tf.shape(flags)[0], dtype=tf.int32)
    return tf.math.unsorted_segment_min(
        tf.where(flags, index, _BIG), segments, batch)


def _pick(values, index):
    """`values[index]`, `""` (or 0) where `index` is _BIG."""
    padded = tf.concat([values, tf.zeros([1], values.dtype)], axis=0)
    return tf.gather(padded, tf.minimum(index, tf.shape(values)[0]))


def _first_error(checks, batch):
    """The message of the first `(has_error, message)` that holds, per row."""
    message = tf.fill([batch], "")
    for has_error, text in reversed(checks):
        message = tf.where(has_error, text, message)
    return message


def _str(values):
    return tf.strings.as_string(values)


def parse_blocks(blocks, max_length=DEFAULT_MAX_LENGTH):
    """Reads the word and head columns of dependency blocks, in the graph.

    Args:
        blocks: string tensor `[batch]`, one Malt-TAB or CoNLL block per
            sentence (see the module docstring).
        max_length: int, the most words a sentence may have.

    Returns:
        dict: `words` (ragged string `[batch, (n)]`), `heads` (ragged int32,
        as written; not yet checked to form a tree), `valid` (bool `[batch]`)
        and `error` (string `[batch]`): the rows that cannot be read are
        emptied and say why.
    """
    blocks = tf.convert_to_tensor(blocks, tf.string)
    batch = tf.shape(blocks)[0]
    repaired, valid_utf8 = text_lib.repair_utf8(blocks)
    text = tf.strings.regex_replace(repaired, "\r\n?", "\n")
    lines = tf.strings.split(text, "\n")
    row = tf.cast(lines.value_rowids(), tf.int32)
    flat = lines.values
    index = tf.range(tf.shape(flat)[0], dtype=tf.int32)
    number = index - tf.gather(tf.cast(lines.row_starts(), tf.int32), row) + 1
    blank = tf.strings.regex_full_match(flat, f"[{_SPACE}]*")
    comment = tf.strings.regex_full_match(flat, "#[^\t]*")
    token = ~blank & ~comment

    # A blank line between two token lines: two sentences in one block.
    first_token = _segment_first(token, row, batch)
    last_token = tf.math.unsorted_segment_max(
        tf.where(token, index, -1), row, batch)
    inner = blank & (index > tf.gather(first_token, row)) & (
        index < tf.gather(last_token, row))
    inner_first = _segment_first(inner, row, batch)
    inner_message = tf.strings.join([
        "line ", _str(_pick(number, inner_first)), " is blank: send one "
        "sentence per block (a blank line ends a sentence)"])

    # The token lines and their columns.
    token_index = tf.cast(tf.where(token)[:, 0], tf.int32)
    lines = tf.gather(flat, token_index)
    token_row = tf.gather(row, token_index)
    token_number = tf.gather(number, token_index)
    has_tab = tf.strings.regex_full_match(lines, "(?s).*\t.*")
    spaced = tf.strings.regex_replace(
        tf.strings.regex_replace(lines, f"^[{_SPACE}]+|[{_SPACE}]+$", ""),
        f"[{_SPACE}]+", "\t")
    fields = tf.strings.split(tf.where(has_tab, lines, spaced), "\t")
    columns = tf.cast(fields.row_lengths(), tf.int32)
    cells = tf.strings.strip(fields.to_tensor("", shape=[None, 10]))
    count = tf.shape(lines)[0]
    first_line = _segment_first(tf.ones([count], tf.bool), token_row, batch)
    expected = _pick(columns, first_line)  # the first token line's columns
    allowed = (tf.equal(columns, 3) | tf.equal(columns, 4)
               | tf.equal(columns, 10))
    bad_columns = ~allowed | tf.not_equal(columns, tf.gather(expected, token_row))
    column_first = _segment_first(bad_columns, token_row, batch)
    column_message = tf.where(
        _pick(allowed, column_first),
        tf.strings.join([
            "line ", _str(_pick(token_number, column_first)), " has ",
            _str(_pick(columns, column_first)), " columns, line ",
            _str(_pick(token_number, first_line)), " has ", _str(expected),
            ": every line of a block has the same columns"]),
        tf.strings.join([
            "line ", _str(_pick(token_number, column_first)), " has ",
            _str(_pick(columns, column_first)), " columns: Malt-TAB lines "
            "have 3 or 4 (word TAB POS TAB head [TAB label]), CoNLL-X/U "
            "lines 10 (ID FORM LEMMA UPOS XPOS FEATS HEAD ...)"]))

    # CoNLL: multiword tokens and empty nodes left out, IDs 1, 2, ...
    conll = tf.gather(tf.equal(expected, 10), token_row)
    ids = cells[:, 0]
    kept = ~(conll & tf.strings.regex_full_match(ids, r"\d+-\d+|\d+\.\d+"))
    kept_int = tf.cast(kept, tf.int32)
    before = tf.cumsum(kept_int, exclusive=True)
    position = before - tf.gather(
        tf.math.unsorted_segment_min(before, token_row, batch), token_row) + 1
    small_id = tf.strings.regex_full_match(ids, r"0*\d{1,9}")
    id_value = tf.strings.to_number(tf.where(small_id, ids, "0"), tf.int32)
    bad_id = conll & kept & (~small_id | tf.not_equal(id_value, position))
    id_first = _segment_first(bad_id, token_row, batch)
    id_message = tf.strings.join([
        "line ", _str(_pick(token_number, id_first)), ": token id '",
        _pick(ids, id_first), "' where ", _str(_pick(position, id_first)),
        " was expected (CoNLL IDs count 1, 2, ...)"])

    words = tf.where(conll, cells[:, 1], cells[:, 0])
    head_text = tf.where(conll, cells[:, 6], cells[:, 2])
    numeric = tf.strings.regex_full_match(head_text, r"-?\d+")
    small = tf.strings.regex_full_match(head_text, r"-?0*\d{1,9}")
    heads = tf.strings.to_number(tf.where(small, head_text, "0"), tf.int32)
    heads = tf.where(small | ~numeric, heads, tf.where(
        tf.strings.regex_full_match(head_text, "-.*"), -_BIG, _BIG))
    bad_head = kept & ~numeric
    head_first = _segment_first(bad_head, token_row, batch)
    head_message = tf.strings.join([
        "line ", _str(_pick(token_number, head_first)), ": the head '",
        _pick(head_text, head_first), "' is not an integer"])

    lengths = tf.math.unsorted_segment_sum(kept_int, token_row, batch)
    checks = [
        (~valid_utf8, "invalid UTF-8: send the block encoded as UTF-8"),
        (tf.equal(first_token, _BIG), "empty block: no token line (one "
         "line per word: word TAB POS TAB head, or the 10 CoNLL columns)"),
        (inner_first < _BIG, inner_message),
        (column_first < _BIG, column_message),
        (id_first < _BIG, id_message),
        (head_first < _BIG, head_message),
        (tf.equal(lengths, 0), "empty sentence: no word"),
        (lengths > max_length, tf.strings.join([
            "the sentence has ", _str(lengths), " words, more than the "
            f"limit of {max_length}"])),
    ]
    error = _first_error(checks, batch)
    valid = tf.equal(error, "")
    keep = kept & tf.gather(valid, token_row)
    keep_index = tf.where(keep)[:, 0]
    rows = tf.gather(token_row, keep_index)

    def ragged(values):
        return tf.RaggedTensor.from_value_rowids(
            tf.gather(values, keep_index), tf.cast(rows, tf.int64),
            nrows=tf.cast(batch, tf.int64))

    return {"words": ragged(words), "heads": ragged(heads), "valid": valid,
            "error": error}


def _ancestors(heads, lengths):
    """Pointer jumping over `[root] + heads`: `(reaches_root, depth)`.

    `heads` int32 `[batch, W]` within range; `lengths` `[batch]`. Nodes
    are 0 (the root) .. W; a padding word hangs from the root.
    """
    batch = tf.shape(heads)[0]
    width = tf.shape(heads)[1]
    inside = tf.sequence_mask(lengths, width)
    parent = tf.concat([tf.zeros([batch, 1], tf.int32),
                        tf.where(inside, heads, 0)], axis=1)
    depth = tf.concat([tf.zeros([batch, 1], tf.int32),
                       tf.ones([batch, width], tf.int32)], axis=1)

    def body(span, parent, depth):
        depth = depth + tf.gather(depth, parent, batch_dims=1)
        parent = tf.gather(parent, parent, batch_dims=1)
        return span * 2, parent, depth

    _, parent, depth = tf.while_loop(
        lambda span, parent, depth: span < width + 1, body,
        (tf.constant(1), parent, depth))
    return tf.equal(parent, 0), depth


def check_trees(heads, lengths):
    """Per-row tree checks of `check_heads`, in the graph.

    Args:
        heads: int32 `[batch, W]`, `heads[b, i]` the head of word `i + 1`
            (anything after `lengths[b]`).
        lengths: int32 `[batch]`, the words of each row (0: nothing to check).

    Returns:
        `(valid, error)`: bool and string `[batch]`.
    """
    batch = tf.shape(heads)[0]
    width = tf.shape(heads)[1]
    inside = tf.sequence_mask(lengths, width)
    number = tf.broadcast_to(tf.range(1, width + 1), tf.shape(heads))
    n = lengths[:, None]
    out_of_range = inside & ((heads < 0) | (heads > n))
    own = inside & tf.equal(heads, number)
    bad = out_of_range | own
    has_bad = tf.reduce_any(bad, axis=1)
    first = tf.reduce_min(tf.where(bad, number - 1, _BIG), axis=1)
    first = tf.where(has_bad, first, 0)
    word = first + 1
    extra = tf.zeros([batch, 1], tf.int32)  # gathers stay valid when W = 0
    value = tf.gather(tf.concat([heads, extra], 1), first, batch_dims=1)
    bad_message = tf.where(
        tf.equal(value, word),
        tf.strings.join(["word ", _str(word), " is its own head"]),
        tf.strings.join([
            "the head of word ", _str(word), " is ",
            tf.where(tf.abs(value) < _BIG, _str(value), "a huge number"),
            ", out of range 0..", _str(lengths), " (0 = the root)"]))
    is_root = inside & tf.equal(heads, 0)
    roots = tf.reduce_sum(tf.cast(is_root, tf.int32), axis=1)
    root_list = tf.strings.reduce_join(
        tf.ragged.boolean_mask(_str(number), is_root), axis=1, separator=", ")
    reaches, _ = _ancestors(tf.where(bad, 0, heads), lengths)
    cyclic = inside & ~reaches[:, 1:]
    cycle_list = tf.strings.reduce_join(
        tf.ragged.boolean_mask(_str(number), cyclic), axis=1, separator=", ")
    checks = [
        (has_bad, bad_message),
        ((lengths > 0) & tf.equal(roots, 0), "no root (no word has head 0)"),
        (roots > 1, tf.strings.join([
            _str(roots), " roots (words ", root_list,
            " have head 0); a tree has one"])),
        (tf.reduce_any(cyclic, axis=1), tf.strings.join([
            "a cycle: words ", cycle_list, " are not reachable from the root"])),
    ]
    error = _first_error(checks, batch)
    return tf.equal(error, ""), error


def tree_steps(heads, lengths):
    """The generation steps of trees, in the graph (`generation_steps`).

    The order of `keras_ordered.datasets.dependency.generation_steps`:
    breadth-first from the root, each head's left dependents nearest
    first, then its right dependents nearest first. A word's place in it
    is its rank under the key (depth, its head's rank, its place among its
    head's dependents), found by iterating the ranks to their fixed point
    (one round per level of the tree).

    Args:
        heads: int32 `[batch, W]`, valid trees (see `check_trees`) of
            `lengths[b]` words; rows of length 0 give no step.
        lengths: int32 `[batch]`.

    Returns:
        dict of int32 `[batch, W]` per step `t < lengths[b]` (0 after):
        `word` (the generated word's number), `action` (0 GEN-L, 1 GEN-R,
        2 GEN-NX-L, 3 GEN-NX-R), `source` (the conditioning word's number,
        0 = the root); bool `context` `[batch, W, W + 1]`: node `c` is in
        step `t`'s left context (a GEN-R step's head's left dependents; in
        sentence order along the last axis); int32 `rank` `[batch, W + 1]`
        (node `c`'s row in the state memory: 0 for the root, `t + 1` for
        the word of step `t`).
    """
    heads = tf.convert_to_tensor(heads, tf.int32)
    lengths = tf.convert_to_tensor(lengths, tf.int32)
    batch = tf.shape(heads)[0]
    width = tf.shape(heads)[1]
    inside = tf.sequence_mask(lengths, width)
    heads = tf.where(inside, heads, -1)
    position = tf.range(1, width + 1)
    pos_i = position[None, :, None]  # a word
    pos_j = position[None, None, :]  # another word
    head_i = heads[:, :, None]
    # sibling[b, i, j]: words i + 1 and j + 1 have the same head.
    sibling = (tf.equal(head_i, heads[:, None, :]) & inside[:, :, None]
               & inside[:, None, :] & tf.not_equal(pos_i, pos_j))

    def count(condition):
        return tf.reduce_sum(tf.cast(sibling & condition, tf.int32), axis=2)

    left = position[None, :] < heads
    order = tf.where(
        left,
        count((pos_i < pos_j) & (pos_j < head_i)),
        count(pos_j < head_i) + count((head_i < pos_j) & (pos_j < pos_i)))

    _, depth = _ancestors(tf.maximum(heads, 0), lengths)
    nodes = width + 1
    node_inside = tf.concat([tf.ones([batch, 1], tf.bool), inside], axis=1)
    depth = tf.where(node_inside, depth, nodes + 1)
    parent = tf.concat([tf.zeros([batch, 1], tf.int32),
                        tf.maximum(heads, 0)], axis=1)
    order = tf.concat([tf.zeros([batch, 1], tf.int32), order], axis=1)
    node = tf.range(nodes)

    def ranks(rank):
        parent_rank = tf.gather(rank, parent, batch_dims=1)
        keys = (depth, parent_rank, order, tf.broadcast_to(node, tf.shape(depth)))
        less = tf.zeros([batch, nodes, nodes], tf.bool)
        equal = tf.ones([batch, nodes, nodes], tf.bool)
        for key in keys:  # lexicographic: node a before node b
            a, b = key[:, :, None], key[:, None, :]
            less = less | (equal & (a < b))
            equal = equal & tf.equal(a, b)
        return tf.reduce_sum(tf.cast(less, tf.int32), axis=1)

    def body(i, rank, previous):
        return i + 1, ranks(rank), rank

    rank0 = tf.zeros([batch, nodes], tf.int32)
    _, rank, _ = tf.while_loop(
        lambda i, rank, previous: (i < nodes + 1) & tf.reduce_any(
            tf.not_equal(rank, previous)),
        body, (tf.constant(1), ranks(rank0), rank0 - 1))

    by_rank = tf.argsort(rank, axis=1, stable=True)
    steps = tf.sequence_mask(lengths, width)
    word = tf.where(steps, by_rank[:, 1:], 0)
    full_heads = tf.concat([tf.zeros([batch, 1], tf.int32),
                            tf.maximum(heads, 0)], axis=1)
    head = tf.gather(full_heads, word, batch_dims=1)  # [batch, T]
    w = word[:, :, None]
    h = head[:, :, None]
    c = tf.range(nodes)[None, None, :]
    full_inside = node_inside & tf.not_equal(node, 0)[None, :]
    child = tf.equal(full_heads[:, None, :], h) & full_inside[:, None, :]
    sib = child & tf.not_equal(c, w)
    left_step = word < head
    between_left = sib & (w < c) & (c < h)
    between_right = sib & (h < c) & (c < w)
    nearest_left = tf.reduce_min(tf.where(between_left, c, _BIG), axis=2)
    nearest_right = tf.reduce_max(tf.where(between_right, c, -1), axis=2)
    first = tf.where(left_step, ~tf.reduce_any(between_left, axis=2),
                     ~tf.reduce_any(between_right, axis=2))
    action = tf.where(left_step, tf.where(first, 0, 2), tf.where(first, 1, 3))
    source = tf.where(first, head, tf.where(left_step, nearest_left,
                                            nearest_right))
    context = child & (c < h) & tf.equal(action, 1)[:, :, None] & steps[:, :, None]
    zero = tf.zeros_like(word)
    return {
        "word": word,
        "action": tf.where(steps, action, zero),
        "source": tf.where(steps, source, zero),
        "context": context,
        "rank": rank,
    }


def _pad_length(n, multiple):
    return tf.maximum(multiple, (n + multiple - 1) // multiple * multiple)


def model_inputs(word_ids, steps, lengths, left_context=True, pad_to=8):
    """The model's inputs from word ids and `tree_steps` (as `batch_arrays`).

    Args:
        word_ids: int32 `[batch, W]`, the words' vocabulary ids.
        steps: the dict of `tree_steps`.
        lengths: int32 `[batch]`.
        left_context: include LdTreeLSTM's `left_context`.
        pad_to: the steps and contexts are padded to a multiple of it.

    Returns:
        dict of int32 tensors `words`, `actions`, `sources`, `targets`
        `[batch, T]` (and `left_context` `[batch, T, K]`).
    """
    batch = tf.shape(word_ids)[0]
    width = tf.shape(word_ids)[1]
    ids = tf.concat([tf.fill([batch, 1], ROOT_ID), word_ids], axis=1)
    mask = tf.sequence_mask(lengths, width)
    total = _pad_length(tf.reduce_max(tf.concat([lengths, [0]], 0)), pad_to)
    pad = [[0, 0], [0, total - width]]

    def padded(values):
        return tf.pad(tf.where(mask, values, 0), pad)

    inputs = {
        "words": padded(tf.gather(ids, steps["source"], batch_dims=1)),
        "actions": padded(steps["action"]),
        "sources": padded(tf.gather(steps["rank"], steps["source"],
                                    batch_dims=1)),
        "targets": padded(tf.gather(ids, steps["word"], batch_dims=1)),
    }
    if left_context:
        context = steps["context"]
        counts = tf.reduce_sum(tf.cast(context, tf.int32), axis=2)
        depth = _pad_length(tf.maximum(tf.reduce_max(
            tf.concat([tf.reshape(counts, [-1]), [0]], 0)), 1), 8)
        where = tf.cast(tf.where(context), tf.int32)  # (b, t, c), c ascending
        within = tf.cumsum(tf.cast(context, tf.int32), axis=2)
        column = (depth - tf.gather_nd(counts, where[:, :2])
                  + tf.gather_nd(within, where) - 1)
        values = tf.gather_nd(ids, tf.stack([where[:, 0], where[:, 2]], 1))
        inputs["left_context"] = tf.scatter_nd(
            tf.stack([where[:, 0], where[:, 1], column], 1), values,
            tf.stack([batch, total, depth]))
    return inputs


def action_schedule(actions, sources, lengths, rows=32):
    """`keras_ordered.models.tdtreelstm.inputs.action_schedule`, in the graph.

    The same greedy list scheduling (each iteration one action's ready
    steps, the longest waiting chains first, at most `rows` of them), with
    core TensorFlow ops, so that the served model runs the generation LSTMs
    one action per loop iteration as training and `score` do.

    Args:
        actions, sources: int32 `[batch, T]` (`model_inputs`).
        lengths: int32 `[batch]`, the steps of each tree.
        rows: int, the most steps per iteration (the row count is
            `min(rows, batch rounded up to 8)`).

    Returns:
        int32 `[iterations, rows]`: flat step indices `b * T + t`, `batch *
        T` an empty slot (no padded iterations).
    """
    actions = tf.cast(actions, tf.int32)
    batch = tf.shape(actions)[0]
    steps = tf.shape(actions)[1]
    total = batch * steps
    rows = tf.minimum(rows, _pad_length(batch, 8))
    k = tf.minimum(rows, total)
    valid = tf.sequence_mask(lengths, steps)
    sources = tf.where(valid, tf.cast(sources, tf.int32), 0)
    tree = tf.range(batch)

    # Longest chain of steps waiting on each step (column k: step k - 1).
    def longest(t, height):
        value = tf.where(valid[:, t], height[:, t + 1] + 1, 0)
        return t - 1, tf.tensor_scatter_nd_max(
            height, tf.stack([tree, sources[:, t]], 1), value)

    _, height = tf.while_loop(
        lambda t, height: t >= 0, longest,
        (steps - 1, tf.zeros([batch, steps + 1], tf.int32)))
    height = tf.reshape(height[:, 1:], [-1])
    flat_actions = tf.reshape(actions, [-1])
    source_column = tf.reshape(tree[:, None] * (steps + 1) + sources, [-1])
    step_column = tf.reshape(
        tree[:, None] * (steps + 1) + tf.range(1, steps + 1)[None], [-1])
    done = tf.tensor_scatter_nd_update(
        tf.zeros([batch * (steps + 1)], tf.bool),
        (tree * (steps + 1))[:, None], tf.ones([batch], tf.bool))
    waiting = tf.reshape(valid, [-1])

    def body(waiting, done, schedule):
        ready = waiting & tf.gather(done, source_column)
        scores, picks, kept = [], [], []
        for action in range(4):
            key = tf.where(ready & tf.equal(flat_actions, action), height, -1)
            values, index = tf.math.top_k(key, k)
            chosen = values >= 0
            scores.append(tf.reduce_sum(tf.where(chosen, values + 1, 0)))
            picks.append(index)
            kept.append(chosen)
        best = tf.argmax(tf.stack(scores), output_type=tf.int32)
        index = tf.gather(tf.stack(picks), best)
        chosen = tf.gather(tf.stack(kept), best)
        waiting = tf.tensor_scatter_nd_update(
            waiting, index[:, None], tf.gather(waiting, index) & ~chosen)
        columns = tf.gather(step_column, index)
        done = tf.tensor_scatter_nd_update(
            done, columns[:, None], tf.gather(done, columns) | chosen)
        slot = tf.concat([tf.where(chosen, index, total),
                          tf.fill([rows - k], total)], 0)
        return waiting, done, tf.concat([schedule, slot[None]], 0)

    _, _, schedule = tf.while_loop(
        lambda waiting, done, schedule: tf.reduce_any(waiting), body,
        (waiting, done, tf.zeros([0, rows], tf.int32)),
        shape_invariants=(waiting.shape, done.shape, tf.TensorShape([None, None])),
        maximum_iterations=total + 1)
    return schedule


class _TDTreeLSTMSignatures:
    """The graph function of the `score` signature, over one model."""

    def __init__(self, model, vocabulary_file, max_length):
        self.model = model
        self.vocabulary = text_lib.VocabularyTable(
            vocabulary_file, unk_token=text_lib.UNK, name="tdtreelstm_vocabulary")
        self.lowercase = bool(model.vocabulary.lowercase)
        self.max_length = max_length

    def score(self, trees):
        read = parse_blocks(trees, self.max_length)
        batch = tf.shape(trees)[0]
        lengths = tf.cast(read["heads"].row_lengths(), tf.int32)
        heads = read["heads"].to_tensor(0)
        tree_valid, tree_error = check_trees(heads, lengths)
        valid = read["valid"] & tree_valid
        error = tf.where(read["valid"], tree_error, read["error"])
        lengths = tf.where(valid, lengths, 0)
        width = tf.shape(heads)[1]
        mask = tf.sequence_mask(lengths, width)
        heads = tf.where(mask, heads, 0)
        words = tf.where(mask, read["words"].to_tensor(""), "")
        keys = text_lib.normalize(words, numbers=None, lowercase=self.lowercase)
        word_ids = tf.where(mask, tf.cast(self.vocabulary(keys), tf.int32), 0)
        steps = tree_steps(heads, lengths)
        inputs = model_inputs(word_ids, steps, lengths, self.model.ld)
        # The recurrent layers cannot run a batch of 0: one dummy row.
        padded = {
            name: tf.cond(batch > 0, lambda v=value: v,
                          lambda v=value: tf.zeros(
                              tf.concat([[1], tf.shape(v)[1:]], 0), v.dtype))
            for name, value in inputs.items()
        }
        # One action per loop iteration, as training and `score` run it.
        padded["schedule"] = action_schedule(
            padded["actions"], padded["sources"],
            tf.cond(batch > 0, lambda: lengths, lambda: tf.zeros([1], tf.int32)))
        log_probs = self.model(padded, training=False)[:batch]
        # Step t generated word `steps["word"][t]`; word p's step is rank - 1.
        step_of_word = tf.maximum(steps["rank"][:, 1:] - 1, 0)
        word_log_probs = tf.where(
            mask, tf.gather(log_probs, step_of_word, batch_dims=1), 0.0)
        total = tf.reduce_sum(tf.cast(word_log_probs, tf.float64), axis=1)
        count = tf.cast(tf.maximum(lengths, 1), tf.float64)
        perplexity = tf.exp(tf.minimum(-total / count, 50.0))
        return {
            "words": words,
            "heads": heads,
            "length": lengths,
            "word_log_probs": word_log_probs,
            "sentence_log_prob": tf.where(valid, tf.cast(total, tf.float32), 0.0),
            "perplexity": tf.where(valid, tf.cast(perplexity, tf.float32), 0.0),
            "valid": valid,
            "error": error,
        }


def _is_tdtreelstm(model):
    return isinstance(model, TDTreeLSTMLanguageModel)


def export_tdtreelstm(model, output, version=None, max_length=DEFAULT_MAX_LENGTH,
                      overwrite=False, verbose=False):
    """Writes a SavedModel of a `TDTreeLSTMLanguageModel` that scores trees.

    The signature `score` (also `serving_default`) takes dependency blocks
    (Malt-TAB or CoNLL-X/U; the module docstring gives the formats and the
    outputs) and returns each sentence's `log P(S | T)`, per word and in
    all, as `TDTreeLSTMLanguageModel.score` gives them.

    Args:
        model: a `keras_ordered.models.TDTreeLSTMLanguageModel` (TreeLSTM
            or LdTreeLSTM) that knows its words (loaded from its `.keras`
            file, or built with a vocabulary).
        output: the folder TF Serving watches; the SavedModel goes to
            `output/<version>/`.
        version: int, the version folder; `None` for one more than the
            largest present (1 in a new folder).
        max_length: the most words a sentence may have; longer ones are
            answered with an error (for that sentence only).
        overwrite: replace an existing `output/<version>/`.
        verbose: let Keras print the exported endpoint.

    Returns:
        The path of the written SavedModel (`output/<version>`).

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.datasets.dependency import DependencyVocabulary
    model = keras_ordered.models.TDTreeLSTMLanguageModel.from_preset(
        "tiny", DependencyVocabulary(["the", "cat", "sat"]), ld=True)
    path = keras_ordered.export.export_tdtreelstm(model, "exported/td")
    served = tf.saved_model.load(path)
    out = served.signatures["score"](tf.constant(
        ["the\\tDT\\t2\\ncat\\tNN\\t3\\nsat\\tVBD\\t0", "a\\tDT\\t1"]))
    print(out["sentence_log_prob"].numpy(), out["error"].numpy())
    ```
    """
    if not _is_tdtreelstm(model):
        raise ValueError(
            f"{type(model).__name__} is not a keras_ordered "
            "TDTreeLSTMLanguageModel: export_tdtreelstm cannot export it.")
    if model.vocabulary is None:
        raise ValueError(
            "The model knows only its vocabulary size, not its words: an "
            "exported model must map words to ids. Load it from its .keras "
            "file, or build it with a DependencyVocabulary or a word list.")
    if isinstance(max_length, bool) or not isinstance(max_length, int) or (
            max_length < 1):
        raise ValueError(
            f"`max_length` must be an int >= 1. Received: {max_length!r}")
    path = version_path(output, version, overwrite)
    with tempfile.TemporaryDirectory() as scratch:
        vocabulary_file = text_lib.write_vocabulary(
            list(model.vocabulary), os.path.join(scratch, VOCABULARY_FILE))
        functions = _TDTreeLSTMSignatures(model, vocabulary_file, max_length)
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.track(functions.vocabulary)
        # The first endpoint is also `serving_default`.
        archive.add_endpoint("score", functions.score, [TREES_SPEC])
        write_version(
            lambda folder: archive.write_out(folder, verbose=verbose), path
        )
    return path


__all__ = ["export_tdtreelstm", "parse_blocks", "check_trees", "tree_steps",
           "model_inputs"]
