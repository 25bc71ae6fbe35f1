"""Dependency trees as the TD-TreeLSTM's input arrays, and batches of them.

A tree of n words is n generation steps
(`keras_ordered.datasets.dependency.generation_steps`). Per step `t`:

- `words[t]`: the conditioning word's id (`<root>` for the root),
- `actions[t]`: 0 GEN-L, 1 GEN-R, 2 GEN-NX-L, 3 GEN-NX-R,
- `sources[t]`: the state memory row of the conditioning node (0 = the
  root, `k + 1` = the node generated at step `k`),
- `targets[t]`: the generated word's id (0 = `<pad>` marks padding),
- `positions[t]`: the generated word's number in the sentence (1-based),
- `left_context[t, :]`: LdTreeLSTM's input, the head's left dependents'
  ids farthest-to-nearest for a GEN-R step, right-aligned (padding 0
  first), empty for the others.

A batch also carries its `schedule` (`action_schedule`): the order in which
`keras_ordered.layers.TopDownTreeLSTM` computes the steps of all its trees,
each loop iteration one action's steps only (one LSTM's multiply-adds per
step instead of the four actions' fused kernel).
"""

import math

import numpy as np

from keras_ordered.datasets.dependency import ACTIONS
from keras_ordered.datasets.dependency import check_heads
from keras_ordered.datasets.dependency import generation_steps
from keras_ordered._tokens import ROOT_ID

INPUT_NAMES = ("words", "actions", "sources", "targets", "left_context",
               "schedule")
SCHEDULE_ROWS = 32
"""The default rows of one schedule iteration (see `action_schedule`)."""

_ACTION_IDS = {name: i for i, name in enumerate(ACTIONS)}


def encode_tree(word_ids, heads):
    """The step arrays of one tree (see the module docstring).

    Args:
        word_ids: list of int, the sentence's word ids.
        heads: list of int, `heads[i]` the head of word `i + 1`.

    Returns:
        dict of lists `words`, `actions`, `sources`, `targets`,
        `positions`, `left_context` (a list of id tuples).
    """
    heads = check_heads(heads)
    if len(word_ids) != len(heads):
        raise ValueError(
            f"{len(word_ids)} words but {len(heads)} heads: one head per word."
        )
    steps = generation_steps(heads)
    row = {0: 0}
    for t, (word, _, _, _) in enumerate(steps):
        row[word] = t + 1
    ids = [ROOT_ID] + list(word_ids)
    return {
        "words": [ids[source] for _, _, source, _ in steps],
        "actions": [_ACTION_IDS[action] for _, action, _, _ in steps],
        "sources": [row[source] for _, _, source, _ in steps],
        "targets": [ids[word] for word, _, _, _ in steps],
        "positions": [word for word, _, _, _ in steps],
        "left_context": [tuple(ids[w] for w in context)
                         for _, _, _, context in steps],
    }


def pad_length(n, multiple):
    return max(multiple, int(math.ceil(n / multiple)) * multiple)


