"""Optimizers with the arithmetic of the official PyTorch code.

PRPN's official code trains with `torch.optim.Adam(lr, betas=(0, 0.999),
eps=1e-9, weight_decay=1e-6)`. Keras' `Adam` differs from it in two ways
that change what PRPN learns (its training is chaotic: any change of
arithmetic sends a run down another path, and some paths end with trees
no better than random):

- weight decay: PyTorch adds `weight_decay * w` to the gradient before the
  moments (coupled L2 regularisation, so the decay is normalised by the
  second moment like the gradient); Keras' `weight_decay` is decoupled
  (`w -= lr * weight_decay * w`, AdamW-style). With `beta_1 = 0` and a
  near-zero gradient, the coupled term alone moves a weight by up to `lr`
  a step; the decoupled one by `lr * 1e-6 * w`.
- epsilon: PyTorch divides by `sqrt(v / (1 - beta_2^t)) + eps`, Keras by
  `sqrt(v) + eps` and folds the bias correction into the step size.

`TorchAdam` is Adam as PyTorch computes it; the PRPN presets train with it
(`optimizer: "adam"`). Keras' own Adam stays available as a documented
departure (`optimizer: "keras_adam"`, or the recipes' `--adam keras`).
"""

import math

import keras
from keras import ops

from keras_ordered import backend


@keras.saving.register_keras_serializable(package="keras_ordered")
class TorchAdam(keras.optimizers.Optimizer):
    """Adam with coupled L2 weight decay, as `torch.optim.Adam` computes it.

    Per variable `w` with gradient `g` (after any clipping), at step `t`:

    ```
    g   = g + l2 * w                           # coupled weight decay
    m   = beta_1 * m + (1 - beta_1) * g
    v   = beta_2 * v + (1 - beta_2) * g^2
    w  -= lr / (1 - beta_1^t) * m / (sqrt(v) / sqrt(1 - beta_2^t) + epsilon)
    ```

    This is PyTorch's `Adam(..., weight_decay=l2)` (PyTorch 1.x and 2.x);
    PyTorch 0.3, with which the papers' code was written, added `epsilon`
    before the bias correction, as Keras does: at PRPN's `epsilon = 1e-9`
    the two agree to float32 rounding except where `|g|` is itself about
    `1e-9`.

    Args:
        learning_rate: float or a schedule, the step size `lr`.
        beta_1: float, decay of the first moment (PRPN: 0, no momentum).
        beta_2: float, decay of the second moment.
        epsilon: float, added to the bias-corrected root of `v`.
        l2: float, coupled weight decay (PyTorch's `weight_decay`).
        name: string, the optimizer's name.
        **kwargs: the other arguments of `keras.optimizers.Optimizer`
            (`clipnorm`, `global_clipnorm`, ...). Its decoupled
            `weight_decay` is refused: that is Keras' `Adam`/`AdamW`.

    Example:

    ```python
    optimizer = keras_ordered.training.optimizers.TorchAdam(
        0.003, beta_1=0.0, epsilon=1e-9, l2=1e-6
    )
    w = keras.Variable([1.0, -2.0])
    optimizer.apply_gradients([(keras.ops.convert_to_tensor([0.5, 0.0]), w)])
    # a sign step of size lr, the zero gradient's taken by the L2 term:
    # w is about [0.997, -1.997]
    ```

    Reference:
        Kingma and Ba, "Adam: A Method for Stochastic Optimization", ICLR
        2015; PyTorch's `torch.optim.Adam` documentation (the algorithm
        with `weight_decay`).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-8, l2=0.0, name="torch_adam", **kwargs):
        if kwargs.get("weight_decay"):
            raise ValueError(
                "TorchAdam's weight decay is the coupled `l2` argument (as "
                "PyTorch's Adam(weight_decay=...)); for decoupled decay use "
                "keras.optimizers.AdamW."
            )
        kwargs.pop("weight_decay", None)
        for label, value in (("beta_1", beta_1), ("beta_2", beta_2)):
            if not 0.0 <= value < 1.0:
                raise ValueError(
                    f"`{label}` must be in [0, 1). Received: {label}={value}"
                )
        if epsilon < 0 or l2 < 0:
            raise ValueError(
                "`epsilon` and `l2` must be >= 0. Received: "
                f"epsilon={epsilon}, l2={l2}"
            )
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.l2 = float(l2)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"]
        )

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        gradient = ops.cast(gradient, dtype)
        if self.l2:
            gradient = gradient + ops.cast(self.l2, dtype) * variable
        correction_1 = self._bias_correction(self.beta_1)
        correction_2 = self._bias_correction(self.beta_2)
        step_size = ops.cast(learning_rate, correction_1.dtype) / correction_1
        root_2 = ops.cast(ops.sqrt(correction_2), dtype)
        index = self._get_variable_index(variable)
        m = self._momentums[index]
        v = self._velocities[index]
        self.assign(m, self.beta_1 * m + (1.0 - self.beta_1) * gradient)
        self.assign(
            v, self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient)
        )
        denominator = ops.sqrt(v) / root_2 + self.epsilon
        self.assign_sub(variable, ops.cast(step_size, dtype) * (m / denominator))

    def _bias_correction(self, beta):
        """`1 - beta^t` at this step, as PyTorch computes it in Python
        floats: in float64 (1 - 0.999 in float32 is 1.3e-5 off), or where
        the backend has no float64 (JAX by default) as `-expm1(t log
        beta)` with the logarithm taken in float64, which float32 rounds
        only once (a relative error of about 1e-7)."""
        if backend.has_float64():
            step = ops.cast(self.iterations + 1, "float64")
            return 1.0 - ops.power(ops.cast(beta, "float64"), step)
        if beta == 0.0:
            return ops.ones((), "float32")
        step = ops.cast(self.iterations + 1, "float32")
        return -ops.expm1(step * math.log(beta))

    def get_config(self):
        config = super().get_config()
        config.update({
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "l2": self.l2,
        })
        return config


def make_optimizer(training):
    """The optimizer of a run's training settings.

    Args:
        training: `keras_ordered.training.config.LanguageModelTraining`:
            `optimizer`, `learning_rate`, `weight_decay`, and Adam's
            `beta_1`, `beta_2`, `epsilon` (None: the optimizer's own, 1e-8
            for `adam` as PyTorch, 1e-7 for `keras_adam`).

    Returns:
        `TorchAdam` (`"adam"`, the official arithmetic), `keras.optimizers.
        Adam` (`"keras_adam"`, a documented departure) or
        `keras.optimizers.SGD` (`"sgd"`).
    """
    name, rate = training.optimizer, training.learning_rate
    decay = training.weight_decay or None
    if name == "sgd":
        return keras.optimizers.SGD(rate, weight_decay=decay)
    betas = {"beta_1": training.beta_1, "beta_2": training.beta_2}
    if training.epsilon is not None:
        betas["epsilon"] = training.epsilon
    if name == "adam":
        # The official arithmetic (PyTorch's Adam, coupled L2 decay).
        return TorchAdam(rate, l2=decay or 0.0, **betas)
    if name == "keras_adam":
        # A documented departure: Keras' Adam (decoupled decay, epsilon
        # before the bias correction); see keras_ordered.training.optimizers.
        return keras.optimizers.Adam(rate, weight_decay=decay, **betas)
    raise ValueError(
        f"Unknown optimizer {name!r}: use 'sgd', 'adam' or 'keras_adam'."
    )
