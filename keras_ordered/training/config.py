"""Typed configurations of a training run, after TF Model Garden's configs.

A run of a recipe is one frozen dataclass, read from the command line once
(`keras_ordered.training.options.config_from_options`, the recipes'
`experiment_from_options`) or made by a named factory
(`LanguageModelExperiment.from_preset`); the task and the runner read its
fields, never the parsed options. Each setting is named here, once: a
field's metadata (`option_metadata`) gives its option's help, type and
choices, and its default the option's
(`keras_ordered.training.options.add_config_options` makes the options).

- `RunConfig`: what `keras_ordered.training.runner.Runner` reads of any
  run: the output folder, the seed, the verbosity, the strategy.
- `LanguageModelTraining`: how a language model trains, the `"training"`
  block of an ON-LSTM, PRPN or LSTM preset: optimizer, schedule, batches,
  windows, clipping, data setup.
- `LanguageModelExperiment`: a whole language-model run: the model (class,
  preset, `--model-arg` changes), its training, precision, data folders and
  the run's own settings.
- `GFLTraining` / `GFLExperiment` and `TDTreeLSTMTraining` /
  `TDTreeLSTMExperiment`: the same for the GFL and TD-TreeLSTM recipes.

Standard library only, with the `argparse` types of
`keras_ordered_options` (the recipes' `--help` reads the fields without
starting TensorFlow).

Example:

```python
import dataclasses

from keras_ordered.models import PRPNLanguageModel
from keras_ordered.training.config import LanguageModelExperiment

experiment = LanguageModelExperiment.from_preset(
    PRPNLanguageModel, "tiny", output="runs/prpn_tiny",
    training={"epochs": 1}, steps_per_epoch=2)
assert experiment.training.optimizer == "adam"
assert experiment.training.epochs == 1
longer = dataclasses.replace(
    experiment, training=dataclasses.replace(experiment.training, epochs=3))
assert longer.training.epochs == 3 and experiment.training.epochs == 1
```
"""

import dataclasses
import inspect
import json
import types
import typing

from keras_ordered_options import non_negative_int
from keras_ordered_options import positive_float
from keras_ordered_options import positive_int

DEFAULT_PRECISION = "float32"
"""The recipes' default dtype policy: a precision becomes a default only
where its trees, over seeds, match float32's
(`benchmarks/parsing_quality.py`)."""

OPTIMIZERS = ("adam", "keras_adam", "sgd")
"""`LanguageModelTraining.optimizer`: `adam` is Adam with PyTorch's
arithmetic (`keras_ordered.training.optimizers.TorchAdam`, coupled L2
decay, as the official PRPN code), `keras_adam` Keras' Adam (decoupled
decay: a departure), `sgd` plain SGD (NT-ASGD with `nonmono`)."""


def option_metadata(help, **argparse_keywords):
    """A config field's option metadata: its `--help` text and `argparse`
    keywords. See `keras_ordered.training.options.field_option`, which
    makes the option; a field without it is no option of its own.

    Args:
        help: str, the option's help.
        **argparse_keywords: `type`, `metavar`, `choices`, `nargs`,
            `action`, `const`; and `flag`, the option's name where it is
            not the field's (`--fixed-length` for `variable_length`).

    Returns:
        dict, for `dataclasses.field(metadata=...)`.

    Example:

    ```python
    import dataclasses

    from keras_ordered.training.config import option_metadata

    @dataclasses.dataclass(frozen=True)
    class Run:
        steps: int = dataclasses.field(default=10, metadata=option_metadata(
            "training steps", metavar="N"))

    (field,) = dataclasses.fields(Run)
    assert field.metadata["option"]["help"] == "training steps"
    ```
    """
    return {"option": {"help": help, **argparse_keywords}}


def preset_precision(precision, preset):
    """The precision a run uses: `precision` when given, else the preset's
    `"precision"`, else `DEFAULT_PRECISION`."""
    if precision is not None:
        return precision
    return preset.get("precision", DEFAULT_PRECISION)


def default_of(config_class, name):
    """The default of field `name` of a config dataclass (for an option's
    default, so that it is stated once)."""
    for field in dataclasses.fields(config_class):
        if field.name == name:
            if field.default is dataclasses.MISSING:
                raise ValueError(f"{config_class.__name__}.{name} has no "
                                 "default.")
            return field.default
    raise ValueError(f"{config_class.__name__} has no field {name!r}.")


