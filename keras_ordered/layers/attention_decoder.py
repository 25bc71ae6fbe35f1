"""Attention and the attention decoder of "Grammar as a Foreign Language".

Vinyals et al. (2015) decode a linearized parse tree with a stacked LSTM
that, at every output step `t`, attends over the encoder's top states
`h_1 .. h_{T_A}`:

```
u_i^t = v^T tanh(W_1' h_i + W_2' d_t)
a^t   = softmax(u^t)                      (over the encoder positions i)
d'_t  = sum_i a_i^t h_i
```

and predicts the next symbol from the concatenation `[d_t ; d'_t]`, which
is also "fed to the next time step". This module holds the two pieces:

- `BahdanauAttention`: the scores, the masked softmax and the context
  `d'_t`, with `W_1' h_i` computed once per sentence (`project_memory`);
- `AttentionDecoder`: the stacked decoder LSTM with that attention, one
  step at a time (`step`, used by greedy and beam search) or over a whole
  teacher-forced target sequence (`call`, a loop over `step`, so both
  paths compute the very same numbers).

Backends
========

`call` loops over `step` in one of two ways, which give the same numbers:

- on TensorFlow, a `tf.while_loop` writing `tf.TensorArray`s (the fast
  path, which XLA compiles with `jit_compile=True`);
- on every other backend, `keras.ops.scan` (one `jax.lax.scan` on JAX, a
  Python loop on PyTorch). The tests run it on TensorFlow too and compare
  it with the fast path.

Input feeding (how `[d_t ; d'_t]` reaches step `t + 1`)
=======================================================

The paper: the two vectors are concatenated and "become the new hidden
state from which we make predictions and which is fed to the next time step
in our recurrent model". Read literally, the top layer's recurrent input at
`t + 1` is `[d_t ; d'_t]` instead of `d_t`. Since an LSTM's gates are linear
in their inputs, `W [x ; d ; d'] = W_x x + W_d d + W_d' d'`, that is exactly
an LSTM whose recurrent state is `d_t` and whose *input* is
`[x_{t+1} ; d'_t]`: `input_feeding="top"` (the default) feeds the previous
context `d'_{t-1}` into the top decoder layer. `input_feeding="bottom"`
feeds it with the previous symbol's embedding into the first layer
(`[E y_{t-1} ; d'_{t-1}]`, the input feeding of Luong et al., 2015), and
`None` does not feed it at all (the attention then only shapes the
prediction). With one layer, "top" and "bottom" are the same model.
`d'_0 = 0`.

Reference:
    Vinyals, Kaiser, Koo, Petrov, Sutskever, Hinton. "Grammar as a Foreign
    Language". NeurIPS 2015.
"""

import keras
from keras import ops

from keras_ordered import backend

from keras_ordered.layers._checks import check_positive_int as _positive_int
from keras_ordered.layers._checks import check_rate

_MASKED_SCORE = -1e9

INPUT_FEEDING = ("top", "bottom", None)


