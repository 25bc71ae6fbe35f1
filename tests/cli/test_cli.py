"""The `keras-ordered` command line, end to end through `main`."""

import io
import json

import numpy as np
import pytest
from conftest import require_data

import keras_ordered_cli as cli
from keras_ordered_cli import _common


# A small hand-written treebank (Treebank-II style: punctuation, traces,
# function tags), so that most command tests need no data and stay fast.
SMALL_TREEBANK = """
( (S (NP-SBJ (DT The) (NN cat) ) (VP (VBD sat) (PP-LOC (IN on) (NP (DT the)
  (NN mat) ))) (. .) ))
( (S (NP-SBJ-1 (NNP Mr.) (NNP Vinken) ) (VP (VBZ is) (VP (VBN paid)
  (NP (-NONE- *-1) ) (NP ($ $) (CD 1,500) (-NONE- *U*) ) (PP-TMP (IN per)
  (NP (NN week) )))) (. .) ))
( (S (NP-SBJ (PRP It) ) (VP (VBD rained) ) (. .) ))
( (NP (DT the) (JJ big) (NN dog) ))
( (S (NP-SBJ (PRP He) ) (VP (VBD said) (SBAR (IN that) (S (NP-SBJ (NNS prices)
  ) (VP (VBD rose) (ADVP (RB sharply) ))))) (. .) ))
"""


@pytest.fixture
def small_treebank(tmp_path):
    directory = tmp_path / "mrg"
    directory.mkdir()
    (directory / "wsj_0001.mrg").write_text(SMALL_TREEBANK)
    return str(directory)


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


# --- evaluate-parsing --------------------------------------------------------


def test_evaluate_baseline_json(capsys):
    treebank = require_data("wsj_sample", "mrg")
    status, out, err = run(
        ["evaluate-parsing", "--treebank", treebank,
         "--baseline", "right-branching", "--json"],
        capsys,
    )
    assert status == 0, err
    output = json.loads(out)
    assert list(output) == ["treebank", "baselines"]
    assert list(output["baselines"]) == ["right-branching"]
    result = output["baselines"]["right-branching"]
    assert result["sentences"] == 3253
    assert result["sentence_f1"] == pytest.approx(40.0, abs=0.1)
    assert result["wsj10_sentence_f1"] == pytest.approx(59.3, abs=0.1)
    assert 35 < result["corpus_f1"] < 45
    assert set(result["label_recall"]) == {"NP", "VP", "PP", "SBAR", "ADJP", "ADVP"}
    assert result["depth"] > result["gold_depth"] > 1


def test_evaluate_baseline_table(small_treebank, capsys):
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--baseline",
         "random", "--seed", "1", "--limit", "4"],
        capsys,
    )
    assert status == 0, err
    assert "4 sentences" in out
    assert "random" in out and "sent-F1" in out and "corpus-F1" in out


def test_evaluate_baseline_json_hand_computed(small_treebank, capsys):
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--baseline",
         "right-branching", "--json"],
        capsys,
    )
    assert status == 0, err
    result = json.loads(out)["baselines"]["right-branching"]
    # Sentence level (no whole span):
    # the cat sat on the mat: gold {02, 26, 36, 46} vs right-branching
    # {16, 26, 36, 46}: f1 3/4.
    # mr. vinken is paid N per week: gold {02, 27, 37, 57} vs
    # {17, 27, 37, 47, 57}: p 3/5, r 3/4, f1 2/3.
    # it rained: nothing on either side, 1. the big dog (flat): gold empty,
    # prediction {13}: 0.
    # he said that prices rose sharply: gold {16, 26, 36, 46} = prediction: 1.
    expected = (3 / 4 + 2 / 3 + 1 + 0 + 1) / 5
    assert result["sentences"] == 5
    assert result["sentence_f1"] == pytest.approx(100 * expected)
    # Corpus level (whole span kept): matched 4 + 4 + 1 + 1 + 5 = 15,
    # predicted 5 + 6 + 1 + 2 + 5 = 19, gold 5 + 5 + 1 + 1 + 5 = 17.
    p, r = 15 / 19, 15 / 17
    assert result["corpus_f1"] == pytest.approx(100 * 2 * p * r / (p + r))
    assert result["label_recall"]["SBAR"] == 100.0


