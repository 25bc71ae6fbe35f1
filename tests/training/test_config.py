"""The typed configurations of a run (keras_ordered.training.config): each
default stated once, bad values refused with the field's name, the options
read in one place, the presets' training blocks valid."""

import ast
import dataclasses
import json
import sys

import pytest

from keras_ordered.models import LSTMLanguageModel
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.models import lstm
from keras_ordered.models import onlstm
from keras_ordered.models import prpn
from keras_ordered.training import config
from keras_ordered.training.config import LanguageModelExperiment
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.training.config import RunConfig
from keras_ordered.training.tasks import language_model
from keras_ordered.training.tasks import language_model_options

FAMILIES = {"onlstm": (ONLSTMLanguageModel, onlstm),
            "prpn": (PRPNLanguageModel, prpn),
            "lstm": (LSTMLanguageModel, lstm)}

REQUIRED = dict(optimizer="adam", learning_rate=0.003, batch_size=4,
                epochs=2, bptt=35)


def _options(family, *argv):
    model_class, module = FAMILIES[family]
    parser = language_model.build_parser("t", module.PRESETS, "runs/t")
    return parser.parse_args(list(argv)), model_class, module.get_preset


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_presets_training_block_is_a_valid_configuration(family):
    model_class, module = FAMILIES[family]
    for name in module.PRESETS:
        training = LanguageModelTraining.from_dict(
            module.get_preset(name)["training"])
        # A JSON round trip gives the same configuration.
        again = LanguageModelTraining.from_dict(
            json.loads(json.dumps(training.to_dict())))
        assert again == training, name


def test_the_recipes_options_take_their_defaults_from_the_configuration():
    args, _, _ = _options("prpn")
    fields = {field.name: field for field in
              dataclasses.fields(LanguageModelExperiment)}
    compared = 0
    for name, value in vars(args).items():
        field = fields.get(name)
        if field is None or field.default is dataclasses.MISSING:
            continue
        if value is None:
            continue  # resolved later (verbose by the terminal, precision
            # by the preset)
        assert value == field.default, name
        compared += 1
    # seed, strategy, save_freq, log_every, parse_eval_sentences and the
    # switches.
    assert compared >= 8
    assert config.default_of(RunConfig, "seed") == 1111
    with pytest.raises(ValueError, match="no field 'seeds'"):
        config.default_of(RunConfig, "seeds")
    with pytest.raises(ValueError, match="output has no default"):
        config.default_of(RunConfig, "output")


def test_options_and_the_preset_factory_give_the_same_experiment():
    args, model_class, get_preset = _options(
        "onlstm", "--preset", "tiny", "--epochs", "3", "--bptt", "20",
        "--fixed-length", "--model-arg", "chunk_size=2", "--seed", "7",
        "--output", "runs/x", "--precision", "float32", "--verbose", "0")
    from_options = language_model_options.experiment_from_options(
        args, model_class, get_preset)
    from_preset = LanguageModelExperiment.from_preset(
        model_class, "tiny",
        training={"epochs": 3, "bptt": 20, "variable_length": False},
        model_args={"chunk_size": 2}, seed=7, output="runs/x",
        precision="float32", verbose=0)
    assert from_options == from_preset
    preset = get_preset("tiny")["training"]
    assert from_options.training.batch_size == preset["batch_size"]
    assert from_options.training.epochs == 3 != preset["epochs"]
    # The preset's own precision unless one is given.
    small = LanguageModelExperiment.from_preset(model_class, "small",
                                                output="o")
    assert small.precision == "mixed_bfloat16"
    assert LanguageModelExperiment.from_preset(
        PRPNLanguageModel, "tiny", output="o").precision == "float32"
    # --adam keras makes the official Adam Keras' Adam.
    args, model_class, get_preset = _options("prpn", "--preset", "tiny",
                                             "--adam", "keras")
    assert language_model_options.experiment_from_options(
        args, model_class, get_preset).training.optimizer == "keras_adam"


