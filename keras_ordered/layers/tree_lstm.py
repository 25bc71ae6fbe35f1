"""The generation LSTMs of the top-down TreeLSTM (Zhang, Lu and Lapata, 2016).

`TopDownTreeLSTM` runs the four generation LSTMs GEN-L, GEN-R, GEN-NX-L and
GEN-NX-R over a batch of dependency trees, each tree given as its sequence
of generation steps (`keras_ordered.datasets.dependency.generation_steps`):

```
h_t = LSTM^{z_t}(x_t, H[s_t]);   H[t] = h_t
```

with `x_t` the embedding of the conditioning word, `z_t` the step's action
and `s_t` the row of the state memory `H` that holds the conditioning
node's state (row 0: the root, row k: the state written at step k - 1).
Deep version: layer `l` reads the layer below's new state and its own
layer's state at `s_t`.

Batched over trees: one `tf.while_loop` over the generation steps, every
tree of the batch advancing together; the state memory `(T + 1, batch,
layers * 2 * units)` is read by index (a gather with a hand-written
gradient, so that the loop's backward pass keeps one row per step, not the
memory) and written with `tensor_scatter_nd_update`. No Python loop per
tree; XLA compiles it (`jit_compile=True`).

Choosing the LSTM: the four LSTMs' kernels are stored side by side, each
layer's `(inputs, 4 actions * 4 gates * units)`. The first layer's input
projections of all steps are one matmul before the loop (the inputs are
known), then each row keeps its action's block (a `where` over the
actions). Inside the loop, the recurrent (and upper-layer input) matmul
produces the four actions' gate pre-activations in one call and each row
keeps its own: one LSTM's element-wise work per step, one matmul call,
at four times one LSTM's multiply-adds on those matrices (the benchmark
`benchmarks/tdtreelstm_throughput.py` measures what it costs).

Reference:
    Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
    NAACL 2016.
"""

import keras
import tensorflow as tf
from keras import ops

from keras_ordered.layers._checks import clone_initializer as _clone_initializer

NUM_ACTIONS = 4
GEN_R = 1
"""Action ids: 0 GEN-L, 1 GEN-R, 2 GEN-NX-L, 3 GEN-NX-R (the order of
`keras_ordered.datasets.dependency.ACTIONS`)."""


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"`{name}` must be a positive integer. Received: {name}={value!r}"
        )
    return value


def _row_reader(memory_shape):
    """`read(memory, index) = memory[index[b], b]` for every b: `(S, B, D),
    (B,) -> (B, D)`.

    The gradient scatters into a zero memory of `memory_shape` (a tensor
    made outside the loop), so a `tf.while_loop`'s backward pass keeps only
    `index` from each step (tf.gather's own gradient would keep the whole
    memory of every step), and XLA sees the shape as a constant.
    """

    @tf.custom_gradient
    def read(memory, index):
        rows = tf.stack([index, tf.range(tf.shape(index)[0])], axis=1)
        values = tf.gather_nd(memory, rows)

        def grad(upstream):
            return tf.scatter_nd(rows, upstream, memory_shape), None

        return values, grad

    return read


def _select(preactivations, action_masks, gates):
    """Each row's action block of `(B, 4 * gates)` pre-activations."""
    blocks = tf.reshape(preactivations, (-1, NUM_ACTIONS, gates))
    selected = tf.zeros_like(blocks[:, 0])
    for a in range(NUM_ACTIONS):
        selected = tf.where(action_masks[a], blocks[:, a], selected)
    return selected


