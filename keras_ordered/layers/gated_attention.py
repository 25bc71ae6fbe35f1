"""PRPN's memory gates and gated attention over a memory tape.

The Parsing-Reading-Predict Network (Shen et al., 2018) keeps, per LSTM
layer, a *memory tape* of its last `M` states and reads it with an attention
that syntactic gates restrict to the current constituent. This module holds
the two pieces:

- `memory_gates` (and its layer form `MemoryGates`): from syntactic
  distances `d_i` to the gates `g_i^t = prod_{j=i..t} alpha_j^t` of the `M`
  memory slots, vectorised over the whole window;
- `GatedAttention`: attention over the slots whose softmax is multiplied by
  those gates.

Slot convention (the whole package uses it): the memory at step `t` holds
the states of positions `t - M .. t - 1`, oldest first (slot `m` holds
position `t - M + m`; slot `M - 1` holds `h_{t-1}`). Slot `m` is gated by
`g_{t-M+1+m}^t = prod_{j=t-M+1+m .. t} alpha_j^t`, which involves the
distances to the *right* of the slot's position, up to `d_t`: the state of
position `p` is visible iff no distance between `p` and `t` exceeds `d_t`.
The newest slot (`h_{t-1}`) is always open (`alpha_t^t = 1`).

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018.
"""

import math

import keras
from keras import ops


def _hard_alpha(delta, tau):
    # alpha = (hardtanh(delta * tau + 1) + 1) / 2, about [delta >= 0].
    return (ops.clip(delta * tau + 1.0, -1.0, 1.0) + 1.0) / 2.0


def _soft_alpha(delta, tau):
    # The same centre (alpha = 1/2 at delta = -1/tau), smooth everywhere.
    return ops.sigmoid(5.0 * (delta * tau + 1.0))


def memory_gates(
    distances,
    num_slots,
    history=None,
    history_mask=None,
    query=None,
    resolution=0.1,
    hard=True,
):
    """PRPN memory gates of every position of a window, vectorised.

    For position `t` of the window and memory slot `m` (holding position
    `t - M + m`, see the module docstring):

    ```
    alpha_i^t = (hardtanh((q_t - d_i) * tau + 1) + 1) / 2,  tau = 2 / resolution
    gate[t, m] = prod_{i = t-M+1+m .. t} alpha_i^t
    ```

    where `q_t = d_t` for the reading network (the default) and
    `q_t = d^_{t+1}` (the estimated next distance) for the predict network.
    Positions before the start of the text have `d_i = +inf`
    (`alpha_i^t = 0`): they are given by `history_mask == 0`.
    With `hard=False`, `alpha_i^t = sigmoid(5 ((q_t - d_i) tau + 1))`.

    No division is involved (the products are built slot by slot), so the
    gradient is exact even where `alpha` saturates at 0.

    Args:
        distances: float tensor `(batch, time)`, `d_i` of the window's
            positions.
        num_slots: int, `M`.
        history: optional float tensor `(batch, M)`, the distances of the
            `M` positions before the window, oldest first (the last `M - 1`
            are used). Default: none (the window starts the text).
        history_mask: optional float tensor `(batch, M)`, 1 where `history`
            holds a real position, 0 before the text start. Default: ones if
            `history` is given, else zeros.
        query: optional float tensor `(batch, time)`, the distance each
            position compares against; default `distances`.
        resolution: float, `tau = 2 / resolution` (0.1 gives the paper's 20).
        hard: bool, hardtanh (the paper) or sigmoid gates.

    Returns:
        float32 tensor `(batch, time, M)` of gates in `[0, 1]`.

    Example:

    ```python
    d = np.array([[0.1, 0.8, 0.2, 0.3]], "float32")
    g = keras_ordered.layers.memory_gates(d, num_slots=3)
    # At x_4 the slots hold x_1, x_2, x_3: g[0, 3] == [0, 1, 1], since
    # d_2 = 0.8 > d_4 = 0.3 closes x_1 off from x_4.
    ```
    """
    if not isinstance(num_slots, int) or num_slots < 1:
        raise ValueError(
            f"`num_slots` must be a positive integer. Received: {num_slots}"
        )
    if resolution <= 0:
        raise ValueError(
            f"`resolution` must be > 0 (tau = 2 / resolution). "
            f"Received: {resolution}"
        )
    tau = 2.0 / float(resolution)
    alpha_fn = _hard_alpha if hard else _soft_alpha
    distances = ops.cast(distances, "float32")
    query = distances if query is None else ops.cast(query, "float32")
    batch = ops.shape(distances)[0]
    previous = num_slots - 1
    if history is None:
        history = ops.zeros((batch, previous), "float32")
        history_mask = ops.zeros((batch, previous), "float32")
    else:
        history = ops.cast(history, "float32")[:, history.shape[1] - previous :]
        if history_mask is None:
            history_mask = ops.ones_like(history)
        else:
            history_mask = ops.cast(history_mask, "float32")[
                :, history_mask.shape[1] - previous :
            ]
    # (batch, M - 1 + time): d_{t0-M+1} .. d_{t0+T-1} and their validity.
    full = ops.concatenate([history, distances], axis=1)
    valid = ops.concatenate([history_mask, ops.ones_like(distances)], axis=1)
    alphas = []
    for m in range(num_slots):
        # Window slot m of position t is d_{t-M+1+m}: columns m .. m + T - 1.
        end = m - previous if m < previous else None
        window = full[:, m:end]
        alpha = alpha_fn(query - window, tau)
        alphas.append(ops.where(valid[:, m:end] > 0, alpha, 0.0))
    # Reverse cumulative product over the slots, newest to oldest.
    gates = [None] * num_slots
    running = alphas[-1]
    gates[-1] = running
    for m in range(num_slots - 2, -1, -1):
        running = running * alphas[m]
        gates[m] = running
    return ops.stack(gates, axis=-1)