@pytest.mark.parametrize("change, message", [
    ({"optimizer": "adamw"}, r"optimizer must be one of \('adam', "
     r"'keras_adam', 'sgd'\), got 'adamw'"),
    ({"batch_size": 0}, "batch_size must be a positive int, got 0"),
    ({"epochs": 2.5}, "epochs must be a positive int, got 2.5"),
    ({"bptt": True}, "bptt must be a positive int, got True"),
    ({"learning_rate": -1.0}, "learning_rate must be a positive number"),
    ({"clip_norm": 0}, "clip_norm must be a positive number or None"),
    ({"weight_decay": -0.1}, "weight_decay must be a number >= 0"),
    ({"reduce_lr_patience": -1}, "reduce_lr_patience must be an int >= 0"),
    ({"data": "wsj"}, "data must be 'text' or 'treebank', got 'wsj'"),
    ({"nonmono": 5}, r"nonmono \(NT-ASGD\) needs optimizer 'sgd', not "
     "'adam'"),
    ({"learning_rates": 1.0}, r"Unknown training setting\(s\) "
     r"\['learning_rates'\]; LanguageModelTraining has \['batch_size'"),
])
def test_a_bad_training_setting_is_refused_by_name(change, message):
    with pytest.raises(ValueError, match=message):
        LanguageModelTraining.from_dict({**REQUIRED, **change})


def test_a_bad_run_setting_is_refused_by_name():
    def experiment(preset="tiny", model_class=PRPNLanguageModel, **fields):
        return LanguageModelExperiment.from_preset(model_class, preset,
                                                   output="o", **fields)

    with pytest.raises(ValueError, match="save_freq must be a positive int"):
        experiment(save_freq=0)
    with pytest.raises(ValueError, match="log_every must be an int >= 0"):
        experiment(log_every=-1)
    with pytest.raises(ValueError, match="--model-arg chunk: the model has "
                       "no such argument; choose among"):
        experiment(model_args={"chunk": 2})
    with pytest.raises(ValueError, match="--average-from-epoch needs a preset "
                       "trained with NT-ASGD; preset 'tiny' trains with adam"):
        experiment(average_from_epoch=3)
    # An NT-ASGD preset takes it.
    assert experiment("ptb", ONLSTMLanguageModel,
                      average_from_epoch=3).average_from_epoch == 3


