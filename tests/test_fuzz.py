"""Property-based tests (hypothesis) of every reader and text path.

The property, everywhere: any input gives a result or the package's own
one-line error (a `ValueError` / `TypeError` whose message is one line,
never a codec's, nltk's or Python's own), with no crash and no hang.
Where two implementations exist (the Python and in-graph tree builders,
the Python and in-graph repair of linearized trees, the Python and
in-graph normalizer), they must agree.

Cost: the examples are few and derandomized (the same in every run, so CI
is reproducible); the whole file takes about a minute and a half, the
SavedModel part (marked `slow`) most of it.
"""

import os
import sys
import tempfile
import warnings

import numpy as np
import pytest
import tensorflow as tf
from conftest import recursive_brackets
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from keras_ordered._tokens import ControlCharacterError
from keras_ordered._tokens import InvalidUTF8Error
from keras_ordered.datasets import dependency
from keras_ordered.datasets.treebank import normalize_word
from keras_ordered.datasets.treebank import read_mrg_file
from keras_ordered.export import linearized as linearized_graph
from keras_ordered.export import text as text_graph
from keras_ordered.export.trees import distances_to_brackets
from keras_ordered.parsing import evalb
from keras_ordered.parsing import linearize
from keras_ordered.parsing import trees as trees_lib


