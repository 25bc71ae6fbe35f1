"""Regularisers of AWD-style language models: locked (variational) dropout,
embedding dropout, and activation regularisation (AR / TAR).

Reference:
    Merity, Keskar, Socher. "Regularizing and Optimizing LSTM Language
    Models". ICLR 2018. Gal & Ghahramani, "A Theoretically Grounded
    Application of Dropout in Recurrent Neural Networks", NeurIPS 2016.
"""

import keras
from keras import ops

from keras_ordered.layers._checks import check_rate


@keras.saving.register_keras_serializable(package="keras_ordered")
class LockedDropout(keras.layers.Layer):
    """Dropout with one mask per sequence, shared over time.

    For inputs `(batch, time, features)` a single Bernoulli mask of shape
    `(batch, 1, features)` is drawn per call and applied at every time step
    (kept units scaled by `1 / (1 - rate)`); at inference the layer is the
    identity. This is `keras.layers.Dropout(rate, noise_shape=(None, 1, C))`
    with a name and a check of the input rank.

    Args:
        rate: float in [0, 1), the fraction of units to drop.
        seed: int, random seed.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: a 3D tensor `(batch, time, features)`.
        training: Python boolean, whether to drop.

    Example:

    ```python
    x = keras.random.normal((4, 10, 8))
    y = keras_ordered.layers.LockedDropout(0.5)(x, training=True)
    # the same units are zero at every time step of a sequence
    ```

    Reference:
        Gal & Ghahramani, NeurIPS 2016; Merity et al., ICLR 2018.
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = check_rate("rate", rate)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.supports_masking = True

    def call(self, inputs, training=False):
        if len(inputs.shape) != 3:
            raise ValueError(
                "LockedDropout expects inputs of shape (batch, time, "
                f"features). Received shape: {inputs.shape}"
            )
        if not training or self.rate == 0.0:
            return inputs
        shape = ops.shape(inputs)
        return keras.random.dropout(
            inputs,
            self.rate,
            noise_shape=(shape[0], 1, shape[2]),
            seed=self.seed_generator,
        )

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


@keras.saving.register_keras_serializable(package="keras_ordered")
class EmbeddingDropout(keras.layers.Layer):
    """Embedding that drops whole words, and doubles as a tied softmax layer.

    Forward (`reverse=False`): in training, each row (word type) of the
    embedding matrix is zeroed with probability `rate` (one mask per call,
    i.e. per batch) and the kept rows are scaled by `1 / (1 - rate)`: every
    occurrence of a dropped word in the batch becomes a zero vector. At
    inference it is a plain `Embedding`.

    Reverse (`reverse=True`): logits `x E^T + b` over the vocabulary, with
    the same matrix `E` (weight tying, Press & Wolf 2017; Inan et al. 2017)
    and an output bias `b` when `use_output_bias=True`. No dropout.
    With `reverse_gradient_dtype` set, the two products of the reverse
    direction's backward pass (`dz E` for the inputs, `dz^T x` for `E`) run
    in that dtype, the forward in the layer's own: the language models put
    the layer in float32 under a mixed policy (float32 logits) and its
    gradient products in the policy's bfloat16, like the rest of their
    matrix work.

    Args:
        input_dim: int, vocabulary size.
        output_dim: int, embedding size.
        rate: float in [0, 1), the fraction of word types to drop.
        use_output_bias: bool, whether the reverse (softmax) direction has a
            bias over the vocabulary.
        embeddings_initializer: initializer of the matrix.
        seed: int, random seed.
        reverse_gradient_dtype: None (default: the layer's compute dtype)
            or a float dtype name, the dtype of the reverse direction's
            gradient products (the gradients themselves are returned in the
            dtypes of the inputs and the matrix).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: integer token ids, or, with `reverse=True`, float vectors
            `(..., output_dim)`.
        training: Python boolean, whether to drop.
        reverse: Python boolean, project vectors back to vocabulary logits.

    Example:

    ```python
    layer = keras_ordered.layers.EmbeddingDropout(10000, 400, rate=0.1)
    vectors = layer(np.array([[1, 2, 3]]), training=True)  # (1, 3, 400)
    logits = layer(vectors, reverse=True)  # (1, 3, 10000)
    ```

    Reference:
        Gal & Ghahramani, NeurIPS 2016 (section 4.2); Merity et al., 2018.
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        rate=0.0,
        use_output_bias=True,
        embeddings_initializer="uniform",
        seed=None,
        reverse_gradient_dtype=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if reverse_gradient_dtype is not None:
            reverse_gradient_dtype = keras.backend.standardize_dtype(
                reverse_gradient_dtype
            )
            if "float" not in reverse_gradient_dtype:
                raise ValueError(
                    "`reverse_gradient_dtype` must be a float dtype or None. "
                    f"Received: {reverse_gradient_dtype}"
                )
        self.reverse_gradient_dtype = reverse_gradient_dtype
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer
        )
        self.rate = check_rate("rate", rate)
        self.use_output_bias = bool(use_output_bias)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim),
            name="embeddings",
            initializer=self.embeddings_initializer,
        )
        if self.use_output_bias:
            self.output_bias = self.add_weight(
                shape=(self.input_dim,),
                name="output_bias",
                initializer="zeros",
            )

    def call(self, inputs, training=False, reverse=False):
        if reverse:
            matrix = ops.cast(self.embeddings, self.compute_dtype)
            if self.reverse_gradient_dtype in (None, self.compute_dtype):
                logits = ops.matmul(inputs, ops.transpose(matrix))
            else:
                logits = _projection(
                    inputs, matrix, self.reverse_gradient_dtype
                )
            if self.use_output_bias:
                logits = logits + ops.cast(self.output_bias, self.compute_dtype)
            return logits
        if inputs.dtype not in ("int32", "int64"):
            inputs = ops.cast(inputs, "int32")
        if not training or self.rate == 0.0:
            return ops.take(
                ops.cast(self.embeddings, self.compute_dtype), inputs, axis=0
            )
        keep = 1.0 - self.rate
        rows = keras.random.uniform((self.input_dim, 1), seed=self.seed_generator)
        mask = ops.cast(rows < keep, self.compute_dtype) / keep
        matrix = ops.cast(self.embeddings, self.compute_dtype) * mask
        return ops.take(matrix, inputs, axis=0)

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return (*input_shape[:-1], self.input_dim)
        return (*input_shape, self.output_dim)

    def compute_output_spec(self, inputs, training=False, reverse=False):
        shape = self.compute_output_shape(inputs.shape, reverse=reverse)
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "rate": self.rate,
            "use_output_bias": self.use_output_bias,
            "embeddings_initializer": keras.initializers.serialize(
                self.embeddings_initializer
            ),
            "seed": self.seed,
            "reverse_gradient_dtype": self.reverse_gradient_dtype,
        }


