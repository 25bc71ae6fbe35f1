"""SavedModel export of the GFL parser, and the in-graph delinearizer.

The in-graph `keras_ordered.export.linearized.delinearize` must give the
string `keras-ordered parse` prints for the Python
`keras_ordered.parsing.linearize.delinearize` tree, and the same repair
counts, on every tree of the WSJ sample and on thousands of corrupted
symbol sequences. The exported parser, loaded in a fresh TensorFlow-only
process (keras_ordered made unimportable), must give the trees of the
Python path (`inference.parse_sentences` on the command line's tokens),
greedy and beam; bad requests are answered per sentence; the graph holds
only ops of TF Serving's standard model server and no cuDNN kernel.
"""

import contextlib
import dataclasses
import io
import os
import random
import sys

import keras
import nltk
import numpy as np
import pytest
import tensorflow as tf

from conftest import require_data
from serving_client import serve_in_fresh_process
import keras_ordered_cli as cli
from keras_ordered_cli._common import escape
from keras_ordered.export import ops
from keras_ordered.export.gfl import export_gfl_parser
from keras_ordered.export.linearized import REPAIR_KINDS
from keras_ordered.export.linearized import delinearize
from keras_ordered.export.linearized import symbols_from_ids
from keras_ordered.export.saved_model import export_model
from keras_ordered.export.text import tokenize_python
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary
from keras_ordered.models.gfl.inference import parse_sentences
from keras_ordered.parsing import linearize as lin

STRING_RAGGED = tf.RaggedTensorSpec([None, None], tf.string, 1, tf.int64)
in_graph_delinearize = tf.function(
    delinearize, input_signature=[STRING_RAGGED, STRING_RAGGED]
)


def _python(symbols, words):
    tree, repairs = lin.delinearize(symbols, words)
    return tree.pformat(margin=sys.maxsize), dataclasses.astuple(repairs)


def _ragged(rows):
    flat = [item for row in rows for item in row]
    return tf.RaggedTensor.from_row_lengths(
        tf.constant(flat, tf.string, shape=[len(flat)]),
        tf.constant([len(row) for row in rows], tf.int64),
    )


def _check_against_python(cases, batch_size=1000):
    """Asserts equal strings and repair counts; returns the Python repairs."""
    assert REPAIR_KINDS == tuple(f.name for f in dataclasses.fields(lin.Repairs))
    order = sorted(range(len(cases)), key=lambda i: len(cases[i][0]))
    records = []
    for first in range(0, len(order), batch_size):
        batch = [cases[i] for i in order[first:first + batch_size]]
        out = in_graph_delinearize(
            _ragged([s for s, _ in batch]), _ragged([w for _, w in batch])
        )
        trees = [t.decode() for t in out["tree"].numpy()]
        for (symbols, words), tree, repairs, malformed in zip(
            batch, trees, out["repairs"].numpy().tolist(),
            out["malformed"].numpy().tolist(),
        ):
            expected_tree, expected_repairs = _python(symbols, words)
            assert (tree, tuple(repairs)) == (expected_tree, expected_repairs), (
                " ".join(symbols), words
            )
            assert malformed == (sum(expected_repairs) > 0)
            records.append(expected_repairs)
    return records


# --- the in-graph delinearizer ------------------------------------------------
@pytest.mark.slow
def test_delinearize_equals_python_on_every_wsj_sample_tree():
    from nltk.corpus.reader import BracketParseCorpusReader

    from keras_ordered.datasets.treebank import read_trees

    folder = require_data("wsj_sample", "mrg")
    if folder not in nltk.data.path:
        nltk.data.path.append(folder)
    reader = BracketParseCorpusReader(folder, r".*\.mrg")
    cases = []
    for file_id in reader.fileids():
        for tree in read_trees(reader, file_id):
            gold = lin.clean_tree(tree)
            if gold is not None:
                cases.append((lin.linearize(tree), gold.leaves()))
    assert len(cases) >= 3000
    records = _check_against_python(cases)
    assert not any(sum(r) for r in records)  # well-formed, no repair


LABELS = ["S", "NP", "VP", "PP", "SBAR", "ADJP", "-LRB-", "WHNP", "S"]


def _random_tree(rng, depth=0):
    """A random linearized tree: (symbols, number of words)."""
    label = rng.choice(LABELS)
    symbols, count = ["(" + label], 0
    for _ in range(rng.randint(1, 4)):
        if depth < 4 and rng.random() < 0.4:
            child, n = _random_tree(rng, depth + 1)
            symbols += child
            count += n
        else:
            symbols.append("XX")
            count += 1
    return symbols + [")" + label], count