@keras.saving.register_keras_serializable(package="keras_ordered")
class TopDownTreeLSTM(keras.layers.Layer):
    """The four generation LSTMs of a top-down TreeLSTM, batched over trees.

    Each of GEN-L, GEN-R, GEN-NX-L and GEN-NX-R is a `num_layers`-layer
    LSTM of `units` units with its own weights (gates `i, f, o, u`, biases on
    the input side):

    ```
    [i; f; o; u] = W^{z,l} h^{l-1}_t + U^{z,l} h^l_{s_t} + b^{z,l}
    c^l_t = sigmoid(f) * c^l_{s_t} + sigmoid(i) * tanh(u)
    h^l_t = sigmoid(o) * tanh(c^l_t)
    ```

    with `h^0_t = x_t` (the conditioning word's embedding). With
    `context_dim` (LdTreeLSTM), GEN-R's first layer also reads a context
    vector `q_t` (the left-dependent LSTM's final state) through its own
    kernel `V`: `... + V q_t`; the other actions never read it.

    Args:
        units: int, state size of every layer.
        num_layers: int, layers of each generation LSTM.
        context_dim: int or None, size of GEN-R's extra input (LdTreeLSTM).
        initial_value: float, the value of every unit of the root's state
            `H[0]` (hidden and cell; the official `initHidVal`, 0.01).
        kernel_initializer, recurrent_initializer, bias_initializer:
            initializers (official: uniform in +-0.1 for every weight).
        selection: `"gates"` (default: one matmul gives the four actions'
            gate pre-activations, each row keeps its own, one LSTM's
            element-wise work) or `"states"` (the naive way, for
            benchmarks: four whole LSTM steps, then each row keeps its
            action's new state). Same results.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[x, actions, sources]` or `[x, actions, sources,
            context]`: `x` float `(batch, T, input_dim)` the conditioning
            words' embeddings, `actions` int `(batch, T)` in 0..3 (GEN-L,
            GEN-R, GEN-NX-L, GEN-NX-R), `sources` int `(batch, T)` the
            memory row of the conditioning state (0 = root, `k` = the state
            written at step `k - 1`, so `sources[:, t] <= t`), `context`
            float `(batch, T, context_dim)`. Steps after a tree's end
            (padding) are computed and ignored by the caller.
        return_states: bool, also return the cell states.

    Returns:
        float `(batch, T, units)`: the top layer's `h_t` of every step (with
        `return_states`, a list `[h^1, c^1, ..., h^L, c^L]` of such tensors).

    Example:

    ```python
    layer = keras_ordered.layers.TopDownTreeLSTM(8, num_layers=2)
    x = keras.random.normal((1, 3, 4))
    actions = np.array([[1, 0, 1]])   # GEN-R from the root, GEN-L, GEN-R
    sources = np.array([[0, 1, 1]])   # root, then the first word's state twice
    h = layer([x, actions, sources])  # (1, 3, 8)
    ```

    Reference:
        Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
        NAACL 2016, section 3.
    """

    def __init__(
        self,
        units,
        num_layers=1,
        context_dim=None,
        initial_value=0.01,
        kernel_initializer=None,
        recurrent_initializer=None,
        bias_initializer=None,
        selection="gates",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = _positive_int("units", units)
        self.num_layers = _positive_int("num_layers", num_layers)
        if selection not in ("gates", "states"):
            raise ValueError(
                "`selection` must be 'gates' (each row keeps its action's gate "
                "pre-activations) or 'states' (four whole LSTM steps, then "
                f"each row keeps its action's state). Received: {selection!r}")
        self.selection = selection
        if context_dim is not None:
            _positive_int("context_dim", context_dim)
        self.context_dim = context_dim
        self.initial_value = float(initial_value)

        def initializer(value):
            if value is None:
                return keras.initializers.RandomUniform(-0.1, 0.1)
            return keras.initializers.get(value)

        self.kernel_initializer = initializer(kernel_initializer)
        self.recurrent_initializer = initializer(recurrent_initializer)
        self.bias_initializer = initializer(bias_initializer)

    def build(self, input_shape):
        input_dim = int(input_shape[0][-1])
        gates = 4 * self.units
        width = NUM_ACTIONS * gates
        self.kernels, self.recurrent_kernels, self.biases = [], [], []
        for layer in range(self.num_layers):
            inputs = input_dim if layer == 0 else self.units
            self.kernels.append(self.add_weight(
                shape=(inputs, width), name=f"kernel_{layer + 1}",
                initializer=_clone_initializer(self.kernel_initializer, 3 * layer),
            ))
            self.recurrent_kernels.append(self.add_weight(
                shape=(self.units, width), name=f"recurrent_kernel_{layer + 1}",
                initializer=_clone_initializer(self.recurrent_initializer,
                                               3 * layer + 1),
            ))
            self.biases.append(self.add_weight(
                shape=(width,), name=f"bias_{layer + 1}",
                initializer=_clone_initializer(self.bias_initializer, 3 * layer + 2),
            ))
        self.context_kernel = None
        if self.context_dim is not None:
            if len(input_shape) < 4 or input_shape[3][-1] != self.context_dim:
                raise ValueError(
                    f"TopDownTreeLSTM(context_dim={self.context_dim}) needs a "
                    "fourth input, the context (batch, T, context_dim). "
                    f"Received input shapes {input_shape}"
                )
            self.context_kernel = self.add_weight(
                shape=(self.context_dim, gates), name="context_kernel",
                initializer=_clone_initializer(self.kernel_initializer, 99),
            )
        self.built = True

    def action_weights(self, action, layer=0):
        """`(W, U, b)` of one action's LSTM at one layer (NumPy arrays).

        Args:
            action: int 0..3 (GEN-L, GEN-R, GEN-NX-L, GEN-NX-R).
            layer: int, 0 = the first layer.
        """
        gates = 4 * self.units
        block = slice(action * gates, (action + 1) * gates)
        return (
            ops.convert_to_numpy(self.kernels[layer])[:, block],
            ops.convert_to_numpy(self.recurrent_kernels[layer])[:, block],
            ops.convert_to_numpy(self.biases[layer])[block],
        )

    def _cell(self, z, c_source):
        u = self.units
        i = tf.sigmoid(z[:, :u])
        f = tf.sigmoid(z[:, u:2 * u])
        o = tf.sigmoid(z[:, 2 * u:3 * u])
        g = tf.tanh(z[:, 3 * u:])
        c = f * c_source + i * g
        return o * tf.tanh(c), c

    def _four_cells(self, layer, t, below, h_source, c_source, masks,
                    first_all, kernels, recurrent, biases):
        """`selection="states"`: the four LSTMs each take a whole step."""
        gates = 4 * self.units
        h_new = tf.zeros_like(h_source)
        c_new = tf.zeros_like(c_source)
        for a in range(NUM_ACTIONS):
            block = slice(a * gates, (a + 1) * gates)
            if layer == 0:
                z = first_all[t][:, a] + tf.matmul(h_source, recurrent[0][:, block])
            else:
                z = (tf.matmul(below, kernels[layer][:, block])
                     + tf.matmul(h_source, recurrent[layer][:, block])
                     + biases[layer][block])
            h, c = self._cell(z, c_source)
            h_new = tf.where(masks[a], h, h_new)
            c_new = tf.where(masks[a], c, c_new)
        return h_new, c_new

    def call(self, inputs, return_states=False):
        if len(inputs) not in (3, 4):
            raise ValueError(
                "TopDownTreeLSTM takes [x, actions, sources] or [x, actions, "
                f"sources, context]. Received {len(inputs)} inputs."
            )
        x, actions, sources = inputs[:3]
        context = inputs[3] if len(inputs) == 4 else None
        if (context is None) != (self.context_dim is None):
            raise ValueError(
                "The context input goes with `context_dim` (LdTreeLSTM): pass "
                "both or neither."
            )
        dtype = self.compute_dtype
        x = tf.cast(x, dtype)
        actions = tf.cast(actions, tf.int32)
        sources = tf.cast(sources, tf.int32)
        batch = tf.shape(x)[0]
        steps = tf.shape(x)[1]
        units, layers = self.units, self.num_layers
        gates = 4 * units
        kernels = [tf.cast(k, dtype) for k in self.kernels]
        recurrent = [tf.cast(k, dtype) for k in self.recurrent_kernels]
        biases = [tf.cast(b, dtype) for b in self.biases]

        # The first layer's input projections of every step, one matmul.
        action_masks_all = [
            tf.equal(actions, a)[..., None] for a in range(NUM_ACTIONS)
        ]
        projected = tf.reshape(
            tf.matmul(tf.reshape(x, (-1, x.shape[-1])), kernels[0]) + biases[0],
            (batch, steps, NUM_ACTIONS, gates),
        )
        first = tf.zeros_like(projected[:, :, 0])
        for a in range(NUM_ACTIONS):
            first = tf.where(action_masks_all[a], projected[:, :, a], first)
        if context is not None:
            extra = tf.matmul(
                tf.reshape(tf.cast(context, dtype), (-1, self.context_dim)),
                tf.cast(self.context_kernel, dtype),
            )
            extra = tf.reshape(extra, (batch, steps, gates))
            first = first + tf.where(action_masks_all[GEN_R], extra,
                                     tf.zeros_like(extra))
        # Time-major for the loop.
        first = tf.transpose(first, (1, 0, 2))
        first_all = None
        if self.selection == "states":
            first_all = tf.transpose(projected, (1, 0, 2, 3))
            if context is not None:
                first_all = tf.concat([
                    first_all[:, :, :GEN_R],
                    first_all[:, :, GEN_R:GEN_R + 1] + tf.transpose(
                        extra, (1, 0, 2))[:, :, None],
                    first_all[:, :, GEN_R + 1:]], axis=2)
        actions_tm = tf.transpose(actions)
        sources_tm = tf.transpose(sources)

        width = layers * 2 * units
        memory = tf.concat([
            tf.fill((1, batch, width), tf.cast(self.initial_value, dtype)),
            tf.zeros((steps, batch, width), dtype),
        ], axis=0)

        read = _row_reader(tf.shape(memory))

        def body(t, memory):
            previous = read(memory, sources_tm[t])
            masks = [tf.equal(actions_tm[t], a)[:, None]
                     for a in range(NUM_ACTIONS)]
            new = []
            below = None
            for layer in range(layers):
                h_source = previous[:, 2 * layer * units:(2 * layer + 1) * units]
                c_source = previous[:, (2 * layer + 1) * units:(2 * layer + 2) * units]
                if self.selection == "states":
                    h, c = self._four_cells(layer, t, below, h_source, c_source,
                                            masks, first_all, kernels,
                                            recurrent, biases)
                    new += [h, c]
                    below = h
                    continue
                if layer == 0:
                    z = first[t] + _select(
                        tf.matmul(h_source, recurrent[0]), masks, gates)
                else:
                    z = _select(
                        tf.matmul(below, kernels[layer])
                        + tf.matmul(h_source, recurrent[layer]) + biases[layer],
                        masks, gates,
                    )
                h, c = self._cell(z, c_source)
                new += [h, c]
                below = h
            row = tf.concat(new, axis=1)
            memory = tf.tensor_scatter_nd_update(
                memory, tf.reshape(t + 1, (1, 1)), row[None]
            )
            return t + 1, memory

        _, memory = tf.while_loop(
            lambda t, memory: t < steps, body, (tf.constant(0), memory),
            maximum_iterations=steps,
        )
        states = tf.transpose(memory[1:], (1, 0, 2))  # (batch, T, width)
        if not return_states:
            top = 2 * (layers - 1) * units
            return states[:, :, top:top + units]
        return [states[:, :, k * units:(k + 1) * units] for k in range(2 * layers)]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:2]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "num_layers": self.num_layers,
            "context_dim": self.context_dim,
            "initial_value": self.initial_value,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "selection": self.selection,
        })
        return config


