"""The supervised syntactic-distance parser of Shen et al. (2018)."""

import keras
import numpy as np
from keras import ops

from keras_ordered import backend
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

HEADS = ("gap", "span")
"""What the parser predicts: each gap's distance (Shen et al., 2018) or
each span's score (Stern et al., 2017)."""

_BOUNDARY = 1e9
"""The height `span_loss` gives a sentence's two ends: above every gap."""


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
def span_loss(y_true, y_pred):
    """Binary cross-entropy of the span scores against the tree's spans.

    The target tree comes as `ranking_loss`'s target heights; a span of
    words `i .. j-1` is one of its constituents when every gap inside it
    lies lower than both its ends (a sentence's ends lie above every gap).
    Every span of two words or more but the whole sentence is scored, and
    the loss is the mean over every such span of the batch: each sentence
    counts by its spans, as in Stern et al. (2017).

    Args:
        y_true: float `(batch, time)`, the target heights (`-1` at the
            opening token, the first word, the closing `<eos>` and the
            padding), as `ranking_loss` takes them.
        y_pred: float `(batch, time - 1, time - 1)`, the span scores
            (logits): `[b, i, j]` scores the span between fences `i` and
            `j`, fence `k` lying before word `k + 1` (fence 0 before the
            first word, fence `n` after the last).

    Returns:
        float `(batch,)`, each sentence's summed cross-entropy times the
        batch's rows over the batch's spans (so that their mean is the
        mean over the spans).

    Reference:
        Stern, Andreas and Klein, 2017, "A Minimal Span-Based Neural
        Constituency Parser", ACL.
    """
    heights = ops.cast(y_true, "float32")
    logits = ops.cast(y_pred, "float32")
    fences = ops.shape(logits)[1]
    gaps = heights[:, 1:]  # fence f is the gap before position f + 1
    words = ops.sum(ops.cast(gaps >= 0, "float32"), axis=1) + 1.0
    fence = ops.cast(ops.arange(fences), "float32")[None, :]
    ends = ops.logical_or(fence == 0, fence == words[:, None])
    height = ops.where(ends, _BOUNDARY, gaps)
    # at_least[b, i, f]: fence f as high as fence i; its running count
    # along f counts the fences between two fences that reach i's height.
    at_least = ops.cast(height[:, None, :] >= height[:, :, None], "float32")
    count = ops.cumsum(at_least, axis=2)
    own = ops.diagonal(count, axis1=1, axis2=2)  # count[b, i, i]
    before = ops.pad(count[:, :, :-1], [[0, 0], [0, 0], [1, 0]])
    # Fences strictly between i and j as high as i, and as high as j.
    above_start = before - own[:, :, None]
    above_end = (own[:, None, :] - 1.0) - ops.transpose(count, (0, 2, 1))
    target = ops.cast(ops.logical_and(above_start == 0, above_end == 0),
                      "float32")
    start = fence[:, :, None]
    end = fence[:, None, :]
    scored = ops.logical_and(end - start >= 2, end <= words[:, None, None])
    scored = ops.logical_and(scored, ops.logical_not(ops.logical_and(
        start == 0, end == words[:, None, None])))
    scored = ops.cast(scored, "float32")
    # The cross-entropy of logits, written to stay finite for any logit.
    entropy = (ops.relu(logits) - logits * target
               + ops.log1p(ops.exp(-ops.abs(logits))))
    per_sentence = ops.sum(entropy * scored, axis=(1, 2))
    rows = ops.cast(ops.shape(logits)[0], "float32")
    return per_sentence * rows / ops.maximum(ops.sum(scored), 1.0)



def _gap_distances(x, mask, hidden_dim, bidirectional, dropout_layer,
                   next_seed):
    """The gap head (Shen et al., 2018): one distance per position."""
    # The gap before position k reads the states at k - 1 and k.
    gaps = keras.layers.Conv1D(hidden_dim, 2, padding="causal",
                               activation="relu", name="gap_convolution")(x)
    gaps = bidirectional(
        keras.layers.LSTM(hidden_dim, return_sequences=True,
                          seed=next_seed(), name="gap_lstm"),
        name="gap_bilstm")(gaps, mask=mask)
    gaps = dropout_layer("gap_dropout")(gaps)
    gaps = keras.layers.Dense(hidden_dim, activation="relu",
                              name="gap_hidden")(gaps)
    distances = keras.layers.Dense(1, dtype="float32", name="distance")(gaps)
    return ops.where(mask, distances[:, :, 0], 0.0)


