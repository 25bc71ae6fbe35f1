"""PRPN's parsing network: syntactic distances from a causal convolution.

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018.
"""

import keras
from keras import ops
from keras_ordered.layers._checks import check_rate as _check_rate
from keras_ordered.layers._checks import clone_initializer as _clone_initializer


@keras.saving.register_keras_serializable(package="keras_ordered")
class ParsingConv(keras.layers.Layer):
    """Parsing network of PRPN: syntactic distances of a sequence.

    For position `i`, from the embeddings of `x_{i-Q} .. x_i`:

    ```
    d_i = sigmoid(Conv_1(Drop(ReLU(BN(Conv_{Q+1}(Drop([E x_{i-Q} .. E x_i])))))))
    ```

    the distance between `x_{i-1}` and `x_i` (a convolution of width `Q + 1`
    to `units` channels, batch normalisation, ReLU, and a width-1
    convolution to one value). A second head with its own parameters reads
    the same window and estimates the *next* distance `d^_{i+1}` (the
    paper's work-around for the predict network, which cannot see
    `x_{i+1}`).

    The convolution is causal: before the first position it sees
    `previous_embeddings` (the last `Q` embeddings of the previous window, to
    carry a text across truncated-BPTT windows) or, when they are not given,
    zeros (the paper's `E x_j = 0` for `j < 1`).

    Batch normalisation uses a momentum of 0.9 (PyTorch's 0.1) and
    normalises over batch and time; in inference it uses the moving
    statistics, so every position is computed independently of the others.

    Args:
        units: int, channels of the first convolution (the paper's `d`,
            the LSTM size 1200).
        lookback: int, `Q >= 1`, the number of previous words seen (the
            paper's 5).
        dropout: float in [0, 1), the rate of both dropouts (the paper's
            0.5); element-wise.
        momentum: float, batch-normalisation momentum.
        epsilon: float, batch-normalisation epsilon.
        kernel_initializer: initializer of the convolution kernels.
        seed: int, random seed of the dropouts.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: the embeddings `(batch, time, features)`, or a list
            `[embeddings, previous_embeddings]` with `previous_embeddings`
            of shape `(batch, lookback, features)`.
        training: Python boolean: dropout, and batch statistics in batch
            normalisation.

    Returns:
        `[distances, next_distances]`, two float32 tensors `(batch, time)`
        in `(0, 1)`: `d_i` and the estimate `d^_{i+1}` made at position `i`.

    Example:

    ```python
    parser = keras_ordered.layers.ParsingConv(64, lookback=5)
    embeddings = keras.random.normal((4, 12, 32))
    distances, next_distances = parser(embeddings)  # (4, 12) each
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018 (the parsing network).
    """

    HEADS = ("distance", "next_distance")

    def __init__(
        self,
        units,
        lookback=5,
        dropout=0.5,
        momentum=0.9,
        epsilon=1e-3,
        kernel_initializer="glorot_uniform",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(
                f"`units` must be a positive integer. Received: units={units}"
            )
        if not isinstance(lookback, int) or lookback < 1:
            raise ValueError(
                "`lookback` must be an integer >= 1 (the convolution sees "
                f"x_(i-lookback) .. x_i). Received: lookback={lookback}"
            )
        self.units = units
        self.lookback = lookback
        self.dropout = _check_rate("dropout", dropout)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.seed = seed

        def seed_for(k):
            return None if seed is None else seed + k

        policy = self.dtype_policy
        self.heads = []
        for index, head in enumerate(self.HEADS):
            self.heads.append(
                [
                    keras.layers.Dropout(
                        self.dropout,
                        seed=seed_for(2 * index),
                        dtype=policy,
                        name=f"{head}_input_dropout",
                    ),
                    keras.layers.Conv1D(
                        units,
                        lookback + 1,
                        padding="valid",
                        use_bias=False,
                        kernel_initializer=_clone_initializer(
                            self.kernel_initializer, 2 * index
                        ),
                        dtype=policy,
                        name=f"{head}_window_conv",
                    ),
                    keras.layers.BatchNormalization(
                        momentum=self.momentum,
                        epsilon=self.epsilon,
                        dtype=policy,
                        name=f"{head}_batch_norm",
                    ),
                    keras.layers.ReLU(dtype=policy, name=f"{head}_relu"),
                    keras.layers.Dropout(
                        self.dropout,
                        seed=seed_for(2 * index + 1),
                        dtype=policy,
                        name=f"{head}_hidden_dropout",
                    ),
                    keras.layers.Conv1D(
                        1,
                        1,
                        kernel_initializer=_clone_initializer(
                            self.kernel_initializer, 2 * index + 1
                        ),
                        dtype=policy,
                        name=f"{head}_output_conv",
                    ),
                ]
            )

    def _split(self, inputs):
        if isinstance(inputs, (list, tuple)):
            if len(inputs) != 2:
                raise ValueError(
                    "ParsingConv expects `embeddings` or "
                    "`[embeddings, previous_embeddings]`. "
                    f"Received {len(inputs)} inputs."
                )
            return inputs[0], inputs[1]
        return inputs, None

    def build(self, input_shape):
        if isinstance(input_shape, (list, tuple)) and isinstance(
            input_shape[0], (list, tuple)
        ):
            embedding_shape, previous_shape = input_shape
            if previous_shape[1] is not None and previous_shape[1] != self.lookback:
                raise ValueError(
                    "`previous_embeddings` must hold the last `lookback` = "
                    f"{self.lookback} embeddings. Received shape "
                    f"{previous_shape}"
                )
        else:
            embedding_shape = input_shape
        features = embedding_shape[-1]
        shape = (None, None, features)
        for head in self.heads:
            for layer in head:
                layer.build(shape)
                shape = layer.compute_output_shape(shape)
            shape = (None, None, features)

    def call(self, inputs, training=False):
        embeddings, previous = self._split(inputs)
        embeddings = ops.cast(embeddings, self.compute_dtype)
        if previous is None:
            batch = ops.shape(embeddings)[0]
            previous = ops.zeros(
                (batch, self.lookback, embeddings.shape[-1]), self.compute_dtype
            )
        window = ops.concatenate(
            [ops.cast(previous, self.compute_dtype), embeddings], axis=1
        )
        outputs = []
        for head in self.heads:
            x = window
            for layer in head:
                x = layer(x, training=training)
            outputs.append(ops.sigmoid(ops.cast(x[..., 0], "float32")))
        return outputs

    def compute_output_shape(self, input_shape):
        embedding_shape, _ = self._split(input_shape) if isinstance(
            input_shape[0], (list, tuple)
        ) else (input_shape, None)
        return [tuple(embedding_shape[:2])] * 2

    def compute_output_spec(self, inputs, training=False):
        embeddings, _ = self._split(inputs)
        shape = tuple(embeddings.shape[:2])
        return [keras.KerasTensor(shape, "float32") for _ in self.HEADS]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "lookback": self.lookback,
            "dropout": self.dropout,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "seed": self.seed,
        }
