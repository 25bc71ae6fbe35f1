"""The options and `--help` of the language-model recipes (ON-LSTM, PRPN,
LSTM): `recipes/ptb_onlstm.py`, `ptb_prpn.py`, `ptb_lstm.py`.

The options are made from the typed configs' fields
(`keras_ordered.training.config.LanguageModelExperiment` and, where the
preset decides, `LanguageModelTraining`) by
`keras_ordered.training.options.add_config_options`, plus the option
groups every recipe shares and two of this recipe's own (`--adam`,
`--model-arg`). `experiment_from_options` reads them back, once, into a
`LanguageModelExperiment`.

Standard library only at import time, as `keras_ordered.training.options`
(a recipe's `--help` builds the parser before TensorFlow starts).

Example:

```python
from keras_ordered.models import PRPNLanguageModel
from keras_ordered.training.tasks import language_model_options

parser = language_model_options.build_parser(
    "Train PRPN.", PRPNLanguageModel.preset_table, "runs/prpn",
    family="prpn")
args = parser.parse_args(["--preset", "tiny", "--epochs", "2",
                          "--fixed-length"])
experiment = language_model_options.experiment_from_options(
    args, PRPNLanguageModel)
assert experiment.training.epochs == 2
assert experiment.training.variable_length is False
```
"""

import textwrap

from keras_ordered.training import options
from keras_ordered.training.config import LanguageModelExperiment
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.training.config import parse_model_args
from keras_ordered.training.config import preset_precision

ADAM_ARITHMETIC = ("official", "keras")
"""The `--adam` choices: the presets' Adam in PyTorch's arithmetic
(`TorchAdam`, the `adam` optimizer) or Keras' own (`keras_adam`)."""


def describe_presets(presets, default="ptb", family=None):
    """The presets as `--help` lists them: description, size, batches.

    No time per epoch is quoted: it depends on the machine, and one
    command measures it there (`benchmarks/preset_epoch_time.py`, named
    in the text).

    Args:
        presets: dict name -> preset (`keras_ordered.models.*.PRESETS`).
        default: the name marked `[default]`.
        family: the benchmark's `--model` name of these presets (`onlstm`,
            `prpn`, `lstm`; None: all three, `onlstm|prpn|lstm`).

    Returns:
        The text, lines of at most 79 characters.

    Example:

    ```python
    from keras_ordered.models import prpn
    from keras_ordered.training.tasks.language_model_options import (
        describe_presets)

    text = describe_presets(prpn.PRESETS, family="prpn")
    assert "--model prpn" in " ".join(text.split()) and "[default]" in text
    ```
    """
    family = family or "onlstm|prpn|lstm"
    lines = [textwrap.fill(
        "presets (size with the 10,000-word PTB vocabulary; the time of an "
        "epoch depends on the machine: measure it with python "
        f"benchmarks/preset_epoch_time.py --model {family} --presets NAME):",
        width=79,
    )]
    for name, preset in presets.items():
        training = preset["training"]
        facts = []
        if preset.get("parameters"):
            facts.append(f"{preset['parameters'] / 1e6:.1f}M parameters")
        facts.append(f"batch {training['batch_size']}")
        if training.get("bptt") and not training.get("sentence_level"):
            facts.append(f"windows of {training['bptt']} tokens")
        facts.append(f"{training['epochs']} epoch(s)")
        facts.append(f"precision {preset_precision(None, preset)}")
        marker = " [default]" if name == default else ""
        lines.append(textwrap.fill(
            f"{preset.get('description', '')}{marker}", width=79,
            initial_indent=f"  {name:<7}", subsequent_indent=" " * 9,
        ))
        lines.append(textwrap.fill("; ".join(facts), width=79,
                                   initial_indent=" " * 9,
                                   subsequent_indent=" " * 9))
    return "\n".join(lines)


def family_of(model_class):
    """The benchmarks' name of a model class's family: `ONLSTMLanguageModel`
    (`preset_family` "ON-LSTM") -> `"onlstm"`."""
    return model_class.preset_family.lower().replace("-", "")


def build_parser(description, presets, default_output, family=None):
    """The options of the language-model recipes (ON-LSTM, PRPN, LSTM).

    Args:
        description: str, the first paragraph of `--help`.
        presets: dict name -> preset, listed after the options.
        default_output: str, the default `--output`.
        family: the presets' family as `describe_presets` names it.

    Returns:
        An `argparse.ArgumentParser`; `experiment_from_options` reads what
        it parses.
    """
    parser = options.recipe_parser(
        description, epilog=describe_presets(presets, family=family))
    options.add_preset(
        parser, default="ptb",
        help="model and training preset (listed below; ptb is the paper's "
        "setup)",
    )
    options.add_experiment_options(parser, LanguageModelExperiment,
                                   default_output)
    options.add_strategy(parser, cpu_devices=True)
    options.add_precision(parser, by_preset=True)
    options.add_tf32(parser)
    options.add_model_args(parser)
    parser.add_argument(
        "--adam", default=ADAM_ARITHMETIC[0], choices=ADAM_ARITHMETIC,
        help="the arithmetic of the presets' Adam: official (PyTorch's, "
        "with coupled L2 weight decay: keras_ordered.training.optimizers."
        "TorchAdam) or keras (keras.optimizers.Adam: decoupled decay, "
        "epsilon before the bias correction; a departure)",
    )
    options.add_seed(parser, "initialisation, dropout, windows")
    options.add_logging(parser)
    return parser


def experiment_from_options(args, model_class, get_preset=None):
    """The run the language-model recipes' options describe (the one place
    that reads them).

    Args:
        args: the options `build_parser` parsed.
        model_class: the model's class.
        get_preset: the presets' lookup (None: the class's).

    Returns:
        A `LanguageModelExperiment`: the preset's training with the
        options given replacing its settings; `--precision` unset: the
        preset's.
    """
    entry = (get_preset or model_class.get_preset)(args.preset)
    training = options.preset_changes(LanguageModelTraining, args)
    if args.adam == "keras" and entry["training"]["optimizer"] == "adam":
        training["optimizer"] = "keras_adam"
    fields = options.config_values(
        LanguageModelExperiment, args,
        exclude=("model_class", "preset", "training", "model_args"))
    return LanguageModelExperiment.from_preset(
        model_class, args.preset, get_preset=lambda name: entry,
        training=training,
        model_args=parse_model_args(args.model_arg, model_class), **fields)
