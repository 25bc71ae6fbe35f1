"""Ordered-neurons LSTM: `cumax`, `ONLSTMCell` and the `ONLSTM` layer.

Reference:
    Shen, Tan, Sordoni, Courville. "Ordered Neurons: Integrating Tree
    Structures into Recurrent Neural Networks". ICLR 2019.
"""

import keras
from keras import ops

# `DropoutRNNCell` (`keras.layers.RNN` pre-creates the dropout masks of cells
# deriving from it and resets them afterwards: the life cycle of a
# DropConnect mask) and `backend_rnn` (the loop `keras.layers.RNN` runs) are
# private Keras APIs, imported through the one shim that explains them.
from keras_ordered.layers._checks import check_positive_int
from keras_ordered._keras_private import DropoutRNNCell
from keras_ordered._keras_private import backend_rnn


@keras.saving.register_keras_serializable(package="keras_ordered")
def cumax(x, axis=-1):
    """Cumulative softmax: `cumsum(softmax(x))`, monotone from ~0 up to 1.

    Args:
        x: tensor of logits.
        axis: int, the axis the distribution is over.

    Returns:
        A tensor of the shape of `x` whose entries rise monotonically along
        `axis` and end at 1: the expectation of a binary gate
        `g = (0, ..., 0, 1, ..., 1)` whose split point follows
        `softmax(x)`.

    Example:

    >>> keras_ordered.layers.cumax(np.zeros((1, 4)))  # doctest: +SKIP
    [[0.25, 0.5, 0.75, 1.0]]
    """
    return ops.cumsum(ops.softmax(x, axis=axis), axis=axis)