@keras.saving.register_keras_serializable(package="keras_ordered")
class BahdanauAttention(keras.layers.Layer):
    """Additive attention of a decoder state over encoder states.

    `u_i = v^T tanh(W_1' h_i + W_2' d)`, `a = softmax(u)` over the unmasked
    positions (exactly zero on masked ones), `d' = sum_i a_i h_i`. No bias:
    the paper's formula has none.

    Args:
        units: int, the size of `W_1' h_i` and `W_2' d` (the paper's 256).
        kernel_initializer: initializer of `W_1'` and `W_2'`.
        score_initializer: initializer of `v`.
        **kwargs: base `Layer` keyword arguments (`name`, `dtype`).

    Call arguments:
        inputs: list `[query, memory]` or `[query, memory, keys]`: `query`
            `(batch, query_dim)` is the decoder state `d_t`, `memory`
            `(batch, time, memory_dim)` the encoder states `h_i`, `keys`
            the optional precomputed `project_memory(memory)`.
        mask: optional bool or 0/1 tensor `(batch, time)`, True on real
            (non-padding) encoder positions.

    Returns:
        `(context, weights)`: `context` `(batch, memory_dim)` in the
        layer's compute dtype, `weights` `(batch, time)` float32.

    Example:

    ```python
    attention = keras_ordered.layers.BahdanauAttention(8)
    query = np.random.rand(2, 5).astype("float32")
    memory = np.random.rand(2, 7, 6).astype("float32")
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3], bool)
    context, weights = attention([query, memory], mask=mask)  # (2, 6), (2, 7)
    ```

    Reference:
        Vinyals et al., "Grammar as a Foreign Language", NeurIPS 2015
        (after Bahdanau, Cho, Bengio, ICLR 2015).
    """

    def __init__(
        self,
        units,
        kernel_initializer="glorot_uniform",
        score_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = _positive_int("units", units)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.score_initializer = keras.initializers.get(score_initializer)
        self.supports_masking = True  # the mask is the encoder's padding

    def compute_mask(self, inputs, previous_mask):
        return None

    def build(self, input_shape):
        query_shape, memory_shape = input_shape[0], input_shape[1]
        self.memory_kernel = self.add_weight(
            shape=(memory_shape[-1], self.units),
            initializer=self.kernel_initializer,
            name="memory_kernel",
        )
        self.query_kernel = self.add_weight(
            shape=(query_shape[-1], self.units),
            initializer=self.kernel_initializer,
            name="query_kernel",
        )
        self.score_vector = self.add_weight(
            shape=(self.units, 1),
            initializer=self.score_initializer,
            name="score_vector",
        )
        self.built = True

    def _weight(self, variable):
        return ops.cast(variable, self.compute_dtype)

    def project_memory(self, memory):
        """`W_1' h_i` for every encoder position: `(batch, time, units)`."""
        memory = ops.cast(memory, self.compute_dtype)
        return ops.einsum("bsh,ha->bsa", memory, self._weight(self.memory_kernel))

    def attend(self, query, memory, keys, mask=None):
        """The context and the weights from precomputed `keys` (see `call`)."""
        query = ops.cast(query, self.compute_dtype)
        memory = ops.cast(memory, self.compute_dtype)
        projected_query = ops.matmul(query, self._weight(self.query_kernel))
        hidden = ops.tanh(keys + ops.expand_dims(projected_query, 1))
        # A product and a sum, not a 3-D matmul (whose tensordot has
        # dynamic transposes that XLA refuses inside the decoder's loop).
        scores = ops.sum(
            hidden * ops.reshape(self._weight(self.score_vector), (-1,)), axis=-1
        )
        scores = ops.cast(scores, "float32")
        if mask is not None:
            mask = ops.cast(mask, "bool")
            scores = ops.where(mask, scores, _MASKED_SCORE)
        weights = ops.softmax(scores, axis=-1)
        if mask is not None:
            # Exactly zero on padding, also for a sentence that is all padding.
            weights = weights * ops.cast(mask, "float32")
        context = ops.sum(
            ops.expand_dims(ops.cast(weights, self.compute_dtype), -1) * memory,
            axis=1,
        )
        return context, weights

    def call(self, inputs, mask=None):
        query, memory = inputs[0], inputs[1]
        keys = inputs[2] if len(inputs) > 2 else self.project_memory(memory)
        return self.attend(query, memory, keys, mask)

    def compute_output_shape(self, input_shape):
        query_shape, memory_shape = input_shape[0], input_shape[1]
        return (
            (query_shape[0], memory_shape[-1]),
            (memory_shape[0], memory_shape[1]),
        )

    def compute_output_spec(self, inputs, mask=None):
        query, memory = inputs[0], inputs[1]
        return (
            keras.KerasTensor(
                (query.shape[0], memory.shape[-1]), dtype=self.compute_dtype
            ),
            keras.KerasTensor((memory.shape[0], memory.shape[1]), dtype="float32"),
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "score_initializer": keras.initializers.serialize(
                    self.score_initializer
                ),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="keras_ordered")
class AttentionDecoder(keras.layers.Layer):
    """Stacked LSTM decoder with additive attention and input feeding.

    At output step `t`, from the embedding `x_t` of the previous symbol:
    `L` LSTM layers (the top one's output is `d_t`), then (with attention)
    `d'_t` from `BahdanauAttention`, and the features `[d_t ; d'_t]` from
    which the caller predicts the next symbol. `d'_t` is fed to step
    `t + 1` as `input_feeding` says (module docstring). Without attention
    the features are `d_t` alone (the paper's LSTM baseline).

    The LSTM equations are keras' `LSTMCell`'s (gates in the order
    input, forget, candidate, output; forget bias initialised to 1).

    The state, a list: `[h_1, c_1, ..., h_L, c_L]`, then (with attention)
    the previous context `d'_{t-1}`. `initial_state(encoder_states, memory)`
    builds it from the encoder's final `[h_1, c_1, ..., h_L, c_L]` (the
    decoder continues where the encoder stopped, the paper's single LSTM
    reading the input then the output) and a zero context.

    Args:
        units: int, size of every decoder LSTM layer (the paper's 256).
        num_layers: int, `L` (the paper's 3).
        attention: bool, False for the no-attention baseline.
        attention_units: int or None, size of the attention's hidden
            vector; None means `units`.
        input_feeding: `"top"`, `"bottom"` or None, where `d'_{t-1}` enters
            step `t` (module docstring).
        dropout: float, dropout between LSTM layers (on the input of
            layers 2 .. L, a fresh mask at every step), training only.
        seed: int or None, seed of the dropout.
        kernel_initializer, recurrent_initializer: initializers of the
            LSTMs' input and recurrent kernels.
        **kwargs: base `Layer` keyword arguments (`name`, `dtype`).

    Call arguments:
        inputs: list `[target_embeddings, memory, memory_mask,
            *encoder_states]`: `target_embeddings` `(batch, T, E)` the
            embeddings of the decoder's inputs (`<go> y_1 .. y_{T-1}`),
            `memory` `(batch, S, H)` the encoder's top states, `memory_mask`
            `(batch, S)` True on real positions, and the encoder's final
            states (`2 * num_layers` tensors `(batch, units)`).
        training: bool, dropout on when True.

    Returns:
        `(features, weights)`: `features` `(batch, T, units + H)` (`units`
        without attention), `weights` `(batch, T, S)` float32 attention
        weights (zeros without attention).

    Example:

    ```python
    decoder = keras_ordered.layers.AttentionDecoder(16, num_layers=2)
    embedded = np.random.rand(2, 5, 8).astype("float32")
    memory = np.random.rand(2, 7, 16).astype("float32")
    mask = np.ones((2, 7), bool)
    states = [np.zeros((2, 16), "float32")] * 4
    features, weights = decoder([embedded, memory, mask, *states])
    # features: (2, 5, 32), weights: (2, 5, 7)
    ```

    Reference:
        Vinyals et al., "Grammar as a Foreign Language", NeurIPS 2015.
    """

    def __init__(
        self,
        units,
        num_layers=3,
        attention=True,
        attention_units=None,
        input_feeding="top",
        dropout=0.0,
        seed=None,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = _positive_int("units", units)
        self.num_layers = _positive_int("num_layers", num_layers)
        if attention_units is None:
            attention_units = units
        self.attention_units = _positive_int("attention_units", attention_units)
        if input_feeding not in INPUT_FEEDING:
            raise ValueError(
                "`input_feeding` must be 'top' (the paper's reading), "
                f"'bottom' or None. Received: input_feeding={input_feeding!r}"
            )
        self.attention = bool(attention)
        self.input_feeding = input_feeding
        self.dropout = check_rate("dropout", dropout)
        self.seed = seed
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.seed_generator = keras.random.SeedGenerator(seed)
        # The padding of the memory is the explicit `memory_mask` input; a
        # Keras mask arriving with the encoder's outputs is dropped quietly.
        self.supports_masking = True
        self.attention_layer = (
            BahdanauAttention(
                self.attention_units, dtype=self.dtype_policy, name="attention"
            )
            if self.attention
            else None
        )

    # --- structure ----------------------------------------------------------
    def _feeding_layer(self):
        """Index of the LSTM layer that receives `d'_{t-1}`, or None."""
        if not self.attention or self.input_feeding is None:
            return None
        return self.num_layers - 1 if self.input_feeding == "top" else 0

    @property
    def state_size(self):
        sizes = [self.units] * (2 * self.num_layers)
        if self.attention:
            sizes.append(self.memory_dim)
        return sizes

    def feature_size(self):
        """Size of the features `[d_t ; d'_t]` (or `d_t`)."""
        return self.units + (self.memory_dim if self.attention else 0)

    def build(self, input_shape):
        embedding_dim = input_shape[0][-1]
        self.memory_dim = input_shape[1][-1]
        if embedding_dim is None or self.memory_dim is None:
            raise ValueError(
                "The decoder needs the last dimension of the target "
                f"embeddings and of the memory. Received shapes {input_shape}."
            )
        feeding = self._feeding_layer()
        self.kernels, self.recurrent_kernels, self.biases = [], [], []
        for index in range(self.num_layers):
            input_dim = embedding_dim if index == 0 else self.units
            if index == feeding:
                input_dim += self.memory_dim
            self.kernels.append(
                self.add_weight(
                    shape=(input_dim, 4 * self.units),
                    initializer=self.kernel_initializer,
                    name=f"lstm_{index + 1}_kernel",
                )
            )
            self.recurrent_kernels.append(
                self.add_weight(
                    shape=(self.units, 4 * self.units),
                    initializer=self.recurrent_initializer,
                    name=f"lstm_{index + 1}_recurrent_kernel",
                )
            )
            self.biases.append(
                self.add_weight(
                    shape=(4 * self.units,),
                    initializer=_forget_bias_initializer(self.units),
                    name=f"lstm_{index + 1}_bias",
                )
            )
        if self.attention:
            self.attention_layer.build(
                [(None, self.units), (None, None, self.memory_dim)]
            )
        self.built = True

    # --- one step -------------------------------------------------------------
    def initial_state(self, encoder_states, memory):
        """The decoder's state at `t = 0` from the encoder's final states."""
        if len(encoder_states) != 2 * self.num_layers:
            raise ValueError(
                f"The decoder needs {2 * self.num_layers} encoder states "
                f"(h and c of {self.num_layers} layers), got "
                f"{len(encoder_states)}."
            )
        states = [ops.cast(s, self.compute_dtype) for s in encoder_states]
        if self.attention:
            batch = ops.shape(memory)[0]
            states.append(
                ops.zeros((batch, self.memory_dim), dtype=self.compute_dtype)
            )
        return states

    def project_memory(self, memory):
        """What `step` needs of the memory besides itself (the keys)."""
        if not self.attention:
            return memory
        return self.attention_layer.project_memory(memory)

    def step(self, inputs, states, memory, keys, memory_mask, dropout_masks=None):
        """One decoder step.

        Args:
            inputs: `(batch, E)`, the embedding of the previous symbol.
            states: the state list (class docstring).
            memory: `(batch, S, H)` encoder states.
            keys: `project_memory(memory)`.
            memory_mask: `(batch, S)`, True on real positions.
            dropout_masks: None, or `num_layers - 1` scaled 0/1 masks
                `(batch, units)` for the inputs of layers 2 .. L.

        Returns:
            `(features, new_states, weights)`.
        """
        dtype = self.compute_dtype
        x = ops.cast(inputs, dtype)
        context = states[-1] if self.attention else None
        feeding = self._feeding_layer()
        new_states = []
        for index in range(self.num_layers):
            if index > 0 and dropout_masks is not None:
                x = x * ops.cast(dropout_masks[index - 1], dtype)
            if index == feeding:
                x = ops.concatenate([x, ops.cast(context, dtype)], axis=-1)
            h, c = _lstm_step(
                x,
                ops.cast(states[2 * index], dtype),
                ops.cast(states[2 * index + 1], dtype),
                ops.cast(self.kernels[index], dtype),
                ops.cast(self.recurrent_kernels[index], dtype),
                ops.cast(self.biases[index], dtype),
            )
            new_states += [h, c]
            x = h
        if self.attention:
            context, weights = self.attention_layer.attend(
                x, memory, keys, memory_mask
            )
            new_states.append(context)
            features = ops.concatenate([x, context], axis=-1)
        else:
            features = x
            weights = ops.zeros(ops.shape(memory)[:2], dtype="float32")
        return features, new_states, weights

    # --- a whole teacher-forced sequence ------------------------------------
    # "auto": the `tf.while_loop` fast path on TensorFlow, `keras.ops.scan`
    # elsewhere; "ops": `keras.ops.scan` on every backend (the tests set it
    # on an instance to check the fallback against the fast path).
    _loop_implementation = "auto"

    def _uses_tensorflow_loop(self):
        return self._loop_implementation == "auto" and backend.is_tensorflow()

    def call(self, inputs, training=False):
        if self._uses_tensorflow_loop():
            return self._call_tensorflow(inputs, training)
        return self._call_ops(inputs, training)

    def _dropout_masks(self, steps, batch):
        """Scaled 0/1 masks `(L - 1, T, B, units)` for the inputs of layers
        2 .. L, a fresh one at every step."""
        return keras.random.dropout(
            ops.ones(
                (self.num_layers - 1, steps, batch, self.units),
                dtype=self.compute_dtype,
            ),
            self.dropout,
            seed=self.seed_generator,
        )

    def _call_ops(self, inputs, training=False):
        """The generic path: `keras.ops.scan` over the time steps."""
        embedded, memory, memory_mask = inputs[0], inputs[1], inputs[2]
        memory = ops.cast(memory, self.compute_dtype)
        states = self.initial_state(list(inputs[3:]), memory)
        keys = self.project_memory(memory)
        embedded = ops.cast(embedded, self.compute_dtype)
        time_major = ops.transpose(embedded, (1, 0, 2))  # (T, B, E)
        use_dropout = bool(training) and self.dropout > 0 and self.num_layers > 1
        if use_dropout:
            shape = ops.shape(time_major)
            masks = ops.transpose(
                self._dropout_masks(shape[0], shape[1]), (1, 0, 2, 3)
            )  # (T, L - 1, B, units)
            sequences = (time_major, masks)
        else:
            sequences = time_major

        # The step's outputs are read back from the carry, which holds the
        # new state and the attention weights: keras' scan on TensorFlow
        # stacks only outputs shaped like the carry. The features are
        # `[d_t ; d'_t]` (or `d_t`), pieces of the state.
        def body(carry, x):
            states, _ = carry
            if use_dropout:
                x, step_masks = x
                step_masks = [step_masks[i] for i in range(self.num_layers - 1)]
            else:
                step_masks = None
            _, new_states, weights = self.step(
                x, states, memory, keys, memory_mask, step_masks
            )
            carry = (new_states, weights)
            return carry, carry

        initial_weights = ops.zeros(ops.shape(memory)[:2], dtype="float32")
        _, (all_states, weights) = ops.scan(
            body, (states, initial_weights), sequences
        )
        top = all_states[2 * self.num_layers - 2]  # d_t: (T, B, units)
        if self.attention:
            features = ops.concatenate([top, all_states[-1]], axis=-1)
        else:
            features = top
        features = ops.transpose(features, (1, 0, 2))
        weights = ops.transpose(weights, (1, 0, 2))
        return features, weights

    # TensorFlow fast path ----------------------------------------------------
    def _call_tensorflow(self, inputs, training=False):
        """The TensorFlow fast path: a `tf.while_loop` over `step` writing
        `tf.TensorArray`s, with the bound XLA needs (`jit_compile=True`)."""
        tf = backend.require_tensorflow("the TensorFlow attention decoder loop")
        embedded, memory, memory_mask = inputs[0], inputs[1], inputs[2]
        memory = ops.cast(memory, self.compute_dtype)
        states = self.initial_state(list(inputs[3:]), memory)
        keys = self.project_memory(memory)
        embedded = ops.cast(embedded, self.compute_dtype)
        time_major = tf.transpose(embedded, [1, 0, 2])
        steps = tf.shape(time_major)[0]
        batch = tf.shape(time_major)[1]
        use_dropout = bool(training) and self.dropout > 0 and self.num_layers > 1
        if use_dropout:
            masks = self._dropout_masks(steps, batch)
            masks = tf.transpose(masks, [1, 0, 2, 3])  # (T, L - 1, B, units)

        features_ta = tf.TensorArray(self.compute_dtype, size=steps)
        weights_ta = tf.TensorArray("float32", size=steps)

        def body(t, states, features_ta, weights_ta):
            step_masks = (
                tf.unstack(masks[t], num=self.num_layers - 1)
                if use_dropout
                else None
            )
            features, new_states, weights = self.step(
                time_major[t], states, memory, keys, memory_mask, step_masks
            )
            return (
                t + 1,
                new_states,
                features_ta.write(t, features),
                weights_ta.write(t, weights),
            )

        _, _, features_ta, weights_ta = tf.while_loop(
            lambda t, *_: t < steps,
            body,
            (tf.constant(0), states, features_ta, weights_ta),
            maximum_iterations=steps,  # XLA needs the bound (jit_compile=True)
        )
        features = tf.transpose(features_ta.stack(), [1, 0, 2])
        weights = tf.transpose(weights_ta.stack(), [1, 0, 2])
        features = tf.ensure_shape(features, (None, None, self.feature_size()))
        return features, weights

    def compute_mask(self, inputs, previous_mask):
        return None

    def compute_output_spec(self, inputs, training=False):
        embedded, memory = inputs[0], inputs[1]
        if not self.built:
            self.build([x.shape for x in inputs])
        batch, steps = embedded.shape[0], embedded.shape[1]
        return (
            keras.KerasTensor(
                (batch, steps, self.feature_size()), dtype=self.compute_dtype
            ),
            keras.KerasTensor((batch, steps, memory.shape[1]), dtype="float32"),
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "num_layers": self.num_layers,
                "attention": self.attention,
                "attention_units": self.attention_units,
                "input_feeding": self.input_feeding,
                "dropout": self.dropout,
                "seed": self.seed,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "recurrent_initializer": keras.initializers.serialize(
                    self.recurrent_initializer
                ),
            }
        )
        return config


def _forget_bias_initializer(units):
    def initializer(shape, dtype=None):
        return ops.concatenate(
            [
                ops.zeros((units,), dtype=dtype),
                ops.ones((units,), dtype=dtype),
                ops.zeros((2 * units,), dtype=dtype),
            ]
        )

    return initializer


def _lstm_step(x, h, c, kernel, recurrent_kernel, bias):
    """One LSTM step, keras `LSTMCell`'s equations (gates i, f, c~, o)."""
    z = ops.matmul(x, kernel) + ops.matmul(h, recurrent_kernel) + bias
    z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
    i = ops.sigmoid(z_i)
    f = ops.sigmoid(z_f)
    o = ops.sigmoid(z_o)
    c = f * c + i * ops.tanh(z_c)
    h = o * ops.tanh(c)
    return h, c
