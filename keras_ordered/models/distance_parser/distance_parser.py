"""The supervised syntactic-distance parser of Shen et al. (2018)."""

import keras
import numpy as np
from keras import ops

from keras_ordered._tokens import BOS
from keras_ordered._tokens import EOS
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import base_model_config
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.distance_parser.presets import PRESETS


DISTANCE = "gap/distance"
"""The parser's one distance: the height of the gap before each word."""


@keras.saving.register_keras_serializable(package="keras_ordered")
def ranking_loss(y_true, y_pred):
    """The pairwise ranking loss of Shen et al. (2018) over gap distances.

    For every pair of gaps `(i, j)` of a sentence whose target heights
    differ, `max(0, 1 - sign(t_i - t_j) * (d_i - d_j))`: the predicted
    distances must order the gaps as the tree does, by a margin of 1,
    whatever their scale. Positions whose target is negative (padding, the
    sentence's first word, `<eos>`) take no part.

    Args:
        y_true: float `(batch, time)`, the target heights
            (`keras_ordered.parsing.tree_to_distances`), `-1` where no gap
            is read.
        y_pred: float `(batch, time)`, the predicted distances.

    Returns:
        float `(batch,)`, each sentence's mean hinge over its pairs (0 for
        a sentence with no pair of different heights).

    Reference:
        Shen et al., 2018, "Straight to the Tree: Constituency Parsing with
        Neural Syntactic Distance", ACL, section 3.2.
    """
    y_true = ops.cast(y_true, "float32")
    y_pred = ops.cast(y_pred, "float32")
    valid = ops.cast(y_true >= 0, "float32")
    pair = valid[:, :, None] * valid[:, None, :]
    order = ops.sign(y_true[:, :, None] - y_true[:, None, :])
    pair = pair * ops.abs(order)
    margin = order * (y_pred[:, :, None] - y_pred[:, None, :])
    hinge = ops.relu(1.0 - margin) * pair
    pairs = ops.sum(pair, axis=(1, 2))
    return ops.sum(hinge, axis=(1, 2)) / ops.maximum(pairs, 1.0)


