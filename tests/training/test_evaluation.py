"""`keras_ordered.training.evaluation`: the recipes' perplexity against a
NumPy cross-entropy of the model's own logits."""

import math

import keras
import numpy as np
import pytest

from keras_ordered.training.evaluation import evaluate_stream
from keras_ordered.training.evaluation import perplexity
from tests.harness import LM_VOCAB
from tests.harness import tiny_onlstm_lm

pytestmark = pytest.mark.backends


def _numpy_token_loss(logits, targets):
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)
    return float(-picked.mean())


def test_evaluate_stream_is_the_mean_token_loss_from_zero_state():
    model = tiny_onlstm_lm()
    model.compile()
    ids = np.random.default_rng(3).integers(
        0, len(LM_VOCAB), size=13).astype("int32")
    # One stream, one window of 12 tokens: the whole text from zero state.
    loss = evaluate_stream(model, ids, batch_size=1, bptt=12)
    outputs = model([ids[None, :-1], *model.initial_state(1)],
                    training=False)
    logits, _ = model.split_outputs(outputs)
    expected = _numpy_token_loss(keras.ops.convert_to_numpy(logits),
                                 ids[None, 1:])
    assert loss == pytest.approx(expected, rel=1e-4)
    assert perplexity(loss) == pytest.approx(math.exp(expected), rel=1e-4)


def test_perplexity_is_exp_of_the_loss_capped_to_stay_finite():
    assert perplexity(0.0) == 1.0
    assert perplexity(math.log(120.0)) == pytest.approx(120.0)
    assert perplexity(1e9) == pytest.approx(math.exp(50.0))
