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


# The options each recipe had when they were written out one by one, before
# they were made from the typed configs' fields: every one still listed.
OPTIONS_BEFORE = {
    "ptb_onlstm.py": "--adam --average-from-epoch --batch-size --bptt "
    "--cpu-devices --data --epochs --eval-steps --exclude-treebank "
    "--fixed-length --jit-compile --learning-rate --log-every --max-lines "
    "--mixed-precision --model-arg --output --parse-eval "
    "--parse-eval-sentences --precision --preset --save-freq --seed "
    "--skip-test --steps-per-epoch --strategy --tf-logs --tf32 --treebank "
    "--verbose",
    "wsj_gfl.py": "--attention-map --attention-sentence --batch-size "
    "--beam-size --epochs --eval-batch-size --learning-rate --max-sentences "
    "--min-count --no-attention --output --preset --seed --steps-per-epoch "
    "--strategy --test --tf-logs --tf32 --train --treebank --valid --verbose "
    "--word-vectors",
    "wsj_tdtreelstm.py": "--batch-size --data --epochs --eval-batch-size "
    "--format --ld --learning-rate --lowercase --max-sentences --min-count "
    "--no-jit --output --preset --seed --sequential --steps-per-epoch --test "
    "--tf-logs --tf32 --time-limit --train --valid --verbose",
    "tune_onlstm.py": "--data --eval-steps --factor --hyperband-iterations "
    "--max-epochs --max-lines --max-trials --mixed-precision --objective "
    "--output --parse-sentences --precision --preset --seed "
    "--steps-per-epoch --tf-logs --tf32 --treebank --tune --tuner --verbose",
}
OPTIONS_BEFORE["ptb_prpn.py"] = OPTIONS_BEFORE["ptb_onlstm.py"]
OPTIONS_BEFORE["tune_prpn.py"] = OPTIONS_BEFORE["tune_onlstm.py"]


@pytest.mark.parametrize("recipe", sorted(PARSERS))
def test_the_help_lists_every_option_the_recipe_had(recipe):
    text = re.sub(r"-\n\s+", "-", PARSERS[recipe].format_help())
    listed = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))
    options = {s for action in PARSERS[recipe]._actions
               for s in action.option_strings if s not in ("-h", "--help")}
    assert options == set(OPTIONS_BEFORE[recipe].split())
    assert options <= listed
