"""The recipes' shared shape: option groups, the one `main` wrapper, the
bucketed batches."""

import argparse
import dataclasses

import numpy as np
import pytest

from keras_ordered.training import config
from keras_ordered.training import options
from keras_ordered.training.batching import BucketedBatches
from keras_ordered.training.batching import GFLBatches
from keras_ordered.training.batching import TreeBatches
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.tasks import gfl as gfl_task
from keras_ordered.training.tasks import language_model
from keras_ordered.training.tasks import tdtreelstm as tdtreelstm_task
from keras_ordered.tuning import search

SHARED = ("--preset", "--output", "--seed", "--verbose", "--tf-logs")


def _option_strings(parser):
    return {s for action in parser._actions for s in action.option_strings}


def _parsers():
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.tuning.hypermodels import ONLSTMHyperModel

    return {
        "language_model": language_model.build_parser("t", PRESETS, "runs/t"),
        "gfl": gfl_task.build_parser(),
        "tdtreelstm": tdtreelstm_task.build_parser(),
        "search": search.build_parser("t", ONLSTMHyperModel, PRESETS,
                                      "runs/t"),
    }


def test_every_recipe_builds_its_options_from_the_shared_groups():
    for name, parser in _parsers().items():
        assert set(SHARED) <= _option_strings(parser), name
        assert parser.formatter_class is options.HelpFormatter, name
        # One spelling, one validation: a count of 0 is a usage error of
        # argparse itself, whichever recipe.
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(["--steps-per-epoch", "0"])
        assert exit_info.value.code == 2, name
    trainers = {"language_model": "epochs", "gfl": "epochs",
                "tdtreelstm": "max_epochs"}  # the fields --epochs sets
    for name, epochs in trainers.items():
        parser = _parsers()[name]
        args = parser.parse_args(["--epochs", "3", "--learning-rate", "0.5"])
        assert (getattr(args, epochs), args.learning_rate) == (3, 0.5)
        for bad in (["--epochs", "0"], ["--batch-size", "-2"],
                    ["--learning-rate", "0"], ["--learning-rate", "x"]):
            with pytest.raises(SystemExit):
                parser.parse_args(bad)


def test_option_errors_name_the_option(capsys):
    parser = gfl_task.build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["--learning-rate", "-1"])
    err = capsys.readouterr().err
    assert "argument --learning-rate: must be a positive number, got '-1'" in err


def test_the_help_shows_each_default_once():
    parser = options.recipe_parser("d")
    options.add_output(parser, "runs/x")
    options.add_seed(parser)
    options.add_precision(parser)
    text = parser.format_help()
    assert text.count("(default: runs/x)") == 1
    assert "(default: 1111)" in text
    assert f"(default: {config.DEFAULT_PRECISION})" in text


def test_the_language_model_recipes_take_the_presets_precision():
    from keras_ordered.models import onlstm
    from keras_ordered.models import prpn

    parser = language_model.build_parser("d", onlstm.PRESETS, "runs/x")
    assert parser.parse_args([]).precision is None
    assert parser.parse_args(["--precision", "float32"]).precision == "float32"
    resolved = {
        (family, name): config.preset_precision(None, module.get_preset(name))
        for family, module in (("onlstm", onlstm), ("prpn", prpn))
        for name in module.PRESETS
    }
    # bfloat16 is the default only where its seed study passed the rule for
    # defaults (benchmarks/README.md): ON-LSTM's `small` preset, and its
    # `medium` preset (the learning-parity benchmark's shape, whose
    # records passed the rule).
    assert resolved.pop(("onlstm", "small")) == "mixed_bfloat16"
    assert resolved.pop(("onlstm", "medium")) == "mixed_bfloat16"
    assert set(resolved.values()) == {config.DEFAULT_PRECISION} == {"float32"}
    # An explicit --precision wins over the preset's.
    assert config.preset_precision(
        "float32", onlstm.get_preset("small")) == "float32"
    # --help lists each preset's precision.
    epilog = parser.format_help()
    assert "precision mixed_bfloat16" in " ".join(epilog.split())


