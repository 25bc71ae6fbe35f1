"""SavedModel export of the language models, checked as a deployment would.

A fresh Python process that imports only TensorFlow and TF-Text (with
`keras_ordered` made unimportable, and no Keras module imported beyond
those `import tensorflow` itself loads in TF 2.21) loads the exported
SavedModel and must give the trees and log-probabilities of the
Keras model (to 1e-5); the graphs hold only ops of TF Serving's standard
model server; bad requests are answered per sentence.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from serving_client import serve_in_fresh_process
from keras_ordered.datasets.treebank import normalize_words
from keras_ordered.export.language_model import export_language_model
from keras_ordered.export.layout import next_version
from keras_ordered.export.saved_model import export_model
from keras_ordered.export.text import tokenize_python
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.parsing import trees as trees_lib

pytestmark = pytest.mark.slow  # SavedModel exports, served in fresh processes

WORDS = ["<eos>", "<unk>", "<s>", "the", "cat", "sat", "on", "mat", ".",
         "a", "dog", "N", "'s", "n't", "do"]

SENTENCES = [
    "The cat sat on the mat.",
    "A dog's 12 cats don't sit.",
    "the",
    "The mat sat on a cat on a mat on the dog .",
]

def _build(cls, seed=3, preset="tiny"):
    # The global seed too: a DistanceParser's `seed` seeds its dropouts,
    # not its initialisers, which follow Keras' global seed generator.
    keras.utils.set_random_seed(seed)
    model = cls.from_preset(preset, vocabulary=WORDS, seed=seed)
    # Non-trivial weights: the tiny presets' initialisers give near-uniform
    # predictions; scaled weights make distances and log-probs distinct.
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        value = weight.numpy()
        weight.assign(value + rng.normal(0, 0.3, value.shape).astype(value.dtype))
    return model


def _expected(model, sentences, distance):
    """Trees and log-probabilities the Keras model gives, from Python."""
    tokens = tokenize_python(sentences)
    words = [normalize_words(t) for t in tokens]
    distances = model.sentence_distances(words)[distance]
    trees = [
        trees_lib.tree_to_brackets(trees_lib.distances_to_tree(t, d))
        for t, d in zip(tokens, distances)
    ]
    log_probs = []
    for sentence in words:
        ids = [model.token_ids(["<s>"])[0]] + model.token_ids(sentence) + [0]
        outputs = model(
            [np.array([ids], "int32"), *model.initial_state(1)], training=False
        )
        logits = np.asarray(outputs[0], "float64")[0]
        shifted = logits - logits.max(axis=-1, keepdims=True)
        table = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        log_probs.append([table[t, ids[t + 1]] for t in range(len(ids) - 1)])
    return tokens, trees, log_probs


@pytest.fixture(scope="module")
def served_fresh(tmp_path_factory):
    """Each language model (`_build`) and the distance parser of either
    head (presets `tiny`, `span_tiny`) exported, and every SavedModel
    served by one fresh TensorFlow process (one process start, not one per
    model; each asked the signatures it has): `{cls or preset: (model,
    path, folder, that process's answers)}`."""
    from keras_ordered.models import DistanceParser

    models, paths = {}, {}
    builds = {ONLSTMLanguageModel: (ONLSTMLanguageModel, "tiny"),
              PRPNLanguageModel: (PRPNLanguageModel, "tiny"),
              "tiny": (DistanceParser, "tiny"),
              "span_tiny": (DistanceParser, "span_tiny")}
    for key, (cls, preset) in builds.items():
        folder = tmp_path_factory.mktemp(f"{cls.__name__}_{preset}") / "served"
        models[key] = _build(cls, preset=preset)
        paths[key] = (export_model(models[key], str(folder)), folder)
    served = serve_in_fresh_process(
        [path for path, _ in paths.values()], SENTENCES,
        ["parse", "score", "serving_default"]
    )
    return {key: (models[key], path, folder,
                  dict(served[path], modules=served["modules"]))
            for key, (path, folder) in paths.items()}


@pytest.mark.parametrize("cls", [ONLSTMLanguageModel, PRPNLanguageModel])
def test_fresh_tensorflow_process_matches_the_keras_model(cls, served_fresh):
    model, path, folder, served = served_fresh[cls]
    assert path == str(folder / "1")
    assert os.path.isfile(os.path.join(path, "assets", "vocabulary.txt"))
    assert served["modules"] == [], "loading imported Keras or keras_ordered"

    tokens, trees, log_probs = _expected(model, SENTENCES, model.default_distance)
    parse, score = served["parse"], served["score"]
    assert parse == served["serving_default"]
    assert parse["tree"] == trees
    assert parse["valid"] == [True] * len(SENTENCES)
    for row, expected_tokens in enumerate(tokens):
        n = len(expected_tokens)
        assert parse["length"][row] == n
        assert parse["tokens"][row][:n] == expected_tokens
        got = np.array(score["token_log_probs"][row][:n])
        np.testing.assert_allclose(got, log_probs[row][:n], atol=1e-5)
        total = sum(log_probs[row])
        np.testing.assert_allclose(
            score["sentence_log_prob"][row], total, atol=1e-4, rtol=1e-6
        )
        np.testing.assert_allclose(
            score["perplexity"][row], np.exp(-total / (n + 1)), rtol=1e-5
        )
    # Every distance of the model is an output.
    for name in model.distance_names:
        key = "distance_" + name.replace("/", "_")
        assert key in parse
    distances = model.sentence_distances(
        [normalize_words(t) for t in tokens]
    )[model.default_distance]
    for row, values in enumerate(distances):
        np.testing.assert_allclose(
            parse["distance"][row][: len(values)], values, atol=1e-5
        )


@pytest.mark.parametrize("preset", ["tiny", "span_tiny"])
def test_the_distance_parser_serves_its_trees(served_fresh, preset):
    # Either head: the gap decoder, and the span head's CKY, run in the
    # exported graph: a fresh TensorFlow process gives the trees the Keras
    # model gives, with only the standard model server's ops.
    from keras_ordered.export import ops

    model, path, _, served = served_fresh[preset]
    assert "score" not in served  # a parser, not a language model
    tokens = tokenize_python(SENTENCES)
    distances = model.sentence_distances(
        [normalize_words(t) for t in tokens])["gap/distance"]
    trees = [trees_lib.tree_to_brackets(
        trees_lib.distances_to_tree(t, d, decoder="gap"))
        for t, d in zip(tokens, distances)]
    assert served["parse"]["tree"] == trees
    right = [trees_lib.tree_to_brackets(trees_lib.distances_to_tree(
        t, np.zeros(len(t)), decoder="gap")) for t in tokens]
    assert trees != right  # trees the model chose, not the tie rule's
    ops.check_serving_ops(ops.saved_model_op_types(path))


def test_onlstm_tree_distance_is_chosen_at_export(tmp_path):
    model = _build(ONLSTMLanguageModel)
    path = export_language_model(
        model, str(tmp_path / "m"), distance="layer1/input"
    )
    served = tf.saved_model.load(path)
    out = served.signatures["parse"](tf.constant(SENTENCES))
    _, trees, _ = _expected(model, SENTENCES, "layer1/input")
    assert [t.decode() for t in out["tree"].numpy()] == trees
    np.testing.assert_array_equal(
        out["distance"].numpy(), out["distance_layer1_input"].numpy()
    )
    with pytest.raises(ValueError, match="no distance 'layer9/forget'"):
        export_language_model(model, str(tmp_path / "n"), distance="layer9/forget")


@pytest.fixture(scope="module")
def exported_prpn(tmp_path_factory):
    model = _build(PRPNLanguageModel, seed=5)
    path = export_language_model(
        model, str(tmp_path_factory.mktemp("served")), max_length=8
    )
    return model, path, tf.saved_model.load(path)


def test_bad_requests_are_answered_per_sentence(exported_prpn):
    _, _, served = exported_prpn
    good = ["The cat sat on the mat.", "a dog"]
    alone = {
        name: served.signatures[name](tf.constant(good))
        for name in ("parse", "score")
    }
    batch = [b"", good[0], b"   \t ", b"caf\xe9 au lait", good[1],
             b"the cat sat on the mat on a dog .", b"\xff\xfe"]
    for name in ("parse", "score"):
        out = {k: v.numpy() for k, v in served.signatures[name](tf.constant(batch)).items()}
        assert out["valid"].tolist() == [False, True, False, False, True, False, False]
        errors = [e.decode() for e in out["error"]]
        assert errors[0].startswith("empty sentence")
        assert errors[2].startswith("empty sentence")
        assert errors[3].startswith("invalid UTF-8")
        assert errors[5].startswith("sentence has 10 tokens, more than the limit of 8")
        assert errors[6].startswith("invalid UTF-8")
        assert errors[1] == errors[4] == ""
        for bad in (0, 2, 3, 5, 6):
            assert out["length"][bad] == 0
            assert all(t == b"" for t in out["tokens"][bad])
        # Floats to within rounding: on some CPUs (an AVX2 one) oneDNN picks
        # products whose summation order depends on the batch's shape, so a
        # sentence's log-probabilities move by ~1e-7 with its neighbours;
        # a neighbour leaking in moves them by far more.
        for row, good_row in ((1, 0), (4, 1)):
            for key, value in alone[name].items():
                value = value.numpy()
                width = value.shape[1] if value.ndim > 1 else None
                got = out[key][row] if width is None else out[key][row][:width]
                if value.dtype.kind == "f":
                    np.testing.assert_allclose(
                        got, value[good_row], rtol=1e-5, atol=1e-6, err_msg=key
                    )
                else:
                    np.testing.assert_array_equal(
                        got, value[good_row], err_msg=key
                    )


def test_wrong_dtype_or_rank_is_refused_and_the_model_still_serves(exported_prpn):
    _, _, served = exported_prpn
    parse = served.signatures["parse"]
    for bad in (tf.constant([1, 2]), tf.constant([["a b"]]), tf.constant("a b")):
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            parse(bad)
    out = parse(tf.constant(["the cat"]))
    assert out["tree"].numpy().tolist() == [b"(the cat)"]


def test_stateless_and_empty_batch(exported_prpn):
    _, _, served = exported_prpn
    first = served.signatures["score"](tf.constant(SENTENCES))
    second = served.signatures["score"](tf.constant(SENTENCES))
    np.testing.assert_array_equal(
        first["token_log_probs"].numpy(), second["token_log_probs"].numpy()
    )
    empty = served.signatures["parse"](tf.constant([], tf.string))
    assert empty["tree"].shape == (0,)


def test_graph_ops_are_those_of_the_standard_model_server(exported_prpn,
                                                         served_fresh):
    from keras_ordered.export import ops

    _, path, _ = exported_prpn
    types = ops.saved_model_op_types(path)
    assert "StringSplit" in types or "StringSplitV2" in types  # a real walk
    ops.check_serving_ops(types)
    assert not [t for t in types if "Cudnn" in t]
    # The ON-LSTM's export (`_build`'s model), shared with the fresh-process test.
    _, onlstm_path, _, _ = served_fresh[ONLSTMLanguageModel]
    onlstm_types = ops.saved_model_op_types(onlstm_path)
    ops.check_serving_ops(onlstm_types)
    assert not [t for t in onlstm_types if "Cudnn" in t]


def test_versions_and_overwrite(tmp_path):
    model = _build(PRPNLanguageModel)
    folder = str(tmp_path / "served")
    assert next_version(folder) == 1
    os.makedirs(os.path.join(folder, "1"))  # an earlier version
    assert export_model(model, folder).endswith(os.sep + "2")
    with pytest.raises(ValueError, match="exists"):
        export_model(model, folder, version=2)
    marker = os.path.join(folder, "2", "assets.extra", "marker")
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    open(marker, "w").close()
    assert export_model(model, folder, version=2, overwrite=True).endswith("2")
    assert not os.path.exists(marker)  # the version folder was replaced
    assert os.path.exists(os.path.join(folder, "2", "saved_model.pb"))
    assert sorted(os.listdir(folder)) == ["1", "2"]
    assert os.listdir(os.path.join(folder, "1")) == []  # left as it was
    with pytest.raises(ValueError, match="positive int"):
        export_model(model, folder, version=0)


def test_models_that_cannot_be_exported_say_why(tmp_path):
    sized = PRPNLanguageModel.from_preset("tiny", vocabulary=len(WORDS))
    with pytest.raises(ValueError, match="only its vocabulary size"):
        export_model(sized, str(tmp_path / "a"))
    import keras

    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="No SavedModel export for Sequential"):
        export_model(plain, str(tmp_path / "b"))