@keras.saving.register_keras_serializable(package="keras_ordered")
class ONLSTMCell(keras.layers.Layer, DropoutRNNCell):
    """Cell class for the ordered-neurons LSTM (ON-LSTM).

    An LSTM whose neurons are ordered by tree level: two master gates, the
    master forget gate `f~ = cumax(.)` and the master input gate
    `i~ = 1 - cumax(.)`, are computed per *chunk* of `chunk_size` neurons
    (`n = units / chunk_size` levels) and broadcast over each chunk:

    ```
    w  = f~ * i~                           (overlap)
    f^ = f * w + (f~ - w)
    i^ = i * w + (i~ - w)
    c  = f^ * c_prev + i^ * tanh(c_hat)
    h  = o * tanh(c)
    ```

    High levels (right end of the chunk order) are forgotten rarely and so
    hold long-lived, high-level information; the expected split points give
    syntactic distances (see `ONLSTM(return_distances=True)`).

    This class processes one step of a sequence; `keras.layers.RNN` runs it
    over a whole sequence. `keras_ordered.layers.ONLSTM` does the same with
    a faster inner loop (one input projection for all time steps) and can
    return the syntactic distances.

    Weight layout: the `4 * units + 2 * levels` gate columns of `kernel`,
    `recurrent_kernel` and `bias` are, in order: master input gate
    (`levels`), master forget gate (`levels`), output gate, cell candidate,
    input gate, forget gate (`units` each). Inside each `units` block feature
    `k = chunk * chunk_size + offset`. This is the layout of the official
    implementation (transposed), so converted weights need no permutation.

    DropConnect ("weight drop", AWD-LSTM): in training, one Bernoulli mask
    is drawn over the entries of `recurrent_kernel` per call of the RNN (per
    batch), shared by all time steps and all examples. By default, as the
    official PyTorch code does, kept entries are not rescaled in training
    and the kernel is multiplied by `1 - weight_drop` at inference
    (`weight_drop_scaling="official"`). `"inverted"` scales kept entries by
    `1 / (1 - weight_drop)` in training and uses the kernel as it is at
    inference (the Keras habit): the same expected kernel, but from the
    same initialisation and learning rate not the same training. Under the
    official training loop the official convention meets the learning-parity
    target and the inverted one misses it on one seed
    (`benchmarks/learning_parity.py`;
    benchmarks/records/learning_parity_float32/NOTE.md).

    Args:
        units: int, dimensionality of the output and cell state. Must be a
            multiple of `chunk_size`.
        chunk_size: int, number of neurons sharing one master-gate level
            (the paper's C, default 10).
        extra_master_level: bool. When `False` (the paper and the official
            code), the master gates have `n = units / chunk_size` levels, so
            the last level of `i~` is always 0 and of `f~` always 1: the top
            chunk is never written. When `True`, the master gates are
            computed over `n + 1` levels and the first `n` are used, so the
            top chunk can be written and forgotten too.
        weight_drop: float in [0, 1), DropConnect rate on the hidden-to-hidden
            kernel (the paper uses 0.45).
        weight_drop_scaling: str, `"official"` (default: unscaled mask in
            training, kernel times `1 - weight_drop` at inference) or
            `"inverted"` (kept entries scaled by `1 / (1 - weight_drop)` in
            training, the kernel as it is at inference).
        kernel_initializer: initializer of the input kernel.
        recurrent_initializer: initializer of the recurrent kernel.
        bias_initializer: initializer of the bias.
        seed: int, random seed of the DropConnect mask.
        **kwargs: base layer keyword arguments, such as `dtype`.

    Call arguments:
        inputs: a 2D tensor `(batch, features)`.
        states: list `[h, c]` of 2D tensors `(batch, units)`.
        training: Python boolean, whether DropConnect is applied.

    Example:

    ```python
    inputs = keras.random.normal((32, 15, 64))
    rnn = keras.layers.RNN(
        keras_ordered.layers.ONLSTMCell(40, chunk_size=10),
        return_sequences=True,
    )
    outputs = rnn(inputs)  # (32, 15, 40)
    ```

    Reference:
        Shen et al., "Ordered Neurons: Integrating Tree Structures into
        Recurrent Neural Networks", ICLR 2019. Merity et al., "Regularizing
        and Optimizing LSTM Language Models", ICLR 2018 (weight drop).
    """

    def __init__(
        self,
        units,
        chunk_size=10,
        extra_master_level=False,
        weight_drop=0.0,
        weight_drop_scaling="official",
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("units", units)
        check_positive_int("chunk_size", chunk_size)
        if units % chunk_size != 0:
            raise ValueError(
                f"`units` ({units}) must be divisible by `chunk_size` "
                f"({chunk_size}): each master-gate level covers one chunk of "
                "`chunk_size` neurons. Choose e.g. "
                f"units={units - units % chunk_size or chunk_size}."
            )
        if not 0.0 <= weight_drop < 1.0:
            raise ValueError(
                "`weight_drop` must be in [0, 1). "
                f"Received: weight_drop={weight_drop}"
            )
        self.units = units
        self.chunk_size = chunk_size
        self.extra_master_level = bool(extra_master_level)
        if weight_drop_scaling not in ("inverted", "official"):
            raise ValueError(
                "`weight_drop_scaling` must be 'inverted' or 'official'. "
                f"Received: weight_drop_scaling={weight_drop_scaling!r}"
            )
        self.weight_drop = float(weight_drop)
        self.weight_drop_scaling = weight_drop_scaling
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

        self.n_chunks = units // chunk_size
        self.master_levels = self.n_chunks + int(self.extra_master_level)
        self.gate_size = 4 * units + 2 * self.master_levels
        # DropoutRNNCell contract: no input dropout; "recurrent dropout" is
        # the DropConnect rate on the recurrent kernel.
        self.dropout = 0.0
        self.recurrent_dropout = self.weight_drop
        self.state_size = [units, units]
        self.output_size = units

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(input_dim, self.gate_size),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.gate_size),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
        )
        self.bias = self.add_weight(
            shape=(self.gate_size,),
            name="bias",
            initializer=self.bias_initializer,
        )

    # -- DropConnect mask (one per batch, see DropoutRNNCell) --------------
    def get_recurrent_dropout_mask(self, step_input=None):
        if not hasattr(self, "_recurrent_dropout_mask"):
            self._recurrent_dropout_mask = None
        if self._recurrent_dropout_mask is None and self.weight_drop > 0:
            keep = 1.0 - self.weight_drop
            draw = keras.random.uniform(
                (self.units, self.gate_size), seed=self.seed_generator
            )
            mask = ops.cast(draw < keep, self.compute_dtype)
            if self.weight_drop_scaling == "inverted":
                mask = mask / ops.cast(keep, self.compute_dtype)
            self._recurrent_dropout_mask = mask
        return self._recurrent_dropout_mask

    def effective_recurrent_kernel(self, training=False):
        """The recurrent kernel with this batch's DropConnect mask applied
        (in training), or scaled by `1 - weight_drop` (at inference, with
        `weight_drop_scaling="official"`)."""
        kernel = ops.cast(self.recurrent_kernel, self.compute_dtype)
        if training and self.weight_drop > 0:
            kernel = kernel * self.get_recurrent_dropout_mask()
        elif self.weight_drop > 0 and self.weight_drop_scaling == "official":
            kernel = kernel * ops.cast(1.0 - self.weight_drop,
                                       self.compute_dtype)
        return kernel

    # -- the equations ------------------------------------------------------
    def master_gates(self, master_logits):
        """Master input and forget gates from their logits.

        Args:
            master_logits: tensor `(..., 2 * master_levels)`: the first
                `master_levels` columns for the master input gate, the rest
                for the master forget gate.

        Returns:
            `(master_input, master_forget)`, each `(..., n_chunks)`: the
            paper's `i~ = 1 - cumax(.)` and `f~ = cumax(.)`, computed in
            float32 for stability.
        """
        logits = ops.cast(master_logits, "float32")
        m = self.master_levels
        master_input = 1.0 - cumax(logits[..., :m])
        master_forget = cumax(logits[..., m:])
        n = self.n_chunks
        return master_input[..., :n], master_forget[..., :n]

    def recurrence(self, z, c_prev):
        """One step of the ON-LSTM update from the gate pre-activations.

        Args:
            z: tensor `(batch, 4 * units + 2 * master_levels)`, the sum
                `x W + h_prev U + b`.
            c_prev: tensor `(batch, units)`, the previous cell state.

        Returns:
            `(h, c)`.
        """
        m2 = 2 * self.master_levels
        master_input, master_forget = self.master_gates(z[:, :m2])
        # The gates in the precision of `z`: the compute dtype in `call`,
        # float32 in the fast recurrence of `ONLSTM` (which keeps the cell
        # state in float32 under a mixed policy).
        master_input = ops.cast(master_input, z.dtype)
        master_forget = ops.cast(master_forget, z.dtype)
        # [batch, 4 * n_chunks, chunk_size]: o, c_hat, i, f blocks.
        gates = ops.reshape(z[:, m2:], (-1, 4 * self.n_chunks, self.chunk_size))
        n = self.n_chunks
        output_gate = ops.sigmoid(gates[:, :n])
        cell_candidate = ops.tanh(gates[:, n : 2 * n])
        input_gate = ops.sigmoid(gates[:, 2 * n : 3 * n])
        forget_gate = ops.sigmoid(gates[:, 3 * n :])
        # Broadcast the master gates over each chunk ("stretch").
        master_input = master_input[:, :, None]
        master_forget = master_forget[:, :, None]
        overlap = master_forget * master_input
        forget_hat = forget_gate * overlap + (master_forget - overlap)
        input_hat = input_gate * overlap + (master_input - overlap)
        c_prev = ops.reshape(c_prev, (-1, n, self.chunk_size))
        c = forget_hat * c_prev + input_hat * cell_candidate
        h = output_gate * ops.tanh(c)
        return (
            ops.reshape(h, (-1, self.units)),
            ops.reshape(c, (-1, self.units)),
        )

    def call(self, inputs, states, training=False):
        h_prev, c_prev = states[0], states[1]
        z = (
            ops.matmul(inputs, ops.cast(self.kernel, self.compute_dtype))
            + ops.matmul(h_prev, self.effective_recurrent_kernel(training))
            + ops.cast(self.bias, self.compute_dtype)
        )
        h, c = self.recurrence(z, c_prev)
        return h, [h, c]

    def syntactic_distances(self, master_logits):
        """Distances from master-gate logits `(..., 2 * master_levels)`.

        Returns:
            `(distance_forget, distance_input)`, each of shape `(...)`:
            `d_f = 1 - sum(f~) / n` (the expected split point of the master
            forget gate, over `n`) and `d_i = sum(i~) / n`.
        """
        master_input, master_forget = self.master_gates(master_logits)
        n = float(self.n_chunks)
        return (
            1.0 - ops.sum(master_forget, axis=-1) / n,
            ops.sum(master_input, axis=-1) / n,
        )

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, self.units), dtype=self.compute_dtype),
            ops.zeros((batch_size, self.units), dtype=self.compute_dtype),
        ]

    def get_config(self):
        config = {
            "units": self.units,
            "chunk_size": self.chunk_size,
            "extra_master_level": self.extra_master_level,
            "weight_drop": self.weight_drop,
            "weight_drop_scaling": self.weight_drop_scaling,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
            "seed": self.seed,
        }
        base_config = super().get_config()
        return {**base_config, **config}