def test_configurations_are_frozen_and_replaced_whole():
    experiment = LanguageModelExperiment.from_preset(
        PRPNLanguageModel, "tiny", output="o", model_args={"dropout": 0.1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        experiment.seed = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        experiment.training.epochs = 3
    with pytest.raises(TypeError):
        experiment.model_args["dropout"] = 0.2
    longer = dataclasses.replace(
        experiment,
        training=dataclasses.replace(experiment.training, epochs=9))
    assert (longer.training.epochs, experiment.training.epochs) == (
        9, PRPNLanguageModel.get_preset("tiny")["training"]["epochs"])
    # A replaced field is validated again.
    with pytest.raises(ValueError, match="epochs must be a positive int"):
        dataclasses.replace(experiment.training, epochs=0)
    record = experiment.to_dict()
    assert record["model_class"] == "PRPNLanguageModel"
    assert record["model_args"] == {"dropout": 0.1}
    json.dumps(record)


def test_the_configuration_module_needs_only_the_standard_library():
    # The recipes' --help reads the defaults from it without TensorFlow:
    # the standard library, and the argparse types of keras_ordered_options
    # (standard library only too, a contract of .importlinter).
    tree = ast.parse(open(config.__file__).read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported - {"keras_ordered_options"} <= set(
        sys.stdlib_module_names), imported


def test_gfl_and_tdtreelstm_runs_are_typed_too():
    from keras_ordered.models import GFLParser
    from keras_ordered.models import TDTreeLSTMLanguageModel
    from keras_ordered.models import gfl
    from keras_ordered.models import tdtreelstm
    from keras_ordered.training.config import GFLExperiment
    from keras_ordered.training.config import GFLTraining
    from keras_ordered.training.config import TDTreeLSTMExperiment
    from keras_ordered.training.config import TDTreeLSTMTraining
    from keras_ordered.training.tasks import gfl as gfl_task
    from keras_ordered.training.tasks import tdtreelstm as tdtreelstm_task

    for name in gfl.PRESETS:
        GFLTraining.from_dict(gfl.get_preset(name)["training"])
    for name in tdtreelstm.PRESETS:
        TDTreeLSTMTraining.from_dict(tdtreelstm.get_preset(name)["training"])
    # Options and the preset factory give the same run.
    args = gfl_task.build_parser().parse_args(
        ["--preset", "tiny", "--epochs", "3", "--no-attention",
         "--valid", "x*.mrg", "--output", "o", "--verbose", "0"])
    run = gfl_task.experiment_from_options(args)
    assert run == GFLExperiment.from_preset(
        GFLParser, "tiny", training={"epochs": 3}, attention=False,
        splits={"train": args.train, "valid": ["x*.mrg"],
                "test": args.test}, output="o", verbose=0)
    assert run.beam_size == gfl.get_preset("tiny")["decoding"]["beam_size"]
    assert run.splits["valid"] == ("x*.mrg",)
    defaults = vars(gfl_task.build_parser().parse_args([]))
    for name in ("eval_batch_size", "attention_sentence", "seed"):
        assert defaults[name] == config.default_of(GFLExperiment, name)
    args = tdtreelstm_task.build_parser().parse_args(
        ["--preset", "tiny", "--epochs", "4", "--no-jit", "--ld"])
    run = tdtreelstm_task.experiment_from_options(args)
    assert (run.training.max_epochs, run.jit_compile, run.kind) == (
        4, False, "LdTreeLSTM")
    assert run.splits["test"] is None
    assert vars(tdtreelstm_task.build_parser().parse_args([]))[
        "eval_batch_size"] == config.default_of(TDTreeLSTMExperiment,
                                                "eval_batch_size")
    with pytest.raises(ValueError, match="--ld and --sequential exclude"):
        TDTreeLSTMExperiment.from_preset(TDTreeLSTMLanguageModel, "tiny",
                                         output="o", ld=True,
                                         sequential=True)
    with pytest.raises(ValueError, match="GFLTraining.optimizer must be "
                       "'sgd' or 'adam', got 'rmsprop'"):
        GFLExperiment.from_preset(GFLParser, "tiny", output="o",
                                  training={"optimizer": "rmsprop"})


def test_tf32_is_off_unless_asked_in_every_recipe():
    from keras_ordered.training.tasks import gfl as gfl_task
    from keras_ordered.training.tasks import tdtreelstm as tdtreelstm_task
    from keras_ordered.tuning import search

    assert config.default_of(RunConfig, "tf32") is False
    for argv, tf32 in (([], False), (["--tf32"], True)):
        args, model_class, get_preset = _options("prpn", "--preset", "tiny",
                                                 *argv)
        assert language_model_options.experiment_from_options(
            args, model_class, get_preset).tf32 is tf32
        args = gfl_task.build_parser().parse_args(["--preset", "tiny", *argv])
        assert gfl_task.experiment_from_options(args).tf32 is tf32
        args = tdtreelstm_task.build_parser().parse_args(
            ["--preset", "tiny", *argv])
        assert tdtreelstm_task.experiment_from_options(args).tf32 is tf32
    from keras_ordered.models.onlstm import PRESETS
    from keras_ordered.tuning.hypermodels import ONLSTMHyperModel

    parser = search.build_parser("t", ONLSTMHyperModel, PRESETS, "runs/t")
    assert parser.parse_args([]).tf32 is False
    assert parser.parse_args(["--tf32"]).tf32 is True
