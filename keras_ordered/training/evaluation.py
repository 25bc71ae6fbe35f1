"""The perplexity of a language model on a text, as the recipes measure it.

`evaluate_stream` reads a token-id text as `batch_size` streams of BPTT
windows from zero state (or sentence by sentence) and returns the mean
token loss; `perplexity` turns that loss into a perplexity. The
language-model task (`keras_ordered.training.tasks.language_model`), the
model cards (`saved_models/make_card.py`) and the benchmarks use them.
"""

import math

from keras_ordered import backend
from keras_ordered.training.batching import BPTTBatches
from keras_ordered.training.batching import SentenceBatches
from keras_ordered.training.callbacks import StopOnCtrlC
from keras_ordered.training.distributed import model_scope


def evaluate_stream(model, ids, batch_size, bptt, max_steps=None, verbose=0,
                    sentence_level=False, eos=0, bos=None, loop=None):
    """Mean token loss of a text read as `batch_size` streams from zero state
    (or, with `sentence_level`, sentence by sentence from zero states).

    Reconfigures the model's evaluation state for `batch_size` (the paper
    evaluates with batch 10 on validation and 1 on test). With `loop` (a
    `CustomTrainingLoop`, multi-worker runs) it evaluates through it
    instead of `model.evaluate`.

    Args:
        model: a compiled language model of the package (ON-LSTM, PRPN,
            LSTM), with `configure_bptt` and `clip_norm`.
        ids: the text, a 1-D array of token ids.
        batch_size: int, the number of streams (or sentences per batch).
        bptt: int, the window length (ignored with `sentence_level`).
        max_steps: int or None, evaluate the first `max_steps` batches
            only (None: the whole text).
        verbose: int, `model.evaluate`'s verbosity.
        sentence_level: bool, read sentence by sentence from zero states.
        eos: int, the id that ends a sentence (with `sentence_level`).
        bos: int or None, the id prepended to each sentence.
        loop: a `CustomTrainingLoop` to evaluate through, or None.

    Returns:
        The mean token loss, a Python float.

    Example:

    ```python
    import numpy as np
    from keras_ordered.models import LSTMLanguageModel
    from keras_ordered.training.evaluation import evaluate_stream
    from keras_ordered.training.evaluation import perplexity

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(18)]
    model = LSTMLanguageModel.from_preset("tiny", vocabulary)
    model.compile()
    ids = np.random.default_rng(0).integers(0, 20, size=200)
    loss = evaluate_stream(model, ids, batch_size=2, bptt=10)
    print(perplexity(loss))  # near 20 for an untrained model
    ```
    """
    train_vars = getattr(model, "_bptt", None)
    clip = model.clip_norm
    train_batch = None
    if train_vars is not None and train_vars.train is not None:
        train_batch = int(train_vars.train[0].shape[0]) * (
            backend.replicas_in_sync()
        )
    with model_scope(model):
        model.configure_bptt(train_batch, batch_size, clip_norm=clip)
    model.test_function = None  # re-trace with the new state variables
    if sentence_level:
        batches = SentenceBatches(ids, batch_size, eos, shuffle=False,
                                  bos_id=bos)
    else:
        batches = BPTTBatches(ids, batch_size, bptt, variable_length=False)
    dataset = batches.dataset(0, steps_per_epoch=max_steps)
    if loop is not None:
        return float(loop.evaluate(dataset)["loss"])
    logs = model.evaluate(dataset, verbose=verbose, return_dict=True,
                          callbacks=[StopOnCtrlC()])
    return float(logs["loss"])


def perplexity(loss):
    """`exp(loss)`, capped to stay finite for very bad models.

    Args:
        loss: float, a mean token loss in nats.

    Returns:
        The perplexity, a Python float (at most `exp(50)`).

    Example:

    ```python
    from keras_ordered.training.evaluation import perplexity

    print(perplexity(0.0), perplexity(1e9))  # 1.0 and exp(50)
    ```
    """
    return float(math.exp(min(loss, 50.0)))