def _check_count(owner, name, value, smallest=1, optional=False):
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or (
            value < smallest):
        what = "a positive int" if smallest == 1 else f"an int >= {smallest}"
        raise ValueError(f"{owner}.{name} must be {what}"
                         f"{' or None' if optional else ''}, got {value!r}.")


def _check_rate(owner, name, value, optional=False, zero=False):
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            value < 0 or (value == 0 and not zero)):
        what = "a number >= 0" if zero else "a positive number"
        raise ValueError(f"{owner}.{name} must be {what}"
                         f"{' or None' if optional else ''}, got {value!r}.")


class _Settings:
    """`from_dict` and `to_dict` of a preset's `"training"` block."""

    @classmethod
    def from_dict(cls, settings):
        """The settings of a preset's `"training"` dict; an unknown key is
        an error naming the known ones."""
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = set(settings) - names
        if unknown:
            raise ValueError(
                f"Unknown training setting(s) {sorted(unknown)}; "
                f"{cls.__name__} has {sorted(names)}.")
        return cls(**settings)

    def to_dict(self):
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LanguageModelTraining(_Settings):
    """How a language model trains: a preset's `"training"` block.

    Args:
        optimizer: one of `OPTIMIZERS`.
        learning_rate: the initial learning rate.
        batch_size: training batch size (streams of the text, or sentences).
        epochs: training epochs.
        bptt: window length of truncated BPTT.
        eval_batch_size: validation batch size (10, as AWD-LSTM and PRPN).
        test_batch_size: test batch size (1, as AWD-LSTM and PRPN).
        variable_length: the AWD schedule of window lengths (`bptt`, or
            half of it 5 % of the time, with noise) instead of fixed ones.
        clip_norm: the global gradient norm clipped to, or None.
        beta_1, beta_2, epsilon: Adam's (epsilon None: the optimizer's own
            default).
        weight_decay: L2 decay (coupled for `adam` and `sgd`, decoupled for
            `keras_adam`); 0 for none.
        nonmono: NT-ASGD's non-monotone trigger (SGD only), or None.
        reduce_lr_patience: epochs without a strictly lower `reduce_lr_monitor`
            before the rate is multiplied by `reduce_lr_factor`, as
            PyTorch's `ReduceLROnPlateau(threshold=0)`; None: no plateau
            schedule.
        reduce_lr_factor: the plateau schedule's factor.
        reduce_lr_monitor: the epoch log it watches.
        sentence_level: train on sentences, each from a zero state, instead
            of a continuous stream.
        data: `"text"` (the PTB text) or `"treebank"` (the sentences of a
            treebank folder, the official unsupervised-parsing setup).
        max_sentence_length: with `"treebank"`: longest sentence kept (words
            after punctuation removal), or None.
        min_count: with `"treebank"`: words seen fewer times become `<unk>`.
        shuffle: shuffle the sentences every epoch (sentence-level).

    Example:

    >>> training = LanguageModelTraining.from_dict(
    ...     {"optimizer": "sgd", "learning_rate": 30.0, "batch_size": 20,
    ...      "epochs": 6, "bptt": 70, "nonmono": 5})
    >>> training.eval_batch_size
    10
    """

    optimizer: str
    learning_rate: float = dataclasses.field(metadata=option_metadata(
        "initial learning rate", type=positive_float))
    batch_size: int = dataclasses.field(metadata=option_metadata(
        "training batch size", type=positive_int))
    epochs: int = dataclasses.field(metadata=option_metadata(
        "training epochs", type=positive_int))
    bptt: int = dataclasses.field(metadata=option_metadata(
        "window length of truncated BPTT", type=positive_int))
    eval_batch_size: int = 10
    test_batch_size: int = 1
    variable_length: bool = dataclasses.field(default=True, metadata=option_metadata(
        "fixed-length windows instead of the AWD schedule of variable "
        "lengths", flag="--fixed-length", action="store_const", const=False))
    clip_norm: typing.Optional[float] = None
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: typing.Optional[float] = None
    weight_decay: float = 0.0
    nonmono: typing.Optional[int] = None
    reduce_lr_patience: typing.Optional[int] = None
    reduce_lr_factor: float = 0.5
    reduce_lr_monitor: str = "val_loss"
    sentence_level: bool = False
    data: str = "text"
    max_sentence_length: typing.Optional[int] = None
    min_count: int = 3
    shuffle: bool = True

    def __post_init__(self):
        owner = type(self).__name__
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"{owner}.optimizer must be one of {OPTIMIZERS}, "
                             f"got {self.optimizer!r}.")
        for name in ("batch_size", "epochs", "bptt", "eval_batch_size",
                     "test_batch_size", "min_count"):
            _check_count(owner, name, getattr(self, name))
        for name in ("nonmono", "max_sentence_length"):
            _check_count(owner, name, getattr(self, name), optional=True)
        _check_count(owner, "reduce_lr_patience", self.reduce_lr_patience,
                     smallest=0, optional=True)
        _check_rate(owner, "learning_rate", self.learning_rate)
        _check_rate(owner, "clip_norm", self.clip_norm, optional=True)
        _check_rate(owner, "epsilon", self.epsilon, optional=True)
        _check_rate(owner, "weight_decay", self.weight_decay, zero=True)
        _check_rate(owner, "reduce_lr_factor", self.reduce_lr_factor)
        if self.data not in ("text", "treebank"):
            raise ValueError(f"{owner}.data must be 'text' or 'treebank', "
                             f"got {self.data!r}.")
        if self.nonmono is not None and self.optimizer != "sgd":
            raise ValueError(f"{owner}.nonmono (NT-ASGD) needs optimizer "
                             f"'sgd', not {self.optimizer!r}.")

    @property
    def ntasgd(self):
        """Whether the run trains with NT-ASGD (SGD with a trigger)."""
        return self.optimizer == "sgd" and self.nonmono is not None


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What the runner reads of every run.

    Args:
        output: the run's folder (logs, backups, `model.keras`,
            `results.json`); the same run again resumes in it.
        seed: the random seed (initialisation, dropout, batch order); 1111,
            as the official code.
        verbose: 0 silent, 1 a progress bar, 2 one line per epoch.
        strategy: `"auto"`, `"mirrored"`, `"one-device"` or `"multi-worker"`
            (`keras_ordered.training.distributed.make_strategy`).
        tf32: let float32 products run in TensorFloat-32 on GPUs that have
            it (False: true float32, `keras_ordered.backend.float32_matmuls`).
    """

    output: str
    seed: int = 1111
    verbose: int = 2
    strategy: str = "auto"
    tf32: bool = False


def _frozen_mapping(mapping):
    return types.MappingProxyType(dict(mapping or {}))


@dataclasses.dataclass(frozen=True, kw_only=True)
class LanguageModelExperiment(RunConfig):
    """A language-model run (ON-LSTM, PRPN, LSTM) of the recipes.

    Args:
        model_class: the model's class (`PRPNLanguageModel`, ...).
        preset: the preset's name (`model_class.get_preset(preset)`).
        training: `LanguageModelTraining`.
        model_args: the model arguments replacing the preset's
            (`--model-arg`), a read-only mapping.
        precision: the dtype policy of training (`"float32"`,
            `"mixed_bfloat16"`, `"mixed_float16"`, `"auto"`).
        mixed_precision: the older switch for mixed_float16 on a GPU,
            mixed_bfloat16 on a CPU.
        data: the PTB text folder (None: `$KERAS_ORDERED_DATA/ptb`).
        treebank: a Treebank `.mrg` folder to train on (None: the preset's
            `training.data` decides).
        max_lines: read only the first N lines of each split.
        exclude_treebank: a treebank folder whose sentences are left out
            of the PTB training text (None: keep every line).
        steps_per_epoch: train at most N windows per epoch.
        eval_steps: evaluate on the first N windows of each split.
        skip_test: skip the final test-set evaluation.
        save_freq: steps between crash-safe backups.
        log_every: steps between TensorBoard points (0: epoch ends only).
        parse_eval: a Treebank folder to parse every epoch (None: none).
        parse_eval_sentences: how many of its sentences.
        cpu_devices: split the CPU into N logical devices (None: one).
        jit_compile: XLA-compile the TensorFlow train step.
        average_from_epoch: NT-ASGD: average from this epoch at the latest.
        (and `RunConfig`'s fields.)
    """

    model_class: type
    preset: str
    training: LanguageModelTraining
    model_args: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    precision: str = DEFAULT_PRECISION
    mixed_precision: bool = False
    data: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "directory with the PTB train.txt / valid.txt / test.txt "
            "(default: $KERAS_ORDERED_DATA/ptb; nothing is downloaded)",
            metavar="DIR"))
    treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "train on the sentences of this Treebank .mrg folder instead "
            "of the PTB text, as the official unsupervised-parsing setup "
            "does (default for the presets that train so, e.g. PRPN's up: "
            "$KERAS_ORDERED_DATA/wsj_sample/mrg)", metavar="DIR"))
    max_lines: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "read only the first N lines of each split (default: all)",
            type=positive_int, metavar="N"))
    exclude_treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "leave out of the PTB training text every sentence of this "
            "treebank folder (.mrg files), matched after the text's own "
            "normalisation, so that the model never reads the sentences it "
            "is judged on (default: keep every line)", metavar="DIR"))
    steps_per_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "train at most N windows per epoch, for quick runs (default: "
            "the whole training text)", type=positive_int, metavar="N"))
    eval_steps: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "evaluate on the first N windows of each split only, for quick "
            "runs: the printed and recorded perplexities then cover only "
            "part of the data and say so (default: the whole splits)",
            type=positive_int, metavar="N"))
    skip_test: bool = dataclasses.field(default=False, metadata=option_metadata(
        "skip the final test-set evaluation"))
    save_freq: int = dataclasses.field(default=200, metadata=option_metadata(
        "steps between crash-safe backups (and one at every epoch end)",
        type=positive_int, metavar="N"))
    log_every: int = dataclasses.field(default=50, metadata=option_metadata(
        "write training loss, perplexity and learning rate to TensorBoard "
        "every N steps (0: epoch ends only)", type=non_negative_int,
        metavar="N"))
    parse_eval: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "Treebank .mrg directory: parse a development subset every "
            "epoch and log F1 to TensorBoard (default: no parsing "
            "evaluation)", metavar="DIR"))
    parse_eval_sentences: int = dataclasses.field(default=200, metadata=option_metadata(
        "size of that development subset (the first N sentences)",
        type=positive_int, metavar="N"))
    cpu_devices: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "split the CPU into N logical devices, so that --strategy "
            "mirrored runs N replicas without a GPU (for trying and testing "
            "multi-device training; default: one CPU device)",
            type=positive_int, metavar="N"))
    jit_compile: bool = dataclasses.field(default=False, metadata=option_metadata(
        "XLA-compile the train step on TensorFlow (one compilation per "
        "window length: use with fixed-length windows; default: off; JAX "
        "always compiles it)"))
    average_from_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "NT-ASGD presets (ON-LSTM): start averaging the weights at the "
            "start of epoch N at the latest, whatever the validation "
            "trigger (a departure for short runs, which never trigger it; "
            "validation, checkpoints, the saved model and the per-epoch "
            "trees then use the averaged weights) (default: the trigger "
            "only, as the official code)", type=positive_int, metavar="N"))

    def __post_init__(self):
        owner = type(self).__name__
        object.__setattr__(self, "model_args",
                           _frozen_mapping(self.model_args))
        for name in ("max_lines", "steps_per_epoch", "eval_steps",
                     "cpu_devices", "average_from_epoch"):
            _check_count(owner, name, getattr(self, name), optional=True)
        for name in ("save_freq", "parse_eval_sentences"):
            _check_count(owner, name, getattr(self, name))
        _check_count(owner, "log_every", self.log_every, smallest=0)
        unknown = set(self.model_args) - model_argument_names(
            self.model_class)
        if unknown:
            raise ValueError(
                f"--model-arg {sorted(unknown)[0]}: the model has no such "
                "argument; choose among "
                f"{', '.join(sorted(model_argument_names(self.model_class)))}.")
        if self.average_from_epoch is not None and not self.training.ntasgd:
            raise ValueError(
                f"--average-from-epoch needs a preset trained with NT-ASGD; "
                f"preset {self.preset!r} trains with "
                f"{self.training.optimizer}.")

    @classmethod
    def from_preset(cls, model_class, preset, *, get_preset=None,
                    training=None, **fields):
        """The run of a preset: its training, with `training` (a dict of
        `LanguageModelTraining` fields) and `fields` replaced.

        Args:
            model_class: the model's class.
            preset: the preset's name.
            get_preset: the presets' lookup (None: `model_class.get_preset`).
            training: dict of training settings replacing the preset's.
            **fields: the experiment's other fields (`output` among them).

        Returns:
            A `LanguageModelExperiment`. Its `precision` is the preset's
            (or `DEFAULT_PRECISION`) unless `fields` gives one.
        """
        entry = (get_preset or model_class.get_preset)(preset)
        settings = LanguageModelTraining.from_dict(entry["training"])
        if training:
            settings = dataclasses.replace(settings, **training)
        fields["precision"] = preset_precision(fields.get("precision"), entry)
        return cls(model_class=model_class, preset=preset, training=settings,
                   **fields)

    def to_dict(self):
        """The run as a JSON-ready dict (the model class by name)."""
        values = {field.name: getattr(self, field.name)
                  for field in dataclasses.fields(self)}
        values["model_class"] = self.model_class.__name__
        values["training"] = self.training.to_dict()
        values["model_args"] = dict(self.model_args)
        return values


def _splits(patterns):
    """`{split: tuple of patterns}` (a split without patterns: None)."""
    if patterns is None:
        return None
    return types.MappingProxyType({
        split: None if value is None else tuple(value)
        for split, value in patterns.items()})


@dataclasses.dataclass(frozen=True, kw_only=True)
class GFLTraining(_Settings):
    """How the GFL parser trains: a GFL preset's `"training"` block.

    Args:
        optimizer: `"sgd"` (the paper's) or `"adam"`.
        learning_rate: the learning rate.
        batch_size: trees per batch.
        epochs: training epochs.
        clip_norm: each gradient's norm is clipped to this (Keras'
            `clipnorm`), or None.
        min_count: training words seen fewer times become `<unk>`.
    """

    optimizer: str
    learning_rate: float = dataclasses.field(metadata=option_metadata(
        "learning rate", type=positive_float))
    batch_size: int = dataclasses.field(metadata=option_metadata(
        "training batch size", type=positive_int))
    epochs: int = dataclasses.field(metadata=option_metadata(
        "training epochs", type=positive_int))
    clip_norm: typing.Optional[float] = None
    min_count: int = dataclasses.field(default=2, metadata=option_metadata(
        "training words seen fewer than N times become <unk>",
        type=positive_int, metavar="N"))

    def __post_init__(self):
        owner = type(self).__name__
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"{owner}.optimizer must be 'sgd' or 'adam', "
                             f"got {self.optimizer!r}.")
        for name in ("batch_size", "epochs", "min_count"):
            _check_count(owner, name, getattr(self, name))
        _check_rate(owner, "learning_rate", self.learning_rate)
        _check_rate(owner, "clip_norm", self.clip_norm, optional=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class GFLExperiment(RunConfig):
    """A run of the GFL recipe (`recipes/wsj_gfl.py`).

    Args:
        preset: the preset's name (`GFLParser.get_preset`).
        training: `GFLTraining`.
        beam_size: the beam of the final beam-search evaluation.
        attention: LSTM+A (False: the paper's LSTM baseline).
        treebank: the folder the split patterns start from (None:
            `$KERAS_ORDERED_DATA/wsj_sample/mrg`).
        splits: `{"train", "valid", "test"}` -> shell patterns of `.mrg`
            files or folders (None: the WSJ sample's split).
        word_vectors: a word2vec/GloVe text file for the source embeddings,
            or None.
        max_sentences: read only the first N trees of each split.
        steps_per_epoch: train at most N batches per epoch.
        eval_batch_size: sentences decoded together.
        attention_map: a PNG file for the attention map of one test
            sentence, or None.
        attention_sentence: which test sentence it draws.
        (and `RunConfig`'s fields.)
    """

    preset: str
    training: GFLTraining
    beam_size: int = dataclasses.field(metadata=option_metadata(
        "beam of the final beam-search evaluation (default: the preset's; "
        "the paper's is 10)", type=positive_int))
    attention: bool = dataclasses.field(default=True, metadata=option_metadata(
        "the paper's LSTM baseline without attention (default: with "
        "attention, LSTM+A)", flag="--no-attention"))
    treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "folder the split patterns start from (default: "
            "$KERAS_ORDERED_DATA/wsj_sample/mrg)", metavar="DIR"))
    splits: typing.Optional[typing.Mapping[str, tuple]] = None
    word_vectors: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "initialise the source embeddings from this word2vec/GloVe "
            "text file, of the preset's embedding size (default: random "
            "initialisation)", metavar="FILE"))
    max_sentences: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "read only the first N trees of each split, for quick runs "
            "(default: all)", type=positive_int, metavar="N"))
    steps_per_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "train at most N batches per epoch, for quick runs (default: "
            "the whole training split)", type=positive_int, metavar="N"))
    eval_batch_size: int = dataclasses.field(default=64, metadata=option_metadata(
        "sentences decoded together", type=positive_int, metavar="N"))
    attention_map: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "write the attention heat map of one test sentence (greedy "
            "decoding) to this PNG file, as the paper's Figure 4 (default: "
            "none)", metavar="PNG"))
    attention_sentence: int = dataclasses.field(default=0, metadata=option_metadata(
        "which test sentence --attention-map draws (0: the first)",
        type=non_negative_int, metavar="I"))

    def __post_init__(self):
        owner = type(self).__name__
        object.__setattr__(self, "splits", _splits(self.splits))
        for name in ("beam_size", "eval_batch_size"):
            _check_count(owner, name, getattr(self, name))
        for name in ("max_sentences", "steps_per_epoch"):
            _check_count(owner, name, getattr(self, name), optional=True)
        _check_count(owner, "attention_sentence", self.attention_sentence,
                     smallest=0)

    @classmethod
    def from_preset(cls, model_class, preset, *, training=None,
                    beam_size=None, **fields):
        """The run of a preset, with `training` (a dict of `GFLTraining`
        fields) and `fields` replaced; `beam_size` None: the preset's."""
        entry = model_class.get_preset(preset)
        settings = GFLTraining.from_dict(entry["training"])
        if training:
            settings = dataclasses.replace(settings, **training)
        return cls(preset=preset, training=settings,
                   beam_size=beam_size or entry["decoding"]["beam_size"],
                   **fields)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TDTreeLSTMTraining(_Settings):
    """How a TD-TreeLSTM trains: a TD-TreeLSTM preset's `"training"` block
    (the official optimisation).

    Args:
        optimizer: `"sgd"` (the official code's; the only one).
        learning_rate: the initial learning rate.
        batch_size: sentences per batch.
        clip_norm: the global gradient norm clipped to, or None.
        min_improvement: the plateau schedule's factor
            (`HalveLearningRateOnPlateau`).
        max_epochs: at most this many epochs.
        min_count: training words seen fewer times become `<unk>`.
    """

    optimizer: str = "sgd"
    learning_rate: float = dataclasses.field(metadata=option_metadata(
        "SGD learning rate", type=positive_float))
    batch_size: int = dataclasses.field(metadata=option_metadata(
        "sentences per batch", type=positive_int))
    clip_norm: typing.Optional[float] = None
    min_improvement: float
    max_epochs: int = dataclasses.field(metadata=option_metadata(
        "at most this many epochs", type=positive_int, flag="--epochs"))
    min_count: int = dataclasses.field(default=2, metadata=option_metadata(
        "training words seen fewer than N times are <unk>",
        type=positive_int, metavar="N"))

    def __post_init__(self):
        owner = type(self).__name__
        if self.optimizer != "sgd":
            raise ValueError(f"{owner}.optimizer must be 'sgd', got "
                             f"{self.optimizer!r}.")
        for name in ("batch_size", "max_epochs", "min_count"):
            _check_count(owner, name, getattr(self, name))
        _check_rate(owner, "learning_rate", self.learning_rate)
        _check_rate(owner, "clip_norm", self.clip_norm, optional=True)
        _check_rate(owner, "min_improvement", self.min_improvement)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TDTreeLSTMExperiment(RunConfig):
    """A run of the TD-TreeLSTM recipe (`recipes/wsj_tdtreelstm.py`).

    Args:
        preset: the preset's name (`TDTreeLSTMLanguageModel.get_preset`).
        training: `TDTreeLSTMTraining`.
        ld: an LdTreeLSTM (left dependents feed GEN-R).
        sequential: the baseline: the same network on left-to-right chains.
        data: the folder of dependency files (None:
            `$KERAS_ORDERED_DATA/wsj_sample/dep`).
        splits: `{"train", "valid", "test"}` -> patterns (a split None: no
            such split; None: the WSJ sample's training and validation
            splits).
        format: the dependency files' format (`"auto"` or one of
            `keras_ordered.datasets.dependency.FORMATS`).
        steps_per_epoch: train at most N batches per epoch.
        time_limit: stop training after this many minutes, or None.
        lowercase: lower-case the words.
        max_sentences: read only the first N trees of each split.
        jit_compile: XLA-compile the training step.
        eval_batch_size: sentences scored together.
        (and `RunConfig`'s fields.)
    """

    preset: str
    training: TDTreeLSTMTraining
    ld: bool = dataclasses.field(default=False, metadata=option_metadata(
        "LdTreeLSTM: a fifth LSTM over each head's left dependents feeds "
        "its GEN-R step"))
    sequential: bool = dataclasses.field(default=False, metadata=option_metadata(
        "the baseline: the same network on left-to-right chains (a "
        "sequential LSTM language model)"))
    data: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "folder of dependency files (default: "
            "$KERAS_ORDERED_DATA/wsj_sample/dep)", metavar="DIR"))
    splits: typing.Optional[typing.Mapping[str, tuple]] = None
    format: str = "auto"
    steps_per_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "at most N batches per epoch (quick runs)", type=positive_int,
            metavar="N"))
    time_limit: typing.Optional[float] = dataclasses.field(
        default=None, metadata=option_metadata(
            "stop training after MIN minutes (models compared in the same "
            "time; default: none)", type=positive_float, metavar="MIN"))
    lowercase: bool = dataclasses.field(default=False, metadata=option_metadata(
        "lower-case the words"))
    max_sentences: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "read only the first N trees of each split (quick runs)",
            type=positive_int, metavar="N"))
    jit_compile: bool = dataclasses.field(default=True, metadata=option_metadata(
        "do not XLA-compile the training step (default: compiled, about "
        "twice as fast on CPU)", flag="--no-jit"))
    eval_batch_size: int = dataclasses.field(default=64, metadata=option_metadata(
        "sentences scored together", type=positive_int, metavar="N"))

    def __post_init__(self):
        owner = type(self).__name__
        object.__setattr__(self, "splits", _splits(self.splits))
        if self.ld and self.sequential:
            raise ValueError("--ld and --sequential exclude each other (the "
                             "sequential baseline has no left dependents).")
        _check_count(owner, "eval_batch_size", self.eval_batch_size)
        for name in ("max_sentences", "steps_per_epoch"):
            _check_count(owner, name, getattr(self, name), optional=True)
        _check_rate(owner, "time_limit", self.time_limit, optional=True)

    @property
    def kind(self):
        """What trains: `"TreeLSTM"`, `"LdTreeLSTM"` or the sequential
        baseline."""
        return ("sequential LSTM (chains)" if self.sequential
                else "LdTreeLSTM" if self.ld else "TreeLSTM")

    @classmethod
    def from_preset(cls, model_class, preset, *, training=None, **fields):
        """The run of a preset, with `training` (a dict of
        `TDTreeLSTMTraining` fields) and `fields` replaced."""
        settings = TDTreeLSTMTraining.from_dict(
            model_class.get_preset(preset)["training"])
        if training:
            settings = dataclasses.replace(settings, **training)
        return cls(preset=preset, training=settings, **fields)


