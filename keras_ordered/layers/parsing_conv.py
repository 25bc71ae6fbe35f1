"""PRPN's parsing network: syntactic distances from a causal convolution.

Reference:
    Shen, Lin, Huang, Courville. "Neural Language Modeling by Jointly
    Learning Syntax and Lexicon". ICLR 2018.
"""

import keras
from keras import ops
from keras_ordered import backend
from keras_ordered._keras_private import BatchMomentsHook
from keras_ordered.layers._checks import check_rate as _check_rate
from keras_ordered.layers._checks import clone_initializer as _clone_initializer
from keras_ordered.layers.gated_attention import FanInUniform


class GlobalBatchNormalization(BatchMomentsHook,
                               keras.layers.BatchNormalization):
    """Batch normalisation whose training statistics span every replica.

    With `synchronized=True`, under a `tf.distribute` strategy with several
    replicas, the mean and variance are those of the global batch, computed
    in two passes (all-reduce the sums and counts for the mean, then the
    squared deviations from it for the variance): the statistics one device
    computes with `tf.nn.moments` on the whole batch, to float precision.
    Keras' own `BatchNormalization(synchronized=True)` takes the variance as
    `E[x^2] - E[x]^2`, which loses the variance to cancellation when the
    mean is large against the spread: the `tiny` PRPN trained on padded
    sentences by 2 replicas ended 2 clipped SGD steps 0.009 away from the
    1-replica weights with it, 5e-8 with these two passes
    (tests/training/test_distributed_replicas.py). With one replica, or
    `synchronized=False`, these are the statistics of the replica's own
    batch, as in `keras.layers.BatchNormalization`.

    The moving variance is updated with the unbiased batch variance
    (`n / (n - 1)` times the one that normalises the batch, `n` the values
    per channel), as PyTorch's batch norms (the official code's) do; Keras'
    takes the biased one. Only inference-mode outputs see the difference.

    Args:
        unbiased_moving_variance: bool, update the moving variance with the
            unbiased batch variance (PyTorch's arithmetic; default True).
            False: Keras' biased update.
        **kwargs: those of `keras.layers.BatchNormalization`.

    Example:

    ```python
    norm = keras_ordered.layers.parsing_conv.GlobalBatchNormalization(
        synchronized=True
    )
    y = norm(keras.random.normal((4, 7, 12)), training=True)
    ```
    """

    def __init__(self, unbiased_moving_variance=True, **kwargs):
        super().__init__(**kwargs)
        self.unbiased_moving_variance = bool(unbiased_moving_variance)

    def batch_moments(self, inputs, mask):
        """The training batch's mean and (biased) variance per channel."""
        mean, variance, _ = self._statistics(inputs, mask)
        return mean, variance

    def _statistics(self, inputs, mask):
        """Batch mean, (biased) variance and values per channel."""
        x = ops.cast(inputs, "float32")
        count = ops.cast(ops.size(x) // ops.shape(x)[self.axis], "float32")
        if mask is not None:
            mean, variance = self.keras_moments(inputs, mask)
            return mean, variance, ops.sum(ops.cast(mask, "float32"))
        if self.synchronized and backend.is_tensorflow():
            # TensorFlow fast path: the two-pass global statistics under a
            # `tf.distribute` strategy of several replicas. (On JAX, a batch
            # sharded by `keras.distribution.DataParallel` is one array, and
            # `ops.moments` below already spans it.)
            tf = backend.require_tensorflow("synchronized batch norm")
            context = tf.distribute.get_replica_context()
            if context is not None and context.num_replicas_in_sync > 1:
                return self._global_statistics(tf, context, x, count)
        # The statistics of this replica's batch (the official ones).
        mean, variance = ops.moments(inputs, axes=self._reduction_axes)
        return mean, variance, count

    def _global_statistics(self, tf, context, x, count):
        axes = self._reduction_axes
        total, count = context.all_reduce(
            tf.distribute.ReduceOp.SUM, [tf.reduce_sum(x, axis=axes), count]
        )
        mean = total / count
        deviations = tf.reduce_sum(tf.square(x - mean), axis=axes)
        variance = context.all_reduce(tf.distribute.ReduceOp.SUM, deviations)
        return mean, variance / count, count

    def call(self, inputs, training=None, mask=None):
        if not (
            training and self.trainable and self.unbiased_moving_variance
        ) or self.renorm:
            return super().call(inputs, training=training, mask=mask)
        # Keras' training branch, with PyTorch's moving-variance update.
        x = ops.cast(inputs, "float32")
        mean, variance, count = self._statistics(x, mask)
        unbiased = variance * count / ops.maximum(count - 1.0, 1.0)
        momentum = self.momentum
        self.moving_mean.assign(
            self.moving_mean * momentum + mean * (1.0 - momentum)
        )
        self.moving_variance.assign(
            self.moving_variance * momentum + unbiased * (1.0 - momentum)
        )
        outputs = ops.batch_normalization(
            x, mean, variance, axis=self.axis,
            offset=self.beta if self.center else None,
            scale=self.gamma if self.scale else None,
            epsilon=self.epsilon,
        )
        return ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config["unbiased_moving_variance"] = self.unbiased_moving_variance
        return config


@keras.saving.register_keras_serializable(package="keras_ordered")
class ParsingConv(keras.layers.Layer):
    """Parsing network of PRPN: syntactic distances of a sequence.

    As the official code builds it: one trunk over the window of the
    embeddings of `x_{i-Q} .. x_i`,

    ```
    z_i   = Drop(ReLU(BN(Conv_{Q+1}(Drop([E x_{i-Q} .. E x_i])))))   # `units` channels
    d_i   = sigmoid(w_d . z_i[:units/2] + b_d)       # distance between x_{i-1} and x_i
    d^_i  = sigmoid(w_n . z_i[units/2:] + b_n)       # estimate of d_{i+1}
    ```

    a convolution of width `Q + 1` to `units` channels (with a bias), batch
    normalisation, ReLU, and a width-1 convolution with 2 groups: the
    distance `d` reads the first half of the channels, the next-distance
    estimate `d^` (the predict network's, which cannot see `x_{i+1}`) the
    second half. Both share the trunk, so the predict network's gradient
    shapes the features the distances use (the official `parser.gate`).

    The convolution is causal: before the first position it sees
    `previous_embeddings` (the last `Q` embeddings of the previous window, to
    carry a text across truncated-BPTT windows) or, when they are not given,
    zeros (the official initial state).

    Batch normalisation normalises over batch and time with PyTorch's
    defaults (epsilon 1e-5, momentum 0.1, i.e. Keras' 0.9); in inference it
    uses the moving statistics, so every position is computed independently
    of the others. (Keras updates the moving variance with the biased batch
    variance, PyTorch with the unbiased one: a factor `n / (n - 1)` over
    `n = batch * time` values, in training only.)

    Weights (Keras layout; the official names in brackets): `window_kernel`
    `(Q + 1, features, units)` and `window_bias` `(units,)`
    [`parser.gate.1`, `[units, features, Q + 1]`], the batch norm
    [`parser.gate.2`], `output_kernel` `(units / 2, 2)` and `output_bias`
    `(2,)` [`parser.gate.5`, `[2, units / 2, 1]`]. Default initialisation:
    PyTorch's `nn.Conv1d` (`FanInUniform`, fan-in `features * (Q + 1)` and
    `units / 2`).

    Args:
        units: int, even, channels of the first convolution (the official
            `nhid`, the LSTM size 1200).
        lookback: int, `Q >= 1`, the number of previous words seen (the
            paper's 5).
        dropout: float in [0, 1), the rate of both dropouts (the official
            `idropout`, 0.5); element-wise.
        momentum: float, batch-normalisation momentum (Keras convention).
        epsilon: float, batch-normalisation epsilon.
        synchronized: bool, batch statistics over the global batch under
            a strategy with several replicas (`GlobalBatchNormalization`);
            False (the default, the official code) each replica's own.
        kernel_initializer: initializer of both convolution kernels; default
            `FanInUniform()`.
        seed: int, random seed of the dropouts and initializers.
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

    def __init__(
        self,
        units,
        lookback=5,
        dropout=0.5,
        momentum=0.9,
        epsilon=1e-5,
        kernel_initializer=None,
        seed=None,
        synchronized=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0 or units % 2:
            raise ValueError(
                "`units` must be a positive even integer (the last "
                "convolution has 2 groups of units / 2 channels). "
                f"Received: units={units}"
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
        self.synchronized = bool(synchronized)
        self.kernel_initializer = (
            FanInUniform(seed=seed) if kernel_initializer is None
            else keras.initializers.get(kernel_initializer)
        )
        self.seed = seed

        def seed_for(k):
            return None if seed is None else seed + k

        policy = self.dtype_policy
        self.input_dropout = keras.layers.Dropout(
            self.dropout, seed=seed_for(0), dtype=policy, name="input_dropout"
        )
        self.batch_norm = GlobalBatchNormalization(
            momentum=self.momentum,
            epsilon=self.epsilon,
            synchronized=self.synchronized,
            dtype=policy,
            name="batch_norm",
        )
        self.hidden_dropout = keras.layers.Dropout(
            self.dropout, seed=seed_for(1), dtype=policy, name="hidden_dropout"
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
        features = int(embedding_shape[-1])
        width = self.lookback + 1
        half = self.units // 2

        def seed_for(k):
            return None if self.seed is None else self.seed + 10 + k

        self.window_kernel = self.add_weight(
            shape=(width, features, self.units),
            name="window_kernel",
            initializer=_clone_initializer(self.kernel_initializer, 0),
        )
        self.window_bias = self.add_weight(
            shape=(self.units,),
            name="window_bias",
            initializer=FanInUniform(fan_in=width * features, seed=seed_for(1)),
        )
        self.output_kernel = self.add_weight(
            shape=(half, 2),
            name="output_kernel",
            initializer=_clone_initializer(self.kernel_initializer, 2),
        )
        self.output_bias = self.add_weight(
            shape=(2,),
            name="output_bias",
            initializer=FanInUniform(fan_in=half, seed=seed_for(3)),
        )
        self.batch_norm.build((None, None, self.units))

    def call(self, inputs, training=False):
        embeddings, previous = self._split(inputs)
        dtype = self.compute_dtype
        embeddings = ops.cast(embeddings, dtype)
        if previous is None:
            batch = ops.shape(embeddings)[0]
            previous = ops.zeros(
                (batch, self.lookback, embeddings.shape[-1]), dtype
            )
        window = ops.concatenate([ops.cast(previous, dtype), embeddings], axis=1)
        x = self.input_dropout(window, training=training)
        x = ops.conv(x, ops.cast(self.window_kernel, dtype), padding="valid")
        x = x + ops.cast(self.window_bias, dtype)
        x = ops.relu(self.batch_norm(x, training=training))
        x = self.hidden_dropout(x, training=training)
        # The grouped width-1 convolution: group g reads channels
        # g * units/2 .. (g + 1) * units/2 - 1 and writes output g.
        half = self.units // 2
        kernel = ops.cast(self.output_kernel, dtype)
        bias = ops.cast(self.output_bias, dtype)
        outputs = []
        for group in range(2):
            z = ops.matmul(x[..., group * half : (group + 1) * half],
                           kernel[:, group : group + 1])[..., 0]
            outputs.append(ops.sigmoid(ops.cast(z + bias[group], "float32")))
        return outputs

    def compute_output_shape(self, input_shape):
        embedding_shape, _ = self._split(input_shape) if isinstance(
            input_shape[0], (list, tuple)
        ) else (input_shape, None)
        return [tuple(embedding_shape[:2])] * 2

    def compute_output_spec(self, inputs, training=False):
        embeddings, _ = self._split(inputs)
        shape = tuple(embeddings.shape[:2])
        return [keras.KerasTensor(shape, "float32") for _ in range(2)]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "lookback": self.lookback,
            "dropout": self.dropout,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "synchronized": self.synchronized,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "seed": self.seed,
        }
