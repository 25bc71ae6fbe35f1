"""What every language model of the package that induces syntax shares.

A *distance model* is a `keras.Model` that, besides next-word log-probabilities,
yields one syntactic distance per position (Shen et al., 2018; 2019): the
top-down parser of `keras_ordered.parsing` turns those into trees. The
parsing evaluation, the `keras-ordered parse` command and the parsing callback
only rely on the small protocol defined here, never on a concrete model.
"""

import numpy as np

EOS = "<eos>"
UNK = "<unk>"


class SyntacticDistanceMixin:
    """Protocol of language models that induce trees.

    A model class mixing this in provides:

    - `vocabulary`: the list of words, index = token id (must contain
      `"<eos>"` and `"<unk>"`);
    - `distance_names`: names like `"layer1/forget"`, `"layer1/input"`
      (ON-LSTM) or `"parser/distance"` (PRPN), in a stable order;
    - `default_distance`: the name used when the caller picks none;
    - `_distances_for_ids(token_ids)`: given an int array `[batch, time]`
      (batch-padded with `<eos>`), returns a dict name -> float array
      `[batch, time]` computed in inference mode from a zero state.

    `sentence_distances` then implements the reading convention of the
    reference evaluations: the model reads `<eos> w_1 .. w_n <eos>` from a
    zero state and the distance of word `w_k` is the one computed at its own
    position (it measures the gap between `w_{k-1}` and `w_k`).
    """

    default_distance = None

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
