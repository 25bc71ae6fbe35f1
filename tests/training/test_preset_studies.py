"""A preset chosen by a seed study trains what the study trained.

`benchmarks/parsing_quality.py --record` stores each seed's study: the
preset, the precision and the recipe options it was trained with. A named
preset made from such a study must resolve, through the recipe's own
option handling, to the same model and training settings; otherwise the
figures quoted for the preset are another configuration's.
"""

import json
import os

import pytest

from keras_ordered.models import onlstm
from keras_ordered.models.onlstm import ONLSTMLanguageModel
from keras_ordered.training.config import LanguageModelExperiment
from keras_ordered.training.tasks import language_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
RECORDS = os.path.join(ROOT, "benchmarks", "records")

# preset -> the record folder of the study it was made from.
STUDIED = {"medium": "onlstm_small_parity_epochs6"}


def _resolved(argv):
    parser = language_model.build_parser("t", onlstm.PRESETS, "runs/t")
    args = parser.parse_args(argv)
    experiment = LanguageModelExperiment.from_options(
        args, ONLSTMLanguageModel, onlstm.get_preset)
    preset = onlstm.get_preset(experiment.preset)
    return {"model": {**preset["model"], **experiment.model_args},
            "training": experiment.training, "precision": experiment.precision}


def _studies(folder):
    path = os.path.join(RECORDS, folder)
    studies = []
    for name in sorted(os.listdir(path)):
        if name.endswith(".json"):
            with open(os.path.join(path, name)) as record:
                studies.append(json.load(record)["study"])
    return studies


@pytest.mark.parametrize("name", sorted(STUDIED))
def test_named_preset_resolves_to_its_study(name):
    studies = _studies(STUDIED[name])
    assert len(studies) >= 5
    for study in studies:
        assert study["family"] == "onlstm"
        studied = _resolved(["--preset", study["preset"], "--precision",
                             study["precision"], *study["recipe_options"]])
        assert _resolved(["--preset", name]) == studied


def test_resolution_sees_every_option_that_changes_training():
    base = _resolved(["--preset", "small"])
    for option in (["--bptt", "70"], ["--fixed-length"], ["--epochs", "7"],
                   ["--precision", "float32"],
                   ["--model-arg", "tar_beta=0"]):
        assert _resolved(["--preset", "small", *option]) != base, option
