"""A preset chosen by a seed study trains what the study trained.

A named preset made from a seed study (`benchmarks/parsing_quality.py`,
run with a base preset, a precision and recipe options) must resolve,
through the recipe's own option handling, to the same model and training
settings; otherwise the figures quoted for the preset are another
configuration's. The study's settings are written here, as the study ran
them (the `study` entry of each `seed_N.json` of
benchmarks/records/onlstm_small_parity_epochs6/), so that the test reads
no benchmark record.
"""

import pytest

from keras_ordered.models import onlstm
from keras_ordered.models.onlstm import ONLSTMLanguageModel
from keras_ordered.training.tasks import language_model
from keras_ordered.training.tasks import language_model_options

# preset -> the base preset, precision and recipe options of its study.
STUDIED = {
    "medium": ("small", "mixed_bfloat16", [
        "--epochs", "6", "--bptt", "70", "--fixed-length",
        "--model-arg", "hidden_dims=[600,600,200]",
        "--model-arg", "dropout_output=0.45",
        "--model-arg", "dropout_hidden=0.3",
        "--model-arg", "dropout_input=0.5",
        "--model-arg", "dropout_embedding=0.1",
        "--model-arg", "weight_drop=0.45",
        "--model-arg", "ar_alpha=0", "--model-arg", "tar_beta=0"]),
}


def _resolved(argv):
    parser = language_model.build_parser("t", onlstm.PRESETS, "runs/t")
    args = parser.parse_args(argv)
    experiment = language_model_options.experiment_from_options(
        args, ONLSTMLanguageModel, onlstm.get_preset)
    preset = onlstm.get_preset(experiment.preset)
    return {"model": {**preset["model"], **experiment.model_args},
            "training": experiment.training, "precision": experiment.precision}


@pytest.mark.parametrize("name", sorted(STUDIED))
def test_named_preset_resolves_to_its_study(name):
    preset, precision, options = STUDIED[name]
    studied = _resolved(["--preset", preset, "--precision", precision,
                         *options])
    assert _resolved(["--preset", name]) == studied


def test_resolution_sees_every_option_that_changes_training():
    base = _resolved(["--preset", "small"])
    for option in (["--bptt", "70"], ["--fixed-length"], ["--epochs", "7"],
                   ["--precision", "float32"],
                   ["--model-arg", "tar_beta=0"]):
        assert _resolved(["--preset", "small", *option]) != base, option
