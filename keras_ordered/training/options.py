"""The option groups every recipe shares, after TF Model Garden's flag groups.

Each training recipe (`recipes/ptb_onlstm.py`, `ptb_prpn.py`, `wsj_gfl.py`,
`wsj_tdtreelstm.py`) and each search recipe (`tune_onlstm.py`,
`tune_prpn.py`) builds its parser from these groups, then adds the options
of its own family (data splits, the model's switches). One group, one
spelling, one validation: a count is a positive integer and a rate a
positive number for `argparse` itself, so a bad value is a one-line usage
error with exit status 2 before TensorFlow starts.

| group | options |
|---|---|
| `add_preset` | `--preset` |
| `add_output` | `--output` (the same command again resumes the run in it) |
| `add_schedule` | `--epochs`, `--batch-size`, `--learning-rate`, `--steps-per-epoch` |
| `add_strategy` | `--strategy` |
| `add_precision` | `--precision` (`config.preset_precision` resolves a preset's default) |
| `add_tf32` | `--tf32` (float32 products in TensorFloat-32 on a GPU) |
| `add_model_args` | `--model-arg NAME=VALUE` (`config.parse_model_args` reads them) |
| `add_seed` | `--seed` |
| `add_logging` | `--verbose`, `--tf-logs` |

Standard library only at import time (the recipes' `--help` does not start
TensorFlow).

Example:

```python
from keras_ordered.training import options

parser = options.recipe_parser("Train a model.", epilog="presets: ...")
options.add_preset(parser, default="small", choices=("small", "tiny"))
options.add_output(parser, default="runs/example")
options.add_schedule(parser)
options.add_seed(parser)
options.add_logging(parser)
args = parser.parse_args(["--epochs", "2"])
assert args.epochs == 2 and args.preset == "small"
```
"""

import argparse
import dataclasses

from keras_ordered_options import positive_float
from keras_ordered_options import positive_int
from keras_ordered.training.config import DEFAULT_PRECISION
from keras_ordered.training.config import RunConfig
from keras_ordered.training.config import default_of

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
"""The `--precision` choices (see `keras_ordered.training.precision`)."""

