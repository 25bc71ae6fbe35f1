"""The options several subcommands share are defined once
(`keras_ordered_cli._options`), and the names they choose among once
(`keras_ordered_options`, which the package reads too)."""

import argparse
import ast
import glob
import os

import pytest

import keras_ordered_cli
import keras_ordered_options
from keras_ordered_cli import _options

SHARED = ("--model", "--beam-size", "--batch-size", "--max-length",
          "--layer", "--distance", "--decoder", "--baseline", "--no-tokenize",
          "--limit", "--treebank")


def _subparsers():
    parser = keras_ordered_cli.build_parser()
    (commands,) = [action for action in parser._actions
                   if isinstance(action, argparse._SubParsersAction)]
    return commands.choices


def test_no_subcommand_writes_a_shared_option_out_itself():
    folder = os.path.dirname(keras_ordered_cli.__file__)
    written = []
    for path in glob.glob(os.path.join(folder, "*.py")):
        if os.path.basename(path) == "_options.py":
            continue
        for node in ast.walk(ast.parse(open(path).read())):
            if (isinstance(node, ast.Call)
                    and getattr(node.func, "attr", None) == "add_argument"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in SHARED):
                written.append(f"{os.path.basename(path)}: "
                               f"{node.args[0].value}")
    assert written == []


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_is_the_same_wherever_it_is(option):
    found = {}
    for name, parser in _subparsers().items():
        action = parser._option_string_actions.get(option)
        if action is not None:
            found[name] = action
    assert found, option
    for attribute in ("type", "choices", "dest") if option not in (
            "--decoder", "--baseline", "--model") else ("type", "dest"):
        assert len({repr(getattr(a, attribute))
                    for a in found.values()}) == 1, (option, attribute)
    if option == "--max-length":
        assert {a.default for a in found.values()} == {
            keras_ordered_options.MAX_SENTENCE_LENGTH}
    if option == "--batch-size":
        assert {a.default for a in found.values()} == {_options.BATCH_SIZE}


def test_the_names_options_choose_among_are_the_packages():
    from keras_ordered import parsing
    from keras_ordered.datasets import treebank

    assert parsing.DECODERS is keras_ordered_options.DECODERS
    assert parsing.WORD_DECODERS is keras_ordered_options.WORD_DECODERS
    assert tuple(parsing.BASELINES) == keras_ordered_options.BASELINE_NAMES
    assert treebank.SPLIT_NAMES is keras_ordered_options.SPLIT_NAMES
    commands = _subparsers()
    decoder = commands["parse"]._option_string_actions["--decoder"]
    assert tuple(decoder.choices) == parsing.DECODERS
    baseline = commands["evaluate-parsing"]._option_string_actions[
        "--baseline"]
    assert tuple(baseline.choices) == tuple(parsing.BASELINES)
    distance = commands["export"]._option_string_actions["--distance"]
    assert tuple(distance.choices) == keras_ordered_options.DISTANCE_KINDS
    split = commands["evaluate-parsing"]._option_string_actions["--split"]
    assert tuple(split.choices) == treebank.SPLIT_NAMES
    from keras_ordered.parsing import evaluate

    assert {name: protocol.punctuation for name, protocol in
            evaluate.PROTOCOLS.items()} == keras_ordered_options.PROTOCOL_PUNCTUATION
    protocol = commands["evaluate-parsing"]._option_string_actions[
        "--protocol"]
    assert tuple(protocol.choices) == tuple(evaluate.PROTOCOLS) + ("all",)


def test_add_model_refuses_an_unknown_repeat():
    with pytest.raises(ValueError, match="repeat must be None"):
        _options.add_model(argparse.ArgumentParser(), "m", repeat="many")
