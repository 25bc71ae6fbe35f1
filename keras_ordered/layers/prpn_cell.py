"""PRPN's reading network: a layer-normalised LSTM reading a gated memory.

`LayerNormLSTMCell` is the LSTM of the reading network; `PRPNReadingCell`
is one step of the whole (multi-layer) reading network, for
`keras.layers.RNN`.

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018. Ba, Kiros, Hinton. "Layer
    Normalization". 2016.
"""

import keras
from keras import ops

# `keras.layers.RNN` pre-creates the masks of cells deriving from this mixin
# before its loop and clears them afterwards: one mask per sequence. It is
# not exported by `keras.layers`, hence the private import.
from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers._checks import check_rate as _check_rate
from keras_ordered.layers._checks import clone_initializer as _clone_initializer


@keras.saving.register_keras_serializable(package="keras_ordered")
class LayerNormLSTMCell(keras.layers.Layer):
    """Cell class of an LSTM with layer normalisation (Ba et al., 2016).

    ```
    z = LN(x W) + LN(h_prev U) + b          (layer norms over the 4 units)
    i, f, g, o = split(z)
    c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(LN(c))
    ```

    The two pre-activation layer norms have a scale but no offset (the bias
    `b` plays that role); the cell-state one has both. The normalisation
    statistics are computed in float32 under mixed precision.

    Args:
        units: int, dimensionality of the output and cell state.
        unit_forget_bias: bool, initialise the forget-gate bias to 1.
        epsilon: float, layer-normalisation epsilon.
        kernel_initializer: initializer of `W`.
        recurrent_initializer: initializer of `U`.
        bias_initializer: initializer of `b`.
        **kwargs: base layer keyword arguments, such as `dtype`.

    Call arguments:
        inputs: a 2D tensor `(batch, features)`.
        states: list `[h, c]` of 2D tensors `(batch, units)`.
        training: Python boolean (unused: the cell has no dropout).

    Example:

    ```python
    rnn = keras.layers.RNN(
        keras_ordered.layers.LayerNormLSTMCell(32), return_sequences=True
    )
    outputs = rnn(keras.random.normal((4, 10, 16)))  # (4, 10, 32)
    ```

    Reference:
        Ba, Kiros, Hinton, "Layer Normalization", 2016 (the LSTM with layer norm);
        Hochreiter & Schmidhuber, "Long Short-Term Memory", 1997.
    """

    def __init__(
        self,
        units,
        unit_forget_bias=True,
        epsilon=1e-5,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(
                f"`units` must be a positive integer. Received: units={units}"
            )
        self.units = units
        self.unit_forget_bias = bool(unit_forget_bias)
        self.epsilon = float(epsilon)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.state_size = [units, units]
        self.output_size = units
        policy = self.dtype_policy
        self.input_norm = keras.layers.LayerNormalization(
            epsilon=self.epsilon, center=False, dtype=policy, name="input_norm"
        )
        self.recurrent_norm = keras.layers.LayerNormalization(
            epsilon=self.epsilon, center=False, dtype=policy,
            name="recurrent_norm",
        )
        self.cell_norm = keras.layers.LayerNormalization(
            epsilon=self.epsilon, dtype=policy, name="cell_norm"
        )

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(input_dim, 4 * self.units),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, 4 * self.units),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
        )
        if self.unit_forget_bias:
            base = self.bias_initializer
            units = self.units

            def bias_initializer(shape, dtype=None):
                return ops.concatenate(
                    [
                        base((units,), dtype=dtype),
                        ops.ones((units,), dtype=dtype),
                        base((2 * units,), dtype=dtype),
                    ]
                )

        else:
            bias_initializer = self.bias_initializer
        self.bias = self.add_weight(
            shape=(4 * self.units,), name="bias", initializer=bias_initializer
        )
        self.input_norm.build((None, 4 * self.units))
        self.recurrent_norm.build((None, 4 * self.units))
        self.cell_norm.build((None, self.units))

    def call(self, inputs, states, training=False):
        h_prev, c_prev = states[0], states[1]
        dtype = self.compute_dtype
        z = (
            self.input_norm(ops.matmul(inputs, ops.cast(self.kernel, dtype)))
            + self.recurrent_norm(
                ops.matmul(h_prev, ops.cast(self.recurrent_kernel, dtype))
            )
            + ops.cast(self.bias, dtype)
        )
        u = self.units
        input_gate = ops.sigmoid(z[:, :u])
        forget_gate = ops.sigmoid(z[:, u : 2 * u])
        candidate = ops.tanh(z[:, 2 * u : 3 * u])
        output_gate = ops.sigmoid(z[:, 3 * u :])
        c = forget_gate * ops.cast(c_prev, dtype) + input_gate * candidate
        h = output_gate * ops.tanh(self.cell_norm(c))
        return h, [h, c]

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, self.units), dtype=self.compute_dtype),
            ops.zeros((batch_size, self.units), dtype=self.compute_dtype),
        ]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "unit_forget_bias": self.unit_forget_bias,
            "epsilon": self.epsilon,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
        }


