"""SavedModel export of the TD-TreeLSTM / LdTreeLSTM, checked as a deployment would.

The in-graph generation order must be `generation_steps`' on every tree of
the WSJ sample and on random trees (non-projective ones included), and the
in-graph tree checks must refuse exactly what `check_heads` refuses, and the
in-graph action schedule must be the NumPy one. The
exported model, loaded in a fresh TensorFlow-only process (keras_ordered
made unimportable), must give `TDTreeLSTMLanguageModel.score`'s numbers (to
1e-5) on the held-out trees sent as Malt-TAB, CoNLL-X and CoNLL-U blocks;
every kind of malformed block is answered for its sentence only; the graph
holds only ops of TF Serving's standard model server.
"""

import contextlib
import io
import os
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import require_data
from serving_client import serve_in_fresh_process
import keras_ordered_cli as cli
from keras_ordered.datasets import dependency as dep
from keras_ordered.export import ops
from keras_ordered.export import tdtreelstm as td
from keras_ordered.export.saved_model import export_model
from keras_ordered.models import TDTreeLSTMLanguageModel

MAX_LENGTH = 80

steps_in_graph = tf.function(td.tree_steps)
check_in_graph = tf.function(td.check_trees)


def _dense(head_lists):
    width = max([len(h) for h in head_lists] + [1])
    heads = np.zeros((len(head_lists), width), "int32")
    for row, h in enumerate(head_lists):
        heads[row, :len(h)] = h
    return heads, np.array([len(h) for h in head_lists], "int32")


def _check_steps(head_lists, chunk=128):
    order = sorted(range(len(head_lists)), key=lambda i: len(head_lists[i]))
    for first in range(0, len(order), chunk):
        batch = [head_lists[i] for i in order[first:first + chunk]]
        heads, lengths = _dense(batch)
        valid, error = check_in_graph(heads, lengths)
        assert valid.numpy().all(), error.numpy()
        out = {k: v.numpy() for k, v in steps_in_graph(heads, lengths).items()}
        for row, h in enumerate(batch):
            got = [
                (int(out["word"][row, t]), dep.ACTIONS[out["action"][row, t]],
                 int(out["source"][row, t]),
                 tuple(int(c) for c in np.nonzero(out["context"][row, t])[0]))
                for t in range(len(h))
            ]
            assert got == dep.generation_steps(h), h
            assert not out["word"][row, len(h):].any()