STRATEGIES = ("auto", "mirrored", "one-device", "multi-worker")
"""The `--strategy` choices (see `keras_ordered.training.distributed`)."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and epilog's layout and shows every option's
    default (options whose default is None say in their help what happens;
    a list default is shown as its items separated by spaces, as typed)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (
            action.default not in (None, argparse.SUPPRESS, False)
            and "%(default)" not in text
            and action.option_strings
        ):
            if isinstance(action.default, (list, tuple)):
                text += " (default: " + " ".join(action.default) + ")"
            else:
                text += " (default: %(default)s)"
        return text


def recipe_parser(description, epilog=None, prog=None):
    """An empty recipe parser with the shared `--help` layout.

    Args:
        description: str, the first paragraph of `--help`.
        epilog: str or None, printed after the options (presets, examples).
        prog: str or None, the program name (default: the script's).

    Returns:
        An `argparse.ArgumentParser`.
    """
    return argparse.ArgumentParser(
        prog=prog, description=description, epilog=epilog,
        formatter_class=HelpFormatter,
    )


def add_preset(parser, default, choices=None, help=None):
    """`--preset NAME`.

    Args:
        parser: the recipe's parser.
        default: str, the preset used without the option.
        choices: the allowed names, or None where the recipe checks the name
            itself (the language-model recipes suggest the closest one).
        help: str, the option's help (default: "model and training preset
            (listed below)").
    """
    parser.add_argument(
        "--preset", default=default, metavar="NAME",
        choices=sorted(choices) if choices is not None else None,
        help=help or "model and training preset (listed below)",
    )


def add_output(parser, default, holds="logs, backups, model.keras and "
               "results.json", again="resumes the run in it"):
    """`--output DIR`, the run's folder; the same command resumes the run.

    Args:
        parser: the recipe's parser.
        default: str, the folder used without the option.
        holds: str, what the folder holds (for the help).
        again: str, what the same command does with the folder (for the
            help).
    """
    parser.add_argument(
        "--output", default=default, metavar="DIR",
        help=f"folder for {holds}; the same command again {again}",
    )


SCHEDULE = ("epochs", "batch_size", "learning_rate", "steps_per_epoch")
"""The options of `add_schedule`, as `args` attributes."""


def add_schedule(parser, epochs="training epochs", batches="training "
                 "batch size", learning_rate="initial learning rate",
                 steps="train at most N batches per epoch, for quick runs "
                 "(default: the whole training split)", which=SCHEDULE):
    """`--epochs`, `--batch-size`, `--learning-rate`, `--steps-per-epoch`.

    Each defaults to None: the preset's value (`--steps-per-epoch`: the
    whole split). Counts must be positive integers and the rate a positive
    number.

    Args:
        parser: the recipe's parser.
        epochs, batches, learning_rate: str, the first words of each
            option's help ("(default: the preset's)" follows).
        steps: str, the whole help of `--steps-per-epoch`.
        which: the options to add (a search recipe, whose trials set the
            rest, takes `("steps_per_epoch",)`).
    """
    unknown = set(which) - set(SCHEDULE)
    if unknown:
        raise ValueError(f"Unknown schedule options {sorted(unknown)}: "
                         f"expected some of {SCHEDULE}.")
    if "epochs" in which:
        parser.add_argument("--epochs", type=positive_int, default=None,
                            help=f"{epochs} (default: the preset's)")
    if "batch_size" in which:
        parser.add_argument("--batch-size", type=positive_int, default=None,
                            help=f"{batches} (default: the preset's)")
    if "learning_rate" in which:
        parser.add_argument("--learning-rate", type=positive_float,
                            default=None,
                            help=f"{learning_rate} (default: the preset's)")
    if "steps_per_epoch" in which:
        parser.add_argument("--steps-per-epoch", type=positive_int,
                            default=None, metavar="N", help=steps)


def add_strategy(parser, choices=STRATEGIES, cpu_devices=False):
    """`--strategy`: how training spreads over devices.

    Args:
        parser: the recipe's parser.
        choices: the strategies the recipe supports (`multi-worker` only in
            the language-model recipes, with their own training loop).
        cpu_devices: whether the recipe has `--cpu-devices` (the help of
            `mirrored` names it only then).
    """
    helps = {
        "auto": "auto (every visible GPU with MirroredStrategy, else the "
        "CPU)",
        "mirrored": "mirrored (every GPU, else every logical CPU device of "
        "--cpu-devices)" if cpu_devices else "mirrored (every GPU, else "
        "the CPU)",
        "one-device": "one-device (the first GPU, else the CPU)",
        "multi-worker": "multi-worker (several processes or machines "
        "configured by TF_CONFIG, with a training loop of our own; see "
        "docs/distributed.md)",
    }
    parser.add_argument(
        "--strategy", default=default_of(RunConfig, "strategy"),
        choices=tuple(choices),
        help="how to spread training over devices: "
        + ", ".join(helps[name] for name in choices),
    )


def add_precision(parser, by_preset=False):
    """`--precision` and its older spelling `--mixed-precision`.

    Args:
        parser: the recipe's parser.
        by_preset: whether the default is the preset's (`--precision`
            then defaults to None: `config.preset_precision` resolves it).
    """
    if by_preset:
        default, which = None, (
            "the default is the preset's: float32, as the official code, "
            "except where a seed study showed another precision's trees to "
            "pass the rule for defaults (the presets listed below say which)")
    else:
        default, which = DEFAULT_PRECISION, (
            f"{DEFAULT_PRECISION} is the default, as the official code")
    parser.add_argument(
        "--precision", default=default, choices=PRECISIONS,
        help="the Keras dtype policy of training: float32, mixed_bfloat16, "
        "mixed_float16 (GPU), or auto (mixed_bfloat16 on a CPU with native "
        "bfloat16 arithmetic (AVX512_BF16 or AMX), where it is faster, "
        f"float32 elsewhere); {which}. A precision is a default only where "
        "its trees, over seeds, match float32's (benchmarks/README.md, "
        "'The rule for defaults'). Whatever the policy of training, the "
        "final evaluation and the saved model are float32"
        + (" (except under --strategy multi-worker)"
           if "multi-worker" in _strategy_choices(parser) else ""),
    )
    parser.add_argument("--mixed-precision", action="store_true",
                        help="the same as --precision mixed_float16 on GPU, "
                        "mixed_bfloat16 on CPU")


def _strategy_choices(parser):
    """The `--strategy` choices of `parser` (none when it has no such
    option)."""
    action = parser._option_string_actions.get("--strategy")
    return tuple(action.choices) if action is not None else ()


def add_tf32(parser):
    """`--tf32`: TensorFloat-32 products on the GPUs that have them."""
    parser.add_argument(
        "--tf32", action="store_true",
        help="let float32 matrix products and convolutions run in "
        "TensorFloat-32 on GPUs that have it (A100, H100, H200: the "
        "backends' own default), faster but not the official arithmetic; "
        "by default they run in true float32, as the papers' code did (no "
        "effect on a CPU)")


def add_model_args(parser):
    """`--model-arg NAME=VALUE`, repeatable: a model argument replacing
    the preset's (read with `keras_ordered.training.config.parse_model_args`)."""
    parser.add_argument(
        "--model-arg", action="append", default=None, metavar="NAME=VALUE",
        help="replace one of the preset's model arguments, e.g. "
        "--model-arg chunk_size=20 --model-arg hidden_dims=[600,600,200]; "
        "the value is read as JSON (a number, a list, true / false), else "
        "as a string; repeat for several. The run records them (results."
        "json, the model file), a resumed run must give the same, and the "
        "sizes and times the presets' list quotes are the presets' own "
        "(default: the preset's model, unchanged)",
    )