def fuzz(examples):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def outcome(call):
    """The result of `call()`, or the package's own one-line error.

    A third-party reader's warning (nltk's UserWarning) fails the test: it
    must become the package's error, or nothing.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            return call()
    except (ValueError, TypeError) as error:
        assert not isinstance(error, UnicodeError), repr(error)
        message = str(error)
        assert message and "\n" not in message, repr(message)
        assert len(message) < 2000, message[:200]
        return error


def _written(content):
    folder = tempfile.mkdtemp(prefix="keras_ordered_fuzz_")
    path = os.path.join(folder, "input.txt")
    with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    return path


# Words of a tree: no whitespace, no brackets.
WORDS = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
        blacklist_characters="()",
    ),
    min_size=1,
    max_size=6,
)


# --- the tokenizer and the normalizer ----------------------------------------


@fuzz(40)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_tokenizer_gives_nonempty_tokens_without_spaces(lines):
    # A line with a control character is refused, naming it (the
    # tokenizer's one policy, keras_ordered._tokens.ControlCharacterError).
    result = outcome(lambda: text_graph.tokenize_python(lines))
    if isinstance(result, ControlCharacterError):
        assert str(result).startswith("Sentence ")
        return
    for tokens in result:
        for token in tokens:
            assert token and token.split() == [token], repr(token)


@fuzz(40)
@given(st.lists(st.binary(max_size=24), max_size=5))
def test_tokenizer_refuses_invalid_utf8_naming_the_sentence(lines):
    result = outcome(lambda: text_graph.tokenize_python(lines))
    bad = [i for i, line in enumerate(lines, 1) if _invalid(line)]
    if bad:
        assert isinstance(result, InvalidUTF8Error)
        assert str(result).startswith(f"Sentence {bad[0]} is not valid UTF-8")
    else:
        assert len(result) == len(lines)


def _invalid(line):
    try:
        line.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


@fuzz(30)
@given(
    st.lists(
        st.text(alphabet=st.characters(max_codepoint=0x24F,
                                       blacklist_categories=("Cs",)),
                min_size=1, max_size=12),
        min_size=1, max_size=8,
    ),
    st.sampled_from(["digit-runs", "ptb"]),
)
def test_in_graph_normalizer_is_the_python_one(tokens, numbers):
    # Latin script: TensorFlow's lower-casing is Python's there.
    got = text_graph.normalize(tf.constant(tokens), numbers=numbers)
    assert [w.decode() for w in got.numpy()] == [
        normalize_word(t, numbers) for t in tokens
    ]


# --- bracketed trees ---------------------------------------------------------


@fuzz(40)
@given(st.lists(WORDS, min_size=1, max_size=30), st.integers(0, 2**31))
def test_brackets_round_trip(words, seed):
    distances = np.random.default_rng(seed).integers(0, 4, len(words))
    tree = trees_lib.distances_to_tree(words, distances)
    text = trees_lib.tree_to_brackets(tree)
    again = trees_lib.brackets_to_tree(text)
    assert trees_lib.tree_to_brackets(again) == text
    assert trees_lib.leaves(again) == words
    assert trees_lib.tree_to_spans(again) == trees_lib.tree_to_spans(tree)


@fuzz(60)
@given(st.text(alphabet="()ab \n", max_size=40))
def test_reading_any_bracketed_string(text):
    tree = outcome(lambda: trees_lib.brackets_to_tree(text))
    if not isinstance(tree, Exception):
        written = trees_lib.tree_to_brackets(tree)
        assert trees_lib.tree_to_brackets(
            trees_lib.brackets_to_tree(written)) == written


@fuzz(40)
@given(st.one_of(
    st.binary(max_size=80),
    st.text(alphabet="() SNPVBDTa-.\n\xe9", max_size=80),
))
def test_reading_any_mrg_file(content):
    trees = outcome(lambda: read_mrg_file(_written(content)))
    if isinstance(trees, Exception):
        assert "input.txt" in str(trees)
    else:
        for tree in trees:
            trees_lib.leaves(tree)


# --- distances to trees, Python and in-graph ---------------------------------


LENGTHS = st.one_of(st.integers(1, 40), st.integers(1, 10_000))


@fuzz(12)
@given(st.lists(LENGTHS, min_size=1, max_size=3), st.integers(0, 2**31),
       st.sampled_from(["ties", "floats", "rising", "falling"]))
def test_python_and_in_graph_builders_agree_up_to_10000_words(lengths, seed,
                                                             kind):
    rng = np.random.default_rng(seed)
    sentences, rows = [], []
    for n in lengths:
        d = {
            "ties": lambda: rng.integers(0, 3, n).astype("float32"),
            "floats": lambda: rng.random(n).astype("float32"),
            "rising": lambda: np.arange(n, dtype="float32"),
            "falling": lambda: -np.arange(n, dtype="float32"),
        }[kind]()
        sentences.append([f"w{i}" for i in range(n)])
        rows.append(d)
    width = max(lengths)
    padded = np.full((len(rows), width), 7.0, "float32")  # padding ignored
    for row, d in enumerate(rows):
        padded[row, : len(d)] = d
    out = distances_to_brackets(tf.ragged.constant(sentences), padded)
    assert out["valid"].numpy().all()
    for words, d, got in zip(sentences, rows, out["trees"].numpy()):
        expected = trees_lib.tree_to_brackets(trees_lib.distances_to_tree(words, d))
        assert got.decode() == expected
        if len(words) <= 200:
            reference = recursive_brackets(words, list(d))
            assert expected == (reference if len(words) > 1 else f"({reference})")


@fuzz(30)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32),
                max_size=12),
       st.integers(-2, 14))
def test_builders_refuse_bad_distances_alike(distances, length):
    words = [f"w{i}" for i in range(max(length, 0))]
    python = outcome(lambda: trees_lib.distances_to_tree(words, distances))
    if distances:
        out = distances_to_brackets(
            tf.constant([["w"] * len(distances)]), tf.constant([distances], tf.float32),
            lengths=tf.constant([length]),
        )
        valid = bool(out["valid"].numpy()[0])
        fits = 1 <= length <= len(distances)
        finite = bool(np.all(np.isfinite(np.asarray(distances[:max(length, 0)], "float32"))))
        assert valid == (fits and finite)
        if valid and not isinstance(python, Exception):
            assert out["trees"].numpy()[0].decode() == trees_lib.tree_to_brackets(
                trees_lib.distances_to_tree(words, distances[:length]))
    if len(words) != len(distances) or not words:
        assert isinstance(python, ValueError)


# --- EVALB input ----------------------------------------------------------------


TREE_TEXT = st.text(alphabet="() SNPVBDT-NONE.ab\t", max_size=50)


@fuzz(60)
@given(TREE_TEXT, st.one_of(st.none(), TREE_TEXT))
def test_evalb_scores_or_refuses_any_pair_of_trees(gold, test):
    result = outcome(lambda: evalb.evaluate_trees([gold], [test]))
    if not isinstance(result, Exception):
        evalb.format_report(result)


@fuzz(30)
@given(st.binary(max_size=120), st.binary(max_size=120))
def test_evalb_reads_any_pair_of_files(gold, test):
    result = outcome(
        lambda: evalb.evaluate_files(_written(gold), _written(test))
    )
    if not isinstance(result, Exception):
        evalb.format_report(result)


# --- Malt-TAB, CoNLL and Stanford dependencies -------------------------------


FIELD = st.one_of(
    st.integers(-2, 6).map(str),
    st.text(alphabet="abcDT_-", min_size=1, max_size=4),
)
ROW = st.lists(FIELD, min_size=1, max_size=11).map("\t".join)
BLOCKS = st.lists(
    st.lists(ROW, min_size=1, max_size=5).map("\n".join), min_size=1, max_size=3
).map("\n\n".join)


@fuzz(80)
@given(st.one_of(BLOCKS, st.text(max_size=60)),
       st.sampled_from(["auto", "malt", "conll", "stanford"]))
def test_dependency_readers_read_or_refuse_any_text(text, format):
    trees = outcome(lambda: dependency.parse_trees(text, format))
    if not isinstance(trees, Exception):
        for tree in trees:
            dependency.check_heads(list(tree.heads))


@fuzz(20)
@given(st.binary(max_size=80))
def test_dependency_files_of_any_bytes(content):
    outcome(lambda: dependency.read_trees(_written(content)))


# --- the repair of linearized trees ------------------------------------------


SYMBOLS = st.lists(
    st.sampled_from(["(S", "(NP", "(VP", ")S", ")NP", ")VP", "(", ")", "XX",
                     "XX", "XX", "junk"]),
    max_size=24,
)


@fuzz(25)
@given(st.lists(st.tuples(SYMBOLS, st.integers(1, 6)), min_size=1, max_size=6))
def test_linearized_repair_python_and_in_graph_agree(batch):
    sentences = [[f"w{i}" for i in range(n)] for _, n in batch]
    expected = []
    for (symbols, _), words in zip(batch, sentences):
        tree, repairs = linearize.delinearize(symbols, words)
        assert trees_lib.leaves(tree) == words
        expected.append((tree.pformat(margin=sys.maxsize), repairs.malformed))
    out = linearized_graph.delinearize(
        tf.ragged.constant([s for s, _ in batch], dtype=tf.string,
                           ragged_rank=1, inner_shape=()) if any(
            s for s, _ in batch) else tf.RaggedTensor.from_row_lengths(
            tf.constant([], tf.string), [0] * len(batch)),
        tf.ragged.constant(sentences),
    )
    got = [
        (tree.decode(), bool(malformed))
        for tree, malformed in zip(out["tree"].numpy(), out["malformed"].numpy())
    ]
    assert got == expected


# --- every SavedModel signature, random bytes and random shapes ---------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Tiny untrained models of each family, exported and loaded."""
    import keras

    from keras_ordered.datasets.dependency import DependencyVocabulary
    from keras_ordered.export import export_model
    from keras_ordered.models import GFLParser
    from keras_ordered.models import ONLSTMLanguageModel
    from keras_ordered.models import TDTreeLSTMLanguageModel
    from keras_ordered.models.gfl.vocabulary import SourceVocabulary
    from keras_ordered.models.gfl.vocabulary import TargetVocabulary

    keras.utils.set_random_seed(0)
    words = ["<eos>", "<unk>", "the", "cat", "sat", "N", "."]
    models = {
        "onlstm": ONLSTMLanguageModel.from_preset("tiny", vocabulary=words),
        "gfl": GFLParser.from_preset(
            "tiny", SourceVocabulary(["the", "cat", "sat"], lowercase=True),
            TargetVocabulary(["(S", ")S", "(NP", ")NP", "XX"]), units=8,
            attention_units=4, dropout=0.0,
        ),
        "td": TDTreeLSTMLanguageModel(
            DependencyVocabulary(["the", "cat", "sat"]), embedding_dim=2,
            units=2, num_layers=1,
        ),
    }
    folder = tmp_path_factory.mktemp("fuzz_served")
    loaded = {}
    for name, model in models.items():
        path = export_model(model, str(folder / name), max_length=12)
        loaded[name] = tf.saved_model.load(path)
    return [
        (f"{name}/{signature}", function)
        for name, saved in loaded.items()
        for signature, function in saved.signatures.items()
        if signature != "serving_default"
    ]