@keras.saving.register_keras_serializable(package="keras_ordered")
class DistanceParser(PresetMixin, SyntacticDistanceMixin, keras.Model):
    """A supervised parser that predicts the syntactic distance of each gap.

    `embedding -> Dropout -> BiLSTM x num_layers -> the pair of states on
    each side of a gap (a convolution of width 2) -> a gap BiLSTM -> a
    feed-forward layer -> one distance per gap`. Trained with
    `ranking_loss` on the heights of trees (`keras_ordered.parsing.
    tree_to_distances`), it parses with the gap decoder
    (`distances_to_tree(..., decoder="gap")`), which can build every
    binary tree. It reads sentences as the language models do (`<eos>
    w_1 .. w_n <eos>`, the same vocabulary), so the package's parsing
    machinery (`sentence_distances`, `evaluate-parsing`, tree averaging,
    export) takes it as it takes them; its one distance is
    `"gap/distance"` and its `default_decoder` is `"gap"`.

    In keras-ordered it is the student of tree averaging: trained on the
    trees an ensemble gives the PTB training text (`recipes/
    ptb_distance_parser.py`), it parses as one model.

    Inputs: `[token_ids (batch, time) int, mask (batch, time) bool]`, the
    mask false on the padding after the closing `<eos>`. Output: the
    distances `(batch, time)`, float32; the distance at position `k` is
    that of the gap between positions `k - 1` and `k`.

    Args:
        vocabulary: list of str (index = token id; must hold `<eos>` and
            `<unk>`), or an int vocabulary size.
        embedding_dim: int, the word embedding's size.
        hidden_dim: int, the units of each LSTM direction and of the gap
            layers.
        num_layers: int, the BiLSTM layers over the words.
        dropout: float, dropout on the embeddings and between layers.
        seed: int or None.
        dtype: the dtype policy of every layer (None: the global policy);
            the distances are float32 under any policy.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

    Example:

    ```python
    model = keras_ordered.models.DistanceParser.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "the", "cat", "sat"])
    distances = model.sentence_distances([["the", "cat", "sat"]])
    tree = keras_ordered.parsing.distances_to_tree(
        ["the", "cat", "sat"], distances["gap/distance"][0], decoder="gap")
    ```

    Reference:
        Shen et al., 2018, "Straight to the Tree: Constituency Parsing with
        Neural Syntactic Distance", ACL; Shayegh, Cao and Mou, 2024,
        "Ensemble Distillation for Unsupervised Constituency Parsing", ICLR.
    """

    preset_family = "distance parser"
    preset_table = PRESETS
    default_decoder = "gap"

    def __init__(self, vocabulary, embedding_dim=200, hidden_dim=200,
                 num_layers=2, dropout=0.3, seed=None, dtype=None, **kwargs):
        with dtype_policy_scope(dtype):
            vocabulary_size, words = check_vocabulary(vocabulary)
            rng = np.random.default_rng(seed)

            def next_seed():
                return None if seed is None else int(rng.integers(2**31))

            def dropout_layer(name):
                return keras.layers.Dropout(dropout, seed=next_seed(),
                                            name=name)

            # Each template LSTM lives until the model is built: load_model
            # builds it inside Keras' ObjectSharingScope, which knows what
            # Bidirectional serializes by id(), and a template freed early
            # could lend its id to the next one, whose Bidirectional would
            # then get the earlier layers.
            templates = []

            def bidirectional(lstm, name):
                templates.append(lstm)
                return keras.layers.Bidirectional(lstm, name=name)

            token_ids = keras.Input((None,), dtype="int32", name="token_ids")
            mask = keras.Input((None,), dtype="bool", name="mask")
            embedding = keras.layers.Embedding(
                vocabulary_size, embedding_dim, name="embedding")
            x = dropout_layer("embedding_dropout")(embedding(token_ids))
            for index in range(num_layers):
                x = bidirectional(
                    keras.layers.LSTM(hidden_dim, return_sequences=True,
                                      seed=next_seed(),
                                      name=f"lstm_{index + 1}"),
                    name=f"bilstm_{index + 1}")(x, mask=mask)
                x = dropout_layer(f"dropout_{index + 1}")(x)
            # Padding zeroed, so that no gap reads a padded state.
            x = x * ops.cast(mask, x.dtype)[:, :, None]
            # The gap before position k reads the states at k - 1 and k.
            gaps = keras.layers.Conv1D(hidden_dim, 2, padding="causal",
                                       activation="relu",
                                       name="gap_convolution")(x)
            gaps = bidirectional(
                keras.layers.LSTM(hidden_dim, return_sequences=True,
                                  seed=next_seed(), name="gap_lstm"),
                name="gap_bilstm")(gaps, mask=mask)
            gaps = dropout_layer("gap_dropout")(gaps)
            gaps = keras.layers.Dense(hidden_dim, activation="relu",
                                      name="gap_hidden")(gaps)
            distances = keras.layers.Dense(1, dtype="float32",
                                           name="distance")(gaps)
            distances = ops.where(mask, distances[:, :, 0], 0.0)
            super().__init__(inputs=[token_ids, mask], outputs=distances,
                             **kwargs)

            self._set_vocabulary(vocabulary_size, words)
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.num_layers = num_layers
            self.dropout = dropout
            self.seed = seed
            self.distance_names = [DISTANCE]
            self.default_distance = DISTANCE

    # --- distances --------------------------------------------------------
    def _reading_ids(self):
        index = self._word_index()
        eos = index[EOS]
        return index.get(BOS, eos), eos

    def reading_mask(self, token_ids):
        """The mask of `token_ids` read as `sentence_distances` pads them:
        true up to the closing `<eos>`, false on the `<eos>` padding
        after it."""
        token_ids = np.asarray(token_ids)
        bos, eos = self._reading_ids()
        is_eos = token_ids == eos
        before = np.cumsum(is_eos, axis=1) - is_eos
        return before <= (is_eos[:, :1] if bos == eos else 0)

    def syntactic_distances(self, token_ids):
        """The gap distances of sentences padded as `sentence_distances`
        pads them (`<eos>` after the closing `<eos>`), in inference mode.

        Args:
            token_ids: int array `(batch, time)`.

        Returns:
            dict `"gap/distance"` -> float32 array `(batch, time)`.
        """
        token_ids = np.asarray(token_ids, "int32")
        # The compiled inference function (`predict_on_batch`): an eager
        # call runs the masked recurrences step by step in Python.
        distances = self.predict_on_batch(
            [token_ids, self.reading_mask(token_ids)])
        return {DISTANCE: np.asarray(distances, "float32")}

    def serving_outputs(self, token_ids, lengths):
        """The distances of one inference pass, for an exported model.

        Args:
            token_ids: int tensor `(batch, time)`: `<eos>` (or `<s>`), the
                words, `<eos>`, then padding.
            lengths: int tensor `(batch,)`, the words of each sentence.

        Returns:
            `{"gap/distance": float32 (batch, time)}`.
        """
        width = ops.shape(token_ids)[1]
        mask = ops.arange(width)[None, :] < (ops.cast(lengths, "int32")[:, None] + 2)
        return {DISTANCE: ops.cast(self([token_ids, mask], training=False),
                                   "float32")}

    # --- config -----------------------------------------------------------
    def get_config(self):
        return {
            **base_model_config(self),
            "vocabulary": self._vocabulary_config(),
            "embedding_dim": self.embedding_dim,
            "hidden_dim": self.hidden_dim,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
            "seed": self.seed,
        }


get_preset = DistanceParser.get_preset