def _span_scores(x, hidden_dim, dropout_layer):
    """The span head (Stern et al., 2017): one score per pair of fences.

    Fence `k` lies between positions `k` and `k + 1`: the forward LSTM's
    state at `k` has read the words before it, the backward LSTM's at
    `k + 1` those after it. A span from fence `i` to fence `j` is read as
    `[f_j - f_i, b_i - b_j]` by a feed-forward layer (`span_hidden`, ReLU).
    That layer is linear before its activation: with its kernel split as
    `[K_f; K_b]`, the span gets `relu(g_j - g_i + bias)`, where `g_k + bias
    = span_hidden([f_k, -b_k])`. So it projects each fence once, not each
    span: the same weights and values, the sentence's length times less
    work.
    """
    fences = ops.concatenate([x[:, :-1, :hidden_dim], -x[:, 1:, hidden_dim:]],
                             axis=-1)
    hidden = keras.layers.Dense(hidden_dim, name="span_hidden")
    projected = hidden(fences)  # g_k + bias
    bias = hidden(ops.zeros_like(fences[:, :1]))  # (batch, 1, hidden): bias
    spans = ops.relu(ops.expand_dims(projected, 1)
                     - ops.expand_dims(projected, 2)
                     + ops.expand_dims(bias, 1))
    spans = dropout_layer("span_dropout")(spans)
    scores = keras.layers.Dense(1, dtype="float32", name="span_score")(spans)
    return scores[..., 0]


def cky_heights(scores, lengths, tolerance=1e-6):
    """The gap heights of the trees CKY builds from span scores, in the graph.

    Each sentence's tree is the binary tree whose spans of two words or
    more have the largest summed probability (`sigmoid(scores)`); among
    trees within `tolerance` (relative to the sentence's summed
    probabilities) of the best, each span splits as far left as it can, so
    that ties go towards right-branching, as
    `keras_ordered.parsing.ensemble.best_splits(..., tie="right")`. Written
    in `keras.ops`, so it runs in the graph of an exported model and on
    every backend, a batch at a time: a bottom-up loop over the widths
    (`ops.fori_loop`) scores every split of every span of that width at
    once from the chart and its transpose; then each gap walks down from
    the whole sentence to the constituent it splits (`ops.while_loop`,
    the tree's depth in steps), and a constituent's height is one more
    than the depth of its deepest split below it.

    Args:
        scores: float `(batch, fences, fences)`, the span logits as
            `span_loss` reads them (`[b, i, j]`: words `i .. j-1`).
        lengths: int `(batch,)`, the words of each sentence (at most
            `fences - 1`).
        tolerance: float, how near the best a tree must be to count as a
            tie.

    Returns:
        float32 `(batch, fences + 1)`, laid out as the parser's distances:
        position `k + 1` holds the height of the gap before word `k` (the
        first word's is 0), as `keras_ordered.parsing.tree_to_distances`
        gives them; 0 at the opening token and after the last word.

    Example:

    >>> import numpy as np
    >>> scores = np.full((1, 4, 4), -5.0, "float32"); scores[0, 1, 3] = 5.0
    >>> np.asarray(cky_heights(scores, np.array([3]))).tolist()
    [[0.0, 0.0, 2.0, 1.0, 0.0]]
    """
    scores = ops.cast(scores, "float32")
    lengths = ops.cast(lengths, "int32")
    batch = ops.shape(scores)[0]
    fences = ops.shape(scores)[1]
    position = ops.arange(fences, dtype="int32")
    # [i, j]: the span from fence i to fence j; its width j - i.
    width_of = position[None, :] - position[:, None]
    probability = ops.where(
        ops.logical_and(width_of >= 2,
                        position[None, :] <= lengths[:, None, None]),
        ops.sigmoid(scores), 0.0)
    margin = tolerance * ops.maximum(ops.sum(probability, axis=(1, 2)), 1.0)
    probability_t = ops.transpose(probability, (0, 2, 1))
    width_of_t = ops.transpose(width_of)

    def grow(width, state):
        best, best_t, split = state
        # For every start i and split k at once: the left part [i, k) and
        # the right part [k, i + width), read from the transposed chart
        # rolled by the width (best_t[b, i + width, k] = best[b, k, i +
        # width]). Spans not yet built (wider) or backwards hold -1e30, so
        # only the splits inside the span count.
        total = best + ops.roll(best_t, -width, axis=1)
        top = ops.max(total, axis=2)
        near = total >= (top - margin[:, None])[:, :, None]
        cut = ops.cast(ops.argmax(ops.cast(near, "int32"), axis=2),
                       "int32")  # the first: ties towards the right
        best = ops.where(width_of == width, probability + top[:, :, None],
                         best)
        best_t = ops.where(width_of_t == width,
                           probability_t + top[:, None, :], best_t)
        split = ops.where(width_of == width, cut[:, :, None], split)
        return best, best_t, split

    # One word: 0; every other span: not built yet.
    start = ops.broadcast_to(ops.where(width_of == 1, 0.0, -1e30),
                             (batch, fences, fences))
    _, _, split = ops.fori_loop(
        2, fences, grow,
        (start, ops.transpose(start, (0, 2, 1)),
         ops.zeros((batch, fences, fences), "int32")))
    split = ops.reshape(split, (batch, fences * fences))

    # Each gap walks down from the whole sentence to the span it splits,
    # and keeps that span and its depth.
    gap = ops.broadcast_to(position[None, :], (batch, fences))
    is_gap = ops.logical_and(gap > 0, gap < lengths[:, None])

    def unfinished(first, last, done, depth, level):
        return ops.logical_not(ops.all(done))

    def descend(first, last, done, depth, level):
        cut = ops.take_along_axis(split, first * fences + last, axis=1)
        hit = ops.logical_and(cut == gap, ops.logical_not(done))
        depth = ops.where(hit, level, depth)
        done = ops.logical_or(done, hit)
        first = ops.where(ops.logical_or(done, gap < cut), first, cut)
        last = ops.where(ops.logical_or(done, gap >= cut), last, cut)
        return first, last, done, depth, level + 1

    first, last, _, depth, _ = ops.while_loop(
        unfinished, descend,
        (ops.zeros((batch, fences), "int32"),
         ops.broadcast_to(lengths[:, None], (batch, fences)),
         ops.logical_not(is_gap), ops.zeros((batch, fences), "int32"),
         ops.zeros((), "int32")),
        maximum_iterations=fences)
    # A constituent's height is one more than its deepest split's depth
    # below its own: the largest depth over the gaps inside it.
    within = ops.logical_and(
        ops.logical_and(gap[:, None, :] > first[:, :, None],
                        gap[:, None, :] < last[:, :, None]),
        is_gap[:, None, :])
    deepest = ops.max(ops.where(within, depth[:, None, :], -1), axis=2)
    heights = ops.where(is_gap, deepest - depth + 1, 0)
    return ops.pad(ops.cast(heights, "float32"), [[0, 0], [1, 0]])


