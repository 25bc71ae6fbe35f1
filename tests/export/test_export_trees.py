"""The in-graph top-down parser against keras_ordered.parsing, and the op checks."""

import os

import numpy as np
import pytest
import tensorflow as tf

from keras_ordered.export import check_serving_ops
from keras_ordered.export import graph_op_types
from keras_ordered.export import saved_model_op_types
from keras_ordered.export import serving_op_allowlist
from keras_ordered.export.ops import DENIED_OPS
from keras_ordered.export.trees import distances_to_brackets
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import tree_to_brackets
from keras_ordered.parsing import tree_to_spans

SPECS = (
    tf.RaggedTensorSpec([None, None], tf.string),
    tf.TensorSpec([None, None], tf.float32),
)


def _expected(words, distances):
    escaped = [w.replace("(", "-LRB-").replace(")", "-RRB-") for w in words]
    tree = distances_to_tree(escaped, distances)
    spans = sorted(tree_to_spans(tree), key=lambda s: (s[0], -s[1]))
    return tree_to_brackets(tree), [list(s) for s in spans]


def _random_batch(rng, size, max_length=40):
    lengths = rng.integers(1, max_length + 1, size)
    time = int(lengths.max()) + 3
    # Small integer ranges make many ties; some rows are continuous.
    high = rng.integers(1, 6, size)[:, None]
    distances = rng.integers(0, high, (size, time)).astype("float32")
    continuous = rng.random(size) < 0.2
    distances[continuous] = rng.normal(size=(continuous.sum(), time))
    # Garbage in the padding must not matter.
    padding = np.arange(time)[None, :] >= lengths[:, None]
    distances[padding] = rng.choice([np.nan, np.inf, 1e9, -3.0], padding.sum())
    vocabulary = ["the", "cat", "(", ")", "a(b", "N", "'s", "é"]
    words = [
        [f"{vocabulary[i % len(vocabulary)]}{i}" if i % 3 else f"w{i}"
         for i in range(n)]
        for n in lengths
    ]
    return words, distances, lengths


def test_matches_python_parser_on_1000_random_vectors():
    rng = np.random.default_rng(1234)
    words, distances, lengths = _random_batch(rng, 1000)
    fn = tf.function(distances_to_brackets, input_signature=SPECS)
    out = fn(tf.ragged.constant(words), tf.constant(distances))
    trees = [t.decode("utf-8") for t in out["trees"].numpy()]
    spans = out["spans"].to_list()
    assert out["valid"].numpy().all()
    for b in range(len(words)):
        tree, tree_spans = _expected(words[b], distances[b, : lengths[b]])
        assert trees[b] == tree, (distances[b, : lengths[b]].tolist(), tree)
        assert spans[b] == tree_spans


