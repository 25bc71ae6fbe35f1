"""PRPN's reading network: a layer-normalised LSTM reading a gated memory.

`StdLayerNormalization` is the official PRPN layer normalisation,
`LayerNormLSTMCell` the LSTM of the reading network, `PRPNReadingCell` one
step of the whole (multi-layer) reading network, `PRPNReadingNetwork` the
recurrent layer running it (`keras.layers.RNN` with a loop per backend).

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018. Ba, Kiros, Hinton. "Layer
    Normalization". 2016.
"""

import keras
from keras import ops

# A private Keras API (one mask per sequence): see keras_ordered._keras_private.
from keras_ordered.layers._checks import check_positive_int
from keras_ordered._keras_private import DropoutRNNCell
from keras_ordered._keras_private import backend_rnn
from keras_ordered.layers.gated_attention import FanInUniform
from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers._checks import check_rate as _check_rate
from keras_ordered.layers._checks import clone_initializer as _clone_initializer


@keras.saving.register_keras_serializable(package="keras_ordered")
class StdLayerNormalization(keras.layers.Layer):
    """Layer normalisation by the standard deviation plus epsilon.

    ```
    y = gamma * (x - mean(x)) / (std(x) + epsilon) + beta
    ```

    over the last axis, with the *unbiased* standard deviation (divisor
    `n - 1`) and `epsilon` added to the standard deviation, not to the
    variance: the official PRPN `LayerNorm` (Keras' `LayerNormalization`
    divides by `sqrt(biased variance + epsilon)`). The statistics are
    computed in float32.

    Args:
        epsilon: float, added to the standard deviation (official 1e-6).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: a tensor `(..., features)`, `features >= 2`.

    Example:

    ```python
    norm = keras_ordered.layers.StdLayerNormalization()
    y = norm(keras.random.normal((4, 16)))  # (4, 16)
    ```

    Reference:
        Ba, Kiros, Hinton, "Layer Normalization", 2016.
    """

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        features = int(input_shape[-1])
        if features < 2:
            raise ValueError(
                "StdLayerNormalization needs at least 2 features (unbiased "
                f"standard deviation). Received input shape {input_shape}"
            )
        self.gamma = self.add_weight(
            shape=(features,), name="gamma", initializer="ones"
        )
        self.beta = self.add_weight(
            shape=(features,), name="beta", initializer="zeros"
        )

    def call(self, inputs):
        x = ops.cast(inputs, "float32")
        n = x.shape[-1]
        mean = ops.mean(x, axis=-1, keepdims=True)
        centred = x - mean
        variance = ops.sum(ops.square(centred), axis=-1, keepdims=True) / (n - 1)
        y = centred / (ops.sqrt(variance) + self.epsilon)
        y = y * ops.cast(self.gamma, "float32") + ops.cast(self.beta, "float32")
        return ops.cast(y, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}


