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

Two ways to batch the trees, with the same numbers: in an
action-homogeneous `schedule` (what the model's training and scoring
batches and the exported SavedModel give it; below), or in generation
order (without a schedule): one `tf.while_loop` over the generation
steps, every tree of the batch advancing together; the state memory `(T +
1, batch, layers * 2 * units)` is read by index (a gather with a hand-written gradient, so that
the loop's backward pass keeps one row per step, not the memory) and
written with `tensor_scatter_nd_update`. No Python loop per tree; XLA
compiles either (`jit_compile=True`).

Choosing the LSTM in generation order: the four LSTMs' kernels are stored
side by side, each layer's `(inputs, 4 actions * 4 gates * units)`.
`selection="gates"`: the first layer's input projections of all steps are
one matmul before the loop (the inputs are known), then each row keeps its
action's block (a `where` over the actions). Inside the loop, the
recurrent (and upper-layer input) matmul produces the four actions' gate
pre-activations in one call and each row keeps its own: one LSTM's
element-wise work per step, one matmul call, at four times one LSTM's
multiply-adds on those matrices.
`selection="states"`: the naive way, four whole LSTM steps per step.

Action-homogeneous schedule (`schedule=`): the generation order only
matters through "a step's source state exists before the step runs", so
the steps of all the batch's trees can run in another order.
`keras_ordered.models.tdtreelstm.inputs.action_schedule` prepares one with
each batch (NumPy, in the input pipeline): loop iterations of up to `rows`
steps, each iteration one action's steps whose sources are already
computed. The loop then runs over the schedule's iterations, the state
memory holds one row per schedule slot, and each iteration multiplies
`[x_t; h_{s_t}]` by its action's `[W; U]` only: one LSTM's multiply-adds
per step. Its backward pass is written by hand (`_scheduled_recurrence`):
a reverse loop that adds into the memory's gradient only the rows an
iteration read, where automatic differentiation of the loop adds a dense
memory-sized tensor per iteration (that cost grows with the batch). The
benchmark `benchmarks/tdtreelstm_throughput.py` measures the three ways.

Backends: what the paragraphs above describe (`tf.while_loop`, the
hand-written gradients, XLA) is the TensorFlow backend's path, chosen when
`keras.backend.backend() == "tensorflow"`. On JAX and PyTorch the layers
run a `keras.ops` path beside it with the same numbers: one
`ops.fori_loop` over the generation steps in generation order, the
`selection` as above, gradients by the backend's automatic
differentiation; given a `schedule`, the same states (the steps it leaves
out get the root's state) without the one-action-per-iteration saving.
TensorFlow is imported only on its path.

Reference:
    Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
    NAACL 2016.
"""

import keras
from keras import ops

from keras_ordered import backend
from keras_ordered.layers._checks import check_positive_int as _positive_int
from keras_ordered.layers._checks import clone_initializer as _clone_initializer

NUM_ACTIONS = 4
GEN_R = 1
"""Action ids: 0 GEN-L, 1 GEN-R, 2 GEN-NX-L, 3 GEN-NX-R (the order of
`keras_ordered.datasets.dependency.ACTIONS`)."""


def _tensorflow():
    """The `tensorflow` module, for the TensorFlow-tuned loops (imported
    when they run: the layers import and run without TensorFlow on the
    other backends)."""
    return backend.require_tensorflow("the TensorFlow-tuned TD-TreeLSTM loops")


def _row_reader(memory_shape):
    """`read(memory, index) = memory[index[b], b]` for every b: `(S, B, D),
    (B,) -> (B, D)`.

    The gradient scatters into a zero memory of `memory_shape` (a tensor
    made outside the loop), so a `tf.while_loop`'s backward pass keeps only
    `index` from each step (tf.gather's own gradient would keep the whole
    memory of every step), and XLA sees the shape as a constant.
    (TensorFlow.)
    """
    tf = _tensorflow()

    @tf.custom_gradient
    def read(memory, index):
        rows = tf.stack([index, tf.range(tf.shape(index)[0])], axis=1)
        values = tf.gather_nd(memory, rows)

        def grad(upstream):
            return tf.scatter_nd(rows, upstream, memory_shape), None

        return values, grad

    return read


def _gate_activations(z, units):
    """`(i, f, o, g)` of pre-activations `z = [i; f; o; u]` (TensorFlow)."""
    tf = _tensorflow()
    return (tf.sigmoid(z[:, :units]), tf.sigmoid(z[:, units:2 * units]),
            tf.sigmoid(z[:, 2 * units:3 * units]), tf.tanh(z[:, 3 * units:]))


def _scheduled_recurrence(units, layers, initial_value, source_row,
                          iteration_action, live, step_row, inputs, extra,
                          stacks, bias_stacks):
    """The generation LSTMs over an action-homogeneous schedule, with a
    hand-written backward pass.

    Forward: iteration `i` reads its slots' source rows of the state
    memory `(1 + iterations * rows, layers * 2 * units)` (row 0 the root),
    runs action `iteration_action[i]`'s LSTM on them (`[below; h_s]` times
    that action's slice of the stacked kernels) and writes its rows
    `1 + i * rows ...`. Returns each step's memory row (`step_row`).

    Backward: one reverse loop that carries the memory's gradient and
    adds into it in place (`tensor_scatter_nd_add`) only the rows an
    iteration read, and the kernels' gradients, added into their action's
    slice. (Automatic differentiation of the loop would add a dense
    memory-sized gradient per iteration: the cost grew with the memory.)
    Each row is written once, so the forward's final memory gives every
    iteration's source states back; the gate pre-activations are kept.

    Args:
        units, layers: ints.
        initial_value: float, the root's state.
        source_row: int32 `(iterations, rows)`, each slot's source row.
        iteration_action: int32 `(iterations,)`.
        live: int32 scalar, the iterations to run (the rest are empty).
        step_row: int32 `(steps,)`, each output step's memory row.
        inputs: `(iterations, rows, input_dim)`, each slot's `x`.
        extra: None or `(iterations, rows, 4 * units)`, added to the first
            layer's pre-activations (LdTreeLSTM's context).
        stacks: per layer `(4, inputs + units, 4 * units)`.
        bias_stacks: per layer `(4, 4 * units)`.

    Returns:
        `(steps, layers * 2 * units)`: `[h^1, c^1, ..., h^L, c^L]` per step.
    """
    tf = _tensorflow()
    gates = 4 * units
    width = layers * 2 * units
    dtype = inputs.dtype
    has_extra = extra is not None

    def forward(inputs, extra, *weights):
        stacks, bias_stacks = weights[:layers], weights[layers:]
        iterations = tf.shape(inputs)[0]
        rows = tf.shape(inputs)[1]
        memory = tf.concat([
            tf.fill((1, width), tf.cast(initial_value, dtype)),
            tf.zeros((iterations * rows, width), dtype)], axis=0)
        kept = tf.zeros((iterations, rows, layers * gates), dtype)

        def body(i, memory, kept):
            # The action's weights by tf.gather, not by slicing
            # (`stacks[layer][action]`): XLA takes a slice's index as a
            # compile-time constant and would compile the loop again for
            # every batch's actions and schedule.
            action = iteration_action[i]
            previous = tf.gather(memory, source_row[i])
            below = inputs[i]
            new, pre = [], []
            for layer in range(layers):
                h_source = previous[:, 2 * layer * units:(2 * layer + 1) * units]
                c_source = previous[:, (2 * layer + 1) * units:(2 * layer + 2) * units]
                z = (tf.matmul(tf.concat([below, h_source], axis=1),
                               tf.gather(stacks[layer], action))
                     + tf.gather(bias_stacks[layer], action))
                if layer == 0 and has_extra:
                    z = z + extra[i]
                i_gate, f_gate, o_gate, g_gate = _gate_activations(z, units)
                c = f_gate * c_source + i_gate * g_gate
                h = o_gate * tf.tanh(c)
                new += [h, c]
                pre.append(z)
                below = h
            written = 1 + i * rows + tf.range(rows)
            memory = tf.tensor_scatter_nd_update(
                memory, written[:, None], tf.concat(new, axis=1))
            kept = tf.tensor_scatter_nd_update(
                kept, tf.reshape(i, (1, 1)), tf.concat(pre, axis=1)[None])
            return i + 1, memory, kept

        _, memory, kept = tf.while_loop(
            lambda i, memory, kept: i < live, body,
            (tf.constant(0), memory, kept), maximum_iterations=iterations)
        return memory, kept

    @tf.custom_gradient
    def run(inputs, extra, *weights):
        memory, kept = forward(inputs, extra if has_extra else None, *weights)
        stacks, bias_stacks = weights[:layers], weights[layers:]

        def grad(upstream):
            iterations = tf.shape(inputs)[0]
            rows = tf.shape(inputs)[1]
            accumulate = tf.float32 if dtype in (tf.float16, tf.bfloat16) else dtype
            d_memory = tf.scatter_nd(step_row[:, None], tf.cast(upstream, dtype),
                                     tf.shape(memory))
            d_inputs = tf.zeros_like(inputs)
            d_extra = tf.zeros_like(extra)
            d_stacks = [tf.zeros(tf.shape(k), accumulate) for k in stacks]
            d_biases = [tf.zeros(tf.shape(b), accumulate) for b in bias_stacks]

            def body(i, d_memory, d_inputs, d_extra, d_stacks, d_biases):
                action = iteration_action[i]
                where = tf.reshape(action, (1, 1))
                previous = tf.gather(memory, source_row[i])
                written = 1 + i * rows + tf.range(rows)
                d_row = tf.gather(d_memory, written)
                pre = kept[i]
                # The layers' inputs and activations, bottom up.
                belows, cells = [inputs[i]], []
                for layer in range(layers):
                    z = pre[:, layer * gates:(layer + 1) * gates]
                    activations = _gate_activations(z, units)
                    c_source = previous[:, (2 * layer + 1) * units:
                                        (2 * layer + 2) * units]
                    c = activations[1] * c_source + activations[0] * activations[3]
                    tanh_c = tf.tanh(c)
                    cells.append((activations, c_source, tanh_c))
                    belows.append(activations[2] * tanh_c)
                d_previous = [None] * (2 * layers)
                d_below = tf.zeros_like(belows[-1])
                d_stacks, d_biases = list(d_stacks), list(d_biases)
                d_first = None
                for layer in reversed(range(layers)):
                    (i_gate, f_gate, o_gate, g_gate), c_source, tanh_c = cells[layer]
                    h_source = previous[:, 2 * layer * units:(2 * layer + 1) * units]
                    d_h = d_row[:, 2 * layer * units:(2 * layer + 1) * units] + d_below
                    d_c = (d_row[:, (2 * layer + 1) * units:(2 * layer + 2) * units]
                           + d_h * o_gate * (1 - tanh_c * tanh_c))
                    d_z = tf.concat([
                        d_c * g_gate * i_gate * (1 - i_gate),
                        d_c * c_source * f_gate * (1 - f_gate),
                        d_h * tanh_c * o_gate * (1 - o_gate),
                        d_c * i_gate * (1 - g_gate * g_gate)], axis=1)
                    v = tf.concat([belows[layer], h_source], axis=1)
                    d_v = tf.matmul(d_z, tf.gather(stacks[layer], action),
                                    transpose_b=True)  # (not a slice: see body)
                    d_stacks[layer] = tf.tensor_scatter_nd_add(
                        d_stacks[layer], where, tf.cast(
                            tf.matmul(v, d_z, transpose_a=True), accumulate)[None])
                    d_biases[layer] = tf.tensor_scatter_nd_add(
                        d_biases[layer], where,
                        tf.cast(tf.reduce_sum(d_z, axis=0), accumulate)[None])
                    inputs_dim = belows[layer].shape[-1]
                    d_below = d_v[:, :inputs_dim]
                    d_previous[2 * layer] = d_v[:, inputs_dim:]
                    d_previous[2 * layer + 1] = d_c * f_gate
                    if layer == 0:
                        d_first = d_z
                here = tf.reshape(i, (1, 1))
                d_inputs = tf.tensor_scatter_nd_update(d_inputs, here, d_below[None])
                if has_extra:
                    d_extra = tf.tensor_scatter_nd_update(d_extra, here, d_first[None])
                d_memory = tf.tensor_scatter_nd_add(
                    d_memory, source_row[i][:, None], tf.concat(d_previous, axis=1))
                return i - 1, d_memory, d_inputs, d_extra, d_stacks, d_biases

            _, _, d_inputs, d_extra, d_stacks, d_biases = tf.while_loop(
                lambda i, *_: i >= 0, body,
                (live - 1, d_memory, d_inputs, d_extra, d_stacks, d_biases),
                maximum_iterations=iterations)
            d_weights = ([tf.cast(d, k.dtype) for d, k in zip(d_stacks, stacks)]
                         + [tf.cast(d, b.dtype) for d, b in zip(d_biases, bias_stacks)])
            return (d_inputs, d_extra if has_extra else None, *d_weights)

        return tf.gather(memory, step_row), grad

    if extra is None:
        extra = tf.zeros((1,), dtype)  # a placeholder, not used
    return run(inputs, extra, *stacks, *bias_stacks)


def _select(preactivations, action_masks, gates):
    """Each row's action block of `(B, 4 * gates)` pre-activations
    (TensorFlow)."""
    tf = _tensorflow()
    blocks = tf.reshape(preactivations, (-1, NUM_ACTIONS, gates))
    selected = tf.zeros_like(blocks[:, 0])
    for a in range(NUM_ACTIONS):
        selected = tf.where(action_masks[a], blocks[:, a], selected)
    return selected


def _lstm_cell(z, c_source, units):
    """`(h, c)` of gate pre-activations `z = [i; f; o; u]` and the source's
    cell state (`keras.ops`, every backend)."""
    i = ops.sigmoid(z[:, :units])
    f = ops.sigmoid(z[:, units:2 * units])
    o = ops.sigmoid(z[:, 2 * units:3 * units])
    g = ops.tanh(z[:, 3 * units:])
    c = f * c_source + i * g
    return o * ops.tanh(c), c


def _pick_block(blocks, action_masks):
    """Each row's action block of `(..., 4, gates)` pre-activations, the
    masks bool `(..., 1)` per action (`keras.ops`, every backend)."""
    selected = ops.zeros_like(blocks[..., 0, :])
    for a in range(NUM_ACTIONS):
        selected = ops.where(action_masks[a], blocks[..., a, :], selected)
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
        selection: how a call without `schedule` (generation order)
            chooses each row's LSTM: `"gates"` (default: one matmul gives
            the four actions' gate pre-activations, each row keeps its
            own, one LSTM's element-wise work) or `"states"` (the naive
            way, for benchmarks: four whole LSTM steps, then each row
            keeps its action's new state). Same results.
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
        schedule: None (run the steps in generation order, every tree of
            the batch advancing together, the action chosen as `selection`
            says) or int `(iterations, rows)` from
            `keras_ordered.models.tdtreelstm.inputs.action_schedule`: the
            flat step indices `b * T + t` to compute in each iteration, all
            of one action, `batch * T` an empty slot. Then every iteration
            multiplies by its action's kernel only, and `selection` is not
            used. Same results; steps the schedule leaves out (padding)
            get the root's state.

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
    # The same states, computed one action per loop iteration:
    from keras_ordered.models.tdtreelstm.inputs import action_schedule
    schedule = action_schedule(actions, sources, [3])
    h2 = layer([x, actions, sources], schedule=schedule)
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
        tf = _tensorflow()
        u = self.units
        i = tf.sigmoid(z[:, :u])
        f = tf.sigmoid(z[:, u:2 * u])
        o = tf.sigmoid(z[:, 2 * u:3 * u])
        g = tf.tanh(z[:, 3 * u:])
        c = f * c_source + i * g
        return o * tf.tanh(c), c

    def _four_cells(self, layer, t, below, h_source, c_source, masks,
                    first_all, kernels, recurrent, biases):
        """`selection="states"`: the four LSTMs each take a whole step
        (TensorFlow)."""
        tf = _tensorflow()
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

    def call(self, inputs, return_states=False, schedule=None):
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
        if backend.is_tensorflow():
            return self._call_tensorflow(x, actions, sources, context,
                                         return_states, schedule)
        return self._call_generic(x, actions, sources, context, return_states,
                                  schedule)

    def _call_tensorflow(self, x, actions, sources, context, return_states,
                         schedule):
        """The TensorFlow-tuned path: a `tf.while_loop` in generation order
        (state reads with a hand-written gradient), or the schedule's loop
        with its hand-written backward pass (`_scheduled_recurrence`)."""
        tf = _tensorflow()
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
        if schedule is not None:
            states = self._scheduled_states(
                x, actions, sources, context, tf.cast(schedule, tf.int32),
                kernels, recurrent, biases)
            return self._outputs(states, return_states)

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
        return self._outputs(states, return_states)

    def _outputs(self, states, return_states):
        units, layers = self.units, self.num_layers
        if not return_states:
            top = 2 * (layers - 1) * units
            return states[:, :, top:top + units]
        return [states[:, :, k * units:(k + 1) * units] for k in range(2 * layers)]

    def _call_generic(self, x, actions, sources, context, return_states,
                      schedule):
        """The `keras.ops` path (JAX, PyTorch): one `ops.fori_loop` over the
        generation steps, every tree of the batch advancing together, the
        state memory `((T + 1) * batch, width)` read with `ops.take` and
        written with `ops.slice_update`; the action chosen as `selection`
        says. Gradients by the backend's automatic differentiation.

        With a `schedule`, the same states: a scheduled step's source is
        computed before it, so its state is the generation order's; the
        steps the schedule leaves out (padding) get the root's state, as the
        TensorFlow schedule loop gives them.
        """
        dtype = self.compute_dtype
        x = ops.cast(x, dtype)
        actions = ops.cast(actions, "int32")
        sources = ops.cast(sources, "int32")
        batch, steps = ops.shape(x)[0], ops.shape(x)[1]
        units, layers = self.units, self.num_layers
        gates = 4 * units
        width = layers * 2 * units
        kernels = [ops.cast(k, dtype) for k in self.kernels]
        recurrent = [ops.cast(k, dtype) for k in self.recurrent_kernels]
        biases = [ops.cast(b, dtype) for b in self.biases]

        # The first layer's input projections of every step, one matmul:
        # (batch, T, actions, gates).
        projected = ops.reshape(
            ops.matmul(ops.reshape(x, (-1, x.shape[-1])), kernels[0])
            + biases[0],
            (batch, steps, NUM_ACTIONS, gates))
        action_masks = [ops.expand_dims(ops.equal(actions, a), -1)
                        for a in range(NUM_ACTIONS)]
        first = _pick_block(projected, action_masks)
        if context is not None:
            extra = ops.matmul(
                ops.reshape(ops.cast(context, dtype), (-1, self.context_dim)),
                ops.cast(self.context_kernel, dtype))
            extra = ops.reshape(extra, (batch, steps, gates))
            first = first + ops.where(action_masks[GEN_R], extra,
                                      ops.zeros_like(extra))
            projected = ops.concatenate([
                projected[:, :, :GEN_R],
                projected[:, :, GEN_R:GEN_R + 1] + extra[:, :, None],
                projected[:, :, GEN_R + 1:]], axis=2)
        # Time-major for the loop.
        first = ops.transpose(first, (1, 0, 2))
        projected = ops.transpose(projected, (1, 0, 2, 3))
        actions_tm = ops.transpose(actions)
        sources_tm = ops.transpose(sources)
        columns = ops.arange(batch, dtype="int32")
        memory = ops.concatenate([
            ops.full((batch, width), self.initial_value, dtype=dtype),
            ops.zeros((steps * batch, width), dtype=dtype)], axis=0)

        def body(t, memory):
            rows = ops.take(sources_tm, t, axis=0) * batch + columns
            previous = ops.take(memory, rows, axis=0)
            step_actions = ops.take(actions_tm, t, axis=0)
            masks = [ops.expand_dims(ops.equal(step_actions, a), -1)
                     for a in range(NUM_ACTIONS)]
            new, below = [], None
            for layer in range(layers):
                h_source = previous[:, 2 * layer * units:(2 * layer + 1) * units]
                c_source = previous[:, (2 * layer + 1) * units:
                                    (2 * layer + 2) * units]
                if self.selection == "states":
                    # Four whole LSTM steps; each row keeps its action's.
                    h_new = ops.zeros_like(h_source)
                    c_new = ops.zeros_like(c_source)
                    for a in range(NUM_ACTIONS):
                        block = slice(a * gates, (a + 1) * gates)
                        if layer == 0:
                            z = (ops.take(projected, t, axis=0)[:, a]
                                 + ops.matmul(h_source, recurrent[0][:, block]))
                        else:
                            z = (ops.matmul(below, kernels[layer][:, block])
                                 + ops.matmul(h_source,
                                              recurrent[layer][:, block])
                                 + biases[layer][block])
                        h, c = _lstm_cell(z, c_source, units)
                        h_new = ops.where(masks[a], h, h_new)
                        c_new = ops.where(masks[a], c, c_new)
                    h, c = h_new, c_new
                else:
                    # One matmul gives the four actions' gates; each row
                    # keeps its action's block.
                    if layer == 0:
                        z = ops.take(first, t, axis=0) + _pick_block(
                            ops.reshape(ops.matmul(h_source, recurrent[0]),
                                        (-1, NUM_ACTIONS, gates)), masks)
                    else:
                        z = _pick_block(ops.reshape(
                            ops.matmul(below, kernels[layer])
                            + ops.matmul(h_source, recurrent[layer])
                            + biases[layer], (-1, NUM_ACTIONS, gates)), masks)
                    h, c = _lstm_cell(z, c_source, units)
                new += [h, c]
                below = h
            return ops.slice_update(memory, ((t + 1) * batch, 0),
                                    ops.concatenate(new, axis=1))

        memory = ops.fori_loop(0, steps, body, memory)
        states = ops.transpose(
            ops.reshape(memory[batch:], (steps, batch, width)), (1, 0, 2))
        if schedule is not None:
            slots = ops.reshape(ops.cast(schedule, "int32"), (-1, 1))
            runs = ops.scatter(slots, ops.ones((ops.shape(slots)[0],), "int32"),
                               (batch * steps + 1,))
            scheduled = ops.reshape(runs[:batch * steps] > 0, (batch, steps, 1))
            states = ops.where(scheduled, states,
                               ops.cast(self.initial_value, dtype))
        return self._outputs(states, return_states)

    def _scheduled_states(self, x, actions, sources, context, schedule,
                          kernels, recurrent, biases):
        """The states `(batch, T, layers * 2 * units)` computed in the
        iterations of an action-homogeneous `schedule` (TensorFlow)."""
        tf = _tensorflow()
        dtype = self.compute_dtype
        units, layers = self.units, self.num_layers
        gates = 4 * units
        batch = tf.shape(x)[0]
        steps = tf.shape(x)[1]
        empty = batch * steps  # the index of an empty slot
        if schedule.shape[0] == 0:  # no step: one empty iteration (shapes)
            schedule = tf.fill((1, tf.shape(schedule)[1]), empty)
        iterations = tf.shape(schedule)[0]
        rows = tf.shape(schedule)[1]
        slots = tf.reshape(schedule, (-1,))
        # Memory row of each step: 1 + its slot (0, the root's, for the
        # steps the schedule leaves out).
        step_row = tf.math.unsorted_segment_max(
            tf.range(1, iterations * rows + 1), slots, empty + 1)[:empty]
        step_row = tf.maximum(step_row, 0)
        # Memory row of each slot's source: 0 = the root, else its row.
        source = tf.gather(
            tf.concat([tf.reshape(sources, (-1,)), [0]], 0), slots)
        source_step = tf.maximum((slots // steps) * steps + source - 1, 0)
        source_row = tf.where(source > 0, tf.gather(step_row, source_step), 0)
        source_row = tf.reshape(source_row, (iterations, rows))
        # Each iteration's action: its first slot's (the empty iterations
        # come last and are not run).
        iteration_action = tf.gather(
            tf.concat([tf.reshape(actions, (-1,)), [0]], 0), schedule[:, 0])
        live = tf.reduce_sum(tf.cast(schedule[:, 0] < empty, tf.int32))

        def by_slot(values):
            flat = tf.reshape(values, (-1, values.shape[-1]))
            flat = tf.concat([flat, tf.zeros_like(flat[:1])], 0)
            return tf.gather(flat, schedule)  # (iterations, rows, dim)

        extra = None
        if context is not None:
            extra = tf.matmul(
                tf.reshape(tf.cast(context, dtype), (-1, self.context_dim)),
                tf.cast(self.context_kernel, dtype))
            extra = by_slot(tf.reshape(extra, (batch, steps, gates)))
            extra = tf.where(
                tf.equal(iteration_action, GEN_R)[:, None, None], extra,
                tf.zeros_like(extra))
        # Per layer, the four actions' [W; U] kernels and biases stacked:
        # (4, inputs + units, gates) and (4, gates).
        stacks, bias_stacks = [], []
        for layer in range(layers):
            inputs = kernels[layer].shape[0]
            stack = tf.reshape(tf.concat([kernels[layer], recurrent[layer]], 0),
                               (inputs + units, NUM_ACTIONS, gates))
            stacks.append(tf.transpose(stack, (1, 0, 2)))
            bias_stacks.append(tf.reshape(biases[layer], (NUM_ACTIONS, gates)))
        states = _scheduled_recurrence(
            units, layers, self.initial_value, source_row, iteration_action,
            live, step_row, by_slot(x), extra, stacks, bias_stacks)
        return tf.reshape(states, (batch, steps, layers * 2 * units))

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
        if backend.is_tensorflow():
            return self._call_tensorflow(embedded, mask)
        return self._call_generic(embedded, mask)

    def _call_generic(self, embedded, mask):
        """The `keras.ops` path (JAX, PyTorch): one `ops.fori_loop` over the
        K positions, every step's sequence advancing together."""
        dtype = self.compute_dtype
        embedded = ops.cast(embedded, dtype)
        batch, steps, length = (ops.shape(embedded)[0], ops.shape(embedded)[1],
                                ops.shape(embedded)[2])
        rows = batch * steps
        units, layers = self.units, self.num_layers
        x = ops.transpose(ops.reshape(embedded, (rows, length,
                                                 embedded.shape[-1])), (1, 0, 2))
        keep_all = ops.transpose(ops.reshape(ops.cast(mask, dtype),
                                             (rows, length)))
        kernels = [ops.cast(k, dtype) for k in self.kernels]
        recurrent = [ops.cast(k, dtype) for k in self.recurrent_kernels]
        biases = [ops.cast(b, dtype) for b in self.biases]
        init = ops.full((rows, units), self.initial_value, dtype=dtype)

        def body(k, state):
            below = ops.take(x, k, axis=0)
            keep = ops.expand_dims(ops.take(keep_all, k, axis=0) > 0, -1)
            new = []
            for layer in range(layers):
                h, c = state[2 * layer], state[2 * layer + 1]
                z = (ops.matmul(below, kernels[layer])
                     + ops.matmul(h, recurrent[layer]) + biases[layer])
                h_new, c_new = _lstm_cell(z, c, units)
                h_new = ops.where(keep, h_new, h)
                c_new = ops.where(keep, c_new, c)
                new += [h_new, c_new]
                below = h_new
            return new

        state = ops.fori_loop(0, length, body, [init] * (2 * layers))
        return ops.reshape(state[2 * (layers - 1)], (batch, steps, units))

    def _call_tensorflow(self, embedded, mask):
        """The TensorFlow-tuned path: one `tf.while_loop` over the K
        positions."""
        tf = _tensorflow()
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
