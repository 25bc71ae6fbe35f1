"""What every language model of the package that induces syntax shares.

A *distance model* is a `keras.Model` that, besides next-word log-probabilities,
yields one syntactic distance per position (Shen et al., 2018; 2019): the
top-down parser of `keras_ordered.parsing` turns those into trees. The
parsing evaluation, the `keras-ordered parse` command and the parsing callback
only rely on the small protocol defined here, never on a concrete model.
"""

import copy

import numpy as np

EOS = "<eos>"
UNK = "<unk>"


def check_vocabulary(vocabulary):
    """`(vocabulary_size, words)` of a word list or a size.

    `words` is None when only a size is given. A word list must hold
    `<eos>` and `<unk>` (a ValueError says so otherwise).
    """
    if isinstance(vocabulary, int):
        return vocabulary, None
    words = [str(w) for w in vocabulary]
    missing = {EOS, UNK} - set(words)
    if missing:
        raise ValueError(
            f"The vocabulary lacks {sorted(missing)}: the language "
            "model needs `<eos>` (sentence ends) and `<unk>`."
        )
    return len(words), words


def lookup_preset(presets, name, family):
    """A deep copy of `presets[name]`; a ValueError lists the valid names."""
    if name not in presets:
        raise ValueError(
            f"Unknown {family} preset {name!r}. Valid presets: "
            f"{', '.join(sorted(presets))}."
        )
    return copy.deepcopy(presets[name])


class SyntacticDistanceMixin:
    """Protocol of language models that induce trees.

    A model class mixing this in provides:

    - `vocabulary`: the list of words, index = token id (must contain
      `"<eos>"` and `"<unk>"`);
    - `distance_names`: names like `"layer1/forget"`, `"layer1/input"`
      (ON-LSTM) or `"parser/distance"` (PRPN), in a stable order;
    - `default_distance`: the name used when the caller picks none;
    - `syntactic_distances(token_ids)`: given an int array `[batch, time]`
      (batch-padded with `<eos>`), returns a dict name -> float array
      `[batch, time]` computed in inference mode from a zero state
      (`_distances_for_ids` calls it; override that hook for another way).

    `sentence_distances` then implements the reading convention of the
    reference evaluations: the model reads `<eos> w_1 .. w_n <eos>` from a
    zero state and the distance of word `w_k` is the one computed at its own
    position (it measures the gap between `w_{k-1}` and `w_k`).
    """

    default_distance = None

    def _set_vocabulary(self, vocabulary_size, words):
        """Keeps the word list (or `"0" .. "V-1"` when only a size is known)."""
        self.vocabulary = words if words is not None else [
            str(i) for i in range(vocabulary_size)
        ]
        self._vocabulary_given = words is not None
        self.vocabulary_size = vocabulary_size

    def _vocabulary_config(self):
        """What `get_config` stores: the word list, or only its size."""
        return self.vocabulary if self._vocabulary_given else self.vocabulary_size

    def token_ids(self, words):
        """Maps words to ids through the vocabulary, `<unk>` when unknown."""
        index = self._word_index()
        unk = index[UNK]
        return [index.get(w, unk) for w in words]

    def _word_index(self):
        cached = getattr(self, "_cached_word_index", None)
        if cached is None or len(cached) != len(self.vocabulary):
            cached = {w: i for i, w in enumerate(self.vocabulary)}
            self._cached_word_index = cached
        return cached

    def _distances_for_ids(self, token_ids):
        return self.syntactic_distances(token_ids)

    def sentence_distances(self, sentences, batch_size=64):
        """Syntactic distances of whole sentences.

        Args:
            sentences: list of sentences, each a list of (already
                normalised) word strings.
            batch_size: int, sentences per forward pass (sentences of
                similar length are grouped).

        Returns:
            dict name -> list of 1-D float arrays, one per sentence, of the
            sentence's length, in the order of `sentences`.
        """
        if not sentences:
            return {name: [] for name in self.distance_names}
        index = self._word_index()
        eos = index[EOS]
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        result = {name: [None] * len(sentences) for name in self.distance_names}
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(sentences[i]) for i in chunk) + 2
            ids = np.full((len(chunk), width), eos, dtype="int32")
            for row, i in enumerate(chunk):
                ids[row, 1 : len(sentences[i]) + 1] = self.token_ids(sentences[i])
            distances = self._distances_for_ids(ids)
            for name in self.distance_names:
                values = np.asarray(distances[name], dtype="float64")
                for row, i in enumerate(chunk):
                    n = len(sentences[i])
                    result[name][i] = values[row, 1 : n + 1]
        return result


class PresetMixin:
    """`from_preset` and `from_config` of the functional language models.

    A model class sets `get_preset` (a function name -> preset dict with a
    `model` entry of constructor arguments) and returns every constructor
    argument from `get_config`.
    """

    get_preset = None

    @classmethod
    def from_preset(cls, preset, vocabulary, **overrides):
        """Builds the model of a named preset.

        Args:
            preset: str, a preset name (see the model's `PRESETS`).
            vocabulary: list of str, or the vocabulary size.
            **overrides: model arguments replacing the preset's.
        """
        config = dict(cls.get_preset(preset)["model"])
        config.update(overrides)
        return cls(vocabulary=vocabulary, **config)

    @classmethod
    def from_config(cls, config):
        return cls(**config)