@keras.saving.register_keras_serializable(package="keras_ordered")
class LayerNormLSTMCell(keras.layers.Layer):
    """Cell class of the layer-normalised LSTM of PRPN's reading network.

    The official PRPN `LSTMCell`:

    ```
    z = LN_ih(x W + b_ih) + LN_hh(h_prev U + b_hh)     (each over all 4 units)
    i, f, g, o = split(z)
    c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(LN_c(c))
    ```

    Every `LN` is a `StdLayerNormalization` (unbiased standard deviation,
    `epsilon` added to it) with its own scale and offset; the biases are
    inside the normalisations, as in the official code.

    Weights (Keras layout; official names in brackets): `kernel`
    `(input_dim, 4 units)` [`ih.0.weight`, transposed], `input_bias`
    [`ih.0.bias`], `recurrent_kernel` `(units, 4 units)` [`hh.0.weight`,
    transposed], `recurrent_bias` [`hh.0.bias`], `input_norm`
    [`ih.1.{gamma,beta}`], `recurrent_norm` [`hh.1.{gamma,beta}`],
    `cell_norm` [`c_norm.{gamma,beta}`]; gate order `i, f, g, o`.
    Default initialisation: PyTorch's `nn.Linear` (`FanInUniform`, fan-in
    `input_dim` and `units`) for the kernels and the biases.

    Args:
        units: int, dimensionality of the output and cell state.
        epsilon: float, layer-normalisation epsilon (official 1e-6).
        kernel_initializer: initializer of `W`; default `FanInUniform()`.
        recurrent_initializer: initializer of `U`; default `FanInUniform()`.
        bias_initializer: initializer of both biases; default None,
            `FanInUniform` with the fan-in of each projection.
        seed: int, seed of the default initializers.
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
        epsilon=1e-6,
        kernel_initializer=None,
        recurrent_initializer=None,
        bias_initializer=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("units", units)
        self.units = units
        self.epsilon = float(epsilon)
        self.seed = seed
        self.kernel_initializer = (
            FanInUniform(seed=seed) if kernel_initializer is None
            else keras.initializers.get(kernel_initializer)
        )
        self.recurrent_initializer = (
            FanInUniform(seed=None if seed is None else seed + 1)
            if recurrent_initializer is None
            else keras.initializers.get(recurrent_initializer)
        )
        self.bias_initializer = (
            None if bias_initializer is None
            else keras.initializers.get(bias_initializer)
        )
        self.state_size = [units, units]
        self.output_size = units
        policy = self.dtype_policy
        self.input_norm = StdLayerNormalization(
            self.epsilon, dtype=policy, name="input_norm"
        )
        self.recurrent_norm = StdLayerNormalization(
            self.epsilon, dtype=policy, name="recurrent_norm"
        )
        self.cell_norm = StdLayerNormalization(
            self.epsilon, dtype=policy, name="cell_norm"
        )

    def _bias_initializer(self, fan_in, offset):
        if self.bias_initializer is not None:
            return _clone_initializer(self.bias_initializer, offset)
        seed = None if self.seed is None else self.seed + offset
        return FanInUniform(fan_in=fan_in, seed=seed)

    def build(self, input_shape):
        input_dim = int(input_shape[-1])
        self.kernel = self.add_weight(
            shape=(input_dim, 4 * self.units),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.input_bias = self.add_weight(
            shape=(4 * self.units,),
            name="input_bias",
            initializer=self._bias_initializer(input_dim, 2),
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, 4 * self.units),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
        )
        self.recurrent_bias = self.add_weight(
            shape=(4 * self.units,),
            name="recurrent_bias",
            initializer=self._bias_initializer(self.units, 3),
        )
        self.input_norm.build((None, 4 * self.units))
        self.recurrent_norm.build((None, 4 * self.units))
        self.cell_norm.build((None, self.units))

    def call(self, inputs, states, training=False):
        h_prev, c_prev = states[0], states[1]
        dtype = self.compute_dtype
        z = self.input_norm(
            ops.matmul(ops.cast(inputs, dtype), ops.cast(self.kernel, dtype))
            + ops.cast(self.input_bias, dtype)
        ) + self.recurrent_norm(
            ops.matmul(ops.cast(h_prev, dtype), ops.cast(self.recurrent_kernel, dtype))
            + ops.cast(self.recurrent_bias, dtype)
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
            "epsilon": self.epsilon,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": (
                None if self.bias_initializer is None
                else keras.initializers.serialize(self.bias_initializer)
            ),
            "seed": self.seed,
        }


@keras.saving.register_keras_serializable(package="keras_ordered")
class PRPNReadingCell(keras.layers.Layer, DropoutRNNCell):
    """Cell class of PRPN's reading network (all its layers, one step).

    Each layer `l = 1 .. L` keeps a memory tape of its last `M` states
    `(h_{t-M}, c_{t-M}) .. (h_{t-1}, c_{t-1})` and, at step `t`:

    ```
    (h~, c~) = GatedAttention_l(tape_l, [h_t^{l-1} ; h_{t-1}^l], g^t)
    (h_t^l, c_t^l) = LayerNormLSTMCell_l(Drop_{r_l}(h_t^{l-1}), (h~ * m_l, c~))
    ```

    then pushes `(h_t^l, c_t^l)` onto its tape (dropping the oldest slot).
    `h_t^0` is the word embedding; the gates `g^t` (`(batch, M)`, see
    `keras_ordered.layers.memory_gates`: slot `m` holds position `t - M + m`)
    are shared by all layers and come with the input of each step. The key
    is the concatenation `[layer input ; previous hidden state]`, in that
    order (the official `projector_summ`).

    Per-step input: the concatenation `[embedding ; gates]`, of size
    `input_dim + num_slots` (the gates are computed for all steps at once,
    outside the recurrence). Per-step output: `h_t^L`. States: per layer,
    the flattened tapes `h` and `c`, each `(batch, num_slots * units)`
    (reshape to `(batch, num_slots, units)`, oldest slot first); the
    previous hidden state `h_{t-1}^l` is the tape's last slot.

    Dropout, as the official code draws it:

    - the layer input (`dropout` for layer 1, `layer_dropout` for the
      others) and both attention-key dropouts (`attention_dropout`) are
      element-wise and drawn afresh at every step;
    - the attended hidden state `h~` is multiplied by a mask `m_l` of shape
      `(1, units)` per layer, drawn once per sequence (per call of
      `keras.layers.RNN`, i.e. per truncated-BPTT window) and shared by the
      whole batch (`recurrent_dropout`, the official `rdropout`);
    - the attended cell state `c~` is not dropped.

    Run it in `PRPNReadingNetwork` (the language model does): on JAX,
    `keras.layers.RNN`'s `lax.scan` traces one step, so the per-step
    dropouts drawn from the layer's seed generator there would repeat one
    mask at every step; `PRPNReadingNetwork` gives each step its own key.

    Args:
        units: int, LSTM size `d` of every layer (the paper's 1200).
        num_layers: int, `L` (the paper's 2).
        num_slots: int, `M`, memory slots per layer (the paper's 15).
        dropout: float, rate on the first layer's input (the official
            `dropout`, 0.7).
        layer_dropout: float, rate on the inputs of layers 2.. (the official
            `idropout`, 0.5).
        recurrent_dropout: float, rate of the per-window mask on `h~` (the
            official `rdropout`, 0.5).
        attention_dropout: float, rate of the attention-key dropouts (the
            official `idropout`, 0.5).
        kernel_initializer: initializer of the LSTM input kernels; default
            PyTorch's `nn.Linear` (`FanInUniform`).
        recurrent_initializer: initializer of the LSTM recurrent kernels;
            default `FanInUniform`.
        seed: int, random seed of the dropouts and the default initializers.
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
        kernel_initializer=None,
        recurrent_initializer=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("units", units),
            ("num_layers", num_layers),
            ("num_slots", num_slots),
        ):
            check_positive_int(name, value)
        self.units = units
        self.num_layers = num_layers
        self.num_slots = num_slots
        self.dropout = _check_rate("dropout", dropout)
        self.layer_dropout = _check_rate("layer_dropout", layer_dropout)
        # DropoutRNNCell reads `recurrent_dropout`: here, the mask on h~.
        self.recurrent_dropout = _check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.attention_dropout = _check_rate(
            "attention_dropout", attention_dropout
        )
        self.kernel_initializer = (
            None if kernel_initializer is None
            else keras.initializers.get(kernel_initializer)
        )
        self.recurrent_initializer = (
            None if recurrent_initializer is None
            else keras.initializers.get(recurrent_initializer)
        )
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.state_size = [num_slots * units] * (2 * num_layers)
        self.output_size = units
        policy = self.dtype_policy

        def seed_for(k):
            return None if seed is None else seed + k

        def initializer(base, index):
            return None if base is None else _clone_initializer(base, index)

        self.attentions = [
            GatedAttention(
                dropout=self.attention_dropout,
                seed=seed_for(10 * index + 1),
                dtype=policy,
                name=f"attention_{index + 1}",
            )
            for index in range(num_layers)
        ]
        self.lstm_cells = [
            LayerNormLSTMCell(
                units,
                kernel_initializer=initializer(self.kernel_initializer, index),
                recurrent_initializer=initializer(
                    self.recurrent_initializer, index
                ),
                seed=seed_for(10 * index + 5),
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
                [memory, memory, (None, layer_input + self.units),
                 (None, self.num_slots)]
            )
            self.lstm_cells[index].build((None, layer_input))

    # -- dropout ------------------------------------------------------------
    def _layer_rate(self, index):
        return self.dropout if index == 0 else self.layer_dropout

    def get_dropout_mask(self, step_input):
        """The per-sequence masks on `h~`, drawn on first use and cached.

        `keras.layers.RNN` calls this before its loop and clears the cache
        after it (see `DropoutRNNCell`): one draw per call.

        Returns:
            list, per layer, of a multiplicative mask `(1, units)` shared by
            the batch, or None when `recurrent_dropout` is 0.
        """
        if getattr(self, "_dropout_mask", None) is None:
            self._dropout_mask = [
                self._window_mask(self.recurrent_dropout)
                for _ in range(self.num_layers)
            ]
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_input):
        # The only per-sequence masks are drawn by `get_dropout_mask`.
        return None

    def _window_mask(self, rate):
        if rate == 0.0:
            return None
        ones = ops.ones((1, self.units), dtype=self.compute_dtype)
        return keras.random.dropout(ones, rate, seed=self.seed_generator)

    # Set by `jax_reading_loop` for the steps of one JAX scan: the seeds of
    # the dropouts drawn afresh at every step (None: `seed_generator`).
    _step_seeds = None

    def _step_dropout(self, x, rate):
        # Fresh element-wise dropout, drawn at every step.
        if rate == 0.0:
            return x
        seed = self.seed_generator
        if self._step_seeds is not None:
            seed = self._step_seeds.next()
        return keras.random.dropout(x, rate, seed=seed)

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
            key = ops.concatenate([x, tape_h[:, -1]], axis=-1)
            attended_h, attended_c = self.attentions[index](
                [tape_h, tape_c, key, gates], training=training
            )
            if training:
                x = self._step_dropout(x, self._layer_rate(index))
                if masks[index] is not None:
                    attended_h = attended_h * masks[index]
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
        def serialize(initializer):
            return (
                None if initializer is None
                else keras.initializers.serialize(initializer)
            )

        return {
            **super().get_config(),
            "units": self.units,
            "num_layers": self.num_layers,
            "num_slots": self.num_slots,
            "dropout": self.dropout,
            "layer_dropout": self.layer_dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "attention_dropout": self.attention_dropout,
            "kernel_initializer": serialize(self.kernel_initializer),
            "recurrent_initializer": serialize(self.recurrent_initializer),
            "seed": self.seed,
        }


class StepSeeds:
    """The dropout seeds of one step of a JAX scan, from that step's key.

    Under `jax.lax.scan` a step is traced once: a dropout drawn from a
    `keras.random.SeedGenerator` inside it would draw the same mask at
    every step (and leak the generator's traced state out of the scan).
    `jax_reading_loop` gives each step its own key instead, drawn from the
    cell's generator before the loop; every draw of the step folds a
    counter into it.

    Args:
        key: a JAX PRNG key (`uint32[2]`).
    """

    def __init__(self, key):
        self._key = key
        self._count = 0

    def next(self):
        import jax  # JAX's loop only

        self._count += 1
        return jax.random.fold_in(self._key, self._count)


def jax_reading_loop(rnn, sequences, initial_state, mask=None,
                     training=False):
    """`keras.layers.RNN(PRPNReadingCell(...))`'s loop on JAX, with the
    per-step dropouts drawn afresh at every step as on the other backends.

    The keys of the steps, drawn from the cell's `seed_generator` before
    the loop, travel beside the inputs through the scan; each step hands
    them to the cell and its attentions (`StepSeeds`). Without per-step
    dropout (inference, or rates of 0) this is `keras.layers.RNN`'s loop.

    Args:
        rnn: the `keras.layers.RNN` of a `PRPNReadingCell`.
        sequences, initial_state, mask, training: as
            `keras.layers.RNN.inner_loop`'s.

    Returns:
        `(last_output, outputs, states)`, as `keras.layers.RNN.inner_loop`.
    """
    cell = rnn.cell
    per_step = training and (
        cell.dropout or cell.layer_dropout or cell.attention_dropout)
    if not per_step:
        return keras.layers.RNN.inner_loop(rnn, sequences, initial_state,
                                           mask, training=training)
    batch, steps = ops.shape(sequences)[0], sequences.shape[1]
    keys = keras.random.randint((steps, 2), 0, 2**31 - 1,
                                seed=cell.seed_generator)
    keys = ops.broadcast_to(ops.cast(keys, "uint32")[None],
                            (batch, steps, 2))
    return scan_with_step_seeds(rnn, sequences, [keys], initial_state, mask,
                                training, lambda key: StepSeeds(key[0]))


def scan_with_step_seeds(rnn, sequences, extras, initial_state, mask,
                         training, make_seeds):
    """The reading cell over the window in one scan, each step handing
    `make_seeds(*extras_t)` to the cell and its attentions as the source
    of their per-step dropouts (`_step_seeds`: an object whose `next()`
    gives the seed of the next draw).

    Args:
        rnn: the `keras.layers.RNN` of a `PRPNReadingCell`.
        sequences: `(batch, time, features)`, the cell's inputs.
        extras: list of `(batch, time, ...)` tensors scanned beside them.
        initial_state, mask, training: as `keras.layers.RNN.inner_loop`'s.
        make_seeds: function of one step's slices of `extras`.

    Returns:
        `(last_output, outputs, states)`, as `keras.layers.RNN.inner_loop`.
    """
    if not rnn.return_sequences:
        raise ValueError("The reading loop returns all outputs.")
    cell = rnn.cell
    layers = [cell, *cell.attentions]

    def step(inputs, states):
        inputs, *step_extras = inputs
        seeds = make_seeds(*step_extras)
        for layer in layers:
            layer._step_seeds = seeds
        try:
            output, new_states = cell(inputs, states, training=training)
        finally:
            for layer in layers:
                layer._step_seeds = None
        return output, new_states

    return backend_rnn(
        step, (sequences, *extras), initial_state,
        go_backwards=rnn.go_backwards, mask=mask, unroll=rnn.unroll,
        input_length=sequences.shape[1],
        zero_output_for_mask=rnn.zero_output_for_mask,
        return_all_outputs=True,
    )


@keras.saving.register_keras_serializable(package="keras_ordered")
class PRPNReadingNetwork(keras.layers.RNN):
    """PRPN's reading network: `keras.layers.RNN` over a `PRPNReadingCell`,
    with a faster loop per backend.

    The values are those of `keras.layers.RNN(cell)`; only the loop
    differs:

    - TensorFlow, `layer_loop=True` (without a mask, `go_backwards` or
      `unroll`): `reading_network_loop`, one layer after the other with the
      input products outside the loop and a hand-written backward pass;
    - JAX: `jax_reading_loop`, the cell step by step with the per-step
      dropouts drawn from a fresh key at every step of the scan;
    - otherwise (PyTorch, `layer_loop=False`, a mask, `go_backwards`,
      `unroll`): `keras.layers.RNN`'s loop over the cell.

    The layer-by-layer loop does not compile with XLA (its TensorArrays
    have no static shape inside a Keras train step): a model compiled with
    `jit_compile=True` sets `layer_loop` to False (`PRPNLanguageModel`
    does so in `compile`).

    Args:
        cell: a `PRPNReadingCell`.
        layer_loop: bool, whether TensorFlow runs the layer-by-layer loop.
        return_state, go_backwards, stateful, unroll, zero_output_for_mask:
            as in `keras.layers.RNN`. The outputs are always the whole
            sequence (`return_sequences=True`).
        **kwargs: base layer keyword arguments.

    Example:

    ```python
    cell = keras_ordered.layers.PRPNReadingCell(32, num_layers=2, num_slots=4)
    reading = keras_ordered.layers.PRPNReadingNetwork(cell, return_state=True)
    embeddings = keras.random.normal((2, 7, 16))
    gates = keras_ordered.layers.memory_gates(
        keras.random.uniform((2, 7)), num_slots=4
    )
    outputs, *tapes = reading(keras.ops.concatenate([embeddings, gates], -1))
    ```

    Reference:
        Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
        Learning Syntax and Lexicon". ICLR 2018.
    """

    def __init__(self, cell, layer_loop=True, return_state=False,
                 go_backwards=False, stateful=False, unroll=False,
                 zero_output_for_mask=False, **kwargs):
        if not isinstance(cell, PRPNReadingCell):
            raise TypeError(
                "PRPNReadingNetwork runs a PRPNReadingCell; got "
                f"{type(cell).__name__}. Use keras.layers.RNN for other "
                "cells.")
        if not kwargs.pop("return_sequences", True):
            raise ValueError("PRPNReadingNetwork returns the whole sequence "
                             "(return_sequences=True).")
        super().__init__(
            cell, return_sequences=True, return_state=return_state,
            go_backwards=go_backwards, stateful=stateful, unroll=unroll,
            zero_output_for_mask=zero_output_for_mask, **kwargs)
        self.layer_loop = bool(layer_loop)

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if keras.backend.backend() == "jax":
            return jax_reading_loop(self, sequences, initial_state, mask,
                                    training=training)
        if (keras.backend.backend() == "tensorflow" and self.layer_loop
                and mask is None and not self.go_backwards
                and not self.unroll):
            return reading_network_loop(self.cell, sequences, initial_state,
                                        training=training)
        return super().inner_loop(sequences, initial_state, mask,
                                  training=training)

    def get_config(self):
        config = super().get_config()
        config.pop("return_sequences", None)
        return {**config, "layer_loop": self.layer_loop}


def reading_network_loop(cell, sequences, initial_state, training=False):
    """`PRPNReadingCell` over a whole window, one layer after the other.

    The same network as `keras.layers.RNN(cell)` (layer `l` at step `t`
    reads layer `l - 1` at step `t` and its own tape, so running layer 1
    over the window before layer 2 changes nothing), arranged for speed:

    - every product of a layer's input (the LSTM input projection with its
      layer normalisation, the input half of the attention query) is one
      `(batch * time, features)` matmul before the layer's loop, and the
      element-wise dropouts (a fresh draw per step and position, as in the
      per-step cell) are drawn for the whole window at once;
    - inside the loop remain the products of the previous hidden state
      (attention query, LSTM recurrent projection), the attention over the
      `num_slots` slots and the element-wise LSTM update;
    - on TensorFlow the loop has a hand-written backward pass
      (`_tf_reading_recurrence`): it keeps only `h`, `c`, the queries,
      attention weights and recurrent pre-activations of each step, not
      every step's tapes, and the recurrent kernels' gradients are one
      product each after the loop instead of a read-modify-write of the
      whole kernel gradient at every step;
    - under a mixed policy the products run in the compute dtype and the
      tapes, the attention weights, the gates and the cell state stay in
      float32.

    Values and gradients equal the per-step cell's (tested); in training the
    dropout masks are drawn in another order (same distribution).

    Args:
        cell: a built `PRPNReadingCell`.
        sequences: `(batch, time, input_dim + num_slots)`, the per-step
            inputs `[embedding ; gates]`.
        initial_state: list of `2 * num_layers` tensors
            `(batch, num_slots * units)`.
        training: Python boolean.

    Returns:
        `(last_output, outputs, new_states)` as `keras.layers.RNN`'s
        `inner_loop` returns them.
    """
    dtype = cell.compute_dtype
    units, slots = cell.units, cell.num_slots
    sequences = ops.cast(sequences, dtype)
    x = sequences[..., : cell.input_dim]
    gates = ops.cast(sequences[..., cell.input_dim :], "float32")
    masks = cell.get_dropout_mask(None) if training else None
    new_states = []
    for index in range(cell.num_layers):
        attention = cell.attentions[index]
        lstm = cell.lstm_cells[index]
        in_dim = int(x.shape[-1])
        key_kernel = ops.cast(attention.kernel, dtype)
        query_input = ops.matmul(
            attention._drop(x, training), key_kernel[:in_dim]
        ) + ops.cast(attention.bias, dtype)
        lstm_input = x
        if training:
            lstm_input = cell._step_dropout(x, cell._layer_rate(index))
        z_input = lstm.input_norm(
            ops.matmul(lstm_input, ops.cast(lstm.kernel, dtype))
            + ops.cast(lstm.input_bias, dtype)
        )
        step_masks = {}
        if training and attention.dropout > 0:
            ones = ops.ones(ops.shape(query_input), "float32")
            step_masks["key"] = attention._drop(ones, True)
            step_masks["query"] = attention._drop(ones, True)
        if masks is not None and masks[index] is not None:
            step_masks["attended"] = ops.cast(masks[index], "float32")
        shape = (-1, slots, units)
        tapes = [
            ops.reshape(ops.cast(initial_state[2 * index + k], "float32"), shape)
            for k in (0, 1)
        ]
        weights = dict(
            query_kernel=key_kernel[in_dim:],
            recurrent_kernel=ops.cast(lstm.recurrent_kernel, dtype),
            recurrent_bias=ops.cast(lstm.recurrent_bias, "float32"),
            recurrent_gamma=ops.cast(lstm.recurrent_norm.gamma, "float32"),
            recurrent_beta=ops.cast(lstm.recurrent_norm.beta, "float32"),
            cell_gamma=ops.cast(lstm.cell_norm.gamma, "float32"),
            cell_beta=ops.cast(lstm.cell_norm.beta, "float32"),
        )
        outputs_h, outputs_c = _tf_reading_recurrence(
            ops.cast(query_input, "float32"), ops.cast(z_input, "float32"),
            gates, tapes[0], tapes[1], weights, step_masks,
            epsilon=(lstm.recurrent_norm.epsilon, lstm.cell_norm.epsilon),
            custom_backward=bool(training), fuse_cell_work=bool(training),
        )
        flat = (-1, slots * units)
        for tape, outputs in zip(tapes, (outputs_h, outputs_c)):
            tape = ops.concatenate([tape, outputs], axis=1)[:, -slots:]
            new_states.append(ops.reshape(tape, flat))
        x = ops.cast(outputs_h, dtype)
    return x[:, -1], x, new_states


def _std_norm(x, gamma, beta, epsilon):
    # StdLayerNormalization in float32: `x_hat * gamma + beta`.
    n = x.shape[-1]
    centred = x - ops.mean(x, axis=-1, keepdims=True)
    std = ops.sqrt(ops.sum(centred * centred, axis=-1, keepdims=True) / (n - 1))
    return centred / (std + epsilon) * gamma + beta


def _std_norm_backward(d_y, x, gamma, epsilon):
    """`(d_x, x_hat)` of `_std_norm` for the upstream gradient `d_y`."""
    n = x.shape[-1]
    centred = x - ops.mean(x, axis=-1, keepdims=True)
    std = ops.sqrt(ops.sum(centred * centred, axis=-1, keepdims=True) / (n - 1))
    denominator = std + epsilon
    d_hat = d_y * gamma
    d_std = -ops.sum(d_hat * centred, axis=-1, keepdims=True) / denominator**2
    d_centred = d_hat / denominator + d_std * centred / ((n - 1) * std)
    d_x = d_centred - ops.mean(d_centred, axis=-1, keepdims=True)
    return d_x, centred / denominator


def _tf_reading_recurrence(query_input, z_input, gates, tape_h0, tape_c0,
                           weights, step_masks, epsilon, custom_backward=True,
                           fuse_tape_updates=True, fuse_cell_work=False):
    """One reading layer's loop over a window, with a hand-written backward.

    Per step `t` (float32 except the two products, run in the kernels'
    dtype), with `h_p` the tape's last slot:

    ```
    q  = (q_x[t] + (h_p * m_key[t]) K_h) * m_query[t]
    w  = gated_softmax(tape_h . q / sqrt(d), g[t])
    h~ = (w . tape_h) * m_att ;  c~ = w . tape_c
    r  = h~ U + b_hh ;  z = z_x[t] + LN_hh(r)
    c  = sigmoid(f) c~ + sigmoid(i) tanh(g) ;  h = sigmoid(o) tanh(LN_c(c))
    ```

    then `h`, `c` are pushed onto the tapes. The forward pass stores per
    step `q`, `w`, `r`, `c`, the read-outs `h~`, `c~` and the gated
    softmax's `e / total`; the backward pass takes each step's tapes as
    slices of the time-major output sequences (no copy), carries the tapes'
    gradients time-major, multiplies by kernels transposed once before its
    loop, and takes the kernels' gradients as one product each after it.
    Returns the output sequences `(h, c)`, each `(batch, time, units)`.
    `custom_backward=False` leaves the loop to autodiff (the caller's
    choice in inference, where no backward is wanted: a graph without the
    hand-written backward traces and exports faster; and for testing);
    `fuse_tape_updates=False` runs the backward's tape work as separate
    TensorFlow ops instead of one XLA-compiled function per step;
    `fuse_cell_work=True` compiles the rest of each step's element-wise work
    with XLA too: in the forward, the attention with its read-outs, and the
    cell update with the tapes' shift; in the backward, the cell's
    derivatives (the caller turns it on in training only, so that inference
    and exported graphs hold no XLA functions).
    """
    import tensorflow as tf

    from keras_ordered.layers._tf_recurrence import kernel_product
    from keras_ordered.layers._tf_recurrence import time_loop
    from keras_ordered.layers._tf_recurrence import transposed_product

    rows = tape_h0.shape[0]  # the static batch size, where known
    slots = int(tape_h0.shape[1])
    units = int(tape_h0.shape[2])
    scale = 1.0 / float(units) ** 0.5
    eps_r, eps_c = epsilon
    key_mask = step_masks.get("key")
    query_mask = step_masks.get("query")
    attended_mask = step_masks.get("attended")
    names = ("query_kernel", "recurrent_kernel", "recurrent_bias",
             "recurrent_gamma", "recurrent_beta", "cell_gamma", "cell_beta")

    def time_major(x):
        return tf.transpose(x, (1, 0, 2))

    def split(z):
        return (tf.sigmoid(z[:, :units]), tf.sigmoid(z[:, units : 2 * units]),
                tf.tanh(z[:, 2 * units : 3 * units]),
                tf.sigmoid(z[:, 3 * units :]))

    def attend(tape_h, query, g):
        # `(w, e / total)`: the gated softmax's weights, and its exponentials
        # over the gated total (the weights' derivative w.r.t. the gates).
        scores = tf.einsum("bmd,bd->bm", tape_h, query) * scale
        shifted = tf.exp(scores - tf.reduce_max(scores, -1, keepdims=True))
        total = tf.reduce_sum(g * shifted, -1, keepdims=True) + 1e-8
        return g * shifted / total, shifted / total

    def per_step(x):
        return time_major(x) if x is not None else tf.zeros((tf.shape(gates)[1],))

    def forward(query_input, z_input, gates, tape_h0, tape_c0, kernels):
        w_ = dict(zip(names, kernels))
        query_product = kernel_product(w_["query_kernel"], rows)
        recurrent_product = kernel_product(w_["recurrent_kernel"], rows)

        def read(tape_h, tape_c, q_x, q_h, m_query, g):
            query = q_x + q_h
            if query_mask is not None:
                query = query * m_query
            attn, ratio = attend(tape_h, query, g)
            attended_h = tf.einsum("bm,bmd->bd", attn, tape_h)
            attended_c = tf.einsum("bm,bmd->bd", attn, tape_c)
            if attended_mask is not None:
                attended_h = attended_h * attended_mask
            return query, attn, ratio, attended_h, attended_c

        def update(r, z_x, attended_c, tape_h, tape_c):
            r = r + w_["recurrent_bias"]
            z = z_x + _std_norm(r, w_["recurrent_gamma"], w_["recurrent_beta"],
                                eps_r)
            i, f, g_hat, o = split(z)
            c = f * attended_c + i * g_hat
            h = o * tf.tanh(_std_norm(c, w_["cell_gamma"], w_["cell_beta"], eps_c))
            return (h, c, r, tf.concat([tape_h[:, 1:], h[:, None]], 1),
                    tf.concat([tape_c[:, 1:], c[:, None]], 1))

        if fuse_cell_work:
            read = tf.function(read, jit_compile=True)
            update = tf.function(update, jit_compile=True)

        def step(carry, elems):
            tape_h, tape_c = carry
            q_x, z_x, g, m_key, m_query = elems
            h_p = tape_h[:, -1]
            if key_mask is not None:
                h_p = h_p * m_key
            query, attn, ratio, attended_h, attended_c = read(
                tape_h, tape_c, q_x, query_product(h_p), m_query, g)
            h, c, r, tape_h, tape_c = update(
                recurrent_product(attended_h), z_x, attended_c, tape_h, tape_c)
            return ((tape_h, tape_c),
                    (h, c, query, attn, r, ratio, attended_h, attended_c))

        batch = tf.shape(tape_h0)[0]
        zeros_bu = tf.zeros((batch, units))
        zeros_bm = tf.zeros((batch, slots))
        like = (zeros_bu, zeros_bu, zeros_bu, zeros_bm,
                tf.zeros((batch, 4 * units)), zeros_bm, zeros_bu, zeros_bu)
        elems = (time_major(query_input), time_major(z_input),
                 time_major(gates), per_step(key_mask), per_step(query_mask))
        _, outputs = time_loop(step, elems, (tape_h0, tape_c0), like)
        return outputs

    @tf.custom_gradient
    def recurrence(query_input, z_input, gates, tape_h0, tape_c0, *kernels):
        w_ = dict(zip(names, kernels))
        (hs, cs, queries, attns, rs, ratios, attended_hs,
         attended_cs) = forward(query_input, z_input, gates, tape_h0, tape_c0,
                                kernels)
        outputs_h, outputs_c = time_major(hs), time_major(cs)
        batch = tf.shape(tape_h0)[0]
        zeros_bu = tf.zeros((batch, units))

        def grad(d_outputs_h, d_outputs_c):
            # Time-major tapes: step t's tape is all_h[t : t + M], a slice of
            # the first axis (no copy); the tape gradients are carried
            # time-major too, `(M, B, d)`.
            all_h = tf.concat([time_major(tape_h0), hs], 0)  # (M + T, B, d)
            all_c = tf.concat([time_major(tape_c0), cs], 0)
            recurrent_product = transposed_product(
                w_["recurrent_kernel"], rows)
            query_product = transposed_product(w_["query_kernel"], rows)
            d_hs = tf.zeros_like(hs) if d_outputs_h is None else time_major(
                tf.cast(d_outputs_h, "float32"))
            d_cs = tf.zeros_like(cs) if d_outputs_c is None else time_major(
                tf.cast(d_outputs_c, "float32"))
            steps = tf.shape(hs)[0]

            def tape_update(d_tape_h, d_tape_c, tape_h, tape_c, attn,
                            d_attended_h, d_attended_c, query, ratio, m_query):
                # Everything of a step that touches `(M, B, d)` tapes: the
                # attention's backward and the tape gradients handed on to
                # the earlier steps (shifted one slot: slot `j` of step t's
                # tape is slot `j + 1` of step t + 1's).
                if attended_mask is not None:
                    d_attended_h = d_attended_h * attended_mask
                pad = [[1, 0], [0, 0], [0, 0]]
                attn_t = tf.transpose(attn)[:, :, None]  # (M, B, 1)
                d_attn = tf.transpose(
                    tf.reduce_sum(tape_h * d_attended_h[None], -1)
                    + tf.reduce_sum(tape_c * d_attended_c[None], -1))
                centred = d_attn - tf.reduce_sum(d_attn * attn, -1, keepdims=True)
                d_g = ratio * centred
                d_scores = tf.transpose(attn * centred * scale)[:, :, None]
                d_query = tf.reduce_sum(d_scores * tape_h, 0)
                d_tape_h = (tf.pad(d_tape_h[:-1], pad)
                            + attn_t * d_attended_h[None]
                            + d_scores * query[None])
                d_tape_c = tf.pad(d_tape_c[:-1], pad) + attn_t * d_attended_c[None]
                if query_mask is not None:
                    d_query = d_query * m_query
                return d_tape_h, d_tape_c, d_query, d_g

            if fuse_tape_updates:
                # One XLA cluster per step instead of about 16 passes over
                # the tapes by separate ops (measured in benchmarks/README.md).
                tape_update = tf.function(tape_update, jit_compile=True)

            def cell_backward(d_out_h, d_out_c, d_tape_h_last, d_tape_c_last,
                              d_h_query, z_x, r, c, attended_c):
                d_h = d_out_h + d_tape_h_last + d_h_query
                d_c = d_out_c + d_tape_c_last
                z = z_x + _std_norm(r, w_["recurrent_gamma"],
                                    w_["recurrent_beta"], eps_r)
                i, f, g_hat, o = split(z)
                n = _std_norm(c, w_["cell_gamma"], w_["cell_beta"], eps_c)
                tanh_n = tf.tanh(n)
                d_o = d_h * tanh_n * o * (1.0 - o)
                d_n = d_h * o * (1.0 - tanh_n**2)
                d_c = d_c + _std_norm_backward(d_n, c, w_["cell_gamma"], eps_c)[0]
                d_z = tf.concat(
                    [d_c * g_hat * i * (1.0 - i),
                     d_c * attended_c * f * (1.0 - f),
                     d_c * i * (1.0 - g_hat**2), d_o], -1)
                d_r = _std_norm_backward(d_z, r, w_["recurrent_gamma"], eps_r)[0]
                return d_z, d_r, d_n, d_c * f

            if fuse_cell_work:
                cell_backward = tf.function(cell_backward, jit_compile=True)

            def back(carry, elems):
                # carry: the gradients of step t + 1's tapes (its last slot is
                # h_t, c_t) and of h_t through step t + 1's query.
                d_tape_h, d_tape_c, d_h_query = carry
                (t, d_out_h, d_out_c, z_x, query, attn, r, c, ratio,
                 attended_c, m_key, m_query) = elems
                d_z, d_r, d_n, d_attended_c = cell_backward(
                    d_out_h, d_out_c, d_tape_h[-1], d_tape_c[-1], d_h_query,
                    z_x, r, c, attended_c)
                d_tape_h, d_tape_c, d_query, d_g = tape_update(
                    d_tape_h, d_tape_c, all_h[t : t + slots],
                    all_c[t : t + slots], attn, recurrent_product(d_r),
                    d_attended_c, query, ratio, m_query)
                d_h_p = query_product(d_query)
                if key_mask is not None:
                    d_h_p = d_h_p * m_key
                return ((d_tape_h, d_tape_c, d_h_p),
                        (d_query, d_z, d_r, d_n, d_g))

            zeros_tape = tf.zeros_like(time_major(tape_h0))
            like = (zeros_bu, tf.zeros((batch, 4 * units)),
                    tf.zeros((batch, 4 * units)), zeros_bu,
                    tf.zeros((batch, slots)))
            elems = (tf.range(steps), d_hs, d_cs, time_major(z_input),
                     queries, attns, rs, cs, ratios, attended_cs,
                     per_step(key_mask), per_step(query_mask))
            (d_tape_h0, d_tape_c0, d_h_query), (d_q, d_z, d_r, d_n, d_g) = (
                time_loop(back, elems, (zeros_tape, zeros_tape, zeros_bu),
                          like, reverse=True))
            # The first step's query read the initial tape's last slot.
            d_tape_h0 = tf.concat(
                [d_tape_h0[:-1], d_tape_h0[-1:] + d_h_query[None]], 0)
            h_prev = all_h[slots - 1 : -1]
            if key_mask is not None:
                h_prev = h_prev * time_major(key_mask)

            def outer(a, b, kernel):
                # sum_t a_t^T b_t as one (i, T*B) x (T*B, j) product.
                a = tf.reshape(tf.cast(a, kernel.dtype), (-1, a.shape[-1]))
                b = tf.reshape(tf.cast(b, kernel.dtype), (-1, b.shape[-1]))
                return tf.matmul(a, b, transpose_a=True)

            _, r_hat = _std_norm_backward(d_z, rs, w_["recurrent_gamma"], eps_r)
            _, c_hat = _std_norm_backward(d_n, cs, w_["cell_gamma"], eps_c)
            kernel_grads = [
                outer(h_prev, d_q, w_["query_kernel"]),
                outer(attended_hs, d_r, w_["recurrent_kernel"]),
                tf.reduce_sum(d_r, [0, 1]),
                tf.reduce_sum(d_z * r_hat, [0, 1]),
                tf.reduce_sum(d_z, [0, 1]),
                tf.reduce_sum(d_n * c_hat, [0, 1]),
                tf.reduce_sum(d_n, [0, 1]),
            ]
            return (time_major(d_q), time_major(d_z), time_major(d_g),
                    time_major(d_tape_h0), time_major(d_tape_c0),
                    *kernel_grads)

        return (outputs_h, outputs_c), grad

    kernels = [tf.convert_to_tensor(weights[k]) for k in names]
    if not custom_backward:
        hs, cs = forward(query_input, z_input, gates, tape_h0, tape_c0,
                         kernels)[:2]
        return time_major(hs), time_major(cs)
    return recurrence(query_input, z_input, gates, tape_h0, tape_c0, *kernels)
