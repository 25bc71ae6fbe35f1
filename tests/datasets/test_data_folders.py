"""One rule for where every recipe and command reads its data.

The folder given (`--data`, `--treebank`), only there; else
`$KERAS_ORDERED_DATA/<sub>`; else one line naming both ways. No download,
no other folder (keras_ordered.datasets.folders).
"""


import pytest

from keras_ordered.datasets import ptb
from keras_ordered.datasets.folders import DATA_ENV_VAR
from keras_ordered.datasets.folders import data_dir

pytestmark = pytest.mark.backends


@pytest.fixture
def no_data(monkeypatch, tmp_path):
    """No KERAS_ORDERED_DATA, a working directory beside no `shared/`,
    and no download possible."""
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)

    def refuse(*args, **kwargs):
        raise AssertionError("a recipe or command tried to download data")

    monkeypatch.setattr(ptb, "_download", refuse)


def test_the_given_folder_is_the_only_one(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "root"))
    assert data_dir("mine", "ptb", "--data", "x") == "mine"
    assert data_dir(None, "wsj_sample/mrg", "--treebank", "x") == str(
        tmp_path / "root" / "wsj_sample" / "mrg")


def test_neither_way_is_one_line_naming_both(no_data):
    with pytest.raises(ValueError) as error:
        data_dir(None, "wsj_sample/dep", "--data", "dependency trees")
    message = str(error.value)
    assert "\n" not in message
    assert "--data DIR" in message and DATA_ENV_VAR in message
    assert "wsj_sample/dep/" in message


def _language_model_experiment(**fields):
    from keras_ordered.models import PRPNLanguageModel
    from keras_ordered.training.config import LanguageModelExperiment

    return LanguageModelExperiment.from_preset(
        PRPNLanguageModel, "tiny", output="unused", **fields)


def test_language_model_recipes_use_the_rule(no_data, tmp_path, monkeypatch):
    from keras_ordered.training.tasks import language_model

    with pytest.raises(ValueError, match=r"pass --data DIR, or set "
                       "KERAS_ORDERED_DATA"):
        language_model._load_data(_language_model_experiment())
    # $KERAS_ORDERED_DATA/ptb, and nothing else, when --data is not given.
    folder = tmp_path / "root" / "ptb"
    folder.mkdir(parents=True)
    for split in ptb.SPLITS:
        (folder / f"{split}.txt").write_text(" the cat sat \n")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "root"))
    data = language_model._load_data(_language_model_experiment())
    assert "cat" in data.vocabulary


def test_search_recipes_use_the_rule(no_data):
    from keras_ordered import tuning
    from keras_ordered.models import prpn
    from keras_ordered.tuning import search

    parser = search.build_parser("t", tuning.PRPNHyperModel, prpn.PRESETS,
                                 "runs/t")
    args = parser.parse_args(["--preset", "tiny"])
    with pytest.raises(ValueError, match="KERAS_ORDERED_DATA"):
        search.run(args, tuning.PRPNHyperModel)


def test_tdtreelstm_has_no_fallback_folder(no_data):
    from keras_ordered.training.tasks import tdtreelstm

    args = tdtreelstm.build_parser().parse_args([])
    experiment = tdtreelstm.experiment_from_options(args)
    with pytest.raises(ValueError, match=r"pass --data DIR, or set "
                       "KERAS_ORDERED_DATA"):
        tdtreelstm.load_splits(experiment)


def test_gfl_uses_the_rule(no_data):
    from keras_ordered.training.tasks import gfl

    args = gfl.build_parser().parse_args([])
    experiment = gfl.experiment_from_options(args)
    with pytest.raises(ValueError, match=r"pass --treebank DIR, or set "
                       "KERAS_ORDERED_DATA"):
        gfl.load_splits(experiment)


@pytest.mark.parametrize("command", [
    ["evaluate-parsing", "--baseline", "right-branching"],
    ["evaluate", "--model", "model.keras"],
])
def test_commands_use_the_rule(no_data, command, capsys):
    import keras_ordered_cli

    assert keras_ordered_cli.main(command) == 2
    error = capsys.readouterr().err
    assert "pass --treebank DIR, or set KERAS_ORDERED_DATA" in error
    assert error.count("\n") == 1


def test_help_of_data_options_states_the_rule():
    from keras_ordered import tuning
    from keras_ordered.models import onlstm
    from keras_ordered.training.tasks import gfl
    from keras_ordered.training.tasks import language_model
    from keras_ordered.training.tasks import tdtreelstm
    from keras_ordered.tuning import search
    from keras_ordered_cli import build_parser

    cli = build_parser()
    subcommands = next(a for a in cli._actions if a.choices and isinstance(
        a.choices, dict)).choices
    parsers = [
        language_model.build_parser("t", onlstm.PRESETS, "runs/t"),
        search.build_parser("t", tuning.ONLSTMHyperModel, onlstm.PRESETS,
                            "runs/t"),
        gfl.build_parser(), tdtreelstm.build_parser(),
        subcommands["evaluate-parsing"], subcommands["evaluate"],
    ]
    for parser in parsers:
        for option in ("--data", "--treebank"):
            action = parser._option_string_actions.get(option)
            if action is None or "default: no" in action.help:
                continue  # absent or optional (the searches' --treebank)
            assert "$KERAS_ORDERED_DATA/" in action.help, action.help
            assert "download" not in action.help.replace(
                "nothing is downloaded", "")
            assert "../shared" not in action.help, action.help