@keras.saving.register_keras_serializable(package="keras_ordered")
class PRPNReadingCell(keras.layers.Layer, DropoutRNNCell):
    """Cell class of PRPN's reading network (all its layers, one step).

    Each layer `l = 1 .. L` keeps a memory tape of its last `M` states
    `(h_{t-M}, c_{t-M}) .. (h_{t-1}, c_{t-1})` and, at step `t`:

    ```
    (h~, c~) = GatedAttention_l(tape_l, [h_{t-1}^l ; h_t^{l-1}], g^t)
    (h_t^l, c_t^l) = LayerNormLSTMCell_l(Drop_{r_l}(h_t^{l-1}), (Drop(h~), c~))
    ```

    then pushes `(h_t^l, c_t^l)` onto its tape (dropping the oldest slot).
    `h_t^0` is the word embedding; the gates `g^t` (`(batch, M)`, see
    `keras_ordered.layers.memory_gates`: slot `m` holds position `t - M + m`)
    are shared by all layers and come with the input of each step.

    Per-step input: the concatenation `[embedding ; gates]`, of size
    `input_dim + num_slots` (the gates are computed for all steps at once,
    outside the recurrence). Per-step output: `h_t^L`. States: per layer,
    the flattened tapes `h` and `c`, each `(batch, num_slots * units)`
    (reshape to `(batch, num_slots, units)`, oldest slot first); the
    previous hidden state `h_{t-1}^l` is the tape's last slot.

    Dropout masks are drawn once per sequence (per call of
    `keras.layers.RNN`) and shared by all steps (variational dropout):
    `dropout` on the first layer's input, `layer_dropout` on the other
    layers' inputs, `recurrent_dropout` on the attended hidden state `h~`
    and `attention_dropout` on the attention key (both of its dropouts).

    The attended cell state `c~` is not dropped, although the paper writes
    `Drop(h~, c~)`: with a mask fixed for the whole sequence the same cell
    units would be zeroed at every step (they could never hold memory) and
    the kept ones rescaled by `1 / (1 - rate)` at every step, so the cell
    state statistics drift between training and inference (measured on PTB:
    a 0.1 rate on `c~` halves the variance of the predict network's
    batch-normalised features in training relative to inference, which
    doubles the validation perplexity early in training). Semeniuta et al.
    (2016) make the same point for recurrent dropout on LSTM cell states.

    Args:
        units: int, LSTM size `d` of every layer (the paper's 1200).
        num_layers: int, `L` (the paper's 2).
        num_slots: int, `M`, memory slots per layer (the paper's 15).
        dropout: float, rate on the first layer's input (the paper's 0.7).
        layer_dropout: float, rate on the inputs of layers 2.. (0.5).
        recurrent_dropout: float, rate on the attended hidden state `h~`
            (the paper's 0.5).
        attention_dropout: float, rate of the attention-key dropouts (0.5).
        kernel_initializer: initializer of the LSTM input kernels.
        recurrent_initializer: initializer of the LSTM recurrent kernels.
        seed: int, random seed of the dropout masks.
        **kwargs: base layer keyword arguments, such as `dtype`.

    Call arguments:
        inputs: a 2D tensor `(batch, input_dim + num_slots)`.
        states: list of `2 * num_layers` tensors
            `(batch, num_slots * units)`: `[tape_h_1, tape_c_1, ...]`.
        training: Python boolean, whether dropout is applied.

    Example:

    ```python
    cell = keras_ordered.layers.PRPNReadingCell(32, num_layers=2, num_slots=4)
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    embeddings = keras.random.normal((2, 7, 16))
    gates = keras_ordered.layers.memory_gates(
        keras.random.uniform((2, 7)), num_slots=4
    )
    outputs, *tapes = rnn(keras.ops.concatenate([embeddings, gates], -1))
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018 (the reading network).
    """

    def __init__(
        self,
        units,
        num_layers=2,
        num_slots=15,
        dropout=0.7,
        layer_dropout=0.5,
        recurrent_dropout=0.5,
        attention_dropout=0.5,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("units", units),
            ("num_layers", num_layers),
            ("num_slots", num_slots),
        ):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: "
                    f"{name}={value}"
                )
        self.units = units
        self.num_layers = num_layers
        self.num_slots = num_slots
        self.dropout = _check_rate("dropout", dropout)
        self.layer_dropout = _check_rate("layer_dropout", layer_dropout)
        # DropoutRNNCell reads `recurrent_dropout`: here, on h~.
        self.recurrent_dropout = _check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.attention_dropout = _check_rate(
            "attention_dropout", attention_dropout
        )
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.state_size = [num_slots * units] * (2 * num_layers)
        self.output_size = units
        policy = self.dtype_policy
        self.attentions = [
            GatedAttention(
                dropout=self.attention_dropout,
                seed=None if seed is None else seed + 1 + index,
                dtype=policy,
                name=f"attention_{index + 1}",
            )
            for index in range(num_layers)
        ]
        self.lstm_cells = [
            LayerNormLSTMCell(
                units,
                kernel_initializer=_clone_initializer(
                    self.kernel_initializer, index
                ),
                recurrent_initializer=_clone_initializer(
                    self.recurrent_initializer, index
                ),
                dtype=policy,
                name=f"lstm_{index + 1}",
            )
            for index in range(num_layers)
        ]

    def build(self, input_shape):
        self.input_dim = int(input_shape[-1]) - self.num_slots
        if self.input_dim <= 0:
            raise ValueError(
                "The per-step input must be `[embedding ; gates]` of size "
                f"input_dim + num_slots (num_slots={self.num_slots}). "
                f"Received input shape {input_shape}"
            )
        memory = (None, self.num_slots, self.units)
        for index in range(self.num_layers):
            layer_input = self.input_dim if index == 0 else self.units
            self.attentions[index].build(
                [memory, memory, (None, self.units + layer_input),
                 (None, self.num_slots)]
            )
            self.lstm_cells[index].build((None, layer_input))

    # -- dropout masks: one set per sequence (see DropoutRNNCell) ----------
    def _layer_rates(self, index):
        return self.dropout if index == 0 else self.layer_dropout

    def get_dropout_mask(self, step_input):
        """All the per-sequence masks, drawn on first use and cached.

        Returns:
            list, per layer, of dicts with the multiplicative masks
            `input` `(batch, layer_input)`, `h` `(batch, units)` and
            `attention` (a pair for `GatedAttention`); a mask is None when
            its rate is 0.
        """
        if getattr(self, "_dropout_mask", None) is None:
            batch = ops.shape(step_input)[0]
            masks = []
            for index in range(self.num_layers):
                layer_input = self.input_dim if index == 0 else self.units
                masks.append(
                    {
                        "input": self._mask(
                            batch, layer_input, self._layer_rates(index)
                        ),
                        "h": self._mask(batch, self.units, self.recurrent_dropout),
                        "attention": self.attentions[index].make_dropout_masks(
                            batch
                        ),
                    }
                )
            self._dropout_mask = masks
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_input):
        # Every mask is drawn by `get_dropout_mask`.
        return None

    def _mask(self, batch, size, rate):
        if rate == 0.0:
            return None
        ones = ops.ones((batch, size), dtype=self.compute_dtype)
        return keras.random.dropout(ones, rate, seed=self.seed_generator)

    # -- one step -----------------------------------------------------------
    def call(self, inputs, states, training=False):
        dtype = self.compute_dtype
        inputs = ops.cast(inputs, dtype)
        x = inputs[:, : self.input_dim]
        gates = inputs[:, self.input_dim :]
        masks = self.get_dropout_mask(inputs) if training else None
        shape = (-1, self.num_slots, self.units)
        new_states = []
        for index in range(self.num_layers):
            tape_h = ops.reshape(ops.cast(states[2 * index], dtype), shape)
            tape_c = ops.reshape(ops.cast(states[2 * index + 1], dtype), shape)
            key = ops.concatenate([tape_h[:, -1], x], axis=-1)
            layer_masks = masks[index] if masks else {}
            attended_h, attended_c = self.attentions[index](
                [tape_h, tape_c, key, gates],
                training=training,
                dropout_masks=layer_masks.get("attention"),
            )
            if layer_masks.get("input") is not None:
                x = x * layer_masks["input"]
            if layer_masks.get("h") is not None:
                attended_h = attended_h * layer_masks["h"]
            h, (_, c) = self.lstm_cells[index](
                x, [attended_h, attended_c], training=training
            )
            tape_h = ops.concatenate([tape_h[:, 1:], h[:, None]], axis=1)
            tape_c = ops.concatenate([tape_c[:, 1:], c[:, None]], axis=1)
            flat = (-1, self.num_slots * self.units)
            new_states += [ops.reshape(tape_h, flat), ops.reshape(tape_c, flat)]
            x = h
        return x, new_states

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in self.state_size
        ]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "num_layers": self.num_layers,
            "num_slots": self.num_slots,
            "dropout": self.dropout,
            "layer_dropout": self.layer_dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "attention_dropout": self.attention_dropout,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer
            ),
            "seed": self.seed,
        }