def model_argument_names(model_class):
    """The arguments `--model-arg` may set: the model's constructor's,
    less the vocabulary and seed (the recipe gives those)."""
    parameters = inspect.signature(model_class.__init__).parameters.values()
    return {p.name for p in parameters
            if p.kind is p.POSITIONAL_OR_KEYWORD
            and p.name not in ("self", "vocabulary", "seed")}


def parse_model_args(pairs, model_class):
    """`--model-arg NAME=VALUE` pairs as a dict of model arguments.

    Args:
        pairs: list of `"NAME=VALUE"` strings, or None.
        model_class: the model's class (other names are refused).

    Returns:
        dict, name to value (JSON-decoded where the text is JSON, else the
        text).

    Raises:
        ValueError: a pair without `=`, or an unknown name.
    """
    names = model_argument_names(model_class)
    values = {}
    for pair in pairs or ():
        name, equals, text = pair.partition("=")
        name = name.strip()
        if not equals or not name:
            raise ValueError(
                f"--model-arg {pair!r}: expected NAME=VALUE, e.g. "
                "chunk_size=20."
            )
        if name not in names:
            raise ValueError(
                f"--model-arg {name}: the model has no such argument; "
                f"choose among {', '.join(sorted(names))}."
            )
        try:
            values[name] = json.loads(text)
        except json.JSONDecodeError:
            values[name] = text
    return values