def _corrupt(rng, symbols, words):
    def junk():
        return rng.choice([
            "(" + rng.choice(LABELS), ")" + rng.choice(LABELS), "XX", "(", ")",
            "<unk>", "FOO", "((", "))", "(XX", ")S",
        ])

    symbols, words = list(symbols), list(words)
    for _ in range(rng.randint(1, 5)):
        kind = rng.randrange(7)
        if kind == 0 and symbols:  # delete
            del symbols[rng.randrange(len(symbols))]
        elif kind == 1:  # insert
            symbols.insert(rng.randrange(len(symbols) + 1), junk())
        elif kind == 2 and len(symbols) > 1:  # swap neighbours
            i = rng.randrange(len(symbols) - 1)
            symbols[i], symbols[i + 1] = symbols[i + 1], symbols[i]
        elif kind == 3 and symbols:  # another label
            i = rng.randrange(len(symbols))
            if symbols[i] != "XX":
                symbols[i] = symbols[i][0] + rng.choice(LABELS)
        elif kind == 4 and len(words) > 1:  # fewer words
            words = words[: rng.randrange(1, len(words))]
        elif kind == 5:  # more words
            words += [f"w{rng.randrange(9)}" for _ in range(rng.randint(1, 3))]
        elif kind == 6:  # noise
            symbols = [junk() for _ in range(rng.randrange(12))]
    return symbols, words


def test_delinearize_equals_python_on_corrupted_sequences():
    rng = random.Random(0)
    cases = []
    for number in range(3000):
        symbols, count = _random_tree(rng)
        words = [f"w{k}" for k in range(count)]
        if number % 10 == 0:
            cases.append((symbols, words))  # also well-formed ones
        else:
            cases.append(_corrupt(rng, symbols, words))
    cases.append(([], ["a", "b"]))
    cases.append((["(S", "(NP", ")NP", "XX", ")S", "(VP", ")VP"], ["(", ")"]))
    records = _check_against_python(cases)
    # Every kind of repair happened, alone and together.
    for column, kind in enumerate(REPAIR_KINDS):
        assert sum(1 for r in records if r[column]) > 50, kind
    assert sum(1 for r in records if sum(r) == 0) > 300


def test_delinearize_of_ids_and_an_empty_batch():
    table = ["<pad>", "<go>", "<eos>", "(S", ")S", "XX"]
    ids = tf.constant([[3, 5, 1, 5, 4, 2, 5, 0], [5, 0, 0, 0, 0, 0, 0, 0]])
    symbols = symbols_from_ids(ids, table)
    assert symbols.to_list() == [[b"(S", b"XX", b"XX", b")S"], [b"XX"]]
    out = delinearize(symbols, tf.ragged.constant([["a", "b"], ["c"]]))
    assert out["tree"].numpy().tolist() == [b"(S (XX a) (XX b))", b"(S (XX c))"]
    assert out["repairs"].numpy().tolist()[1] == [0, 0, 0, 0, 0, 0, 1, 0]
    empty = in_graph_delinearize(_ragged([]), _ragged([]))
    assert empty["tree"].shape == (0,) and empty["repairs"].shape == (0, 8)
    with pytest.raises(ValueError, match="strings"):
        delinearize(tf.ragged.constant([[1, 2]]), [["a"]])


# --- the exported parser ------------------------------------------------------
WORDS = ["john", "has", "a", "dog", "mary", "runs", "the", "cat", "sleeps",
         ".", "-lrb-", "-rrb-", ","]
SYMBOLS = ["(S", ")S", "(NP", ")NP", "(VP", ")VP", "(PRN", ")PRN", "XX"]
TRAINING = [
    (["john", "has", "a", "dog", "."],
     "(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S"),
    (["mary", "runs"], "(S (NP XX )NP (VP XX )VP )S"),
    (["the", "cat", "sleeps"], "(S (NP XX XX )NP (VP XX )VP )S"),
    (["the", "cat", "-lrb-", "a", "dog", "-rrb-", "sleeps"],
     "(S (NP XX XX (PRN XX (NP XX XX )NP XX )PRN )NP (VP XX )VP )S"),
]
RAW = [
    "John has a dog.",
    "Mary runs",
    "The cat (a dog) sleeps",
    "the cat sleeps",
    "Unknown words, 1,000 of them!",
    "the the the the the the the the cat",
]
MAX_LENGTH = 12
BEAM = 3