def _random_tree(rng, n):
    """Heads of a random tree (any shape, often non-projective)."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * n
    for k, word in enumerate(order[1:], 1):
        heads[word - 1] = order[rng.randrange(k)]
    return heads


def _is_projective(heads):
    arcs = [(min(i + 1, h), max(i + 1, h)) for i, h in enumerate(heads) if h]
    return not any(a < c < b < d for a, b in arcs for c, d in arcs)


@pytest.fixture(scope="module")
def sample_trees():
    folder = require_data("wsj_sample", "dep")
    trees, _ = dep.load_split(folder, ["*.dp"])
    return trees


@pytest.mark.slow
def test_in_graph_generation_order_equals_generation_steps(sample_trees):
    assert len(sample_trees) > 3000
    _check_steps([list(t.heads) for t in sample_trees])
    rng = random.Random(0)
    trees = [_random_tree(rng, rng.randint(1, 40)) for _ in range(600)]
    trees += [
        [0],
        [0, 1, 2, 3, 4, 5, 6, 7],  # a chain to the right
        [2, 3, 4, 5, 0],  # a chain to the left
        [5, 5, 5, 5, 0, 5, 5, 5],  # a star: left and right dependents
        [2, 3, 0, 3, 6, 4],  # the docstring's tree
        [3, 4, 0, 3, 1],  # crossing arcs
    ]
    assert sum(not _is_projective(h) for h in trees) > 200
    _check_steps(trees)


def test_in_graph_tree_checks_refuse_what_check_heads_refuses():
    rng = random.Random(1)
    cases = []
    for _ in range(3000):
        n = rng.randint(1, 9)
        if rng.random() < 0.3:
            heads = _random_tree(rng, n)
            heads[rng.randrange(n)] = rng.randint(-2, n + 2)
        else:
            heads = [rng.randint(-1, n + 1) for _ in range(n)]
        cases.append(heads)
    heads, lengths = _dense(cases)
    valid, error = check_in_graph(heads, lengths)
    kinds = {"range": 0, "own": 0, "no root": 0, "roots": 0, "cycle": 0}
    for h, ok, message in zip(cases, valid.numpy(), error.numpy()):
        message = message.decode()
        try:
            dep.check_heads(h)
            expected = ""
        except ValueError as failure:
            expected = str(failure)
        assert ok == (expected == ""), (h, message, expected)
        # The same first fault, said the same way.
        assert message == expected.replace("the tree: ", "").rstrip("."), h
        for kind, word in (("range", "out of range"), ("own", "its own"),
                           ("no root", "no root"), ("roots", "roots (words"),
                           ("cycle", "a cycle")):
            kinds[kind] += word in message
    assert min(kinds.values()) > 20, kinds


# --- the exported model -------------------------------------------------------
def _model(vocabulary, ld, seed):
    keras.utils.set_random_seed(seed)
    # `lowercase` as the vocabulary's: the .keras file keeps the model's
    # own flag, and the command line exports the model read back from it.
    model = TDTreeLSTMLanguageModel.from_preset(
        "tiny", vocabulary, ld=ld, seed=seed, lowercase=vocabulary.lowercase)
    # Non-trivial weights: far from uniform predictions.
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        value = weight.numpy()
        weight.assign(value + rng.normal(0, 0.3, value.shape).astype(value.dtype))
    return model


@pytest.fixture(scope="module")
def models(sample_trees):
    train = [t for t in sample_trees if not os.path.basename(t.source).startswith(
        "wsj_014")]
    sentences = [t.words for t in train]
    cased = dep.DependencyVocabulary.from_sentences(sentences, min_count=3)
    lower = dep.DependencyVocabulary.from_sentences(
        sentences, lowercase=True, min_count=3)
    return {"tree": _model(cased, False, 3), "ld": _model(lower, True, 4)}


@pytest.fixture(scope="module")
def exported(models, tmp_path_factory):
    """TreeLSTM exported by `export_tdtreelstm`, LdTreeLSTM by the command line."""
    folder = tmp_path_factory.mktemp("td")
    tree = td.export_tdtreelstm(models["tree"], str(folder / "tree"),
                                max_length=MAX_LENGTH)
    model_file = str(folder / "ld.keras")
    models["ld"].save(model_file)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = cli.main(["export", "--model", model_file, "--output",
                           str(folder / "ld"), "--max-length", str(MAX_LENGTH)])
    assert status == 0, stderr.getvalue()
    return {"tree": tree, "ld": stdout.getvalue().strip(),
            "model_file": model_file, "stderr": stderr.getvalue()}


def _malt(tree, label=False, separator="\t"):
    return "\n".join(
        separator.join([w, t, str(h)] + ([["dep", "root"][h == 0]] if label
                                         else []))
        for w, t, h in zip(tree.words, tree.tags, tree.heads))


def _conll(tree, comments=False, multiword=False, crlf=False):
    lines = ["# sent_id = 1", "# text = " + " ".join(tree.words)] if comments else []
    for i, (w, t, h) in enumerate(zip(tree.words, tree.tags, tree.heads), 1):
        if multiword and i == 2:
            lines.append(f"2-3\t{w}x\t_\t_\t_\t_\t_\t_\t_\t_")
        lines.append(f"{i}\t{w}\t{w.lower()}\t{t}\t{t}\t_\t{h}\tdep\t_\t_")
    return ("\r\n" if crlf else "\n").join(lines) + "\n"


def _blocks(trees):
    """Each held-out tree in one of the accepted forms."""
    blocks = []
    for k, tree in enumerate(trees):
        kind = k % 6
        if kind == 0:
            blocks.append(_malt(tree))
        elif kind == 1:  # a label column, blank lines around
            blocks.append("\n" + _malt(tree, label=True) + "\n \n")
        elif kind == 5:  # no tab: split at whitespace
            blocks.append(_malt(tree, separator="  "))
        elif kind == 2:
            blocks.append(_conll(tree))
        elif kind == 3:
            blocks.append(_conll(tree, comments=True, multiword=len(tree.words) > 3))
        else:
            blocks.append(_malt(tree).replace("\n", "\r\n"))
    return blocks


@pytest.mark.slow
def test_fresh_tensorflow_process_gets_the_scores_of_model_score(
        models, exported, sample_trees):
    held_out = [t for t in sample_trees
                if os.path.basename(t.source).startswith("wsj_014")
                and len(t.words) <= MAX_LENGTH]
    assert len(held_out) > 150
    blocks = _blocks(held_out)
    for block, tree in zip(blocks[:6], held_out):  # the Python readers agree
        (parsed,) = dep.parse_trees(block.replace("\r\n", "\n"))
        assert (parsed.words, parsed.heads) == (tree.words, tree.heads)
    served = serve_in_fresh_process(
        [exported["tree"], exported["ld"]], blocks, ["score", "serving_default"]
    )
    assert served["modules"] == [], "loading imported Keras or keras_ordered"
    for name in ("tree", "ld"):
        out = served[exported[name]]["score"]
        assert out == served[exported[name]]["serving_default"]
        assert out["valid"] == [True] * len(blocks), out["error"]
        assert out["error"] == [""] * len(blocks)
        expected = models[name].score(held_out)
        for row, (tree, want) in enumerate(zip(held_out, expected)):
            n = len(tree.words)
            assert out["length"][row] == n
            assert out["words"][row][:n] == list(tree.words)
            assert out["heads"][row][:n] == list(tree.heads)
            np.testing.assert_allclose(out["word_log_probs"][row][:n],
                                       want["word_log_probs"], atol=1e-5)
            assert not any(out["word_log_probs"][row][n:])
            np.testing.assert_allclose(out["sentence_log_prob"][row],
                                       want["log_prob"], rtol=1e-6, atol=1e-5)
            np.testing.assert_allclose(out["perplexity"][row],
                                       want["perplexity"], rtol=1e-5)
    # The two models differ (LdTreeLSTM's left contexts, its lower case).
    assert (served[exported["tree"]]["score"]["sentence_log_prob"]
            != served[exported["ld"]]["score"]["sentence_log_prob"])


GOOD = "the\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\non\tIN\t3\nthe\tDT\t6\nmat\tNN\t4"
CONLL_GOOD = "1\tA\ta\tDT\tDT\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNN\tNN\t_\t0\troot\t_\t_"
BAD = [
    ("", "empty block: no token line"),
    (" \n\t\n", "empty block: no token line"),
    ("# only a comment\n", "empty block: no token line"),
    ("the\tDT\t2\n\ncat\tNN\t0", "line 2 is blank: send one sentence per block"),
    ("the\tDT\t2\ncat\tNN", "line 2 has 2 columns: Malt-TAB lines have 3 or 4"),
    ("the\tDT\t2\tdet\ncat\tNN\t0", "line 2 has 3 columns, line 1 has 4: every "
     "line of a block has the same columns"),
    ("the\tDT\ttwo\ncat\tNN\t0", "line 1: the head 'two' is not an integer"),
    ("the\tDT\t2.0\ncat\tNN\t0", "line 1: the head '2.0' is not an integer"),
    ("1\tthe\t_\tDT\tDT\t_\t2\t_\t_\t_\n3\tcat\t_\tNN\tNN\t_\t0\t_\t_\t_",
     "line 2: token id '3' where 2 was expected"),
    ("1\tthe\t_\tDT\tDT\t_\t_\t_\t_\t_\n2\tcat\t_\tNN\tNN\t_\t0\t_\t_\t_",
     "line 1: the head '_' is not an integer"),
    ("the\tDT\t3\ncat\tNN\t0", "the head of word 1 is 3, out of range 0..2"),
    ("the\tDT\t-1\ncat\tNN\t0", "the head of word 1 is -1, out of range 0..2"),
    ("the\tDT\t99999999999999\ncat\tNN\t0",
     "the head of word 1 is a huge number, out of range 0..2"),
    ("the\tDT\t1\ncat\tNN\t0", "word 1 is its own head"),
    ("the\tDT\t2\ncat\tNN\t1", "no root (no word has head 0)"),
    ("the\tDT\t0\ncat\tNN\t0", "2 roots (words 1, 2 have head 0); a tree has one"),
    ("a\tDT\t2\nb\tNN\t3\nc\tNN\t2\nd\tX\t0",
     "a cycle: words 1, 2, 3 are not reachable from the root"),
    ("\n".join(["w\tNN\t0"] + ["w\tNN\t1"] * MAX_LENGTH),
     f"the sentence has {MAX_LENGTH + 1} words, more than the limit of "
     f"{MAX_LENGTH}"),
    (b"caf\xe9\tNN\t0", "invalid UTF-8"),
]


@pytest.fixture(scope="module")
def served_ld(exported):
    return tf.saved_model.load(exported["ld"])


@pytest.mark.slow
def test_malformed_trees_are_answered_per_sentence(served_ld):
    score = served_ld.signatures["score"]
    alone = {k: v.numpy() for k, v in score(tf.constant([GOOD, CONLL_GOOD])).items()}
    assert alone["valid"].all() and alone["length"].tolist() == [6, 2]
    batch = [GOOD]
    for block, _ in BAD:
        batch += [block, CONLL_GOOD]
    out = {k: v.numpy() for k, v in score(tf.constant(batch)).items()}
    for k, (block, message) in enumerate(BAD):
        row = 1 + 2 * k
        error = out["error"][row].decode()
        assert not out["valid"][row] and error.startswith(message), (block, error)
        assert out["length"][row] == 0 and out["sentence_log_prob"][row] == 0
        assert out["perplexity"][row] == 0 and not out["word_log_probs"][row].any()
        assert not out["heads"][row].any() and not any(out["words"][row])
        if "blank" not in message and "limit" not in message:
            # The Python readers refuse it too.
            with pytest.raises(ValueError):
                text = block.decode("utf-8") if isinstance(block, bytes) else block
                if not dep.parse_trees(text):
                    raise ValueError("no tree")
    for row in range(0, len(batch), 2):  # every good sentence as alone
        good = 0 if row == 0 else 1
        for key, value in alone.items():
            got = out[key][row]
            if value.ndim > 1:
                got = got[:value.shape[1]]
            if value.dtype.kind == "f":
                np.testing.assert_allclose(got, value[good], atol=1e-6)
            else:
                np.testing.assert_array_equal(got, value[good], key)


@pytest.mark.slow
def test_wrong_dtype_rank_and_empty_batch(served_ld):
    score = served_ld.signatures["score"]
    for bad in (tf.constant([1, 2]), tf.constant([[GOOD]]), tf.constant(GOOD)):
        with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
            score(bad)
    empty = score(tf.constant([], tf.string))
    assert empty["sentence_log_prob"].shape == (0,)
    assert empty["word_log_probs"].shape[0] == 0
    out = score(tf.constant(["", ""]))  # no valid sentence at all
    assert not out["valid"].numpy().any()
    again = score(tf.constant([GOOD]))
    assert again["valid"].numpy()[0] and again["sentence_log_prob"].numpy()[0] < 0


@pytest.mark.slow
def test_graph_ops_are_those_of_the_standard_model_server(exported):
    for name in ("tree", "ld"):
        types = ops.saved_model_op_types(exported[name])
        assert "While" in types or "StatelessWhile" in types
        assert "StringSplitV2" in types and "StringToNumber" in types
        ops.check_serving_ops(types)
        assert not [t for t in types if "Cudnn" in t or "PyFunc" in t]


@pytest.mark.slow
def test_export_model_and_the_command_line(models, exported, tmp_path, capsys):
    assert exported["ld"].endswith(os.path.join("ld", "1"))
    assert "signature score (serving_default)" in exported["stderr"]
    assert os.path.isfile(os.path.join(
        exported["ld"], "assets", td.VOCABULARY_FILE))
    for argv, message in (
        (["--beam-size", "3"], "--beam-size: not for a TD-TreeLSTM"),
        (["--numbers", "ptb", "--no-tokenize"],
         "--numbers, --no-tokenize: not for a TD-TreeLSTM"),
        (["--no-lowercase"], "--no-lowercase: not for a TD-TreeLSTM"),
        (["--layer", "1"], "--layer and --distance apply"),
    ):
        status = cli.main(["export", "--model", exported["model_file"],
                           "--output", str(tmp_path / "refused"), *argv])
        assert status == 2
        assert message in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "refused")
    sized = TDTreeLSTMLanguageModel.from_preset("tiny", 20)
    with pytest.raises(ValueError, match="only its vocabulary size"):
        export_model(sized, str(tmp_path / "sized"))
    with pytest.raises(ValueError, match="max_length"):
        td.export_tdtreelstm(models["tree"], str(tmp_path / "m"), max_length=0)
    # export_model dispatches to export_tdtreelstm; versions go up.
    folder = os.path.dirname(exported["tree"])
    with pytest.raises(ValueError, match="exists"):
        export_model(models["tree"], folder, version=1)
    path = export_model(models["tree"], folder, max_length=5)
    assert path == os.path.join(folder, "2")
    out = tf.saved_model.load(path).signatures["score"](tf.constant([GOOD]))
    assert out["error"].numpy()[0].decode().startswith(
        "the sentence has 6 words, more than the limit of 5")


def test_in_graph_action_schedule_equals_the_numpy_one():
    from keras_ordered.models.tdtreelstm.inputs import action_schedule
    from keras_ordered.models.tdtreelstm.inputs import batch_arrays
    from keras_ordered.models.tdtreelstm.inputs import encode_tree

    schedule_in_graph = tf.function(td.action_schedule, input_signature=[
        tf.TensorSpec([None, None], tf.int32),
        tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], tf.int32)])
    rng = np.random.default_rng(8)
    for sizes in ([1], [3, 9, 1, 14, 6], [30, 2, 17, 5, 25, 11, 8, 40, 3]):
        encoded = []
        for n in sizes:
            order = [int(w) for w in rng.permutation(n) + 1]
            heads = [0] * n
            for k, w in enumerate(order[1:], 1):
                heads[w - 1] = order[int(rng.integers(0, k))]
            encoded.append(encode_tree(list(rng.integers(3, 9, n)), heads))
        arrays, _ = batch_arrays(encoded, left_context=False)
        expected = action_schedule(arrays["actions"], arrays["sources"], sizes,
                                   pad_to=1)
        got = schedule_in_graph(arrays["actions"], arrays["sources"],
                                np.array(sizes, "int32")).numpy()
        # The same steps in the same iterations (in any order within one).
        np.testing.assert_array_equal(np.sort(got, axis=1),
                                      np.sort(expected, axis=1))
    empty = schedule_in_graph(np.zeros((1, 8), "int32"), np.zeros((1, 8), "int32"),
                              np.zeros(1, "int32"))
    assert empty.shape == (0, 8)
