"""The distance parser's span head (Stern et al., 2017): its loss against a
NumPy computation over the tree's spans, its in-graph CKY against every
binary tree and against tree averaging's NumPy CKY.
Its round trips and learning run with the gap head's
(test_distance_parser.py)."""

import keras
import numpy as np
import pytest

from harness import LM_VOCAB
from harness import gradients
from harness import to_numpy
from keras_ordered.models import DistanceParser
from keras_ordered.models.distance_parser import cky_heights
from keras_ordered.models.distance_parser import span_loss
from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.parsing import tree_to_distances
from keras_ordered.parsing import tree_to_spans
from keras_ordered.parsing.ensemble import best_splits
from keras_ordered.parsing.ensemble import tree_from_splits

from test_distance_parser import height_targets

pytestmark = pytest.mark.backends


def span_parser(seed=1, **overrides):
    return DistanceParser.from_preset("span_tiny", vocabulary=LM_VOCAB,
                                      seed=seed, **overrides)


def binary_trees(words):
    """Every binary tree over `words`, as bracket strings."""
    if len(words) == 1:
        return [words[0]]
    return [f"({left} {right})"
            for k in range(1, len(words))
            for left in binary_trees(words[:k])
            for right in binary_trees(words[k:])]


def numpy_span_loss(trees, logits):
    """Cross-entropy over the spans of two words or more but the whole
    sentence, their constituents from `tree_to_spans`; summed per
    sentence, times the rows over the batch's spans."""
    per_sentence, spans = [], 0
    for brackets, scores in zip(trees, logits):
        tree = brackets_to_tree(brackets)
        n = len(tree.leaves()) if not isinstance(tree, str) else 1
        gold = tree_to_spans(tree, include_whole=False) if n > 1 else set()
        total = 0.0
        for i in range(n + 1):
            for j in range(i + 2, n + 1):
                if (i, j) == (0, n):
                    continue
                p = 1.0 / (1.0 + np.exp(-float(scores[i, j])))
                y = 1.0 if (i, j) in gold else 0.0
                total -= y * np.log(p) + (1 - y) * np.log(1 - p)
                spans += 1
        per_sentence.append(total)
    return np.asarray(per_sentence) * len(trees) / max(spans, 1)


def test_span_loss_reads_the_trees_spans_from_their_heights():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(8)]
    # Every tree of 4 words, and random ones of 1 to 8, one batch padded.
    trees = binary_trees(words[:4])
    for n in (1, 2, 3, 5, 6, 7, 8, 8):
        options = binary_trees(words[:n])
        trees.append(options[rng.integers(len(options))])
    width = 8 + 2
    targets = height_targets(trees, width)
    logits = rng.normal(size=(len(trees), width - 1, width - 1)).astype(
        "float32")
    got = to_numpy(span_loss(targets, logits))
    np.testing.assert_allclose(got, numpy_span_loss(trees, logits),
                               rtol=1e-4, atol=1e-5)
    # Scores that agree with each tree by a wide margin: a loss near 0.
    agree = np.full_like(logits, -20.0)
    for row, brackets in enumerate(trees):
        tree = brackets_to_tree(brackets)
        for i, j in (tree_to_spans(tree) if not isinstance(tree, str) else ()):
            agree[row, i, j] = 20.0
    assert float(np.max(to_numpy(span_loss(targets, agree)))) < 1e-6


def test_span_scores_are_the_dense_layers_over_each_spans_differences():
    # The model projects each fence once; the paper's reading, a dense
    # layer over every span's [f_j - f_i, b_i - b_j], in NumPy, must agree.
    model = span_parser()
    rng = np.random.default_rng(4)
    for weight in model.weights:  # away from the near-zero start
        weight.assign(to_numpy(weight) + rng.normal(
            0, 0.3, weight.shape).astype("float32"))
    ids = np.array([[0, 3, 4, 5, 6, 7, 0], [0, 8, 9, 0, 0, 0, 0]], "int32")
    mask = np.array([[True] * 7, [True] * 4 + [False] * 3])
    states = keras.Model(model.inputs, model.get_layer("dropout_1").output)
    x = to_numpy(states([ids, mask], training=False)) * mask[:, :, None]
    h = model.hidden_dim
    forward, backward = x[:, :-1, :h], x[:, 1:, h:]
    kernel, bias = (to_numpy(w) for w in model.get_layer("span_hidden").weights)
    out_kernel, out_bias = (to_numpy(w)
                            for w in model.get_layer("span_score").weights)
    fences = ids.shape[1] - 1
    expected = np.zeros((2, fences, fences), "float32")
    for b in range(2):
        for i in range(fences):
            for j in range(fences):
                span = np.concatenate([forward[b, j] - forward[b, i],
                                       backward[b, i] - backward[b, j]])
                hidden = np.maximum(span @ kernel + bias, 0.0)
                expected[b, i, j] = (hidden @ out_kernel + out_bias)[0]
    got = to_numpy(model([ids, mask], training=False))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def numpy_cky_heights(logits, n):
    """The reference: tree averaging's NumPy CKY (`best_splits`, right
    ties) over the spans' probabilities, then the tree's gap heights."""
    if n < 2:
        return np.zeros(n)
    probabilities = 1.0 / (1.0 + np.exp(-np.asarray(logits, "float64")))
    votes = {(i, j): probabilities[i, j]
             for i in range(n - 1) for j in range(i + 2, n + 1)}
    splits, _ = best_splits(n, votes, "right")
    return tree_to_distances(tree_from_splits([str(k) for k in range(n)],
                                              splits))