@keras.saving.register_keras_serializable(package="keras_ordered")
class MemoryGates(keras.layers.Layer):
    """Layer form of `memory_gates`, for functional models.

    Args:
        num_slots: int, `M`, the number of memory slots (the paper's 15).
        resolution: float, `tau = 2 / resolution` (the paper's 0.1).
        hard: bool, hardtanh gates (the paper) or sigmoid gates.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[distances, history, history_mask]` or
            `[distances, history, history_mask, query]`: `(batch, time)`,
            `(batch, M)`, `(batch, M)` and `(batch, time)` float tensors, as
            in `memory_gates`.

    Returns:
        float32 tensor `(batch, time, M)`.

    Example:

    ```python
    layer = keras_ordered.layers.MemoryGates(num_slots=4)
    d = keras.random.uniform((2, 6))
    gates = layer([d, np.zeros((2, 4)), np.zeros((2, 4))])  # (2, 6, 4)
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018 (the gates of the parsing network).
    """

    def __init__(self, num_slots, resolution=0.1, hard=True, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(num_slots, int) or num_slots < 1:
            raise ValueError(
                "`num_slots` must be a positive integer. "
                f"Received: num_slots={num_slots}"
            )
        if not resolution > 0:
            raise ValueError(
                "`resolution` must be > 0: the gate temperature is "
                f"2 / resolution. Received: resolution={resolution}"
            )
        self.num_slots = num_slots
        self.resolution = float(resolution)
        self.hard = bool(hard)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (3, 4):
            raise ValueError(
                "MemoryGates expects `[distances, history, history_mask]` "
                "or `[distances, history, history_mask, query]`."
            )
        query = inputs[3] if len(inputs) == 4 else None
        return memory_gates(
            inputs[0],
            self.num_slots,
            history=inputs[1],
            history_mask=inputs[2],
            query=query,
            resolution=self.resolution,
            hard=self.hard,
        )

    def compute_output_shape(self, input_shape):
        return (*input_shape[0], self.num_slots)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(
            self.compute_output_shape([x.shape for x in inputs]), "float32"
        )

    def get_config(self):
        return {
            **super().get_config(),
            "num_slots": self.num_slots,
            "resolution": self.resolution,
            "hard": self.hard,
        }


@keras.saving.register_keras_serializable(package="keras_ordered")
class GatedAttention(keras.layers.Layer):
    """Attention over memory slots, restricted by syntactic gates.

    With memory slots `(h_{-M}, c_{-M}) .. (h_{-1}, c_{-1})`, a key `k` and
    gates `g_{-M} .. g_{-1}` in `[0, 1]`:

    ```
    k~     = Drop(A Drop(k) + b)
    s_{-i} = g_{-i} exp(h_{-i} . k~ / sqrt(d)) / sum_j g_{-j} exp(h_{-j} . k~ / sqrt(d))
    (h~, c~) = sum_i s_{-i} (h_{-i}, c_{-i})
    ```

    The weights are computed in float32, with the maximum score over the
    open slots subtracted; closed slots (`g = 0`) get weight exactly 0
    whatever their content, and when every gate is 0 the output is 0 (no
    NaN).

    The dropouts are ordinary (element-wise) dropouts by default. Inside a
    recurrence, pass the masks of `make_dropout_masks` (drawn once per
    sequence) as `dropout_masks` to use the same ones at every step.

    Leading dimensions are free: memory `(..., M, d)`, key `(..., p)`,
    gates `(..., M)`; e.g. `(batch, M, d)` in a recurrent cell, or
    `(batch, time, M, d)` for all positions of a window at once.

    Args:
        dropout: float in [0, 1), the rate of both dropouts on the key (the
            paper's 0.5).
        kernel_initializer: initializer of `A` (`(p, d)`).
        bias_initializer: initializer of `b` (`(d,)`).
        seed: int, random seed of the dropouts.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[memory_h, key, gates]` or
            `[memory_h, memory_c, key, gates]`.
        training: Python boolean, whether dropout is applied.
        dropout_masks: optional pair `(key_mask, projected_key_mask)` of
            multiplicative masks broadcastable to `key` and to `A k + b`
            (either may be None), used instead of fresh dropout in training.
        return_attention_scores: Python boolean, also return the weights
            `s` `(..., M)`.

    Returns:
        `h~` `(..., d)` (or `[h~, c~]` when `memory_c` is given), followed by
        the weights when `return_attention_scores=True`.

    Example:

    ```python
    attention = keras_ordered.layers.GatedAttention(dropout=0.5)
    memory_h = keras.random.normal((2, 15, 32))
    memory_c = keras.random.normal((2, 15, 32))
    key = keras.random.normal((2, 48))
    gates = keras.random.uniform((2, 15))
    h, c = attention([memory_h, memory_c, key, gates])  # (2, 32) each
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018 (gated attention).
    """

    def __init__(
        self,
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.dropout = float(dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) not in (
            3,
            4,
        ):
            raise ValueError(
                "GatedAttention expects inputs `[memory_h, key, gates]` or "
                "`[memory_h, memory_c, key, gates]`. "
                f"Received input shapes: {input_shape}"
            )
        memory_shape, key_shape = input_shape[0], input_shape[-2]
        self.units = int(memory_shape[-1])
        self.key_dim = int(key_shape[-1])
        self.kernel = self.add_weight(
            shape=(self.key_dim, self.units),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.bias = self.add_weight(
            shape=(self.units,), name="bias", initializer=self.bias_initializer
        )

    def make_dropout_masks(self, batch_size):
        """Masks `(key_mask, projected_key_mask)` of shapes `(batch, p)` and
        `(batch, d)`, for `dropout_masks`; `(None, None)` when `dropout` is 0.
        """
        if self.dropout == 0.0:
            return None, None
        masks = []
        for size in (self.key_dim, self.units):
            ones = ops.ones((batch_size, size), dtype=self.compute_dtype)
            masks.append(
                keras.random.dropout(ones, self.dropout, seed=self.seed_generator)
            )
        return tuple(masks)

    def _drop(self, x, mask, training):
        if not training or self.dropout == 0.0:
            return x
        if mask is not None:
            return x * mask
        return keras.random.dropout(x, self.dropout, seed=self.seed_generator)

    def call(
        self,
        inputs,
        training=False,
        dropout_masks=None,
        return_attention_scores=False,
    ):
        if len(inputs) == 4:
            memory_h, memory_c, key, gates = inputs
        else:
            (memory_h, key, gates), memory_c = inputs, None
        dtype = self.compute_dtype
        memory_h = ops.cast(memory_h, dtype)
        key = ops.cast(key, dtype)
        key_mask, projected_mask = dropout_masks or (None, None)
        projected = ops.matmul(
            self._drop(key, key_mask, training), ops.cast(self.kernel, dtype)
        ) + ops.cast(self.bias, dtype)
        projected = self._drop(projected, projected_mask, training)
        # (..., M, d) x (..., d, 1) -> (..., M)
        scores = ops.squeeze(ops.matmul(memory_h, projected[..., None]), -1)
        scores = ops.cast(scores, "float32") / math.sqrt(self.units)
        weights = gated_softmax(scores, gates)
        cast_weights = ops.cast(weights, dtype)[..., None, :]
        attended_h = ops.squeeze(ops.matmul(cast_weights, memory_h), -2)
        outputs = attended_h
        if memory_c is not None:
            memory_c = ops.cast(memory_c, dtype)
            attended_c = ops.squeeze(ops.matmul(cast_weights, memory_c), -2)
            outputs = [attended_h, attended_c]
        if return_attention_scores:
            if memory_c is None:
                return attended_h, weights
            return attended_h, attended_c, weights
        return outputs

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape[0][:-2]) + (input_shape[0][-1],)
        if len(input_shape) == 4:
            return [shape, shape]
        return shape

    def get_config(self):
        return {
            **super().get_config(),
            "dropout": self.dropout,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
            "seed": self.seed,
        }


def gated_softmax(scores, gates, axis=-1):
    """`s_i = g_i exp(z_i) / sum_j g_j exp(z_j)`, stably, in float32.

    The maximum over the open slots (`g > 0`) is subtracted before `exp`;
    closed slots get exactly 0; if all gates are 0 the weights are all 0.

    Args:
        scores: float tensor of logits `z`.
        gates: float tensor of the same shape, in `[0, 1]`.
        axis: int, the axis the weights are normalised over.

    Returns:
        float32 tensor of weights, summing to 1 along `axis` unless every
        gate there is 0.
    """
    scores = ops.cast(scores, "float32")
    gates = ops.cast(gates, "float32")
    open_slots = gates > 0
    masked = ops.where(open_slots, scores, -1e9)
    shift = ops.stop_gradient(ops.max(masked, axis=axis, keepdims=True))
    weights = gates * ops.exp(masked - shift)
    total = ops.sum(weights, axis=axis, keepdims=True)
    safe_total = ops.where(total > 0, total, 1.0)
    return weights / safe_total