def test_model_args_are_json_values_of_the_models_arguments():
    from keras_ordered.models import ONLSTMLanguageModel

    pairs = ["chunk_size=20", "hidden_dims=[600, 600, 200]",
             "weight_drop_scaling=official"]
    assert config.parse_model_args(pairs, ONLSTMLanguageModel) == {
        "chunk_size": 20, "hidden_dims": [600, 600, 200],
        "weight_drop_scaling": "official"}
    assert config.parse_model_args([], ONLSTMLanguageModel) == {}
    with pytest.raises(ValueError, match="expected NAME=VALUE"):
        config.parse_model_args(["chunk_size"], ONLSTMLanguageModel)
    # The constructor's arguments, less the vocabulary and seed.
    with pytest.raises(ValueError, match="choose among ar_alpha, ar_input, "
                       "chunk_size, .*, weight_drop_scaling.$") as error:
        config.parse_model_args(["chunks=2"], ONLSTMLanguageModel)
    assert "vocabulary" not in str(error.value)
    assert "seed" not in str(error.value)
    parser = language_model.build_parser("d", {}, "runs/x")
    assert parser.parse_args(
        ["--model-arg", "a=1", "--model-arg", "b=2"]).model_arg == ["a=1",
                                                                     "b=2"]


def _parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default="runs/none")
    parser.add_argument("--verbose", type=int, default=None)
    return parser


def test_run_recipe_exit_statuses(capsys):
    seen = {}

    def task(args, extra=None):
        seen["verbose"], seen["extra"] = args.verbose, extra
        return 0

    assert run_recipe(_parser(), task, [], extra=5) == 0
    # Not a terminal under pytest: one line per epoch.
    assert seen == {"verbose": 2, "extra": 5}

    def bad_input(args):
        raise ValueError("No treebank folder at 'x'.")

    assert run_recipe(_parser(), bad_input, []) == 2
    assert capsys.readouterr().err == "error: No treebank folder at 'x'.\n"

    def interrupted_task(args):
        raise KeyboardInterrupt

    messages = []
    status = run_recipe(_parser(), interrupted_task, [],
                        interrupted=lambda output: messages.append(output)
                        or 130)
    assert status == 130 and messages == ["runs/none"]

    def crash(args):
        raise RuntimeError("a worker died")

    with pytest.raises(RuntimeError):
        run_recipe(_parser(), crash, [])
    assert run_recipe(_parser(), crash, [],
                      on_error=lambda args, error: 1) == 1
    with pytest.raises(RuntimeError):
        run_recipe(_parser(), crash, [], on_error=lambda args, error: None)


def test_run_recipe_default_interruption_says_how_to_resume(tmp_path, capsys):
    # A KeyboardInterrupt raised in the task (a real SIGINT ends the
    # process with os._exit: tests/test_ctrl_c.py sends those to recipes).
    def task(args):
        raise KeyboardInterrupt

    status = run_recipe(_parser(), task, ["--output", str(tmp_path / "run")])
    assert status == 130
    err = capsys.readouterr().err
    assert "Interrupted before the first backup: nothing to resume" in err


class _Lengths(BucketedBatches):
    def __init__(self, lengths, batch_size, shuffle=True, seed=0):
        super().__init__(len(lengths), batch_size, shuffle, seed)
        self.lengths = lengths

    def length(self, index):
        return self.lengths[index]

    def arrays(self, indices):
        return np.asarray(indices)


