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
The newest slot (`h_{t-1}`) is always open with hard gates
(`alpha_t^t = 1`; `sigmoid(5)` with soft ones). This is the official
code's `cumprod` over its newest-first slots `s = 0 .. M-1` (slot `s` holds
`t-1-s` and is gated by `prod_{r=0..s} alpha(d_t, d_{t-r})`), stored oldest
first.

`FanInUniform` is the initialiser of PyTorch's `nn.Linear` / `nn.Conv1d`
weights and biases, the defaults of every PRPN layer.

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018.
"""

import math
import random

import keras
from keras import ops

from keras_ordered.layers._checks import check_positive_int


@keras.saving.register_keras_serializable(package="keras_ordered")
class FanInUniform(keras.initializers.Initializer):
    """`uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))`, PyTorch's default.

    PyTorch initialises the weight and the bias of `nn.Linear` and
    `nn.Conv1d` this way (its `kaiming_uniform_(a=sqrt(5))` bound is
    `1/sqrt(fan_in)`), with `fan_in` the number of inputs of one output
    unit: `in_features`, or `in_channels / groups * kernel_width`.

    A list of fan-ins draws the sum of one such uniform per fan-in: the
    bias of a cell that adds the biases of two PyTorch projections (the
    official ON-LSTM cell's input-to-hidden and hidden-to-hidden
    `nn.Linear`s, whose two biases are one here).

    Args:
        fan_in: int, list of int, or None. None (for kernels) reads it
            from the shape: the product of every axis but the last (Keras
            kernels are `(in, out)` and `(width, in / groups, out)`). A
            bias has no such axis: give the fan-in of its layer, or of
            each layer whose biases it adds.
        seed: int or None, random seed.

    Example:

    ```python
    init = keras_ordered.layers.FanInUniform(seed=1)
    kernel = init((400, 1200))  # |values| <= 1 / sqrt(400)
    bias = keras_ordered.layers.FanInUniform(fan_in=400, seed=2)((1200,))
    # nn.Linear(400, 4830).bias + nn.Linear(1150, 4830).bias:
    summed = keras_ordered.layers.FanInUniform(fan_in=[400, 1150])((4830,))
    ```
    """

    def __init__(self, fan_in=None, seed=None):
        if isinstance(seed, dict):
            seed = keras.saving.deserialize_keras_object(seed)
        if seed is not None and (
            isinstance(seed, bool)
            or not isinstance(seed, (int, keras.random.SeedGenerator))
        ):
            raise ValueError(
                "`seed` must be an integer, a `keras.random.SeedGenerator` or "
                f"None. Received: seed={seed!r}"
            )
        self._init_seed = seed
        # As Keras' random initializers: without a seed, one drawn from
        # Python's generator (so `keras.utils.set_random_seed` fixes it).
        self.seed = random.randint(1, int(1e9)) if seed is None else seed
        if isinstance(fan_in, (list, tuple)):
            if not fan_in:
                raise ValueError(
                    "`fan_in` must be a positive int or a non-empty list of "
                    "them. Received: fan_in=[]")
            for value in fan_in:
                check_positive_int("fan_in", value)
            fan_in = [int(value) for value in fan_in]
        elif fan_in is not None:
            check_positive_int("fan_in", fan_in)
        self.fan_in = fan_in

    def __call__(self, shape, dtype=None):
        fan_ins = self.fan_in
        if fan_ins is None:
            if len(shape) < 2:
                raise ValueError(
                    "FanInUniform needs `fan_in` for a weight of rank 1 (a "
                    f"bias); received shape {shape}."
                )
            fan_ins = int(math.prod(shape[:-1]))
        if not isinstance(fan_ins, list):
            fan_ins = [fan_ins]
        total = None
        for index, fan_in in enumerate(fan_ins):
            limit = 1.0 / math.sqrt(fan_in)
            # An int seed gives each term its own stream; a SeedGenerator
            # moves on between the draws.
            seed = (self.seed + index if isinstance(self.seed, int)
                    else self.seed)
            term = keras.random.uniform(
                shape, minval=-limit, maxval=limit, seed=seed, dtype=dtype
            )
            total = term if total is None else total + term
        return total

    def get_config(self):
        return {
            "seed": keras.saving.serialize_keras_object(self._init_seed),
            "fan_in": self.fan_in,
        }


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
    check_positive_int("num_slots", num_slots)
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
        check_positive_int("num_slots", num_slots)
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

    With memory slots `(h_{-M}, c_{-M}) .. (h_{-1}, c_{-1})` of size `d`, a
    key input `k` and gates `g_{-M} .. g_{-1}` in `[0, 1]`:

    ```
    k~     = Drop(A Drop(k) + b)
    l_{-i} = h_{-i} . k~ / sqrt(d)
    s_{-i} = g_{-i} exp(l_{-i} - max_j l_{-j}) / (sum_j g_{-j} exp(l_{-j} - max_j l_{-j}) + 1e-8)
    (h~, c~) = sum_i s_{-i} (h_{-i}, c_{-i})
    ```

    This is the official PRPN code's attention (its `projector_summ` /
    `projector_pred`, a dropout, a linear map and a dropout, and its masked
    `softmax`): the maximum is taken over *all* slots, open or closed, and
    `1e-8` is added to the normaliser, so the weights sum to slightly less
    than 1, and to 0 when every gate is 0. The weights are computed in
    float32.

    Both dropouts are element-wise and drawn afresh at every call (at every
    step inside a recurrence), as `nn.Dropout` in the official code.

    Leading dimensions are free: memory `(..., M, d)`, key `(..., p)`,
    gates `(..., M)`; e.g. `(batch, M, d)` in a recurrent cell, or
    `(batch, time, M, d)` for all positions of a window at once.

    Args:
        dropout: float in [0, 1), the rate of both dropouts on the key (the
            official `idropout`, 0.5 for PTB).
        kernel_initializer: initializer of `A` (`(p, d)`); default
            `FanInUniform()` (PyTorch's `nn.Linear`).
        bias_initializer: initializer of `b` (`(d,)`); default None,
            `FanInUniform(fan_in=p)` (PyTorch's `nn.Linear`).
        seed: int, random seed of the dropouts and the default initializers.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[memory_h, key, gates]` or
            `[memory_h, memory_c, key, gates]`.
        training: Python boolean, whether dropout is applied.
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
        kernel_initializer=None,
        bias_initializer=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.dropout = float(dropout)
        self.kernel_initializer = (
            FanInUniform(seed=seed) if kernel_initializer is None
            else keras.initializers.get(kernel_initializer)
        )
        self.bias_initializer = (
            None if bias_initializer is None
            else keras.initializers.get(bias_initializer)
        )
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
        bias_initializer = self.bias_initializer
        if bias_initializer is None:
            bias_initializer = FanInUniform(
                fan_in=self.key_dim,
                seed=None if self.seed is None else self.seed + 1,
            )
        self.bias = self.add_weight(
            shape=(self.units,), name="bias", initializer=bias_initializer
        )

    # Set by `prpn_cell.jax_reading_loop` for the steps of one JAX scan
    # (None: `seed_generator`).
    _step_seeds = None

    def _drop(self, x, training):
        if not training or self.dropout == 0.0:
            return x
        seed = self.seed_generator
        if self._step_seeds is not None:
            seed = self._step_seeds.next()
        return keras.random.dropout(x, self.dropout, seed=seed)

    def call(self, inputs, training=False, return_attention_scores=False):
        if len(inputs) == 4:
            memory_h, memory_c, key, gates = inputs
        else:
            (memory_h, key, gates), memory_c = inputs, None
        dtype = self.compute_dtype
        memory_h = ops.cast(memory_h, dtype)
        key = ops.cast(key, dtype)
        projected = ops.matmul(
            self._drop(key, training), ops.cast(self.kernel, dtype)
        ) + ops.cast(self.bias, dtype)
        projected = self._drop(projected, training)
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
            "bias_initializer": (
                None if self.bias_initializer is None
                else keras.initializers.serialize(self.bias_initializer)
            ),
            "seed": self.seed,
        }


def gated_softmax(scores, gates, axis=-1, epsilon=1e-8):
    """`s_i = g_i exp(z_i - max z) / (sum_j g_j exp(z_j - max z) + epsilon)`.

    The official PRPN masked softmax, in float32: the maximum is over all
    entries (open and closed), `epsilon` keeps the all-closed case finite
    (its weights are 0). Closed entries (`g = 0`) get exactly 0.

    Args:
        scores: float tensor of logits `z`.
        gates: float tensor of the same shape, in `[0, 1]`.
        axis: int, the axis the weights are normalised over.
        epsilon: float, added to the normaliser (the official 1e-8).

    Returns:
        float32 tensor of weights; they sum to `total / (total + epsilon)`
        along `axis` (`total` the gated sum of exponentials).

    Example:

    ```python
    w = keras_ordered.layers.gated_softmax(
        np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 1.0, 0.0]])
    )  # about [[0.269, 0.731, 0.0]]
    ```
    """
    scores = ops.cast(scores, "float32")
    gates = ops.cast(gates, "float32")
    shift = ops.max(scores, axis=axis, keepdims=True)
    weights = gates * ops.exp(scores - shift)
    total = ops.sum(weights, axis=axis, keepdims=True)
    return weights / (total + epsilon)
