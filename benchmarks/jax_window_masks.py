"""Runs a recipe on JAX with PRPN's per-step reading dropouts drawn for the
whole window before the scan, instead of from a key per step.

On JAX, `PRPNReadingNetwork` runs `keras_ordered.layers.prpn_cell.
jax_reading_loop`: every step of the scan takes a key of its own (drawn
from the cell's seed generator before the loop) and folds a counter into
it for each of its dropouts (`StepSeeds`). TensorFlow's layer loop draws
the same dropouts as `(batch, time, features)` masks from the layers' own
generators before its loop. This script swaps JAX's scheme for
TensorFlow's arrangement (masks of the whole window drawn first, one
slice a step), leaving everything else as it is, and then runs the recipe
given after it, with its options:

    KERAS_BACKEND=jax python benchmarks/jax_window_masks.py \\
        recipes/ptb_prpn.py --preset quick --epochs 1 --skip-test \\
        --data ../shared/data/ptb --seed 1 --output runs/wm/jax_1

Over seeds (`backend_seed_losses.py` runs any command):

    python benchmarks/backend_seed_losses.py --backends jax --seeds 1 2 3 \\
        --output runs/jax_window_masks -- benchmarks/jax_window_masks.py \\
        recipes/ptb_prpn.py --preset quick --epochs 1 --skip-test \\
        --data ../shared/data/ptb

A study tool for `benchmarks/records/prpn_quick_float32_jax/`: whether
the way JAX draws the reading network's dropouts is what makes its
trainings end worse. The masks have the distribution of the per-step
draws (element-wise, fresh for every step, position and batch row, scaled
by `1 / (1 - rate)`); `--check` prints the fraction of zeros of each mask
on a tiny model against its rate and exits.
"""

import os
import runpy
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
from keras import ops  # noqa: E402

from keras_ordered.layers import gated_attention  # noqa: E402
from keras_ordered.layers import prpn_cell  # noqa: E402

_original_loop = prpn_cell.jax_reading_loop
_original_drop = gated_attention.GatedAttention._drop
_original_step_dropout = prpn_cell.PRPNReadingCell._step_dropout


class MaskFeeder:
    """The masks of one step, handed out in the order the cell draws its
    dropouts (per layer: attention key, attention projection, LSTM
    input)."""

    def __init__(self, masks):
        self._masks = list(masks)
        self._next = 0

    def next_mask(self):
        mask = self._masks[self._next]
        self._next += 1
        return mask


def _drop(self, x, training):
    if (training and self.dropout > 0.0
            and isinstance(self._step_seeds, MaskFeeder)):
        return x * ops.cast(self._step_seeds.next_mask(), x.dtype)
    return _original_drop(self, x, training)


def _step_dropout(self, x, rate):
    if rate > 0.0 and isinstance(self._step_seeds, MaskFeeder):
        return x * ops.cast(self._step_seeds.next_mask(), x.dtype)
    return _original_step_dropout(self, x, rate)


def _window_mask(shape, rate, generator):
    return keras.random.dropout(ops.ones(shape, "float32"), rate,
                                seed=generator)


def window_masks(cell, batch, steps):
    """The window's masks, `(batch, steps, features)` each, in the order
    the cell draws its per-step dropouts (zero rates draw nothing)."""
    masks = []
    for index in range(cell.num_layers):
        attention = cell.attentions[index]
        layer_input = cell.input_dim if index == 0 else cell.units
        if attention.dropout > 0.0:
            masks.append(_window_mask(
                (batch, steps, layer_input + cell.units), attention.dropout,
                attention.seed_generator))
            masks.append(_window_mask((batch, steps, attention.units),
                                      attention.dropout,
                                      attention.seed_generator))
        rate = cell._layer_rate(index)
        if rate > 0.0:
            masks.append(_window_mask((batch, steps, layer_input), rate,
                                      cell.seed_generator))
    return masks


def window_mask_loop(rnn, sequences, initial_state, mask=None,
                     training=False):
    """`jax_reading_loop` with the window's masks drawn before the scan."""
    cell = rnn.cell
    per_step = training and (
        cell.dropout or cell.layer_dropout or cell.attention_dropout)
    if not per_step:
        return _original_loop(rnn, sequences, initial_state, mask,
                              training=training)
    batch, steps = ops.shape(sequences)[0], sequences.shape[1]
    masks = window_masks(cell, batch, steps)
    return prpn_cell.scan_with_step_seeds(
        rnn, sequences, masks, initial_state, mask, training,
        lambda *step_masks: MaskFeeder(step_masks))


def install():
    """Puts the window-mask loop in place of `jax_reading_loop`."""
    prpn_cell.jax_reading_loop = window_mask_loop
    gated_attention.GatedAttention._drop = _drop
    prpn_cell.PRPNReadingCell._step_dropout = _step_dropout


def check():
    """Fraction of zeros of each mask of a tiny cell, against its rate."""
    import numpy as np

    cell = prpn_cell.PRPNReadingCell(20, num_layers=2, num_slots=4,
                                     dropout=0.3, layer_dropout=0.2,
                                     attention_dropout=0.1, seed=1)
    cell.build((None, 16 + 4))
    masks = window_masks(cell, 64, 35)
    for mask in masks:
        values = np.asarray(mask)
        zeros = float((values == 0).mean())
        print(f"shape {values.shape}: zeros {zeros:.3f}, kept values "
              f"{sorted(set(np.round(values[values > 0], 4)))}")
    # One step of the cell takes every mask of its step, once.
    install()
    feeder = MaskFeeder([m[:, 0] for m in masks])
    for layer in (cell, *cell.attentions):
        layer._step_seeds = feeder
    states = cell.get_initial_state(64)
    cell(ops.zeros((64, 16 + 4)), states, training=True)
    print(f"one step drew {feeder._next} of its {len(masks)} masks")


def main():
    if sys.argv[1:] == ["--check"]:
        check()
        return
    if len(sys.argv) < 2:
        sys.exit("usage: jax_window_masks.py RECIPE [OPTIONS...]")
    if keras.backend.backend() != "jax":
        sys.exit("jax_window_masks.py changes JAX's loop: run it with "
                 "KERAS_BACKEND=jax.")
    install()
    recipe = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(recipe, run_name="__main__")


if __name__ == "__main__":
    main()
