"""Noise-contrastive estimation as the official TD-TreeLSTM NCE layer does it.

For a hidden state `h` and its target word `w`, with `k` noise words
`w~_1 .. w~_k` drawn from the unigram distribution raised to `power`
(0.75) and renormalised, `P_n`:

```
P^(w | h) = exp(W_o[w] . h) / Z           (no output bias; ln Z learned, from 9)
P_d(w)    = P^(w | h) / (P^(w | h) + k P_n(w))
loss      = -(log P_d(w) + sum_j log(1 - P_d(w~_j)))
```

Evaluation scores with the exact normalised softmax `exp(W_o[w] . h) /
sum_v exp(W_o[v] . h)` (without `Z`).

The noise words are drawn per target word, as the official code does
(`tf.random.fixed_unigram_candidate_sampler` draws one set shared by the
whole batch): by inverting the noise distribution's cumulative sum
(`keras.ops.searchsorted`), which runs under XLA.

Written with `keras.ops`: the same on every Keras backend (TensorFlow,
JAX, PyTorch).

Reference:
    Gutmann, Hyvarinen. "Noise-contrastive estimation". AISTATS 2010.
    Mnih, Teh. "A fast and simple algorithm for training neural
    probabilistic language models". ICML 2012.
"""

import math

import keras
import numpy as np
from keras import ops


def noise_distribution(counts, power=0.75):
    """`P_n`: unigram counts raised to `power`, normalised (float64 NumPy).

    Words with count 0 (`<pad>`, `<root>`) are never drawn.
    """
    counts = np.asarray(counts, dtype="float64")
    if counts.ndim != 1 or (counts < 0).any() or counts.sum() <= 0:
        raise ValueError(
            "The unigram counts must be a 1-D array of non-negative numbers "
            "with a positive sum (one count per vocabulary word)."
        )
    weights = counts ** power
    weights[counts == 0] = 0.0
    return weights / weights.sum()


def sample_noise(noise_cdf, shape, seed=None):
    """Draws noise word ids of `shape` from the distribution of `noise_cdf`.

    Args:
        noise_cdf: float32 `(vocabulary,)`, the cumulative noise probabilities.
        shape: the ids' shape, e.g. `(N, k)`.
        seed: a `keras.random.SeedGenerator`, an int, or None.

    Returns:
        int32 ids of `shape`.

    Example:

    ```python
    from keras_ordered.models.tdtreelstm import nce
    probs = nce.noise_distribution([0, 10, 0, 100])
    ids = nce.sample_noise(np.cumsum(probs).astype("float32"), (4, 20),
                           seed=1)  # words 1 and 3 only
    ```
    """
    uniform = keras.random.uniform(shape, dtype="float32", seed=seed)
    flat = ops.reshape(uniform, (-1,)) * noise_cdf[-1]
    ids = ops.searchsorted(noise_cdf, flat, side="right")
    ids = ops.minimum(ids, ops.shape(noise_cdf)[0] - 1)
    return ops.reshape(ops.cast(ids, "int32"), shape)


def nce_loss(hidden, targets, noise_ids, output_embedding, log_z,
             noise_log_probs):
    """The NCE loss of each target word (float32 `(N,)`).

    Args:
        hidden: float `(N, units)`.
        targets: int `(N,)`.
        noise_ids: int `(N, k)`, noise words of each target.
        output_embedding: float `(vocabulary, units)`, `W_o`.
        log_z: float scalar, ln Z.
        noise_log_probs: float32 `(vocabulary,)`, `ln P_n`.

    Example:

    ```python
    from keras_ordered.models.tdtreelstm import nce
    rng = np.random.default_rng(0)
    probs = nce.noise_distribution([0, 10, 0, 100, 5])
    hidden = rng.normal(size=(2, 3)).astype("float32")
    output_embedding = rng.normal(size=(5, 3)).astype("float32")
    noise = nce.sample_noise(np.cumsum(probs).astype("float32"), (2, 20))
    loss = nce.nce_loss(hidden, np.array([3, 1]), noise, output_embedding,
                        9.0, np.log(np.maximum(probs, 1e-30)).astype("float32"))
    loss.shape  # (2,)
    ```
    """
    hidden = ops.cast(hidden, "float32")
    weights = ops.cast(output_embedding, "float32")
    k = ops.shape(noise_ids)[-1]
    log_k = ops.log(ops.cast(k, "float32"))
    log_z = ops.cast(log_z, "float32")
    positive = ops.sum(hidden * ops.take(weights, targets, axis=0), -1) - log_z
    negative = ops.einsum("nh,nkh->nk", hidden,
                          ops.take(weights, noise_ids, axis=0)) - log_z
    noise_positive = log_k + ops.take(noise_log_probs, targets, axis=0)
    noise_negative = log_k + ops.take(noise_log_probs, noise_ids, axis=0)
    log_p_true = positive - ops.logsumexp(
        ops.stack([positive, noise_positive], -1), -1)
    log_p_noise = noise_negative - ops.logsumexp(
        ops.stack([negative, noise_negative], -1), -1)
    return -(log_p_true + ops.sum(log_p_noise, -1))


def nce_loss_numpy(hidden, targets, noise_ids, output_embedding, log_z,
                   noise_probs):
    """The same loss, written out in NumPy from the official equations
    (for tests; float64)."""
    hidden = np.asarray(hidden, "float64")
    weights = np.asarray(output_embedding, "float64")
    k = np.asarray(noise_ids).shape[-1]
    losses = []
    for n in range(hidden.shape[0]):
        p_hat = math.exp(weights[targets[n]] @ hidden[n]) / math.exp(log_z)
        p_d = p_hat / (p_hat + k * noise_probs[targets[n]])
        total = math.log(p_d)
        for j in range(k):
            w = noise_ids[n][j]
            p_hat = math.exp(weights[w] @ hidden[n]) / math.exp(log_z)
            total += math.log(1 - p_hat / (p_hat + k * noise_probs[w]))
        losses.append(-total)
    return np.array(losses)
