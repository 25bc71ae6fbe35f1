"""What the recipes' `--help` says is true of the recipes.

Every option a help text names is one the recipe accepts, and the preset
lists quote no time per epoch (it depends on the machine: the help names
the command that measures it), so that no reader picks a preset for a
speed it does not have.
"""

import re

import pytest

from keras_ordered.models import onlstm
from keras_ordered.models import prpn
from keras_ordered.training.tasks import gfl
from keras_ordered.training.tasks import language_model
from keras_ordered.training.tasks import tdtreelstm


def _parsers():
    from keras_ordered import tuning
    from keras_ordered.tuning import search

    return {
        "ptb_onlstm.py": language_model.build_parser(
            "t", onlstm.PRESETS, "runs/t"),
        "ptb_prpn.py": language_model.build_parser(
            "t", prpn.PRESETS, "runs/t"),
        "wsj_gfl.py": gfl.build_parser(),
        "wsj_tdtreelstm.py": tdtreelstm.build_parser(),
        "tune_onlstm.py": search.build_parser(
            "t", tuning.ONLSTMHyperModel, onlstm.PRESETS, "runs/t"),
        "tune_prpn.py": search.build_parser(
            "t", tuning.PRPNHyperModel, prpn.PRESETS, "runs/t"),
    }


PARSERS = _parsers()


@pytest.mark.parametrize("recipe", sorted(PARSERS))
def test_options_named_in_the_help_exist(recipe):
    parser = PARSERS[recipe]
    # Words that the help wraps at a hyphen are joined again, and the
    # command of another script that the preset list names
    # (benchmarks/preset_epoch_time.py) is left out.
    text = re.sub(r"-\n\s+", "-", parser.format_help())
    text = re.sub(r"benchmarks/\S+\.py(?:\s+--[\w-]+\s+[\w|]+)*", "", text)
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))
    unknown = sorted(named - set(parser._option_string_actions))
    assert not unknown, f"{recipe} --help names options it refuses: {unknown}"


def test_gfl_strategy_help_names_no_cpu_devices():
    text = PARSERS["wsj_gfl.py"].format_help()
    assert "--cpu-devices" not in text
    with pytest.raises(SystemExit):
        PARSERS["wsj_gfl.py"].parse_args(["--cpu-devices", "2"])


@pytest.mark.parametrize("recipe", sorted(PARSERS))
def test_help_quotes_no_time_per_epoch(recipe):
    text = " ".join(PARSERS[recipe].format_help().split())
    quoted = re.findall(
        r"[~\d][\d.]*\s*(?:s|min|minutes|h|hours)\b[^.;]{0,20}per epoch|"
        r"about \d+ minutes", text)
    assert not quoted, f"{recipe} --help quotes times: {quoted}"


@pytest.mark.parametrize("presets", [onlstm.PRESETS, prpn.PRESETS],
                         ids=["onlstm", "prpn"])
def test_tiny_says_why_a_whole_epoch_is_slow(presets):
    # tiny trains 4 windows of 8 tokens a step: a whole PTB epoch takes
    # many more steps than the CPU presets', so its help says it is for a
    # few lines.
    tiny = presets["tiny"]
    steps = tiny["training"]["batch_size"] * tiny["training"]["bptt"]
    smallest_other = min(
        p["training"]["batch_size"] * p["training"].get("bptt", 35)
        for name, p in presets.items() if name != "tiny")
    assert steps < smallest_other
    assert "--max-lines" in tiny["description"]
    assert "slower" in tiny["description"]