def test_evaluate_errors(tmp_path, small_treebank, capsys):
    (tmp_path / "empty").mkdir()
    status, _, err = run(
        ["evaluate-parsing", "--treebank", str(tmp_path / "empty"),
         "--baseline", "balanced"],
        capsys,
    )
    assert status == 2 and "No .mrg files" in err
    status, _, err = run(
        ["evaluate-parsing", "--treebank", str(tmp_path / "nowhere"),
         "--baseline", "balanced"],
        capsys,
    )
    assert status == 2
    assert f"No treebank folder at {str(tmp_path / 'nowhere')!r}" in err
    assert len(err.strip().splitlines()) == 1
    status, _, err = run(
        ["evaluate-parsing", "--treebank", small_treebank,
         "--model", str(tmp_path / "missing.keras")],
        capsys,
    )
    assert status == 2 and "No model at" in err
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate-parsing", "--treebank", str(tmp_path)])
    assert exit_info.value.code == 2  # neither --model nor --baseline
    assert "give --model PATH, --baseline NAME, or both" in capsys.readouterr().err


def test_truncated_mrg_file_is_named_with_its_line(tmp_path, capsys):
    # nltk's own error ("Tree.read(): expected ')' but got 'end-of-string'
    # at index 299") names no file: the command names the file and line.
    folder = tmp_path / "mrg"
    folder.mkdir()
    (folder / "wsj_0001.mrg").write_text(SMALL_TREEBANK)
    bad = folder / "wsj_0002.mrg"
    bad.write_text(SMALL_TREEBANK[: SMALL_TREEBANK.index("(NP (-NONE- *-1)")])
    status, out, err = run(
        ["evaluate-parsing", "--treebank", str(folder), "--baseline",
         "balanced"],
        capsys,
    )
    assert status == 2 and out == ""
    assert err == (
        f"keras-ordered evaluate-parsing: error: {str(bad)!r} line 4: cannot "
        "read tree 2 (Tree.read(): expected ')' but got 'end-of-string' at "
        "index 67): the file is truncated or damaged, or not a Penn "
        "Treebank .mrg file.\n"
    )


# --- parse -------------------------------------------------------------------


def test_parse_baseline_from_arguments_stdin_and_file(tmp_path, capsys, monkeypatch):
    status, out, _ = run(
        ["parse", "--baseline", "right-branching", "The cat sat", "Go"], capsys
    )
    assert status == 0
    assert out.splitlines() == ["(The (cat sat))", "(Go)"]

    monkeypatch.setattr("sys.stdin", io.StringIO("a b c d\nx (y)\n"))
    status, out, _ = run(["parse", "--baseline", "balanced", "--no-tokenize"], capsys)
    assert status == 0
    assert out.splitlines() == ["((a b) (c d))", "(x -LRB-y-RRB-)"]

    path = tmp_path / "sentences.txt"
    path.write_text("a b c\n")
    status, out, _ = run(
        ["parse", "--baseline", "left-branching", "--file", str(path)], capsys
    )
    assert status == 0 and out == "((a b) c)\n"