@pytest.fixture(scope="module")
def parser():
    source = SourceVocabulary(WORDS, lowercase=True)
    target = TargetVocabulary(SYMBOLS)
    keras.utils.set_random_seed(0)
    model = GFLParser.from_preset(
        "tiny", source, target, seed=3, units=32, attention_units=16,
        dropout=0.0,
    )
    source_ids = source.encode_batch([w[::-1] for w, _ in TRAINING])
    target_in, target_out = target.teacher_forcing_batch(
        [t.split() for _, t in TRAINING]
    )
    model.compile(optimizer=keras.optimizers.Adam(0.02))
    # Trained to give its four sentences their trees (80 repeats left the
    # first one wrong on an AVX2 CPU and right on an AVX-512 one; 160 and
    # 240 give it on both); a sentence unlike them ("the the ... cat") still
    # comes out malformed and needs the repairs.
    repeats = 200
    model.fit(
        [np.tile(source_ids, (repeats, 1)), np.tile(target_in, (repeats, 1))],
        np.tile(target_out, (repeats, 1)),
        batch_size=4, epochs=1, shuffle=False, verbose=0,
    )
    return model


@pytest.fixture(scope="module")
def exported(parser, tmp_path_factory):
    """Beam search exported by `export_gfl_parser`, greedy by the command line."""
    folder = tmp_path_factory.mktemp("gfl")
    cudnn_calls = []
    with pytest.MonkeyPatch.context() as patch:
        # Where keras.layers.LSTM asks the backend for its cuDNN kernel.
        patch.setattr(keras.src.backend, "lstm", _no_cudnn(cudnn_calls))
        beam = export_gfl_parser(
            parser, str(folder / "beam"), beam_size=BEAM, max_length=MAX_LENGTH
        )
    model_file = str(folder / "gfl.keras")
    parser.save(model_file)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = cli.main([
            "export", "--model", model_file, "--output", str(folder / "greedy"),
            "--max-length", str(MAX_LENGTH),
        ])
    assert status == 0, stderr.getvalue()
    greedy = stdout.getvalue().strip()
    return {
        None: greedy, BEAM: beam, "model_file": model_file,
        "stderr": stderr.getvalue(), "cudnn_calls": cudnn_calls,
    }


def _no_cudnn(calls):
    def lstm(*args, **kwargs):
        calls.append(kwargs.get("kernel"))
        raise NotImplementedError  # as on a machine without cuDNN

    return lstm


@pytest.fixture(scope="module")
def served_beam(exported):
    return tf.saved_model.load(exported[BEAM])


def _python_path(parser, sentences, beam_size):
    """What `keras-ordered parse --model gfl.keras` prints, and more."""
    tokens = tokenize_python(sentences)
    words = [[escape(w) for w in sentence] for sentence in tokens]
    result = parse_sentences(parser, words, beam_size=beam_size)
    return {
        "tokens": tokens,
        "tree": [t.pformat(margin=sys.maxsize) for t in result.trees],
        "symbols": [" ".join(s) for s in result.symbols],
        "repairs": [list(dataclasses.astuple(r)) for r in result.repairs],
        "malformed": [r.malformed for r in result.repairs],
    }


@pytest.mark.slow
def test_fresh_tensorflow_process_gets_the_python_trees(parser, exported):
    served = serve_in_fresh_process(
        [exported[None], exported[BEAM]], RAW, ["parse", "serving_default"]
    )
    assert served["modules"] == [], "loading imported Keras or keras_ordered"
    malformed = 0
    for beam_size in (None, BEAM):
        path = exported[beam_size]
        out = served[path]["parse"]
        assert out == served[path]["serving_default"]
        expected = _python_path(parser, RAW, beam_size)
        assert out["tree"] == expected["tree"], beam_size
        assert out["symbols"] == expected["symbols"]
        assert out["repairs"] == expected["repairs"]
        assert out["malformed"] == expected["malformed"]
        assert out["valid"] == [True] * len(RAW)
        assert out["error"] == [""] * len(RAW)
        for row, tokens in enumerate(expected["tokens"]):
            assert out["length"][row] == len(tokens)
            assert out["tokens"][row][: len(tokens)] == tokens
        malformed += sum(out["malformed"])
        # A sentence of the training set gets its tree.
        assert out["tree"][0] == (
            "(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .))"
        )
        assert "(XX -LRB-)" in out["tree"][2]  # brackets escaped in the leaves
    assert malformed > 0  # the repairs ran in the served graph too


