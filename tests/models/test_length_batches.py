"""`models.base.length_batches`: the forward passes of `sentence_distances`,
cut at the least padded cost."""

import itertools

import numpy as np
import pytest

from keras_ordered.models.base import length_batches


def brute_force_cost(widths, batch_size, step_rows):
    """The least cost over every cut of sorted `widths` into consecutive
    passes of at most `batch_size` rows: each pass costs its widest
    sentence times (its rows + `step_rows`)."""
    count = len(widths)
    best = float("inf")
    for cuts in itertools.product((False, True), repeat=count - 1):
        bounds = [0] + [i + 1 for i, cut in enumerate(cuts) if cut] + [count]
        passes = list(zip(bounds, bounds[1:]))
        if any(end - start > batch_size for start, end in passes):
            continue
        best = min(best, sum(widths[end - 1] * (end - start + step_rows)
                             for start, end in passes))
    return best


@pytest.mark.parametrize("seed", range(20))
def test_the_cut_is_the_least_cost_one_and_keeps_every_sentence_once(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 11))
    widths = [int(w) for w in rng.integers(3, 60, size=count)]
    order = sorted(range(count), key=widths.__getitem__)
    batch_size = int(rng.integers(1, 6))
    step_rows = float(rng.choice([0, 4, 16]))
    passes = length_batches(order, widths, batch_size, step_rows=step_rows)
    assert [i for p in passes for i in p] == order
    assert all(1 <= len(p) <= batch_size for p in passes)
    cost = sum(widths[p[-1]] * (len(p) + step_rows) for p in passes)
    assert cost == brute_force_cost([widths[i] for i in order], batch_size,
                                    step_rows)


def test_a_long_tail_gets_a_pass_of_its_own():
    # 63 short sentences and one long one: equal batches of 64 pad all 64
    # rows to the long one.
    widths = [10] * 63 + [80]
    passes = length_batches(list(range(64)), widths, batch_size=64)
    assert passes == [list(range(63)), [63]]
    # Without a step cost, one sentence a pass would be as good as any cut
    # without padding; with a step cost, equal widths share one pass.
    assert length_batches(list(range(8)), [5] * 8, batch_size=8) == [
        list(range(8))]