@keras.saving.register_keras_serializable(package="keras_ordered")
class ONLSTM(keras.layers.RNN):
    """Ordered-neurons LSTM layer (Shen et al., 2019).

    `keras.layers.RNN(ONLSTMCell(...))` with two additions:

    - speed: the input projection `x W + b` of all time steps is one large
      matrix product outside the recurrence, and the DropConnect mask is
      applied to the recurrent kernel once per call, so each step costs a
      single `(batch, units) x (units, 4 units + 2 n)` product plus the
      gate arithmetic; on TensorFlow (without a mask, `unroll` or
      `go_backwards`) the backward pass is written by hand, one product
      per step and the kernel gradient as one product after the loop;
    - syntactic distances: with `return_distances=True` the layer also
      returns, per position, the distances of the master forget gate
      `d_f = 1 - sum(f~)/n` and of the master input gate `d_i = sum(i~)/n`,
      each `(batch, time)`. They are recomputed after the loop, vectorised,
      from the inputs and the output sequence (the master gates depend only
      on `x_t` and `h_{t-1}`), so the recurrence is the same whether or not
      they are asked for, and costs nothing extra when they are not.

    Args:
        units: int, dimensionality of the output space.
        chunk_size: int, neurons per master-gate level.
        extra_master_level: bool, see `ONLSTMCell`.
        weight_drop: float, DropConnect rate on the recurrent kernel.
        weight_drop_scaling: str, `"inverted"` or `"official"` (see
            `ONLSTMCell`).
        return_distances: bool, also return `(distance_forget,
            distance_input)` after the outputs and states. Requires
            `return_sequences=True`. Can also be given per call.
        kernel_initializer, recurrent_initializer, bias_initializer, seed:
            see `ONLSTMCell`.
        return_sequences, return_state, go_backwards, stateful, unroll,
        zero_output_for_mask: as in `keras.layers.RNN`.
        **kwargs: base layer keyword arguments.

    Call arguments:
        sequences: a 3D tensor `(batch, time, features)`.
        initial_state: optional list `[h, c]`.
        mask: optional boolean tensor `(batch, time)`.
        training: Python boolean, whether DropConnect is applied.
        return_distances: optional Python boolean overriding the
            constructor's `return_distances` for this call.

    Example:

    ```python
    layer = keras_ordered.layers.ONLSTM(
        40, chunk_size=10, return_sequences=True, return_distances=True
    )
    outputs, distance_forget, distance_input = layer(
        keras.random.normal((8, 12, 16))
    )
    ```

    Reference:
        Shen et al., "Ordered Neurons: Integrating Tree Structures into
        Recurrent Neural Networks", ICLR 2019.
    """

    def __init__(
        self,
        units,
        chunk_size=10,
        extra_master_level=False,
        weight_drop=0.0,
        weight_drop_scaling="official",
        return_distances=False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        cell = ONLSTMCell(
            units,
            chunk_size=chunk_size,
            extra_master_level=extra_master_level,
            weight_drop=weight_drop,
            weight_drop_scaling=weight_drop_scaling,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            seed=seed,
            dtype=kwargs.get("dtype"),
            name="onlstm_cell",
        )
        if return_distances and not return_sequences:
            raise ValueError(
                "`return_distances=True` gives one distance per position "
                "and needs the whole output sequence: pass "
                "`return_sequences=True` as well."
            )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            zero_output_for_mask=zero_output_for_mask,
            **kwargs,
        )
        self.return_distances = bool(return_distances)

    def inner_loop(self, sequences, initial_state, mask, training=False):
        cell = self.cell
        dtype = cell.compute_dtype
        sequences = ops.cast(sequences, dtype)
        kernel = ops.cast(cell.kernel, dtype)
        bias = ops.cast(cell.bias, dtype)
        recurrent_kernel = cell.effective_recurrent_kernel(training)
        self._last_recurrent_kernel = recurrent_kernel

        if (
            keras.backend.backend() == "tensorflow"
            and mask is None
            and not self.unroll
            and not self.go_backwards
        ):
            return _tf_fast_recurrence(
                cell, sequences, kernel, bias, list(initial_state),
                recurrent_kernel, custom_backward=bool(training),
            )

        # One input projection for every time step.
        projected = ops.matmul(sequences, kernel) + bias

        def step(z_input, states):
            h_prev, c_prev = states[0], states[1]
            z = z_input + ops.matmul(h_prev, recurrent_kernel)
            h, c = cell.recurrence(z, c_prev)
            return h, [h, c]

        return backend_rnn(
            step,
            projected,
            list(initial_state),
            go_backwards=self.go_backwards,
            mask=mask,
            unroll=self.unroll,
            input_length=sequences.shape[1],
            zero_output_for_mask=self.zero_output_for_mask,
            return_all_outputs=self.return_sequences or self.return_distances,
        )

    def call(
        self,
        sequences,
        initial_state=None,
        mask=None,
        training=False,
        return_distances=None,
    ):
        if return_distances is None:
            return_distances = self.return_distances
        if return_distances and not self.return_sequences:
            raise ValueError(
                "`return_distances=True` needs `return_sequences=True`."
            )
        if not return_distances:
            return super().call(
                sequences,
                initial_state=initial_state,
                mask=mask,
                training=training,
            )
        # Keep the initial hidden state: h_{t-1} of the first step.
        if initial_state is None:
            if self.stateful:
                initial_state = self.states
            else:
                initial_state = self.get_initial_state(
                    batch_size=ops.shape(sequences)[0]
                )
        initial_state = list(initial_state)
        result = super().call(
            sequences, initial_state=initial_state, mask=mask, training=training
        )
        outputs = result[0] if self.return_state else result
        distances = self._distances(
            sequences, outputs, initial_state[0], mask, training
        )
        if self.return_state:
            return (*result, *distances)
        return (result, *distances)

    def _distances(self, sequences, outputs, h0, mask, training):
        cell = self.cell
        dtype = cell.compute_dtype
        m2 = 2 * cell.master_levels
        if self.go_backwards:
            sequences = ops.flip(sequences, axis=1)
            if mask is not None:
                mask = ops.flip(mask, axis=1)
        # h_{t-1} for every step t, in processing order.
        h_prev = ops.concatenate(
            [ops.cast(h0, dtype)[:, None, :], ops.cast(outputs, dtype)[:, :-1]],
            axis=1,
        )
        kernel = ops.cast(cell.kernel, dtype)[:, :m2]
        recurrent = cell.effective_recurrent_kernel(False)[:, :m2]
        if training and cell.weight_drop > 0:
            recurrent = self._last_recurrent_kernel[:, :m2]
        logits = (
            ops.matmul(ops.cast(sequences, dtype), kernel)
            + ops.matmul(h_prev, recurrent)
            + ops.cast(cell.bias, dtype)[:m2]
        )
        distance_forget, distance_input = cell.syntactic_distances(logits)
        if mask is not None:
            keep = ops.cast(mask, distance_forget.dtype)
            distance_forget = distance_forget * keep
            distance_input = distance_input * keep
        return distance_forget, distance_input

    def compute_output_shape(
        self, sequences_shape, initial_state_shape=None, return_distances=None
    ):
        if return_distances is None:
            return_distances = self.return_distances
        shapes = super().compute_output_shape(
            sequences_shape, initial_state_shape
        )
        if not return_distances:
            return shapes
        distance_shape = (sequences_shape[0], sequences_shape[1])
        if self.return_state:
            return (*shapes, distance_shape, distance_shape)
        return (shapes, distance_shape, distance_shape)

    def compute_output_spec(
        self,
        sequences,
        initial_state=None,
        mask=None,
        training=False,
        return_distances=None,
    ):
        if return_distances is None:
            return_distances = self.return_distances
        shapes = self.compute_output_shape(
            sequences.shape, return_distances=return_distances
        )
        if not return_distances:
            if not self.return_state:
                return keras.KerasTensor(shapes, dtype=self.compute_dtype)
            return tuple(
                keras.KerasTensor(s, dtype=self.compute_dtype) for s in shapes
            )
        # Distances are computed in float32 (cumax), whatever the policy.
        outputs = [
            keras.KerasTensor(s, dtype=self.compute_dtype) for s in shapes[:-2]
        ]
        outputs += [keras.KerasTensor(s, dtype="float32") for s in shapes[-2:]]
        return tuple(outputs)

    def compute_mask(self, _, mask):
        base = super().compute_mask(_, mask)
        if not self.return_distances:
            return base
        if isinstance(base, list):
            return base + [None, None]
        return [base, None, None]

    @property
    def units(self):
        return self.cell.units

    @property
    def chunk_size(self):
        return self.cell.chunk_size

    def get_config(self):
        config = super().get_config()
        del config["cell"]
        cell_config = self.cell.get_config()
        for key in (
            "units",
            "chunk_size",
            "extra_master_level",
            "weight_drop",
            "weight_drop_scaling",
            "kernel_initializer",
            "recurrent_initializer",
            "bias_initializer",
            "seed",
        ):
            config[key] = cell_config[key]
        config["return_distances"] = self.return_distances
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _tf_fast_recurrence(cell, sequences, kernel, bias, initial_state,
                        recurrent_kernel, custom_backward=True):
    """The ON-LSTM layer on TensorFlow, with a hand-written backward pass.

    Auto-differentiating the loop makes TensorFlow stack every intermediate
    of every step and accumulate `dU += h_{t-1}^T dz_t` step by step (a
    read-modify-write of the whole kernel gradient per step, memory-bound
    on a CPU). Here:

    - the input projection `x W + b` of all steps is one product, taken
      time-major so that the loop reads each step's rows as one block;
    - the forward loop keeps, per step, `h_t`, `c_t` and the activated
      gates as separate arrays (no concatenation per step): the master
      gates' softmax probabilities (both from one softmax over a
      `(batch, 2, levels)` view), one sigmoid over the `o`, `c^`, `i`, `f`
      blocks and `c^` itself;
    - the backward loop applies the derivatives of the paper's equations to
      those, with one concatenation and a single `(batch, gates) x (gates,
      units)` product per step, laid out for the CPU
      (`_tf_recurrence.transposed_product`);
    - the kernel gradient `dU = sum_t h_{t-1}^T dz_t` is one large product
      after the loop.

    Values and gradients equal autodiff through `keras.layers.RNN(
    ONLSTMCell)` (tested). `custom_backward=False` (the layer's choice in
    inference, where no backward is wanted) runs the same forward steps,
    keeping only `h_t`, and leaves any gradient to autodiff: a graph
    without the hand-written backward traces and exports faster. Under a mixed policy only the products run in the
    compute dtype: the pre-activations, gates and cell and hidden states of
    the loop are float32.

    Returns:
        `(last_output, outputs, [h_last, c_last])` as `keras.layers.RNN`'s
        `inner_loop` does.
    """
    import tensorflow as tf

    from keras_ordered.layers._tf_recurrence import kernel_product
    from keras_ordered.layers._tf_recurrence import time_loop
    from keras_ordered.layers._tf_recurrence import transposed_product

    units = cell.units
    n, m, size = cell.n_chunks, cell.master_levels, cell.chunk_size

    def master_gates(p_input, p_forget):
        # i~ = 1 - cumsum(p_i) and f~ = cumsum(p_f), first n levels, as
        # (batch, n, 1) to broadcast over each chunk.
        master_input = (1.0 - tf.cumsum(p_input, axis=-1))[:, :n, None]
        master_forget = tf.cumsum(p_forget, axis=-1)[:, :n, None]
        return master_input, master_forget

    def cell_step(product, carry, elems):
        h_prev, c_prev = carry
        z = tf.cast(elems[0], "float32") + product(h_prev)
        # Both master gates' softmax in one op over a (batch, 2, m) view.
        p_master = tf.nn.softmax(tf.reshape(z[:, : 2 * m], (-1, 2, m)))
        master_input, master_forget = master_gates(
            p_master[:, 0], p_master[:, 1]
        )
        g = tf.reshape(z[:, 2 * m :], (-1, 4 * n, size))
        # Blocks o, c^, i, f: one sigmoid over all four (its c^ block
        # unused), c^ kept apart: no concatenation per step.
        sig = tf.sigmoid(g)
        c_hat = tf.tanh(g[:, n : 2 * n])
        o, i, f = sig[:, :n], sig[:, 2 * n : 3 * n], sig[:, 3 * n :]
        overlap = master_forget * master_input
        c = (f * overlap + (master_forget - overlap)) * tf.reshape(
            c_prev, (-1, n, size)
        ) + (i * overlap + (master_input - overlap)) * c_hat
        h = tf.reshape(o * tf.tanh(c), (-1, units))
        c = tf.reshape(c, (-1, units))
        return (h, c), (h, c, p_master, sig, c_hat)

    def forward(z_inputs, h0, c0, kernel):
        product = kernel_product(kernel, h0.shape[0])

        def step(carry, elems):
            return cell_step(product, carry, elems)

        batch = tf.shape(h0)[0]
        like = (
            h0,
            c0,
            tf.zeros((batch, 2, m)),
            tf.zeros((batch, 4 * n, size)),
            tf.zeros((batch, n, size)),
        )
        return time_loop(step, (z_inputs,), (h0, c0), like)

    def step_backward(product, carry, elems):
        d_h_next, d_c_next = carry
        p_master, sig, c_hat, c_prev, c, d_out = elems
        p_input, p_forget = p_master[:, 0], p_master[:, 1]
        master_input, master_forget = master_gates(p_input, p_forget)
        o, i, f = sig[:, :n], sig[:, 2 * n : 3 * n], sig[:, 3 * n :]
        overlap = master_forget * master_input
        f_hat = f * overlap + (master_forget - overlap)
        i_hat = i * overlap + (master_input - overlap)
        c = tf.reshape(c, (-1, n, size))
        c_prev = tf.reshape(c_prev, (-1, n, size))
        d_h = tf.reshape(d_out + d_h_next, (-1, n, size))
        tanh_c = tf.tanh(c)
        d_o = d_h * tanh_c
        d_c = tf.reshape(d_c_next, (-1, n, size)) + d_h * o * (1.0 - tanh_c**2)
        d_f_hat = d_c * c_prev
        d_i_hat = d_c * c_hat
        d_c_hat = d_c * i_hat
        d_c_prev = d_c * f_hat
        d_overlap = tf.reduce_sum(
            d_f_hat * (f - 1.0) + d_i_hat * (i - 1.0), axis=-1
        )
        d_master_forget = (
            tf.reduce_sum(d_f_hat, -1) + d_overlap * master_input[..., 0]
        )
        d_master_input = (
            tf.reduce_sum(d_i_hat, -1) + d_overlap * master_forget[..., 0]
        )
        if m > n:  # the extra level is not used: no gradient reaches it
            pad = [[0, 0], [0, m - n]]
            d_master_forget = tf.pad(d_master_forget, pad)
            d_master_input = tf.pad(d_master_input, pad)
        d_p_forget = tf.cumsum(d_master_forget, axis=-1, reverse=True)
        d_p_input = -tf.cumsum(d_master_input, axis=-1, reverse=True)
        d_v_forget = p_forget * (
            d_p_forget - tf.reduce_sum(d_p_forget * p_forget, -1, keepdims=True)
        )
        d_v_input = p_input * (
            d_p_input - tf.reduce_sum(d_p_input * p_input, -1, keepdims=True)
        )
        # One concatenation per step: each (batch, n, size) gate block,
        # flattened, lands where it would in the (batch, 4n, size) layout.
        d_gates = (
            d_o * o * (1.0 - o),
            d_c_hat * (1.0 - c_hat**2),
            d_i_hat * overlap * i * (1.0 - i),
            d_f_hat * overlap * f * (1.0 - f),
        )
        d_z = tf.concat(
            [d_v_input, d_v_forget]
            + [tf.reshape(block, (-1, units)) for block in d_gates],
            axis=-1,
        )
        carry = (product(d_z), tf.reshape(d_c_prev, (-1, units)))
        return carry, (d_z,)

    def forward_only(z_inputs, h0, c0, kernel):
        product = kernel_product(kernel, h0.shape[0])

        def step(carry, elems):
            (h, c), _ = cell_step(product, carry, elems)
            return (h, c), (h,)

        (h_last, c_last), (hs,) = time_loop(step, (z_inputs,), (h0, c0), (h0,))
        return hs, h_last, c_last

    @tf.custom_gradient
    def recurrence(z_inputs, h0, c0, kernel):
        (h_last, c_last), (hs, cs, p_master, sig, c_hat) = forward(
            z_inputs, h0, c0, kernel
        )

        def grad(d_hs, d_h_last, d_c_last):
            zeros = tf.zeros_like(h0)
            d_h_last = zeros if d_h_last is None else tf.cast(d_h_last, "float32")
            d_c_last = zeros if d_c_last is None else tf.cast(d_c_last, "float32")
            d_hs = tf.zeros_like(hs) if d_hs is None else tf.cast(d_hs, "float32")
            c_prevs = tf.concat([c0[None], cs[:-1]], axis=0)
            product = transposed_product(kernel, h0.shape[0])
            (d_h0, d_c0), (d_z,) = time_loop(
                lambda carry, elems: step_backward(product, carry, elems),
                (p_master, sig, c_hat, c_prevs, cs, d_hs),
                (d_h_last, d_c_last),
                (tf.zeros((tf.shape(h0)[0], cell.gate_size)),),
                reverse=True,
            )
            d_inputs = tf.cast(d_z, z_inputs.dtype)
            h_prevs = tf.concat([h0[None], hs[:-1]], axis=0)
            d_kernel = tf.matmul(
                tf.cast(tf.reshape(h_prevs, (-1, units)), d_inputs.dtype),
                tf.reshape(d_inputs, (-1, cell.gate_size)),
                transpose_a=True,
            )
            return (d_inputs, d_h0, d_c0, tf.cast(d_kernel, kernel.dtype))

        return (hs, h_last, c_last), grad

    # Time-major from here on: (time, batch, features).
    shape = tf.shape(sequences)
    time_major = tf.transpose(sequences, (1, 0, 2))
    z_inputs = tf.reshape(
        tf.matmul(tf.reshape(time_major, (-1, sequences.shape[-1])), kernel)
        + bias,
        (shape[1], shape[0], cell.gate_size),
    )
    h0, c0 = (tf.cast(s, "float32") for s in initial_state[:2])
    run = recurrence if custom_backward else forward_only
    hs, h_last, c_last = run(
        z_inputs, h0, c0, tf.convert_to_tensor(recurrent_kernel)
    )
    outputs = tf.cast(tf.transpose(hs, (1, 0, 2)), sequences.dtype)
    return tf.cast(h_last, outputs.dtype), outputs, [h_last, c_last]