@pytest.mark.slow
def test_bad_requests_are_answered_per_sentence(served_beam):
    parse = served_beam.signatures["parse"]
    good = ["Mary runs", "The cat (a dog) sleeps"]
    alone = {k: v.numpy() for k, v in parse(tf.constant(good)).items()}
    batch = [b"", good[0], b"  \t ", b"caf\xe9", good[1],
             b"the cat " * 7, b"\xff"]
    out = {k: v.numpy() for k, v in parse(tf.constant(batch)).items()}
    assert out["valid"].tolist() == [False, True, False, False, True, False, False]
    errors = [e.decode() for e in out["error"]]
    assert errors[0].startswith("empty sentence")
    assert errors[2].startswith("empty sentence")
    assert errors[3].startswith("invalid UTF-8")
    assert errors[5].startswith(
        f"sentence has 14 tokens, more than the limit of {MAX_LENGTH}"
    )
    assert errors[6].startswith("invalid UTF-8")
    for bad in (0, 2, 3, 5, 6):
        assert out["tree"][bad] == b"" and out["symbols"][bad] == b""
        assert out["length"][bad] == 0 and not out["malformed"][bad]
        assert not out["repairs"][bad].any()
        assert all(t == b"" for t in out["tokens"][bad])
    for row, good_row in ((1, 0), (4, 1)):
        for key, value in alone.items():
            if value.ndim > 1 and key == "tokens":
                width = value.shape[1]
                np.testing.assert_array_equal(out[key][row][:width], value[good_row])
            else:
                np.testing.assert_array_equal(out[key][row], value[good_row], key)


@pytest.mark.slow
def test_wrong_dtype_rank_and_empty_batch(served_beam):
    parse = served_beam.signatures["parse"]
    for bad in (tf.constant([1, 2]), tf.constant([["a b"]]), tf.constant("a b")):
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            parse(bad)
    empty = parse(tf.constant([], tf.string))
    assert empty["tree"].shape == (0,) and empty["repairs"].shape == (0, 8)
    again = parse(tf.constant(RAW[:2]))
    assert again["tree"].numpy()[0].decode().startswith("(S ")


@pytest.mark.slow
def test_graph_ops_are_those_of_the_standard_model_server(parser, exported):
    for path in (exported[None], exported[BEAM]):
        types = ops.saved_model_op_types(path)
        assert "While" in types or "StatelessWhile" in types  # a real walk
        assert "TopKV2" in types or "StringSplitV2" in types
        ops.check_serving_ops(types)
        assert not [t for t in types if "Cudnn" in t]
    # The export never asked for the cuDNN kernel (what a GPU would give),
    # and the encoder asks for it again afterwards (use_cudnn restored).
    assert exported["cudnn_calls"] == []
    assert all(layer.use_cudnn == "auto" for layer in parser.encoder_layers)
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keras.src.backend, "lstm", _no_cudnn(calls))
        parser.encode(np.array([[3, 4]], "int32"))
    assert len(calls) == len(parser.encoder_layers)


@pytest.mark.slow
def test_export_model_and_the_command_line(parser, exported, tmp_path, capsys):
    # `keras-ordered export` wrote the greedy SavedModel (the fixture).
    assert exported[None].endswith(os.path.join("greedy", "1"))
    assert "signature parse (serving_default), greedy decoding" in exported["stderr"]
    assert os.path.isfile(
        os.path.join(exported[None], "assets", "source_vocabulary.txt")
    )
    model_file = exported["model_file"]
    with pytest.raises(SystemExit) as exit_info:  # refused by argparse
        cli.main(["export", "--model", model_file, "--output",
                  str(tmp_path / "refused"), "--beam-size", "0"])
    assert exit_info.value.code == 2
    assert ("argument --beam-size: must be a positive integer (1, 2, ...), "
            "got '0'") in capsys.readouterr().err
    for argv, message in (
        (["--numbers", "ptb"], "--numbers applies to language models"),
        (["--layer", "1"], "--layer and --distance apply"),
    ):
        status = cli.main(["export", "--model", model_file, "--output",
                           str(tmp_path / "refused"), *argv])
        assert status == 2
        assert message in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "refused")
    sized = GFLParser(20, 12, embedding_dim=4, units=6, num_layers=1)
    with pytest.raises(ValueError, match="only its vocabularies' sizes"):
        export_model(sized, str(tmp_path / "sized"))
    with pytest.raises(ValueError, match="beam_size"):
        export_gfl_parser(parser, str(tmp_path / "b"), beam_size=0)
    # export_model dispatches to export_gfl_parser; versions go up.
    folder = os.path.dirname(exported[BEAM])
    with pytest.raises(ValueError, match="exists"):
        export_model(parser, folder, version=1)