def test_parse_input_errors(tmp_path, capsys, monkeypatch):
    # A blank line is skipped: it gives a blank line.
    monkeypatch.setattr("sys.stdin", io.StringIO("a b\n\nc\n"))
    status, out, err = run(["parse", "--baseline", "balanced"], capsys)
    assert status == 0 and out == "(a b)\n\n(c)\n"

    status, _, err = run(
        ["parse", "--baseline", "balanced", "--max-length", "3", "a b c d"], capsys
    )
    assert status == 2 and "more than --max-length 3" in err

    status, _, err = run(["parse", "--baseline", "balanced", "  "], capsys)
    assert status == 2 and "Argument 1 is empty" in err

    status, _, err = run(
        ["parse", "--baseline", "balanced", "--file", str(tmp_path / "no.txt")],
        capsys,
    )
    assert status == 2 and "Cannot read" in err

    status, _, err = run(
        ["parse", "--baseline", "balanced", "--layer", "1", "a b"], capsys
    )
    assert status == 2 and "need --model" in err


def test_parse_refuses_invalid_utf8_naming_the_line(tmp_path, capsys, monkeypatch):
    # Invalid UTF-8 is refused the same way from stdin and from --file,
    # naming the file and line (not Python's "'utf-8' codec can't decode
    # byte 0xff in position 0").
    bad = b"the cat\n\xff dog\n"
    path = tmp_path / "latin1.txt"
    path.write_bytes(bad)
    hint = "convert it to UTF-8 first"
    status, out, err = run(
        ["parse", "--baseline", "balanced", "--file", str(path)], capsys
    )
    assert status == 2 and out == ""
    assert err == (
        f"keras-ordered parse: error: {str(path)!r} line 2 is not valid "
        f"UTF-8 (byte 0xff at column 1): {hint} (e.g. `iconv -f latin1 -t "
        "utf-8`).\n"
    )
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(bad)))
    status, out, err = run(["parse", "--baseline", "balanced"], capsys)
    assert status == 2 and out == ""
    assert "error: <stdin> line 2 is not valid UTF-8 (byte 0xff" in err
    # sys.argv carries undecodable bytes as lone surrogates.
    status, out, err = run(
        ["parse", "--baseline", "balanced", "ok", "x \udcfe"], capsys
    )
    assert status == 2 and out == ""
    assert "error: Argument 2 is not valid UTF-8 (byte 0xfe at column 3)" in err
    assert len(err.splitlines()) == 1
    # Valid UTF-8 from stdin's bytes still parses.
    monkeypatch.setattr(
        "sys.stdin", io.TextIOWrapper(io.BytesIO("caf\u00e9 au lait\n".encode()))
    )
    status, out, _ = run(["parse", "--baseline", "balanced"], capsys)
    assert status == 0 and out == "((caf\u00e9 au) lait)\n"


def test_parse_splits_punctuation_like_the_treebank(capsys):
    status, out, err = run(
        ["parse", "--baseline", "right-branching",
         "The cat, sat on the mat.", "He didn't."],
        capsys,
    )
    assert status == 0, err
    assert out.splitlines() == [
        "(The (cat (, (sat (on (the (mat .)))))))",
        "(He (did (n't .)))",
    ]
    assert err == ""  # no distance line for a baseline
    status, out, _ = run(
        ["parse", "--baseline", "right-branching", "--no-tokenize",
         "The cat, sat on the mat."],
        capsys,
    )
    assert status == 0
    assert out == "(The (cat, (sat (on (the mat.)))))\n"
    # Tokens, not words, count for --max-length.
    status, out, _ = run(
        ["parse", "--baseline", "balanced", "--max-length", "3", "a b."], capsys
    )
    assert status == 0 and out == "((a b) .)\n"
    status, _, err = run(
        ["parse", "--baseline", "balanced", "--max-length", "3", "a b c."], capsys
    )
    assert status == 2 and "has 4 tokens, more than --max-length 3" in err


def test_cli_baseline_names_are_the_parsing_baselines():
    from keras_ordered.parsing import BASELINES

    assert set(_common.BASELINE_NAMES) == set(BASELINES)


def test_cli_decoders_are_the_parsing_decoders():
    from keras_ordered.parsing import DECODERS

    assert _common.DECODERS == DECODERS