def add_seed(parser, seeds="initialisation, dropout, batch order"):
    """`--seed` (default `RunConfig.seed`: 1111, as the official code).

    Args:
        parser: the recipe's parser.
        seeds: str, what the seed decides (for the help).
    """
    parser.add_argument("--seed", type=int, default=default_of(RunConfig, "seed"),
                        help=f"random seed ({seeds})")


def add_logging(parser):
    """`--verbose` and `--tf-logs`."""
    parser.add_argument("--verbose", type=int, default=None, choices=[0, 1, 2],
                        help="0: silent, 1: progress bar, 2: one line per "
                        "epoch (default: 1 on a terminal, 2 when the output "
                        "goes to a file or a pipe)")
    parser.add_argument("--tf-logs", action="store_true",
                        help="show TensorFlow's own start-up and C++ log "
                        "(also: KERAS_ORDERED_TF_LOGS=1)")


_OPTION_TYPES = {"positive_int": positive_int, "positive_float": positive_float,
                 "int": int, "float": float}


def add_config_options(parser, config_class, names=None):
    """Adds one option per field of a typed config that has option metadata.

    The field is the one place a setting is named: its name gives the
    option (`teacher_batch_size` -> `--teacher-batch-size`), its default
    the option's, its metadata (`config._option`) the help, type, choices
    and metavar. `config_from_options` reads them back.

    Args:
        parser: the recipe's parser.
        config_class: a dataclass of `keras_ordered.training.config`.
        names: the fields to add (None: every field with option metadata).
    """
    for field in dataclasses.fields(config_class):
        option = field.metadata.get("option")
        if option is None or (names is not None and field.name not in names):
            continue
        keywords = dict(option)
        if "type" in keywords:
            keywords["type"] = _OPTION_TYPES[keywords["type"]]
        default = field.default
        if default is dataclasses.MISSING:
            default = None
        if isinstance(default, tuple):
            default = list(default)
        parser.add_argument("--" + field.name.replace("_", "-"),
                            default=default, **keywords)


def config_from_options(config_class, args, **fields):
    """The typed config of parsed options: every field with option
    metadata, plus `RunConfig`'s (`output`, `seed`, `verbose`, `tf32`,
    `strategy`) where the parser has them, plus `fields`."""
    run_fields = {f.name for f in dataclasses.fields(RunConfig)}
    values = {}
    for field in dataclasses.fields(config_class):
        if hasattr(args, field.name) and (
                "option" in field.metadata or field.name in run_fields):
            values[field.name] = getattr(args, field.name)
    values.update(fields)
    return config_class(**values)
