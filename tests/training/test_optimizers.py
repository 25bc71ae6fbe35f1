"""TorchAdam against an independent NumPy computation of PyTorch's Adam;
the batch norms' PyTorch moving-variance update."""

import dataclasses

import keras
import numpy as np
import pytest

from keras_ordered.layers.parsing_conv import GlobalBatchNormalization
from keras_ordered.training.optimizers import TorchAdam
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.training.optimizers import make_optimizer

# The optimizers' arithmetic on every backend (JAX without float64 takes
# TorchAdam's float32 bias corrections).
pytestmark = [pytest.mark.backends, pytest.mark.trains]


def numpy_torch_adam(w, gradients, lr, beta_1, beta_2, eps, l2):
    """torch.optim.Adam(weight_decay=l2), step by step, in float64."""
    w = w.astype("float64")
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(gradients, start=1):
        g = g + l2 * w
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g * g
        denominator = np.sqrt(v) / np.sqrt(1 - beta_2 ** t) + eps
        w = w - lr / (1 - beta_1 ** t) * m / denominator
    return w


@pytest.mark.parametrize("beta_1, l2", [(0.0, 1e-6), (0.9, 0.0), (0.5, 0.1)])
def test_torch_adam_equals_pytorch_arithmetic(beta_1, l2):
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(5, 3)).astype("float32")
    # Gradients of all sizes, exact zeros included (there the coupled L2
    # term alone decides the step).
    gradients = [rng.normal(size=w0.shape) * 10.0 ** rng.integers(-9, 1, w0.shape)
                 for _ in range(6)]
    for g in gradients:
        g[0, 0] = 0.0
    gradients = [g.astype("float32") for g in gradients]
    optimizer = TorchAdam(0.003, beta_1=beta_1, beta_2=0.999, epsilon=1e-9,
                          l2=l2)
    w = keras.Variable(w0)
    for g in gradients:
        optimizer.apply_gradients([(keras.ops.convert_to_tensor(g), w)])
    expected = numpy_torch_adam(w0, [g.astype("float64") for g in gradients],
                                0.003, beta_1, 0.999, 1e-9, l2)
    np.testing.assert_allclose(np.asarray(w), expected, rtol=1e-6, atol=1e-7)
    if l2:
        # Keras' Adam (decoupled decay) is not this arithmetic.
        keras_adam = keras.optimizers.Adam(0.003, beta_1=beta_1, epsilon=1e-9,
                                           weight_decay=l2)
        w_keras = keras.Variable(w0)
        for g in gradients:
            keras_adam.apply_gradients([(keras.ops.convert_to_tensor(g),
                                         w_keras)])
        assert np.max(np.abs(np.asarray(w_keras) - expected)) > 1e-4


def test_torch_adam_config_round_trip_and_validation():
    optimizer = TorchAdam(0.01, beta_1=0.0, epsilon=1e-9, l2=1e-6,
                          global_clipnorm=1.0)
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert isinstance(clone, TorchAdam)
    assert (clone.beta_1, clone.epsilon, clone.l2, clone.global_clipnorm) == (
        0.0, 1e-9, 1e-6, 1.0)
    with pytest.raises(ValueError, match="coupled `l2`"):
        TorchAdam(weight_decay=0.1)
    with pytest.raises(ValueError, match="beta_1"):
        TorchAdam(beta_1=1.0)
    with pytest.raises(ValueError, match="l2"):
        TorchAdam(l2=-1.0)


def test_make_optimizer_gives_the_official_adam_unless_asked_otherwise():
    training = LanguageModelTraining(
        optimizer="adam", learning_rate=0.003, batch_size=2, epochs=1,
        bptt=5, beta_1=0.0, epsilon=1e-9, weight_decay=1e-6)
    official = make_optimizer(training)
    assert isinstance(official, TorchAdam) and official.l2 == 1e-6
    assert (official.beta_1, official.epsilon) == (0.0, 1e-9)
    departure = make_optimizer(
        dataclasses.replace(training, optimizer="keras_adam"))
    assert isinstance(departure, keras.optimizers.Adam)
    assert not isinstance(departure, keras.optimizers.AdamW)
    assert departure.weight_decay == 1e-6
    # Without an epsilon, each optimizer keeps its own: PyTorch's 1e-8 for
    # the official arithmetic, Keras' 1e-7 for the departure.
    plain = dataclasses.replace(training, epsilon=None)
    assert make_optimizer(plain).epsilon == 1e-8
    assert make_optimizer(dataclasses.replace(
        plain, optimizer="keras_adam")).epsilon == 1e-7
    sgd = make_optimizer(dataclasses.replace(training, optimizer="sgd",
                                             weight_decay=0.0))
    assert isinstance(sgd, keras.optimizers.SGD) and sgd.weight_decay is None
    with pytest.raises(ValueError, match="keras_adam"):
        LanguageModelTraining.from_dict(
            {**training.to_dict(), "optimizer": "adamw"})


@pytest.mark.parametrize("unbiased", [True, False])
def test_batch_norm_moving_variance_as_pytorch(unbiased):
    x = np.random.default_rng(1).normal(2.0, 3.0, (4, 7, 6)).astype("float32")
    norm = GlobalBatchNormalization(momentum=0.9, epsilon=1e-5,
                                    unbiased_moving_variance=unbiased)
    y = norm(x, training=True)
    flat = x.reshape(-1, 6).astype("float64")
    variance = flat.var(0, ddof=1 if unbiased else 0)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(norm.moving_variance),
                               0.9 + 0.1 * variance, rtol=1e-6)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(norm.moving_mean), 0.1 * flat.mean(0),
                               rtol=1e-5)
    # The batch itself is normalised with the biased variance, either way.
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(y).reshape(-1, 6),
        (flat - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5), atol=1e-5)
    clone = GlobalBatchNormalization.from_config(norm.get_config())
    assert clone.unbiased_moving_variance is unbiased


def test_a_model_compiled_with_torch_adam_loads_compiled(tmp_path):
    from keras_ordered import load_model
    from keras_ordered.models import PRPNLanguageModel

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat"]
    model = PRPNLanguageModel.from_preset("tiny", vocabulary)
    model.compile(optimizer=TorchAdam(0.003, beta_1=0.0, l2=1e-6))
    path = str(tmp_path / "model.keras")
    model.save(path)
    restored = load_model(path)
    assert isinstance(restored.optimizer, TorchAdam)
    assert restored.optimizer.l2 == 1e-6
