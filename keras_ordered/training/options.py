"""The options of the recipes, after TF Model Garden's flag groups: the
ones made from the typed configs' fields, and the groups every recipe
shares.

A setting is named once, as a field of a typed config
(`keras_ordered.training.config`): its metadata gives its option's help,
type and choices, its default the option's. `add_config_options` makes a
config's options, `config_from_options` (or `config_values` and
`preset_changes`, for a run that starts from a preset) reads them back.
The training recipes (`recipes/ptb_onlstm.py`, `ptb_prpn.py`, `wsj_gfl.py`,
`wsj_tdtreelstm.py`, `ptb_distance_parser.py`) and the search recipes
(`tune_onlstm.py`, `tune_prpn.py`) build their parsers so; a count is a
positive integer and a rate a positive number for `argparse` itself, so a
bad value is a one-line usage error with exit status 2 before TensorFlow
starts.

The groups of what every run has (`RunConfig`'s fields, whose help and
default differ by recipe):

| group | options |
|---|---|
| `add_preset` | `--preset` |
| `add_output` | `--output` (the same command again resumes the run in it) |
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
from keras_ordered.training.config import DistanceParserExperiment

parser = options.recipe_parser("Train a model.", epilog="presets: ...")
options.add_output(parser, default="runs/example")
options.add_config_options(parser, DistanceParserExperiment)
options.add_seed(parser)
options.add_logging(parser)
args = parser.parse_args(["--epochs", "2"])
config = options.config_from_options(DistanceParserExperiment, args)
assert config.epochs == 2 and config.preset == "small"
```
"""

import argparse
import dataclasses

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
            and action.nargs != 0  # a switch's help says what it does
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


def field_option(field, by_preset=False):
    """The option a typed config's field makes: `(flags, keywords)` for
    `parser.add_argument`, or None for a field without option metadata.

    The field is the one place a setting is named (`config.option`
    metadata): its name gives the option (`teacher_batch_size` ->
    `--teacher-batch-size`) unless the metadata names a `flag`
    (`variable_length` -> `--fixed-length`), its default the option's,
    its metadata the help and the `argparse` keywords (`type`, `choices`,
    `metavar`, `nargs`, `action`, `const`). A bool field without an
    `action` is a switch: `store_true` where it defaults to False,
    `store_false` (with a `flag` such as `--no-attention`) where True.

    Args:
        field: a `dataclasses.Field` of a config of
            `keras_ordered.training.config`.
        by_preset: the preset gives the default: the option defaults to
            None (the preset's value stays) and its help says so.

    Returns:
        `(flags, keywords)`, or None.

    Example:

    >>> import dataclasses
    >>> from keras_ordered.training.config import LanguageModelTraining
    >>> field = {f.name: f for f in dataclasses.fields(
    ...     LanguageModelTraining)}["bptt"]
    >>> flags, keywords = field_option(field, by_preset=True)
    >>> flags, keywords["default"], keywords["type"].__name__
    (('--bptt',), None, 'positive_int')
    """
    option = field.metadata.get("option")
    if option is None:
        return None
    keywords = dict(option)
    flag = keywords.pop("flag", "--" + field.name.replace("_", "-"))
    default = field.default
    if default is dataclasses.MISSING:
        default = None
    if isinstance(default, tuple):
        default = list(default)
    if field.type is bool and "action" not in keywords:
        keywords["action"] = "store_false" if default else "store_true"
    if by_preset:
        default = None
        keywords["help"] += " (default: the preset's)"
    keywords.update(dest=field.name, default=default)
    return (flag,), keywords


def add_config_options(parser, config_class, names=None, by_preset=False):
    """Adds one option per field of a typed config that has option metadata
    (`field_option` says how each is made).

    Args:
        parser: the recipe's parser.
        config_class: a dataclass of `keras_ordered.training.config`.
        names: the fields to add (None: every field with option metadata).
        by_preset: the preset gives the defaults (a preset's `"training"`
            block): every option defaults to None and replaces the
            preset's value only when given (`preset_changes` reads them).

    Example:

    ```python
    from keras_ordered.training import options
    from keras_ordered.training.config import DistanceParserExperiment

    parser = options.recipe_parser("Train a distance parser.")
    options.add_config_options(parser, DistanceParserExperiment)
    args = parser.parse_args(["--teacher-batch-size", "64"])
    assert args.teacher_batch_size == 64 and args.teacher == ["ensemble_ptb"]
    ```
    """
    for field in dataclasses.fields(config_class):
        if names is not None and field.name not in names:
            continue
        made = field_option(field, by_preset)
        if made is not None:
            flags, keywords = made
            parser.add_argument(*flags, **keywords)