def _reference_order(lengths, size, seed, epoch):
    """The bucketing, written out independently with NumPy."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    batches = []
    for first in range(0, len(lengths), 50 * size):
        part = order[first:first + 50 * size]
        part = part[np.argsort([lengths[i] for i in part], kind="stable")]
        batches += [list(part[i:i + size]) for i in range(0, len(part), size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def test_bucketed_batches_order():
    rng = np.random.default_rng(3)
    lengths = list(rng.integers(1, 40, size=523))
    batches = _Lengths(lengths, 4, seed=9)
    for epoch in (0, 1, 7):
        got = batches.batch_indices(epoch)
        assert [list(b) for b in got] == _reference_order(lengths, 4, 9, epoch)
        assert sorted(i for b in got for i in b) == list(range(523))
    assert batches.batch_indices(1) != batches.batch_indices(2)
    assert len(batches) == len(batches.batch_indices(0)) == 131
    # Evaluation order: the input order, or sorted by length.
    assert _Lengths([3, 1, 2], 2, shuffle=False).batch_indices(0) == [[0, 1], [2]]
    sorted_kind = type("Sorted", (_Lengths,), {"sort_unshuffled": True})
    assert sorted_kind([3, 1, 2], 2, shuffle=False).batch_indices(0) == [[1, 2], [0]]
    with pytest.raises(ValueError, match="the split is empty"):
        _Lengths([], 2)
    with pytest.raises(ValueError, match="batch size must be >= 1"):
        _Lengths([1], 0)


def test_gfl_and_tree_batches_share_the_bucketing():
    from keras_ordered.models.tdtreelstm import encode_tree

    targets = [[3] * n for n in (5, 1, 4, 2, 6, 3, 2)]
    gfl = GFLBatches([[4]] * len(targets), targets, batch_size=2, seed=5)
    lengths = [len(t) for t in targets]
    assert gfl.batch_indices(2) == _reference_order(lengths, 2, 5, 2)
    (source, target_in), target_out = gfl.arrays([1, 4])
    assert target_in.shape == target_out.shape == (2, 7)
    assert source.dtype == target_in.dtype == np.int32

    heads = [[0], [2, 0], [2, 0, 2], [0, 1, 2, 3]]
    trees = [encode_tree(list(range(5, 5 + len(h))), h) for h in heads]
    tree_batches = TreeBatches(trees, batch_size=3, seed=1)
    tree_lengths = [len(t["targets"]) for t in trees]
    assert tree_batches.batch_indices(0) == _reference_order(tree_lengths, 3, 1, 0)
    ordered = TreeBatches(trees, batch_size=3, shuffle=False)
    assert ordered.batch_indices(0) == [sorted(range(4), key=tree_lengths.__getitem__)[:3], [3]]
    assert tree_batches.words == sum(tree_lengths)


# --- options made from the typed configs' fields ------------------------------
def _config_classes():
    from keras_ordered.training.config import DistanceParserExperiment
    from keras_ordered.training.config import GFLExperiment
    from keras_ordered.training.config import GFLTraining
    from keras_ordered.training.config import LanguageModelExperiment
    from keras_ordered.training.config import LanguageModelTraining
    from keras_ordered.training.config import TDTreeLSTMExperiment
    from keras_ordered.training.config import TDTreeLSTMTraining
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.tuning.hypermodels import ONLSTMHyperModel
    from keras_ordered.training.tasks import distance_parser

    parsers = _parsers()
    return [
        (parsers["language_model"], LanguageModelTraining, True),
        (parsers["language_model"], LanguageModelExperiment, False),
        (parsers["gfl"], GFLTraining, True),
        (parsers["gfl"], GFLExperiment, False),
        (parsers["tdtreelstm"], TDTreeLSTMTraining, True),
        (parsers["tdtreelstm"], TDTreeLSTMExperiment, False),
        (distance_parser.build_parser(), DistanceParserExperiment, False),
        (search.build_parser("t", ONLSTMHyperModel, PRESETS, "runs/t"),
         search.SearchExperiment, False),
    ]


def test_each_generated_option_takes_its_help_type_and_choices_from_its_field():
    checked = 0
    for parser, config_class, by_preset in _config_classes():
        actions = {action.dest: action for action in parser._actions}
        for field in dataclasses.fields(config_class):
            option = field.metadata.get("option")
            if option is None:
                continue
            action = actions[field.name]  # every such field is an option
            flag = option.get("flag", "--" + field.name.replace("_", "-"))
            assert action.option_strings == [flag], field.name
            help_text = option["help"] + (
                " (default: the preset's)" if by_preset else "")
            assert action.help == help_text, field.name
            assert action.type is option.get("type"), field.name
            assert action.choices == option.get("choices"), field.name
            if by_preset:
                assert action.default is None, field.name  # the preset's
            elif field.default is not dataclasses.MISSING:
                expected = field.default
                if isinstance(expected, tuple):
                    expected = list(expected)
                assert action.default == expected, field.name
            checked += 1
    assert checked >= 60


def test_switches_follow_their_fields_default():
    from keras_ordered.training.tasks import language_model_options

    parser = tdtreelstm_task.build_parser()
    assert parser.parse_args([]).jit_compile is True
    assert parser.parse_args(["--no-jit"]).jit_compile is False
    assert parser.parse_args(["--ld"]).ld is True
    parser = gfl_task.build_parser()
    assert parser.parse_args(["--no-attention"]).attention is False
    # The help of a switch says what it does, no "(default: True)".
    assert "(default: True)" not in parser.format_help()
    # A training setting the preset decides stays None unless given.
    from keras_ordered.models import PRPNLanguageModel

    parser = language_model.build_parser("t", {}, "runs/t")
    args = parser.parse_args(["--preset", "tiny"])
    assert args.variable_length is None and args.bptt is None
    experiment = language_model_options.experiment_from_options(
        args, PRPNLanguageModel)
    preset = PRPNLanguageModel.get_preset("tiny")["training"]
    assert experiment.training.bptt == preset["bptt"]
    args = parser.parse_args(["--preset", "tiny", "--fixed-length",
                              "--bptt", "5"])
    experiment = language_model_options.experiment_from_options(
        args, PRPNLanguageModel)
    assert experiment.training.variable_length is False
    assert experiment.training.bptt == 5


def test_a_full_command_line_gives_the_run_it_gave_before():
    """Every language-model option at once: the experiment the option
    lists of the former `LanguageModelExperiment.from_options` gave (its
    `to_dict()`, recorded before they were replaced by the fields'
    metadata)."""
    from keras_ordered.models import ONLSTMLanguageModel
    from keras_ordered.training.tasks import language_model_options

    argv = [
        "--preset", "small", "--epochs", "3", "--batch-size", "7", "--bptt",
        "9", "--learning-rate", "0.5", "--fixed-length", "--adam", "keras",
        "--model-arg", "chunk_size=5", "--precision", "mixed_bfloat16",
        "--tf32", "--seed", "3", "--verbose", "1", "--strategy", "mirrored",
        "--cpu-devices", "2", "--jit-compile", "--skip-test", "--save-freq",
        "11", "--log-every", "0", "--parse-eval", "x",
        "--parse-eval-sentences", "5", "--eval-steps", "4", "--max-lines",
        "100", "--exclude-treebank", "e", "--treebank", "tb", "--data", "d",
        "--steps-per-epoch", "6", "--output", "o", "--mixed-precision"]
    parser = language_model.build_parser("t", {}, "runs/t")
    experiment = language_model_options.experiment_from_options(
        parser.parse_args(argv), ONLSTMLanguageModel).to_dict()
    training = experiment.pop("training")
    assert experiment == {
        "output": "o", "seed": 3, "verbose": 1, "strategy": "mirrored",
        "tf32": True, "model_class": "ONLSTMLanguageModel",
        "preset": "small", "model_args": {"chunk_size": 5},
        "precision": "mixed_bfloat16", "mixed_precision": True, "data": "d",
        "treebank": "tb", "max_lines": 100, "exclude_treebank": "e",
        "steps_per_epoch": 6, "eval_steps": 4, "skip_test": True,
        "save_freq": 11, "log_every": 0, "parse_eval": "x",
        "parse_eval_sentences": 5, "cpu_devices": 2, "jit_compile": True,
        "average_from_epoch": None}
    small = ONLSTMLanguageModel.get_preset("small")["training"]
    assert training == {**config.LanguageModelTraining.from_dict(
        small).to_dict(), "epochs": 3, "batch_size": 7, "bptt": 9,
        "learning_rate": 0.5, "variable_length": False}
    # The preset's optimizer is SGD: --adam keras changes nothing.
    assert training["optimizer"] == small["optimizer"] == "sgd"