@pytest.mark.slow
@fuzz(25)
@given(data=st.data())
def test_every_signature_answers_any_bytes(served, data):
    batch = data.draw(st.lists(
        st.one_of(st.binary(max_size=40),
                  st.text(alphabet="ab .\t\n()0", max_size=40).map(str.encode)),
        max_size=5,
    ))
    assert len(served) >= 4  # parse and score, GFL parse, TD-TreeLSTM score
    for name, signature in served:
        (key,) = signature.structured_input_signature[1]
        out = signature(**{key: tf.constant(batch, dtype=tf.string)})
        for output, value in out.items():
            assert value.shape[0] == len(batch), (name, output)
        valid = out["valid"].numpy()
        error = [e.decode() for e in out["error"].numpy()]
        for ok, message in zip(valid, error):
            assert bool(ok) == (message == ""), (name, message)
            assert "\n" not in message


@pytest.mark.slow
@fuzz(15)
@given(shape=st.lists(st.integers(0, 3), max_size=3),
       dtype=st.sampled_from([tf.string, tf.int32, tf.float32]))
def test_every_signature_refuses_other_shapes_and_dtypes(served, shape, dtype):
    value = tf.zeros(shape, dtype) if dtype != tf.string else tf.fill(shape, "a")
    for name, signature in served:
        (key,) = signature.structured_input_signature[1]
        if len(shape) == 1 and dtype == tf.string:
            out = signature(**{key: value})
            assert out["valid"].shape[0] == shape[0]
            continue
        # The signature's input spec refuses it (TensorFlow's error); the
        # model keeps serving.
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            signature(**{key: value})
        signature(**{key: tf.constant(["a"])})
