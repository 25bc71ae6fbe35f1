"""The token cross-entropy (XLA-compiled on TensorFlow, `keras.ops`
elsewhere) against NumPy and Keras' loss, on every backend."""

import keras
import numpy as np
import pytest

from harness import gradients
from harness import to_numpy
from keras_ordered.models.losses import token_cross_entropy

pytestmark = pytest.mark.backends


def _numpy_cross_entropy(targets, logits):
    """`log sum exp(z) - z_target` and its gradient `softmax - one_hot`."""
    logits = logits.astype("float64")
    top = logits.max(-1, keepdims=True)
    log_normaliser = top + np.log(np.exp(logits - top).sum(-1, keepdims=True))
    picked = np.take_along_axis(logits, targets[..., None], -1)
    one_hot = np.eye(logits.shape[-1])[targets]
    gradient = np.exp(logits - log_normaliser) - one_hot
    return (log_normaliser - picked)[..., 0], gradient


@pytest.mark.parametrize("shape", [(7,), (3, 5)])
def test_token_cross_entropy_and_its_gradient_equal_numpy(shape):
    rng = np.random.default_rng(0)
    vocabulary = 31
    # Large logits too: the log-normaliser must not overflow.
    logits = (rng.normal(size=(*shape, vocabulary)) * 30).astype("float32")
    targets = rng.integers(0, vocabulary, shape).astype("int32")
    upstream = rng.normal(size=shape).astype("float32")
    logits_variable = keras.Variable(logits)
    loss = to_numpy(token_cross_entropy(targets, logits_variable.value))
    (gradient,) = gradients(
        lambda: keras.ops.sum(
            token_cross_entropy(targets, logits_variable.value)
            * keras.ops.convert_to_tensor(upstream)),
        [logits_variable])
    expected, expected_gradient = _numpy_cross_entropy(targets, logits)
    assert loss.shape == shape and loss.dtype == np.float32
    np.testing.assert_allclose(loss, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(
        gradient, expected_gradient * upstream[..., None], atol=1e-5
    )
    # And to rounding, what Keras' sparse cross-entropy computes.
    keras_loss = keras.losses.sparse_categorical_crossentropy(
        targets, logits, from_logits=True
    )
    np.testing.assert_allclose(loss, to_numpy(keras_loss), rtol=1e-5,
                               atol=1e-4)


@pytest.mark.tensorflow_only
def test_token_cross_entropy_in_a_compiled_function_with_a_dynamic_batch():
    import tensorflow as tf

    rng = np.random.default_rng(1)
    function = tf.function(
        token_cross_entropy,
        input_signature=[
            tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec((None, None, 11), tf.float32),
        ],
    )
    for rows, steps in ((2, 3), (4, 6)):
        logits = rng.normal(size=(rows, steps, 11)).astype("float32")
        targets = rng.integers(0, 11, (rows, steps)).astype("int32")
        np.testing.assert_allclose(
            function(targets, logits),
            _numpy_cross_entropy(targets, logits)[0],
            rtol=1e-5,
        )


@pytest.mark.tensorflow_only
@pytest.mark.parametrize("bad", [-1, 11])
def test_token_cross_entropy_rejects_ids_outside_the_vocabulary(bad):
    import tensorflow as tf

    logits = np.zeros((2, 11), "float32")
    with pytest.raises(tf.errors.InvalidArgumentError, match="target id"):
        token_cross_entropy(np.array([0, bad], "int32"), logits)