def test_small_cases():
    out = distances_to_brackets(
        tf.ragged.constant([["a", "b", "c"], ["the", "cat", "sat"], ["hi"],
                            ["x", "y"], ["x", "y"]]),
        tf.constant([[1.0, 1.0, 1.0], [0.0, 0.1, 0.9], [7.0, 0.0, 0.0],
                     [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    )
    assert [t.decode() for t in out["trees"].numpy()] == [
        "(a (b c))", "((the cat) sat)", "(hi)", "(x y)", "(x y)"]
    assert out["spans"].to_list() == [
        [[0, 3], [1, 3]], [[0, 3], [0, 2]], [], [[0, 2]], [[0, 2]]]


def test_dense_tokens_dtypes_and_refused_sentences():
    tokens = tf.constant([["a", "b", "c", ""], ["(x)", "y", "", ""],
                          ["p", "q", "", ""], ["", "", "", ""],
                          ["a", "b", "c", "d"]])
    distances = tf.constant([[0.0, 2.0, 1.0], [3.0, 3.0, 9.0],
                             [np.nan, 0.0, 0.0], [0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0]], tf.float64)
    out = distances_to_brackets(tokens, distances, lengths=[3, 2, 2, 0, 4])
    assert [t.decode() for t in out["trees"].numpy()] == [
        "(a (b c))", "(-LRB-x-RRB- y)", "", "", ""]
    assert out["valid"].numpy().tolist() == [True, True, False, False, False]
    assert out["spans"].to_list()[2:] == [[], [], []]
    raw = distances_to_brackets(
        tokens[:2], distances[:2], lengths=[3, 2], escape=False)
    assert raw["trees"].numpy()[1] == b"((x) y)"
    half = distances_to_brackets(
        tokens[:1], tf.cast(distances[:1], tf.float16), lengths=[3])
    assert half["trees"].numpy()[0] == b"(a (b c))"
    with pytest.raises(ValueError, match="lengths"):
        distances_to_brackets(tokens, distances)
    with pytest.raises(ValueError, match="shape"):
        distances_to_brackets(tokens, distances[0], lengths=[3])
    with pytest.raises(ValueError, match="integers"):
        distances_to_brackets(tokens, distances, lengths=[3.0] * 5)


class _Parser(tf.Module):
    @tf.function(input_signature=[
        tf.TensorSpec([None, None], tf.string, name="tokens"),
        tf.TensorSpec([None, None], tf.float32, name="distances"),
        tf.TensorSpec([None], tf.int32, name="lengths"),
    ])
    def parse(self, tokens, distances, lengths):
        out = distances_to_brackets(tokens, distances, lengths)
        return {
            "trees": out["trees"],
            "spans": out["spans"].to_tensor(-1),
            "valid": out["valid"],
        }


@pytest.mark.slow
def test_saved_model_round_trip_and_serving_ops(tmp_path):
    rng = np.random.default_rng(7)
    words, distances, lengths = _random_batch(rng, 50, max_length=12)
    time = distances.shape[1]
    tokens = np.array([w + [""] * (time - len(w)) for w in words], dtype=object)
    module = _Parser()
    export_dir = str(tmp_path / "parser")
    tf.saved_model.save(module, export_dir, signatures={"parse": module.parse})
    loaded = tf.saved_model.load(export_dir)
    signature = loaded.signatures["parse"]
    out = signature(
        tokens=tf.constant(tokens), distances=tf.constant(distances),
        lengths=tf.constant(lengths, tf.int32))
    for b in range(len(words)):
        tree, spans = _expected(words[b], distances[b, : lengths[b]])
        assert out["trees"].numpy()[b].decode("utf-8") == tree
        got = out["spans"].numpy()[b].tolist()
        assert got[: len(spans)] == spans
        assert all(s == [-1, -1] for s in got[len(spans):])
    before = module.parse(tokens, distances, lengths)
    np.testing.assert_array_equal(
        before["trees"].numpy(), out["trees"].numpy())
    assert graph_op_types(loaded) == graph_op_types(signature)
    for op_types in (graph_op_types(signature),
                     saved_model_op_types(export_dir),
                     graph_op_types(module.parse.get_concrete_function())):
        assert "UnsortedSegmentJoin" in op_types
        check_serving_ops(op_types)


def test_graph_op_types_walks_loop_bodies_and_refuses_python_ops():
    def body(i, x):
        return i + 1, tf.math.bessel_i0e(x)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def looped(x):
        return tf.while_loop(lambda i, x: i < 3, body, [0, x])[1]

    op_types = graph_op_types(looped.get_concrete_function())
    assert "BesselI0e" in op_types  # only inside the loop body
    assert {"While", "StatelessWhile"} & set(op_types)
    check_serving_ops(op_types)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def python(x):
        return tf.py_function(np.sort, [x], tf.float32)

    with pytest.raises(ValueError, match="EagerPyFunc"):
        check_serving_ops(python.get_concrete_function())
    with pytest.raises(ValueError, match="saved_model.pb"):
        saved_model_op_types(os.getcwd() + "/no-such-model")


def test_allowlist_is_core_tensorflow_plus_tf_text():
    allowed = serving_op_allowlist()
    core = serving_op_allowlist(tf_text=False)
    assert {"StaticRegexReplace", "StringSplitV2", "LookupTableFindV2",
            "UnsortedSegmentJoin", "StatefulPartitionedCall", "While",
            "MatMul"} <= core
    assert not DENIED_OPS & allowed
    assert "CudnnRNNV3" not in allowed
    assert {"RegexSplitWithOffsets", "NormalizeUTF8"} <= allowed - core

    import tensorflow_text as tf_text

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def tf_text_path(sentences):
        tokens = tf_text.WhitespaceTokenizer().tokenize(
            tf_text.normalize_utf8(sentences, "NFKC"))
        return tf_text.regex_split(tokens.flat_values, r"\.").flat_values

    op_types = set(graph_op_types(tf_text_path.get_concrete_function()))
    assert op_types - core  # TF-Text ops, which the full allowlist has
    check_serving_ops(op_types)


def test_ten_thousand_words_in_the_graph():
    # O(time log time): a right-branching (falling) and a left-branching
    # (rising) sentence of 10,000 words, and random distances, give the
    # Python parser's trees (tf.repeat's [n, max repeats] mask alone would
    # have needed 10 GB here).
    n = 10_000
    words = [f"w{i}" for i in range(n)]
    rng = np.random.default_rng(0)
    for distances in (-np.arange(n), np.arange(n), rng.random(n)):
        distances = distances.astype("float32")
        out = distances_to_brackets(
            tf.ragged.constant([words]), tf.constant([distances])
        )
        tree, spans = _expected(words, distances)
        assert out["trees"].numpy()[0].decode() == tree
        assert out["spans"].to_list()[0] == spans