def action_schedule(actions, sources, lengths, rows=SCHEDULE_ROWS, pad_to=8):
    """An action-homogeneous order of a batch's generation steps.

    The BFS generation order only matters through one constraint: a step's
    source state exists before the step runs. This spreads the steps of all
    the batch's trees over loop iterations of at most `rows` steps, every
    iteration holding the steps of **one action** whose sources were
    computed in earlier iterations, so that the iteration multiplies by that
    action's kernel only (one LSTM's multiply-adds per step). Greedy list
    scheduling: each iteration takes the action whose ready steps have the
    longest chains of steps waiting on them (the critical path first), and
    of those steps the `rows` with the longest chains.

    Args:
        actions: int array `(batch, T)`, 0..3 (see `encode_tree`).
        sources: int array `(batch, T)`, the memory row of each step's
            source (0 = the root, `k` = step `k - 1`).
        lengths: int array `(batch,)`, the steps of each tree (the others
            are padding and are left out).
        rows: int, the most steps per iteration (the loop's row count is
            `min(rows, batch rounded up to 8)`).
        pad_to: int, the iterations are padded to a multiple of it with
            empty ones (fewer distinct shapes: fewer XLA compilations).

    Returns:
        int32 array `(iterations, rows)`: flat step indices `b * T + t`;
        `batch * T` marks an empty slot. An iteration's first slot is a
        step unless the iteration is empty (then all are), and the empty
        iterations come last.

    Raises:
        ValueError: a step whose source never runs (a cycle of sources,
            or a source in the padding).

    Example:

    >>> action_schedule(np.array([[1, 0, 1]]), np.array([[0, 1, 1]]), [3],
    ...                 rows=8, pad_to=1)[:, :2]
    array([[0, 3],
           [1, 3],
           [2, 3]], dtype=int32)
    """
    actions = np.asarray(actions)
    sources = np.asarray(sources)
    batch, steps = actions.shape
    lengths = np.asarray(lengths).reshape(batch)
    rows = int(min(rows, pad_length(batch, 8)))
    valid = np.arange(steps)[None] < lengths[:, None]
    # Longest chain of steps below each step (its dependents' depth).
    height = np.zeros((batch, steps + 1), "int64")  # column k: step k - 1
    for t in range(steps - 1, -1, -1):
        live = valid[:, t]
        source = np.where(live, sources[:, t], 0)
        np.maximum.at(height, (np.arange(batch), source),
                      np.where(live, height[:, t + 1] + 1, 0))
    height = height[:, 1:].reshape(-1)
    flat_actions = actions.reshape(-1)
    # Memory column of each step's source: 0 = the root (always computed).
    source_column = (np.arange(batch)[:, None] * (steps + 1)
                     + np.where(valid, sources, 0)).reshape(-1)
    done = np.zeros(batch * (steps + 1), bool)
    done[np.arange(batch) * (steps + 1)] = True
    waiting = valid.reshape(-1).copy()
    step_column = (np.arange(batch)[:, None] * (steps + 1)
                   + np.arange(1, steps + 1)[None]).reshape(-1)
    schedule = []
    while waiting.any():
        ready = waiting & done[source_column]
        best = None
        for action in range(4):
            candidates = np.flatnonzero(ready & (flat_actions == action))
            if not len(candidates):
                continue
            order = candidates[np.argsort(-height[candidates], kind="stable")]
            chosen = order[:rows]
            score = (int(height[chosen].sum()) + len(chosen), -action)
            if best is None or score > best[0]:
                best = (score, chosen)
        if best is None:
            b, t = divmod(int(np.flatnonzero(waiting)[0]), steps)
            raise ValueError(
                f"Step {t} of tree {b} waits on the state of step "
                f"{sources[b, t] - 1}, which never runs: each step's source "
                "must be 0 (the root) or k with 0 < k <= its own step "
                "(`encode_tree` builds them so).")
        chosen = best[1]
        waiting[chosen] = False
        done[step_column[chosen]] = True
        slot = np.full(rows, batch * steps, "int32")
        slot[:len(chosen)] = np.sort(chosen)
        schedule.append(slot)
    total = max(pad_to, -(-len(schedule) // pad_to) * pad_to)
    while len(schedule) < total:
        schedule.append(np.full(rows, batch * steps, "int32"))
    return np.stack(schedule)


def batch_arrays(encoded, pad_to=8, left_context=True, schedule_rows=None):
    """Stacks encoded trees into padded arrays.

    Args:
        encoded: list of `encode_tree` dicts.
        pad_to: int, the step and context lengths are rounded up to a
            multiple of it, the schedule's iterations to a multiple of
            `4 * pad_to` (fewer distinct shapes: fewer XLA compilations).
        left_context: bool, include `left_context` (LdTreeLSTM).
        schedule_rows: int or None, include the `schedule` of
            `action_schedule` with iterations of at most this many steps
            (None: no schedule; the model then runs the steps in generation
            order).

    Returns:
        `(inputs, positions)`: a dict of int32 arrays `words`, `actions`,
        `sources`, `targets` `(batch, T)` (and `left_context` `(batch, T,
        K)`, `schedule` `(iterations, rows)`), and the int32 `positions`
        `(batch, T)` (0 at padding).
    """
    rows = len(encoded)
    steps = pad_length(max(len(e["targets"]) for e in encoded), pad_to)
    arrays = {name: np.zeros((rows, steps), "int32")
              for name in ("words", "actions", "sources", "targets")}
    positions = np.zeros((rows, steps), "int32")
    for r, e in enumerate(encoded):
        n = len(e["targets"])
        for name in arrays:
            arrays[name][r, :n] = e[name]
        positions[r, :n] = e["positions"]
    if left_context:
        longest = max((len(c) for e in encoded for c in e["left_context"]),
                      default=0)
        width = pad_length(max(longest, 1), 8)
        context = np.zeros((rows, steps, width), "int32")
        for r, e in enumerate(encoded):
            for t, ids in enumerate(e["left_context"]):
                if ids:
                    context[r, t, width - len(ids):] = ids
        arrays["left_context"] = context
    if schedule_rows is not None:
        lengths = np.array([len(e["targets"]) for e in encoded])
        # Empty iterations cost only their share of zeroed buffers (the
        # loop stops at the last step), so the iterations are padded
        # coarsely: few distinct shapes, few XLA compilations.
        arrays["schedule"] = action_schedule(
            arrays["actions"], arrays["sources"], lengths, schedule_rows,
            4 * pad_to)
    return arrays, positions