@keras.saving.register_keras_serializable(package="keras_ordered")
class LeftDependentLSTM(keras.layers.Layer):
    """LdTreeLSTM's fifth LSTM: reads a head's left dependents in order.

    For every generation step, the embeddings of its left-context words
    (for a GEN-R step, the head's left dependents farthest-to-nearest, i.e.
    in sentence order; nothing for the other steps) run through a
    `num_layers`-layer LSTM from the state `initial_value`; the step's
    context is the top layer's final state `q_K` (`initial_value` when the
    context is empty). The sequences come right-aligned (padding first, id
    0), so that every final state is at the last position; a padded
    position leaves the state unchanged.

    Args:
        units: int, state size (the official `nlchid`).
        num_layers: int (the official `nlclayers`).
        initial_value: float, initial hidden and cell values (0.01).
        kernel_initializer, recurrent_initializer, bias_initializer:
            initializers (uniform +-0.1 by default).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[embedded, mask]`: float `(batch, T, K, input_dim)`
            the left-context words' embeddings, bool `(batch, T, K)` which
            positions are words.

    Returns:
        float `(batch, T, units)`: `q_K` per step.

    Example:

    ```python
    layer = keras_ordered.layers.LeftDependentLSTM(8)
    q = layer([keras.random.normal((2, 5, 3, 4)), np.ones((2, 5, 3), bool)])
    ```

    Reference:
        Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
        NAACL 2016, section 3.3 (LdTreeLSTM).
    """

    def __init__(self, units, num_layers=1, initial_value=0.01,
                 kernel_initializer=None, recurrent_initializer=None,
                 bias_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self.units = _positive_int("units", units)
        self.num_layers = _positive_int("num_layers", num_layers)
        self.initial_value = float(initial_value)

        def initializer(value):
            if value is None:
                return keras.initializers.RandomUniform(-0.1, 0.1)
            return keras.initializers.get(value)

        self.kernel_initializer = initializer(kernel_initializer)
        self.recurrent_initializer = initializer(recurrent_initializer)
        self.bias_initializer = initializer(bias_initializer)

    def build(self, input_shape):
        input_dim = int(input_shape[0][-1])
        gates = 4 * self.units
        self.kernels, self.recurrent_kernels, self.biases = [], [], []
        for layer in range(self.num_layers):
            inputs = input_dim if layer == 0 else self.units
            self.kernels.append(self.add_weight(
                shape=(inputs, gates), name=f"kernel_{layer + 1}",
                initializer=_clone_initializer(self.kernel_initializer, 3 * layer)))
            self.recurrent_kernels.append(self.add_weight(
                shape=(self.units, gates), name=f"recurrent_kernel_{layer + 1}",
                initializer=_clone_initializer(self.recurrent_initializer,
                                               3 * layer + 1)))
            self.biases.append(self.add_weight(
                shape=(gates,), name=f"bias_{layer + 1}",
                initializer=_clone_initializer(self.bias_initializer,
                                               3 * layer + 2)))
        self.built = True

    def call(self, inputs):
        embedded, mask = inputs
        dtype = self.compute_dtype
        embedded = tf.cast(embedded, dtype)
        shape = tf.shape(embedded)
        batch, steps, length = shape[0], shape[1], shape[2]
        rows = batch * steps
        x = tf.reshape(embedded, (rows, length, embedded.shape[-1]))
        x = tf.transpose(x, (1, 0, 2))  # (K, rows, dim)
        m = tf.transpose(tf.reshape(tf.cast(mask, tf.bool), (rows, length)))
        units = self.units
        init = tf.fill((rows, units), tf.cast(self.initial_value, dtype))
        state = [init] * (2 * self.num_layers)
        kernels = [tf.cast(k, dtype) for k in self.kernels]
        recurrent = [tf.cast(k, dtype) for k in self.recurrent_kernels]
        biases = [tf.cast(b, dtype) for b in self.biases]

        def body(k, *state):
            below = x[k]
            keep = m[k][:, None]
            new = []
            for layer in range(self.num_layers):
                h, c = state[2 * layer], state[2 * layer + 1]
                z = tf.matmul(below, kernels[layer]) + tf.matmul(
                    h, recurrent[layer]) + biases[layer]
                i = tf.sigmoid(z[:, :units])
                f = tf.sigmoid(z[:, units:2 * units])
                o = tf.sigmoid(z[:, 2 * units:3 * units])
                g = tf.tanh(z[:, 3 * units:])
                c_new = f * c + i * g
                h_new = o * tf.tanh(c_new)
                h_new = tf.where(keep, h_new, h)
                c_new = tf.where(keep, c_new, c)
                new += [h_new, c_new]
                below = h_new
            return (k + 1, *new)

        result = tf.while_loop(lambda k, *s: k < length, body,
                               (tf.constant(0), *state),
                               maximum_iterations=length)
        top = result[1 + 2 * (self.num_layers - 1)]
        return tf.reshape(top, (batch, steps, units))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:2]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "num_layers": self.num_layers,
            "initial_value": self.initial_value,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        })
        return config
