"""PRPN's predict network, vectorised over the positions of a window.

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018.
"""

import math

import keras
from keras import ops

from keras_ordered.layers._checks import check_positive_int
from keras_ordered.layers.gated_attention import FanInUniform
from keras_ordered.layers.parsing_conv import GlobalBatchNormalization
from keras_ordered.layers.gated_attention import GatedAttention
from keras_ordered.layers.gated_attention import gated_softmax
from keras_ordered.layers._checks import check_rate as _check_rate
from keras_ordered.layers._checks import clone_initializer as _clone_initializer


def _band(scores, num_slots):
    """`(batch, T, T + M) -> (batch, T, M)`: entry `[t, m]` is `[t, t + m]`.

    Row `t` of the result starts at the diagonal element of row `t`: laid
    out flat, element `[t, t + m]` is at `t (T + M) + t + m`, which is
    `[t, m]` of the flat array padded with `T` zeros and read as
    `(T, T + M + 1)`.
    """
    shape = ops.shape(scores)
    batch, steps, width = shape[0], shape[1], shape[2]
    flat = ops.reshape(scores, (batch, steps * width))
    flat = ops.pad(flat, [[0, 0], [0, steps]])
    return ops.reshape(flat, (batch, steps, width + 1))[:, :, :num_slots]


def _unband(weights, steps):
    """The inverse layout of `_band`: `(batch, T, M) -> (batch, T, T + M)`,
    `[t, m]` placed at `[t, t + m]`, zeros elsewhere."""
    shape = ops.shape(weights)
    batch, slots = shape[0], shape[2]
    width = steps + slots
    padded = ops.pad(weights, [[0, 0], [0, 0], [0, width + 1 - slots]])
    flat = ops.reshape(padded, (batch, steps * (width + 1)))[:, : steps * width]
    return ops.reshape(flat, (batch, steps, width))


def windowed_attention(attention, memory, sequence, gates, num_slots,
                       training=False):
    """`GatedAttention` at every position of a window over the memory tape
    of that position, without building the tapes.

    Position `t` attends over its tape `full[:, t : t + M]` (the states of
    positions `t - M .. t - 1`, oldest first), with `full` the memory
    followed by the sequence: `attention([windows, sequence, gates])` for
    `windows[:, t] = full[:, t : t + M]`. The windows (`(batch, T, M, d)`, 15 copies of
    the sequence for PRPN, with as many slicing gradients) are never made:
    the scores are the band of one `(T, d) x (d, M + T)` product per
    example, and the read-out is one `(T, M + T) x (M + T, d)` product with
    the weights placed on the same band. Same values, same dropout draws
    (the key is dropped and projected exactly as `GatedAttention` does).

    Args:
        attention: a built `GatedAttention`.
        memory: `(batch, M, d)`, the states before the window.
        sequence: `(batch, T, d)`, the states of the window (and the keys).
        gates: `(batch, T, M)`.
        num_slots: int, `M`.
        training: Python boolean, whether the key dropouts are applied.

    Returns:
        `(batch, T, d)`, the attended summaries.
    """
    dtype = attention.compute_dtype
    sequence = ops.cast(sequence, dtype)
    full = ops.concatenate([ops.cast(memory, dtype), sequence], axis=1)
    key = attention._drop(sequence, training)
    projected = ops.matmul(key, ops.cast(attention.kernel, dtype))
    projected = attention._drop(
        projected + ops.cast(attention.bias, dtype), training
    )
    scores = _band(ops.einsum("btd,bsd->bts", projected, full), num_slots)
    scores = ops.cast(scores, "float32") / math.sqrt(attention.units)
    weights = gated_softmax(scores, gates)
    band = _unband(ops.cast(weights, dtype), ops.shape(sequence)[1])
    return ops.matmul(band, full)