def batch_heights(logits, lengths):
    got = to_numpy(cky_heights(logits, np.asarray(lengths, "int32")))
    assert got.shape == (len(lengths), logits.shape[1] + 1)
    for row, n in enumerate(lengths):
        # 0 at the opening token, the first word and after the last word.
        assert got[row, 0] == got[row, 1] == 0.0
        assert not np.any(got[row, n + 1:])
    return [got[row, 1:n + 1] for row, n in enumerate(lengths)]


def test_cky_heights_build_the_tree_of_the_largest_summed_probability():
    rng = np.random.default_rng(1)
    # Sentences of 0 to 7 words in one padded batch, each against every
    # binary tree of its words.
    lengths = [0, 1, 2, 3, 4, 5, 6, 7, 7, 3]
    logits = rng.normal(0, 2, size=(len(lengths), 9, 9)).astype("float32")
    for n, scores, heights in zip(lengths, logits,
                                  batch_heights(logits, lengths)):
        if n == 0:
            continue
        words = [f"w{i}" for i in range(n)]
        probabilities = 1.0 / (1.0 + np.exp(-scores.astype("float64")))
        got = tree_to_brackets(distances_to_tree(words, heights, "gap"))

        def score(brackets):
            tree = brackets_to_tree(brackets)
            if isinstance(tree, str):
                return 0.0
            return sum(probabilities[i, j]
                       for i, j in tree_to_spans(tree, include_whole=False))

        best = max(score(t) for t in binary_trees(words))
        assert score(got) == pytest.approx(best, rel=1e-6), (n, got)


def test_cky_heights_match_the_numpy_cky_on_long_sentences():
    rng = np.random.default_rng(2)
    lengths = [40, 1, 17, 39, 2, 25]
    logits = rng.normal(0, 3, size=(len(lengths), 41, 41)).astype("float32")
    for n, scores, heights in zip(lengths, logits,
                                  batch_heights(logits, lengths)):
        np.testing.assert_array_equal(heights, numpy_cky_heights(scores, n))


def test_cky_ties_go_towards_right_branching():
    # No span preferred: (a (b c)); every span certain, as saturated
    # scores give: the same.
    for value in (0.0, 30.0, -30.0):
        logits = np.full((2, 7, 7), value, "float32")
        for heights, n in zip(batch_heights(logits, [3, 6]), [3, 6]):
            assert heights.tolist() == [0.0] + list(range(n - 1, 0, -1))
    # Two trees of equal score: ((a b) c) or (a (b c)); right wins.
    logits = np.full((1, 4, 4), -30.0, "float32")
    logits[0, 0, 2] = logits[0, 1, 3] = 2.0
    assert batch_heights(logits, [3])[0].tolist() == [0.0, 2.0, 1.0]
    logits[0, 0, 2] = 2.1
    assert batch_heights(logits, [3])[0].tolist() == [0.0, 1.0, 2.0]


def test_span_head_gradients_reach_every_weight():
    model = span_parser()
    ids = np.array([[0, 3, 4, 5, 6, 0], [0, 7, 8, 0, 0, 0]], "int32")
    mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    targets = height_targets(["((w0 w1) (w2 w3))", "(w0 w1)"], 6)

    def loss():
        out = model([ids, mask], training=True)
        return keras.ops.sum(span_loss(targets, out))

    grads = gradients(loss, model.trainable_weights)
    for weight, grad in zip(model.trainable_weights, grads):
        assert grad is not None and np.any(grad != 0), weight.path