class _CKY(keras.layers.Layer):
    """`cky_heights` of span scores, the lengths read from the mask (the
    opening and closing tokens are not words)."""

    def call(self, scores, reading):
        lengths = ops.sum(ops.cast(reading, "int32"), axis=1) - 2
        return cky_heights(scores, lengths)

    def compute_output_shape(self, scores_shape, reading_shape):
        return reading_shape


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

    With `head="span"`, the parser scores every span instead (Stern et
    al., 2017): the states on each side of a span's two ends, subtracted
    (the forward LSTM's across the span, the backward LSTM's too), go
    through a feed-forward layer to one score per span; it learns with
    `span_loss` from the same targets, and parses by CKY, the tree whose
    spans have the largest summed probabilities (`cky_heights`, in the
    graph). Its distances are then that tree's gap heights, so the gap
    decoder gives the CKY tree back and the same machinery takes it,
    export included.

    In keras-ordered it is the student of tree averaging: trained on the
    trees an ensemble gives the PTB training text (`recipes/
    ptb_distance_parser.py`), it parses as one model.

    Inputs: `[token_ids (batch, time) int, mask (batch, time) bool]`, the
    mask false on the padding after the closing `<eos>`. Output: the
    distances `(batch, time)`, float32; the distance at position `k` is
    that of the gap between positions `k - 1` and `k`. With
    `head="span"`: the span scores `(batch, time - 1, time - 1)`, float32
    logits (`span_loss` says which span each holds).

    Args:
        vocabulary: list of str (index = token id; must hold `<eos>` and
            `<unk>`), or an int vocabulary size.
        embedding_dim: int, the word embedding's size.
        hidden_dim: int, the units of each LSTM direction and of the gap
            layers.
        num_layers: int, the BiLSTM layers over the words.
        dropout: float, dropout on the embeddings and between layers.
        head: `"gap"` (a distance per gap, the default) or `"span"` (a
            score per span, parsed by CKY).
        seed: int or None, seed of the dropouts (the initial weights
            follow Keras' global seed: `keras.utils.set_random_seed`, which
            the recipe sets from its `--seed`).
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
        Neural Syntactic Distance", ACL; Stern, Andreas and Klein, 2017,
        "A Minimal Span-Based Neural Constituency Parser", ACL; Shayegh,
        Cao and Mou, 2024, "Ensemble Distillation for Unsupervised
        Constituency Parsing", ICLR.
    """

    preset_family = "distance parser"
    preset_table = PRESETS
    default_decoder = "gap"

    def __init__(self, vocabulary, embedding_dim=200, hidden_dim=200,
                 num_layers=2, dropout=0.3, head="gap", seed=None,
                 dtype=None, **kwargs):
        if head not in HEADS:
            raise ValueError(f"Unknown head {head!r}: use one of "
                             f"{', '.join(map(repr, HEADS))}.")
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
            if head == "span":
                outputs = _span_scores(x, hidden_dim, dropout_layer)
            else:
                outputs = _gap_distances(x, mask, hidden_dim, bidirectional,
                                         dropout_layer, next_seed)
            super().__init__(inputs=[token_ids, mask], outputs=outputs,
                             **kwargs)

            self._set_vocabulary(vocabulary_size, words)
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.num_layers = num_layers
            self.dropout = dropout
            self.head = head
            self.seed = seed
            self.distance_names = [DISTANCE]
            self.default_distance = DISTANCE

    @property
    def training_loss(self):
        """The loss the head learns with: `ranking_loss` or `span_loss`."""
        return span_loss if self.head == "span" else ranking_loss

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
            dict `"gap/distance"` -> float32 array `(batch, time)`: the
            predicted distances, or with the span head the heights of each
            sentence's CKY tree (`cky_heights`).
        """
        token_ids = np.asarray(token_ids, "int32")
        mask = self.reading_mask(token_ids)
        # The compiled inference function (`predict_on_batch`): an eager
        # call runs the masked recurrences step by step.
        model = self if self.head == "gap" else self._cky_parser()
        xla = backend.uses_xla(self)
        if model.__dict__.get("_predicts_with_xla") != xla:
            # `model.jit_compile` changed (or the first call): the
            # inference function is made again, with XLA or without.
            if model is not self and backend.name() == "tensorflow":
                model.jit_compile = xla
            model.predict_function = None
            model.__dict__["_predicts_with_xla"] = xla
        return {DISTANCE: np.asarray(
            model.predict_on_batch([token_ids, mask]), "float32")}

    def _cky_parser(self):
        """The span head's scores and their CKY (`cky_heights`) as one
        model sharing this one's weights, built once and compiled by
        `predict_on_batch` like any model, with XLA when this model has
        it (kept out of Keras' tracking, so that it is not saved)."""
        parser = self.__dict__.get("_cky_model")
        if parser is None:
            token_ids = keras.Input((None,), dtype="int32")
            mask = keras.Input((None,), dtype="bool")
            heights = _CKY(dtype="float32", name="cky")(
                self([token_ids, mask]), mask)
            parser = keras.Model([token_ids, mask], heights)
            object.__setattr__(self, "_cky_model", parser)
        return parser

    def serving_outputs(self, token_ids, lengths):
        """The distances of one inference pass, for an exported model.

        Args:
            token_ids: int tensor `(batch, time)`: `<eos>` (or `<s>`), the
                words, `<eos>`, then padding.
            lengths: int tensor `(batch,)`, the words of each sentence.

        Returns:
            `{"gap/distance": float32 (batch, time)}`: with the span head,
            the heights of each sentence's CKY tree (`cky_heights`),
            computed in the graph.
        """
        width = ops.shape(token_ids)[1]
        lengths = ops.cast(lengths, "int32")
        mask = ops.arange(width)[None, :] < (lengths[:, None] + 2)
        outputs = self([token_ids, mask], training=False)
        if self.head == "span":
            outputs = cky_heights(outputs, lengths)
        return {DISTANCE: ops.cast(outputs, "float32")}

    # --- config -----------------------------------------------------------
    def get_config(self):
        return {
            **base_model_config(self),
            "vocabulary": self._vocabulary_config(),
            "embedding_dim": self.embedding_dim,
            "hidden_dim": self.hidden_dim,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
            "head": self.head,
            "seed": self.seed,
        }


get_preset = DistanceParser.get_preset