def config_values(config_class, args, exclude=()):
    """The values parsed options give the fields of a typed config: every
    field that `args` has (those of `add_config_options` and of the groups
    above, such as `--output` and `--seed`), but for `exclude`.

    Args:
        config_class: a dataclass of `keras_ordered.training.config`.
        args: the parsed options (`argparse.Namespace`).
        exclude: names of fields to leave out (the caller gives them).

    Returns:
        dict, field name -> value.
    """
    return {field.name: getattr(args, field.name)
            for field in dataclasses.fields(config_class)
            if field.name not in exclude and hasattr(args, field.name)}


def config_from_options(config_class, args, **fields):
    """The typed config of parsed options (`config_values`), with
    `fields` replacing or adding values.

    Example:

    ```python
    from keras_ordered.training import options
    from keras_ordered.training.config import DistanceParserExperiment

    parser = options.recipe_parser("Train a distance parser.")
    options.add_output(parser, default="runs/x")
    options.add_config_options(parser, DistanceParserExperiment)
    config = options.config_from_options(
        DistanceParserExperiment, parser.parse_args(["--epochs", "2"]))
    assert config.epochs == 2 and config.output == "runs/x"
    ```
    """
    values = config_values(config_class, args, exclude=tuple(fields))
    values.update(fields)
    return config_class(**values)


def preset_changes(settings_class, args):
    """The settings the options replace in a preset's `"training"` block:
    each option of `add_config_options(..., by_preset=True)` that was given
    (not None).

    Args:
        settings_class: a training-settings dataclass
            (`LanguageModelTraining`, `GFLTraining`, ...).
        args: the parsed options.

    Returns:
        dict, field name -> value, for `dataclasses.replace`.
    """
    return {field.name: getattr(args, field.name)
            for field in dataclasses.fields(settings_class)
            if "option" in field.metadata
            and getattr(args, field.name, None) is not None}


def training_class(experiment_class):
    """The settings class of an experiment's `training` field
    (`GFLExperiment` -> `GFLTraining`)."""
    return {field.name: field for field in
            dataclasses.fields(experiment_class)}["training"].type


def add_experiment_options(parser, experiment_class, default_output):
    """`--output` and the options of an experiment that starts from a
    model preset: its training settings' fields (given only to replace
    the preset's, `by_preset=True`), then its own fields.

    Args:
        parser: the recipe's `argparse.ArgumentParser`.
        experiment_class: a config with a `training` field
            (`LanguageModelExperiment`, `GFLExperiment`, ...).
        default_output: the default `--output` folder.
    """
    add_output(parser, default=default_output)
    add_config_options(parser, training_class(experiment_class),
                       by_preset=True)
    add_config_options(parser, experiment_class)


def experiment_from_preset(experiment_class, model_class, args, splits):
    """The experiment of a recipe whose run starts from a model preset
    (`--preset`) and names its data splits by options (`--train`,
    `--valid`, ...): the preset's settings with the options' changes
    (`preset_changes` of the experiment's `training` class), the splits,
    and every other field from `config_values`.

    Args:
        experiment_class: a config with `from_preset` and a `training`
            field (`GFLExperiment`, `TDTreeLSTMExperiment`).
        model_class: the model class whose presets `--preset` names.
        args: the parsed options.
        splits: the names of the split options.

    Returns:
        an `experiment_class`.
    """
    return experiment_class.from_preset(
        model_class, args.preset,
        training=preset_changes(training_class(experiment_class), args),
        splits={split: getattr(args, split) for split in splits},
        **config_values(experiment_class, args,
                        exclude=("preset", "training", "splits")))