def test_numeric_options_are_validated_by_the_parser(capsys):
    # `parse --batch-size 0` is a usage error naming the option, not a
    # Python error from inside the command.
    import argparse

    parser = cli.build_parser()
    commands = next(
        action for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    checked = 0
    for name, subparser in commands.choices.items():
        for action in subparser._actions:
            if action.type is int and action.dest != "shift":
                pytest.fail(f"{name} {action.option_strings}: plain int")
            checked += action.type in (_common.positive_int,
                                       _common.non_negative_int)
    assert checked >= 15
    for argv, message in (
        (["parse", "--batch-size", "0", "a b c"],
         "argument --batch-size: must be a positive integer (1, 2, ...), got '0'"),
        (["parse", "--max-length", "-3", "a"],
         "argument --max-length: must be a positive integer"),
        (["parse", "--seed", "-1", "a"],
         "argument --seed: must be an integer of 0 or more, got '-1'"),
        (["evaluate-parsing", "--baseline", "balanced", "--limit", "x"],
         "argument --limit: must be a positive integer (1, 2, ...), got 'x'"),
        (["score", "f.dp", "--model", "m.keras", "--batch-size", "0"],
         "argument --batch-size: must be a positive integer"),
        (["evalb", "-e", "-1", "g", "t"],
         "argument -e/--max-error: must be an integer of 0 or more"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert f"keras-ordered {argv[0]}: error: {message}" in err, err
        assert "Traceback" not in err


# --- models ------------------------------------------------------------------


class FakeDistanceModel:
    """Implements the distance protocol of keras_ordered.models.base."""

    distance_names = ["layer1/forget", "layer1/input", "layer2/forget", "layer2/input"]
    default_distance = "layer2/forget"

    def __init__(self):
        self.seen = []

    def sentence_distances(self, sentences, batch_size=64, progress=None):
        self.seen.append([list(s) for s in sentences])
        result = {}
        for name in self.distance_names:
            if name.endswith("forget"):  # increasing: left-branching
                result[name] = [np.arange(len(s), dtype=float) for s in sentences]
            else:  # constant: right-branching
                result[name] = [np.zeros(len(s)) for s in sentences]
        self.progress = progress
        if progress is not None:
            progress(len(sentences))
        return result


@pytest.fixture
def fake_model(monkeypatch):
    model = FakeDistanceModel()
    monkeypatch.setattr(_common, "load_model", lambda path, args=None: model)
    return model


def test_parse_with_model_distances(fake_model, capsys):
    status, out, err = run(["parse", "--model", "m.keras", "The 61 cats sat"], capsys)
    assert status == 0
    # One line on stderr says which distance was used; stdout has the trees.
    assert err == (
        "parsed with layer2/forget (the model's default; --layer/--distance "
        "pick another)\n"
    )
    # Default distance (layer2/forget, increasing): left-branching, with the
    # words printed and passed as given (the model normalises them, see
    # `SyntacticDistanceMixin.token_ids`).
    assert out == "(((The 61) cats) sat)\n"
    assert fake_model.seen == [[["The", "61", "cats", "sat"]]]

    status, out, err = run(
        ["parse", "--model", "m.keras", "--distance", "input", "a b c"], capsys
    )
    assert status == 0 and out == "(a (b c))\n"
    assert err == "parsed with layer2/input (picked by --distance input)\n"

    status, _, err = run(
        ["parse", "--model", "m.keras", "--layer", "3", "a b c"], capsys
    )
    assert status == 2
    assert "no distance layer3/*" in err and "layer2/input" in err


def test_parse_model_reads_the_split_tokens(fake_model, capsys):
    status, out, err = run(
        ["parse", "--model", "m.keras", "--layer", "1", "The cat, sat."], capsys
    )
    assert status == 0, err
    assert fake_model.seen == [[["The", "cat", ",", "sat", "."]]]
    assert out == "((((The cat) ,) sat) .)\n"
    assert err == "parsed with layer1/forget (picked by --layer 1)\n"


def test_parse_long_sentences_within_max_length(fake_model, capsys):
    # 400 tokens (the default --max-length) and 3,000 tokens (depth 2,999
    # with rising distances) parse: the tree building does not recurse.
    for length, extra in ((400, []), (3000, ["--max-length", "30000"])):
        sentence = " ".join(["word"] * length)
        for distance in ("forget", "input"):  # left- and right-branching
            status, out, err = run(
                ["parse", "--model", "m.keras", "--distance", distance,
                 *extra, sentence],
                capsys,
            )
            assert status == 0, err
            assert out.count("word") == length
            assert out.count("(") == out.count(")") == length - 1


def test_parse_corrupt_model_file(tmp_path, capsys):
    import zipfile

    noise = tmp_path / "noise.keras"
    noise.write_bytes(np.random.default_rng(0).bytes(3000))
    truncated = tmp_path / "truncated.keras"
    with zipfile.ZipFile(truncated, "w") as archive:
        archive.writestr("config.json", "{}" * 2000)
        archive.writestr("model.weights.h5", bytes(5000))
    truncated.write_bytes(truncated.read_bytes()[:3000])
    for path in (noise, truncated):
        status, out, err = run(["parse", "--model", str(path), "a b"], capsys)
        assert status == 2 and out == ""
        assert len(err.splitlines()) == 1
        assert f"{str(path)!r} is not a readable Keras model file" in err
        assert "not found" not in err.lower()


def test_evaluate_model_and_baselines_in_one_table(fake_model, small_treebank,
                                                   capsys):
    argv = ["evaluate-parsing", "--treebank", small_treebank, "--model",
            "m.keras", "--baseline", "right-branching", "random",
            "--baseline", "balanced", "--seed", "3"]
    status, out, err = run(argv + ["--json"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == [
        "treebank", "model", "shift", "decoder", "default_distance",
        "distances", "baselines",
    ]
    assert result["decoder"] == "right"
    assert result["shift"] == 0
    assert list(result["distances"]) == FakeDistanceModel.distance_names
    assert list(result["baselines"]) == ["right-branching", "random", "balanced"]
    assert result["baselines"]["random"]["seed"] == 3
    # Constant distances give the right-branching trees.
    assert result["distances"]["layer1/input"] == result["baselines"][
        "right-branching"
    ]
    assert len(fake_model.seen) == 1  # the model read the treebank once

    status, out, err = run(argv, capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("treebank: ") and "5 sentences" in lines[0]
    assert lines[1] == "model: m.keras (default distance: layer2/forget)"
    assert lines[2].split()[:3] == ["trees", "sent-F1", "corpus-F1"]
    rows = [line.split()[0] for line in lines[3:-2]]
    assert rows == FakeDistanceModel.distance_names + [
        "right-branching", "random", "balanced"
    ]
    assert "random (seed 3)" in out
    assert lines[-2].split()[0] == "gold"
    assert sum(line.startswith("trees ") for line in lines) == 1  # one table


def test_each_command_points_a_model_to_the_command_that_takes_it(
        monkeypatch, small_treebank, capsys):
    # Each command given a model it does not take names the command that
    # takes it (a TD-TreeLSTM: `score`, not `evaluate-parsing`).
    from keras_ordered.datasets.dependency import DependencyVocabulary
    from keras_ordered.models import TDTreeLSTMLanguageModel

    model = TDTreeLSTMLanguageModel(
        DependencyVocabulary(["the", "cat"]), embedding_dim=2, units=2,
        num_layers=1,
    )
    monkeypatch.setattr(_common, "load_model", lambda path, args=None: model)
    score = ("use `keras-ordered score FILE --model td.keras` (log P(S|T) of "
             "dependency trees; a TD-TreeLSTM induces no constituency trees).")
    for argv in (
        ["evaluate", "--treebank", small_treebank, "--model", "td.keras"],
        ["evaluate-parsing", "--treebank", small_treebank, "--model",
         "td.keras"],
        ["parse", "--model", "td.keras", "a b"],
    ):
        status, out, err = run(argv, capsys)
        assert status == 2 and out == "", err
        assert len(err.splitlines()) == 1
        assert err.rstrip("\n").endswith(score.split(" ", 1)[1]), err
    monkeypatch.setattr(_common, "load_model",
                        lambda path, args=None: FakeDistanceModel())
    status, _, err = run(["evaluate", "--treebank", small_treebank, "--model",
                          "lm.keras"], capsys)
    assert status == 2
    assert err.rstrip("\n").endswith(
        "not a GFL parser: use `keras-ordered evaluate-parsing --model "
        "lm.keras` (the trees of its syntactic distances) or `keras-ordered "
        "parse --model lm.keras`."
    ), err


def test_model_without_distances(monkeypatch, capsys):
    monkeypatch.setattr(_common, "load_model", lambda path, args=None: object())
    status, out, err = run(["parse", "--model", "m.keras", "a b"], capsys)
    assert status == 2 and out == ""
    assert "yields no syntactic distances" in err


def test_evaluate_every_distance_of_a_model(fake_model, small_treebank, capsys):
    treebank = small_treebank
    status, out, err = run(
        ["evaluate-parsing", "--treebank", treebank, "--model", "m.keras",
         "--json"],
        capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert list(result["distances"]) == FakeDistanceModel.distance_names
    assert result["default_distance"] == "layer2/forget"
    assert result["distances"]["layer2/forget"]["sentences"] == 5
    # One copy of each metric: the rows only, nothing repeated at the top.
    assert list(result) == [
        "treebank", "model", "shift", "decoder", "default_distance",
        "distances",
    ]
    # Constant distances are the right-branching baseline.
    status, out, _ = run(
        ["evaluate-parsing", "--treebank", treebank, "--baseline",
         "right-branching", "--json"],
        capsys,
    )
    right = json.loads(out)["baselines"]["right-branching"]
    assert result["distances"]["layer1/input"]["sentence_f1"] == pytest.approx(
        right["sentence_f1"]
    )

    status, out, _ = run(
        ["evaluate-parsing", "--treebank", treebank, "--model", "m.keras",
         "--distance", "input"],
        capsys,
    )
    assert status == 0
    rows = [line.split()[0] for line in out.splitlines()]
    assert "layer1/input" in rows and "layer2/input" in rows
    assert "layer2/forget" not in rows


def test_select_distance_names():
    names = FakeDistanceModel.distance_names
    default = "layer2/forget"
    assert cli.select_distance_names(names, default) == names
    assert cli.select_distance_names(names, default, single=True) == [default]
    assert cli.select_distance_names(names, default, layer=1, single=True) == [
        "layer1/forget"
    ]
    assert cli.select_distance_names(names, default, kind="input", single=True) == [
        "layer2/input"
    ]
    assert cli.select_distance_names(names, default, layer=1) == [
        "layer1/forget", "layer1/input"
    ]
    # PRPN-style names: the default is used, and --layer finds nothing.
    assert cli.select_distance_names(
        ["parser/distance"], "parser/distance", single=True
    ) == ["parser/distance"]
    with pytest.raises(cli.CommandError, match="parser/distance"):
        cli.select_distance_names(["parser/distance"], "parser/distance", layer=1)


def test_real_tiny_onlstm_end_to_end(tmp_path, small_treebank, capsys):
    from keras_ordered.models.onlstm import ONLSTMLanguageModel

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "N"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=vocabulary, seed=1)
    path = str(tmp_path / "tiny.keras")
    model.save(path)

    status, out, err = run(
        ["parse", "--model", path, "the cat sat on the mat", "The 3 cats"], capsys
    )
    assert status == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].replace("(", " ").replace(")", " ").split() == [
        "the", "cat", "sat", "on", "the", "mat"
    ]
    status, out, err = run(
        ["parse", "--model", path, "--layer", "1", "--distance", "input", "a b"],
        capsys,
    )
    assert status == 0 and out == "(a b)\n"

    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--model", path,
         "--json"],
        capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert sorted(result["distances"]) == sorted(model.distance_names)
    assert result["default_distance"] == model.default_distance
    for scores in result["distances"].values():
        assert 0 <= scores["sentence_f1"] <= 100


def test_real_tiny_prpn_end_to_end(tmp_path, small_treebank, capsys):
    from keras_ordered.models.prpn import PRPNLanguageModel
    from keras_ordered.parsing import distances_to_tree
    from keras_ordered.parsing import tree_to_brackets

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "N"]
    model = PRPNLanguageModel.from_preset("tiny", vocabulary=vocabulary, seed=3)
    path = str(tmp_path / "prpn.keras")
    model.save(path)
    words = "the cat sat on the mat".split()
    expected = tree_to_brackets(distances_to_tree(
        words, model.sentence_distances([words])["parser/distance"][0]
    ))

    status, out, err = run(["parse", "--model", path, " ".join(words)], capsys)
    assert status == 0, err
    assert out == expected + "\n"
    assert err == "parsed with parser/distance (the model's only distance)\n"
    # PRPN has one distance: asking for a layer or an input-gate distance
    # is an error that names what there is.
    status, out, err = run(
        ["parse", "--model", path, "--distance", "input", "the cat"], capsys
    )
    assert status != 0 and "parser/distance" in err

    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--model", path,
         "--json"],
        capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert list(result["distances"]) == ["parser/distance"]
    scores = result["distances"]["parser/distance"]
    assert scores["sentences"] == 5
    assert 0 <= scores["sentence_f1"] <= 100


# --- --decoder right|left|both ---------------------------------------------


def _table_rows(out):
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("trees "))
    gold = next(i for i, line in enumerate(lines) if line.startswith("gold "))
    return lines, {
        line[:line.index("  ")].rstrip(): line.split()[-8:]
        for line in lines[first + 1:gold]
    }


def test_evaluate_parsing_decoder_both_prints_both_rows(
        fake_model, small_treebank, capsys):
    argv = ["evaluate-parsing", "--treebank", small_treebank, "--model",
            "m.keras", "--decoder", "both", "--baseline", "right-branching",
            "left-branching"]
    status, out, err = run(argv + ["--json"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == [
        "treebank", "model", "shift", "decoder", "default_distance",
        "distances", "baselines",
    ]
    assert result["decoder"] == "both"
    assert list(result["distances"]) == [
        f"{name} ({decoder})" for name in FakeDistanceModel.distance_names
        for decoder in ("right", "left")
    ]
    assert len(fake_model.seen) == 1  # one read of the treebank for both
    distances, baselines = result["distances"], result["baselines"]
    # Constant distances (input): right-branching trees under the right
    # decoder, left-branching ones under the left decoder, its mirror.
    assert distances["layer1/input (right)"] == baselines["right-branching"]
    assert distances["layer1/input (left)"] == baselines["left-branching"]
    assert baselines["right-branching"] != baselines["left-branching"]
    # Increasing distances (forget): the strict maximum is the last word,
    # so both decoders give the left-branching trees.
    assert distances["layer2/forget (right)"] == baselines["left-branching"]
    assert distances["layer2/forget (left)"] == baselines["left-branching"]

    status, out, err = run(argv, capsys)
    assert status == 0, err
    lines, rows = _table_rows(out)
    assert list(rows) == list(distances) + ["right-branching",
                                            "left-branching"]
    assert rows["layer1/input (left)"] == rows["left-branching"]
    assert rows["layer1/input (right)"] == rows["right-branching"]
    assert lines[2].startswith("decoders: right (the published parser")
    assert lines[-1].endswith(
        "Baselines are trees, not distances: --decoder does not change them "
        "(random: random distances through the right decoder).")


def test_evaluate_parsing_decoder_left_gives_the_mirror_result(
        fake_model, small_treebank, capsys):
    argv = ["evaluate-parsing", "--treebank", small_treebank, "--model",
            "m.keras", "--baseline", "right-branching", "left-branching",
            "--json"]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    right = json.loads(out)
    status, out, err = run(argv + ["--decoder", "left"], capsys)
    assert status == 0, err
    left = json.loads(out)
    assert left["decoder"] == "left"
    assert list(left["distances"]) == [
        f"{name} (left)" for name in FakeDistanceModel.distance_names]
    assert left["baselines"] == right["baselines"]
    # The right decoder's right-branching result, mirrored; the
    # increasing distances' left-branching trees stay.
    assert right["distances"]["layer2/input"] == right["baselines"][
        "right-branching"]
    assert left["distances"]["layer2/input (left)"] == left["baselines"][
        "left-branching"]
    assert left["distances"]["layer2/forget (left)"] == right["distances"][
        "layer2/forget"]

    status, out, err = run(["evaluate-parsing", "--treebank", small_treebank,
                            "--baseline", "random", "--decoder", "left"],
                           capsys)
    assert status == 2 and out == ""
    assert err.strip().endswith(
        "--decoder needs --model: the baselines are trees, not distances.")


def test_evaluate_parsing_decoder_both_over_runs_and_protocols(
        fake_model, small_treebank, capsys):
    status, out, err = run(
        ["evaluate-parsing", "--treebank", small_treebank, "--model",
         "a.keras", "b.keras", "--decoder", "both", "--distance", "input",
         "--protocol", "on-lstm", "--json"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert result["decoder"] == "both"
    names = ["layer1/input (right)", "layer1/input (left)",
             "layer2/input (right)", "layer2/input (left)"]
    assert list(result["summary"]) == list(result["self_f1"]) == names
    assert result["self_f1"]["layer1/input (left)"] == 100.0
    block = result["protocols"]["on-lstm"]
    assert list(block["models"][0]["distances"]) == names
    assert list(block["summary"]) == names


def test_parse_decoder_left(fake_model, capsys):
    status, out, err = run(["parse", "--model", "m.keras", "--distance",
                            "input", "--decoder", "left", "a b c"], capsys)
    assert status == 0, err
    assert out == "((a b) c)\n"
    assert err == "parsed with layer2/input (picked by --distance input), " \
        "left decoder\n"
    status, out, err = run(["parse", "--baseline", "balanced", "--decoder",
                            "left", "a b c"], capsys)
    assert status == 2 and out == ""
    assert "--decoder needs --model" in err


def test_evaluate_parsing_decoder_both_on_a_shipped_model(capsys):
    treebank = require_data("wsj_sample", "mrg")
    argv = ["evaluate-parsing", "--treebank", treebank, "--model",
            "prpn_ptb_quick", "--limit", "20"]
    status, out, err = run(argv + ["--decoder", "both"], capsys)
    assert status == 0, err
    lines, rows = _table_rows(out)
    assert list(rows) == ["parser/distance (right)", "parser/distance (left)"]
    assert rows["parser/distance (right)"] != rows["parser/distance (left)"]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    _, default_rows = _table_rows(out)
    assert default_rows == {"parser/distance": rows["parser/distance (right)"]}


def test_commands_run_models_with_float32_products(monkeypatch, capsys):
    # A subcommand runs with TensorFloat-32 off (the GPUs' default for
    # float32 products), which comes back after it.
    import tensorflow as tf

    from keras_ordered_cli import evaluate

    seen = []

    def run(args):
        seen.append(
            tf.config.experimental.tensor_float_32_execution_enabled())
        return 0

    monkeypatch.setattr(evaluate, "run", run)
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    assert cli.main(["evaluate", "--model", "m"]) == 0
    assert seen == [False]
    assert tf.config.experimental.tensor_float_32_execution_enabled() is (
        before) is True