def test_span_head_distances_are_its_cky_trees_heights():
    model = span_parser()
    weights = [w.path for w in model.weights]
    sentence = ["w1", "w2", "w3", "w4", "w5"]
    distances = model.sentence_distances([sentence])["gap/distance"][0]
    # The CKY's compiled model shares the weights and is not tracked, so
    # that saving sees the parser alone.
    assert [w.path for w in model.weights] == weights
    assert "cky" not in [layer.name for layer in model.layers]
    ids = np.array([[0] + model.token_ids(sentence) + [0]], "int32")
    logits = to_numpy(model([ids, np.ones_like(ids, bool)], training=False))
    np.testing.assert_array_equal(distances,
                                  numpy_cky_heights(logits[0], 5))
    # Beside a longer sentence (padding, another batch width): the same.
    together = model.sentence_distances(
        [sentence, ["w6"] * 12])["gap/distance"][0]
    np.testing.assert_array_equal(distances, together)
    # A one-word sentence has one distance and no span.
    assert model.sentence_distances([["w1"]])["gap/distance"][0].tolist() == [
        0.0]
    # The serving path (`serving_outputs`, which the SavedModel export
    # traces) gives the same heights, padding and all.
    ids = np.array([[0] + model.token_ids(sentence) + [0] * 8,
                    [0] + model.token_ids(["w6"] * 12) + [0]], "int32")
    served = to_numpy(model.serving_outputs(
        keras.ops.convert_to_tensor(ids),
        keras.ops.convert_to_tensor(np.array([5, 12], "int32")))[
            "gap/distance"])
    np.testing.assert_array_equal(served[0, 1:6], distances)
    assert not np.any(served[0, 6:])


def test_an_unknown_head_is_one_line():
    with pytest.raises(ValueError, match="Unknown head 'spans'") as error:
        span_parser(head="spans")
    assert "\n" not in str(error.value)


def functions_made(model):
    """The `jit_compile` of each inference function Keras makes for
    `model` from now on (a list that grows)."""
    made = []
    make = model.make_predict_function

    def recording(force=False):
        if model.predict_function is None or force:
            made.append(model.jit_compile)
        return make(force)

    model.make_predict_function = recording
    return made


def test_xla_parses_the_same_trees_in_few_shapes(monkeypatch):
    # `model.jit_compile = True`: on TensorFlow the span scores and their
    # CKY run as one XLA program per batch shape; the batches are then
    # full and their widths multiples of 16 (few programs), and the
    # heights are those of the graph without XLA.
    from keras_ordered import backend

    model = span_parser()
    sentences = [["w1", "w2", "w3", "w4", "w5"], ["w6"] * 12,
                 ["w2", "w7", "w3"], ["w1"] * 20, ["w9", "w8"]]
    made = functions_made(model._cky_parser())
    plain = model.sentence_distances(sentences, batch_size=2)["gap/distance"]
    assert not backend.uses_xla(model)
    model.jit_compile = True
    assert backend.uses_xla(model) == (backend.name() == "tensorflow")
    shapes = []
    calls = model._distances_for_ids

    def record(ids, names=None):
        shapes.append(ids.shape)
        return calls(ids, names)

    monkeypatch.setattr(model, "_distances_for_ids", record)
    compiled = model.sentence_distances(sentences,
                                        batch_size=2)["gap/distance"]
    for a, b in zip(plain, compiled):
        np.testing.assert_array_equal(a, b)
    if backend.name() == "tensorflow":
        assert model._cky_parser().jit_compile is True
        # Sorted by length, two to a batch: widths 5 and 7 -> 16, 14 and
        # 22 -> 32, and the last sentence alone.
        assert shapes == [(2, 16), (2, 16), (1, 32)]
        # And back without XLA.
        model.jit_compile = False
        model.sentence_distances(sentences[:1])
        assert model._cky_parser().jit_compile is False
        assert made == [False, True, False]


@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="XLA on request is TensorFlow's")
def test_the_gap_head_follows_its_jit_compile_both_ways():
    from test_distance_parser import tiny_parser

    model = tiny_parser()
    made = functions_made(model)
    ids = np.array([[0, 3, 4, 5, 0, 0]], "int32")
    plain = model.syntactic_distances(ids)["gap/distance"]
    for xla in (True, True, False):
        model.jit_compile = xla
        np.testing.assert_allclose(
            model.syntactic_distances(ids)["gap/distance"], plain, atol=1e-6)
    # Made again each time the switch changed, not on every call.
    assert made == [False, True, False]