@dataclasses.dataclass(frozen=True, kw_only=True)
class DistanceParserExperiment(RunConfig):
    """A run of the distance-parser recipe: the student of tree averaging.

    Each field with option metadata is one option of
    `recipes/ptb_distance_parser.py` (`--teacher`, `--epochs`, ...),
    generated by `keras_ordered.training.options.add_config_options`: the
    help, type and default are written here once.

    Args:
        preset: the `DistanceParser` preset.
        teacher: the members whose averaged trees the student learns:
            shipped models or ensembles, `.keras` files, `MODEL:DISTANCE`
            (as `keras-ordered parse --model`).
        teacher_batch_size: sentences per forward pass of the teacher.
        data: the PTB text folder (None: `$KERAS_ORDERED_DATA/ptb`).
        exclude_treebank: a treebank folder whose sentences are left out
            of the silver training text (None: the WSJ sample under
            `$KERAS_ORDERED_DATA`, the sentences the evaluation reads).
        treebank: the gold trees the final evaluation reads (dev and test
            splits; None: the WSJ sample); never used to train or choose.
        max_lines: at most this many sentences of each text split, once
            the treebank's are left out (quick runs).
        epochs, batch_size, learning_rate, clip_norm: the optimisation
            (Adam, gradient norm clipped); None: the preset's.
        steps_per_epoch: at most this many batches per epoch.
    """

    preset: str = dataclasses.field(default="small", metadata=option_metadata(
        "DistanceParser preset (listed below)", metavar="NAME"))
    teacher: tuple = dataclasses.field(default=("ensemble_ptb",), metadata=option_metadata(
        "the parsers whose averaged trees the student learns: shipped "
        "models or ensembles, .keras files, MODEL:DISTANCE (as "
        "keras-ordered parse --model)", nargs="+", metavar="MODEL"))
    teacher_batch_size: int = dataclasses.field(default=128, metadata=option_metadata(
        "sentences per forward pass of the teacher", type=positive_int,
        metavar="N"))
    data: typing.Optional[str] = dataclasses.field(default=None, metadata=option_metadata(
        "PTB text folder (default: $KERAS_ORDERED_DATA/ptb)", metavar="DIR"))
    exclude_treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "leave this treebank's sentences out of the silver training "
            "text (default: the WSJ sample under $KERAS_ORDERED_DATA, "
            "which the evaluation reads)", metavar="DIR"))
    treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "gold trees of the final evaluation, dev and test splits "
            "(default: the WSJ sample); never used to train or choose",
            metavar="DIR"))
    max_lines: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "at most N sentences of each text split, once the "
            "treebank's are left out (quick runs)",
            type=positive_int, metavar="N"))
    epochs: typing.Optional[int] = dataclasses.field(default=None, metadata=option_metadata(
        "training epochs (default: the preset's)", type=positive_int,
        metavar="N"))
    batch_size: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "sentences per batch (default: the preset's)",
            type=positive_int, metavar="N"))
    learning_rate: typing.Optional[float] = dataclasses.field(
        default=None, metadata=option_metadata(
            "Adam learning rate (default: the preset's)",
            type=positive_float, metavar="RATE"))
    clip_norm: typing.Optional[float] = dataclasses.field(
        default=None, metadata=option_metadata(
            "clip the gradient's norm to this (default: the preset's)",
            type=positive_float, metavar="NORM"))
    steps_per_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "at most N batches per epoch (quick runs; default: the whole "
            "silver text)", type=positive_int, metavar="N"))

    def __post_init__(self):
        object.__setattr__(self, "teacher", tuple(self.teacher))
        if not self.teacher:
            raise ValueError("Give the student a teacher: --teacher MODEL.")

    def schedule(self, preset_training):
        """The preset's `"training"` block with this run's changes."""
        chosen = dict(preset_training)
        for name in ("epochs", "batch_size", "learning_rate", "clip_norm"):
            value = getattr(self, name)
            if value is not None:
                chosen[name] = value
        return chosen

    def to_dict(self):
        """The run as a JSON-ready dict."""
        values = dataclasses.asdict(self)
        values["teacher"] = list(self.teacher)
        return values