def _projection(inputs, matrix, gradient_dtype):
    """`inputs @ matrix^T`, its two backward products in `gradient_dtype`."""

    @ops.custom_gradient
    def project(inputs, matrix):
        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            rows = ops.reshape(
                ops.cast(upstream, gradient_dtype), (-1, matrix.shape[0])
            )
            low_matrix = ops.cast(matrix, gradient_dtype)
            low_inputs = ops.reshape(
                ops.cast(inputs, gradient_dtype), (-1, matrix.shape[1])
            )
            d_inputs = ops.reshape(
                ops.matmul(rows, low_matrix), ops.shape(inputs)
            )
            d_matrix = ops.matmul(ops.transpose(rows), low_inputs)
            return (
                ops.cast(d_inputs, inputs.dtype),
                ops.cast(d_matrix, matrix.dtype),
            )

        return ops.matmul(inputs, ops.transpose(matrix)), grad

    return project(inputs, matrix)


@keras.saving.register_keras_serializable(package="keras_ordered")
class ActivationRegularization(keras.layers.Layer):
    """Activation regularisation (AR) and temporal AR (TAR) of an RNN output.

    Adds to the model's losses, in training only:

    - AR: `alpha * mean(output ** 2)`, on the dropped output of the last
      RNN layer (`ar_input="dropped"`, AWD-LSTM) or on its raw output
      (`ar_input="raw"`, what the official ON-LSTM code does);
    - TAR: `beta * mean((raw_output[:, 1:] - raw_output[:, :-1]) ** 2)`, on
      its raw (undropped) output: slowly changing hidden states.

    Returns `dropped_output` unchanged.

    Args:
        alpha: float, AR weight (the paper: 2).
        beta: float, TAR weight (the paper: 1).
        ar_input: str, `"dropped"` or `"raw"`: the output AR penalises.
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[raw_output, dropped_output]`, each
            `(batch, time, features)`.
        training: Python boolean; the penalties are only added in training.

    Example:

    ```python
    raw = keras.random.normal((2, 5, 8))
    reg = keras_ordered.layers.ActivationRegularization(alpha=2.0, beta=1.0)
    out = reg([raw, raw], training=True)  # reg.losses holds AR + TAR
    ```

    Reference:
        Merity et al., "Revisiting Activation Regularization for Language
        RNNs", 2017; "Regularizing and Optimizing LSTM Language Models", 2018.
    """

    def __init__(self, alpha=2.0, beta=1.0, ar_input="dropped", **kwargs):
        super().__init__(**kwargs)
        if ar_input not in ("dropped", "raw"):
            raise ValueError(
                "`ar_input` must be 'dropped' (AWD-LSTM) or 'raw' (ON-LSTM). "
                f"Received: {ar_input!r}"
            )
        self.ar_input = ar_input
        if alpha < 0 or beta < 0:
            raise ValueError(
                "`alpha` and `beta` must be >= 0. "
                f"Received: alpha={alpha}, beta={beta}"
            )
        self.alpha = float(alpha)
        self.beta = float(beta)

    def call(self, inputs, training=False):
        raw_output, dropped_output = inputs
        if training and (self.alpha or self.beta):
            penalty = ops.zeros((), "float32")
            if self.alpha:
                penalised = raw_output if self.ar_input == "raw" else (
                    dropped_output
                )
                penalty = self.alpha * ops.mean(
                    ops.square(ops.cast(penalised, "float32"))
                )
            if self.beta:
                raw = ops.cast(raw_output, "float32")
                penalty = penalty + self.beta * ops.mean(
                    ops.square(raw[:, 1:] - raw[:, :-1])
                )
            self.add_loss(penalty)
        return dropped_output

    def compute_output_shape(self, input_shape):
        return input_shape[1]

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha, "beta": self.beta,
                "ar_input": self.ar_input}
