"""What the official-weights converters share (NumPy only)."""

import numpy as np


def get_array(state_dict, name, family):
    """`state_dict[name]` as a float32 array; a clear error when missing.

    Args:
        state_dict: mapping of official parameter names to arrays.
        name: str, the parameter wanted.
        family: str, the model family named in the error ("ON-LSTM").
    """
    if name not in state_dict:
        raise ValueError(
            f"The state dict has no {name!r}: is it an official {family} "
            f"language-model checkpoint? Keys found: {sorted(state_dict)[:8]}..."
        )
    return np.asarray(state_dict[name], dtype="float32")


def model_vocabulary(vocabulary, vocabulary_size):
    """The `vocabulary` argument of a model built from a checkpoint.

    Args:
        vocabulary: list of words in the checkpoint's id order, or None.
        vocabulary_size: int, the checkpoint's number of words.

    Returns:
        The word list, or the size when no words are given.

    Raises:
        ValueError: the word list's length is not the checkpoint's.
    """
    if vocabulary is None:
        return vocabulary_size
    if len(vocabulary) != vocabulary_size:
        raise ValueError(
            f"The vocabulary has {len(vocabulary)} words, the checkpoint "
            f"{vocabulary_size}."
        )
    return list(vocabulary)