@keras.saving.register_keras_serializable(package="keras_ordered")
class PRPNPredictNetwork(keras.layers.Layer):
    """Predict network of PRPN, before the (tied) output embedding.

    For every position `t` of a window (the official `PredictNetwork`):

    ```
    h~_t = GatedAttention(tape_t, h_t, g^{t+1})[0]
    u_t  = Drop_out(tanh(BN(W Drop_in([h_t ; h~_t]) + b)))
    ```

    where `tape_t` holds the top layer's states `h_{t-M} .. h_{t-1}` (the
    official predictor's own memory, which pushes `h_t` after attending;
    `h_t` enters through the concatenation instead) and the gates `g^{t+1}`
    are computed from the estimated next distance `d^_{t+1}`: slot `m`
    (position `t - M + m`) is gated by `prod_{i=t-M+1+m..t}
    alpha(d^_{t+1}, d_i)`. The attention key is `Drop(A Drop(h_t) + b_A)`
    (the official `projector_pred`). The logits are then `E u_t + b_2` with
    the word embedding `E` (weight tying), see
    `keras_ordered.models.PRPNLanguageModel`.

    All positions are computed at once, outside the recurrence. The
    dropouts are element-wise. Batch normalisation (over batch and time)
    uses PyTorch's epsilon 1e-5 and momentum 0.1 (Keras' 0.9).

    Weights (Keras layout; official names in brackets): `attention`
    [`predictor.projector_pred.1`], `projection` kernel `(2 d, output_dim)`
    and bias [`predictor.ffd.1`], `batch_norm` [`predictor.ffd.2`].
    Default initialisation: PyTorch's `nn.Linear` (`FanInUniform`).

    Args:
        output_dim: int, size of `u_t` (the embedding size `d'`).
        num_slots: int, `M`.
        dropout: float, rate of the dropout on `u_t` (the official
            `dropout`, 0.7).
        input_dropout: float, rate of the dropout on `[h_t ; h~_t]` (the
            official `idropout`, 0.5).
        attention_dropout: float, rate of the attention-key dropouts (the
            official `idropout`, 0.5).
        momentum: float, batch-normalisation momentum (Keras convention).
        epsilon: float, batch-normalisation epsilon.
        synchronized: bool, batch statistics over the global batch under
            a strategy with several replicas (`GlobalBatchNormalization`);
            False (the default, the official code) each replica's own.
        kernel_initializer: initializer of `W`; default `FanInUniform()`.
        seed: int, random seed of the dropouts and the initializers.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[hidden, memory, gates]`: the top layer's states of
            the window `(batch, time, d)`, its tape at the start of the
            window `(batch, M, d)` and the predict gates
            `(batch, time, M)`.
        training: Python boolean: dropout, and batch statistics in batch
            normalisation.

    Returns:
        tensor `(batch, time, output_dim)`.

    Example:

    ```python
    predict = keras_ordered.layers.PRPNPredictNetwork(16, num_slots=4)
    hidden = keras.random.normal((2, 7, 32))
    gates = keras_ordered.layers.memory_gates(
        keras.random.uniform((2, 7)), num_slots=4,
        query=keras.random.uniform((2, 7)),
    )
    u = predict([hidden, np.zeros((2, 4, 32)), gates])  # (2, 7, 16)
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018 (the predict network).
    """

    def __init__(
        self,
        output_dim,
        num_slots,
        dropout=0.7,
        input_dropout=0.5,
        attention_dropout=0.5,
        momentum=0.9,
        epsilon=1e-5,
        kernel_initializer=None,
        seed=None,
        synchronized=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (("output_dim", output_dim), ("num_slots", num_slots)):
            check_positive_int(name, value)
        self.output_dim = output_dim
        self.num_slots = num_slots
        self.dropout = _check_rate("dropout", dropout)
        self.input_dropout = _check_rate("input_dropout", input_dropout)
        self.attention_dropout = _check_rate("attention_dropout", attention_dropout)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.synchronized = bool(synchronized)
        self.kernel_initializer = (
            FanInUniform(seed=seed) if kernel_initializer is None
            else keras.initializers.get(kernel_initializer)
        )
        self.seed = seed

        def seed_for(k):
            return None if seed is None else seed + k

        policy = self.dtype_policy
        self.attention = GatedAttention(
            dropout=self.attention_dropout, seed=seed_for(0), dtype=policy,
            name="attention",
        )
        self.input_dropout_layer = keras.layers.Dropout(
            self.input_dropout, seed=seed_for(1), dtype=policy,
            name="input_dropout",
        )
        self.projection = keras.layers.Dense(
            output_dim,
            kernel_initializer=_clone_initializer(self.kernel_initializer, 3),
            dtype=policy,
            name="projection",
        )
        self.batch_norm = GlobalBatchNormalization(
            momentum=self.momentum, epsilon=self.epsilon,
            synchronized=self.synchronized, dtype=policy, name="batch_norm",
        )
        self.output_dropout = keras.layers.Dropout(
            self.dropout, seed=seed_for(2), dtype=policy, name="output_dropout"
        )

    def build(self, input_shape):
        hidden_shape = input_shape[0]
        units = hidden_shape[-1]
        self.attention.build(
            [(None, None, self.num_slots, units), (None, None, units),
             (None, None, self.num_slots)]
        )
        # PyTorch's nn.Linear bias: uniform(+-1/sqrt(fan_in)), fan_in = 2 d.
        self.projection.bias_initializer = FanInUniform(
            fan_in=2 * int(units),
            seed=None if self.seed is None else self.seed + 4,
        )
        self.projection.build((None, None, 2 * units))
        self.batch_norm.build((None, None, self.output_dim))

    def call(self, inputs, training=False):
        hidden, memory, gates = inputs
        hidden = ops.cast(hidden, self.compute_dtype)
        summary = windowed_attention(
            self.attention, memory, hidden, gates, self.num_slots,
            training=training,
        )
        x = ops.concatenate([hidden, summary], axis=-1)
        x = self.input_dropout_layer(x, training=training)
        x = self.batch_norm(self.projection(x), training=training)
        return self.output_dropout(ops.tanh(x), training=training)

    def compute_output_shape(self, input_shape):
        return (*input_shape[0][:-1], self.output_dim)

    def get_config(self):
        return {
            **super().get_config(),
            "output_dim": self.output_dim,
            "num_slots": self.num_slots,
            "dropout": self.dropout,
            "input_dropout": self.input_dropout,
            "attention_dropout": self.attention_dropout,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "synchronized": self.synchronized,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "seed": self.seed,
        }
