"""keras-tuner `HyperModel`s of the ON-LSTM and PRPN language models.

A search space per model family, centred on one of its presets (the
preset's values are the defaults; `keras_ordered.tuning.search.make_tuner`
makes them the first trial of every search), and a `fit` that trains a
trial as the recipes train: a `keras_ordered.tuning.trial.TrialTask` run
by `keras_ordered.training.runner.Runner`, with truncated BPTT over
contiguous streams and the recurrent state carried from window to window
(`keras_ordered.training.BPTTBatches`), the preset's optimizer, gradient
clipping and learning-rate schedule, and validation perplexity from a zero
state at the start of the validation text.

The objective is `val_perplexity` (minimised) by default, or `parse_f1`
(maximised): the sentence-level unlabeled F1 of the model's default
syntactic distance on the first sentences of a treebank folder, parsed at
the end of every epoch. With a treebank, both are recorded for every
trial, whichever one is the objective.

What keras-tuner requires of a `fit`, and how it is met here:

- keras-tuner deep-copies the callbacks given to `search` for every trial:
  the callbacks that hold a model's state (the plateau schedule, the
  parsing evaluation) are the trial task's, fresh for each trial, and run
  before the tuner's own (which read the objective from the epoch's logs).
- keras-tuner keeps only weights: a trial's model is rebuilt from its
  hyperparameters (`build`) and its best weights loaded into it. `build`
  compiles the model and creates its carried-state variables, so the
  rebuilt model trains, evaluates and parses like the trained one, and
  `model.save("best.keras")` writes a normal model file whose vocabulary
  travels with it. (The runner also saves each trial's best epoch as a
  float32 `model.keras` in the trial's folder.)
- NT-ASGD is left out of trials: it validates averaged weights that
  keras-tuner's checkpoint (the raw weights) would not hold, and a search's
  few epochs rarely reach its trigger. Train the best configuration with
  the recipe (`recipes/ptb_onlstm.py`) for NT-ASGD.
"""

import dataclasses
import math
import tempfile

import keras
import keras_tuner as kt

from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.onlstm import ONLSTMLanguageModel
from keras_ordered.models.onlstm import get_preset as get_onlstm_preset
from keras_ordered.models.prpn import PRPNLanguageModel
from keras_ordered.models.prpn import get_preset as get_prpn_preset
from keras_ordered.training.config import LanguageModelTraining
from keras_ordered.training.config import RunConfig
from keras_ordered.training.optimizers import make_optimizer
from keras_ordered.training.runner import Runner
from keras_ordered.tuning.trial import TrialTask

OBJECTIVES = {
    "perplexity": kt.Objective("val_perplexity", direction="min"),
    "parse_f1": kt.Objective("parse_f1", direction="max"),
}
"""The objectives a search can optimise, by the name `--objective` takes."""

_RATE_STEP = 0.05


class LanguageModelHyperModel(kt.HyperModel):
    """What the ON-LSTM and PRPN hypermodels share (see their docstrings).

    A subclass sets `model_class`, `get_preset` and `knobs` (the names of
    its hyperparameters, in order) and defines `_declare(hp, name, base)`
    for each knob and `_model_config(values, config)`.
    """

    model_class = None
    get_preset = None
    knobs = ()

    def __init__(self, vocabulary, preset="small", tune=None,
                 objective="perplexity", treebank=None, parse_sentences=200,
                 seed=1111, policy=None, tf32=False, name=None,
                 tunable=True):
        super().__init__(name=name, tunable=tunable)
        size, words = check_vocabulary(vocabulary)
        if words is None:
            raise ValueError(
                "Pass the vocabulary's words, not only its size: the best "
                "model is saved with them, so that it can parse text."
            )
        self.vocabulary = words
        self.preset_name = preset
        self.preset = type(self).get_preset(preset)
        self.training = LanguageModelTraining.from_dict(
            self.preset["training"])
        if self.training.sentence_level or self.training.data != "text":
            raise ValueError(
                f"Preset {preset!r} trains on whole treebank sentences; "
                "searches train on a text stream with truncated BPTT. Pick "
                "another preset (e.g. small or tiny)."
            )
        self.tune = tuple(self.knobs if tune is None else tune)
        unknown = sorted(set(self.tune) - set(self.knobs))
        if unknown:
            raise ValueError(
                f"Unknown hyperparameter(s) {', '.join(unknown)} for "
                f"{self.model_class.__name__}: choose among "
                f"{', '.join(self.knobs)}."
            )
        if not self.tune:
            raise ValueError("`tune` names no hyperparameter to search.")
        if objective not in OBJECTIVES:
            raise ValueError(
                f"Unknown objective {objective!r}: use one of "
                f"{', '.join(OBJECTIVES)}."
            )
        if objective == "parse_f1" and treebank is None:
            raise ValueError(
                "The parse_f1 objective needs a treebank folder of .mrg "
                "files to parse (`treebank=...`, --treebank)."
            )
        self.objective_name = objective
        self.treebank = treebank
        self.parse_sentences = int(parse_sentences)
        self.seed = seed
        self.policy = policy
        self.tf32 = bool(tf32)
        self._treebank_records = None

    @property
    def objective(self):
        """The `keras_tuner.Objective` to give the tuner."""
        return OBJECTIVES[self.objective_name]

    # -- search space --------------------------------------------------------
    def base_values(self):
        """The preset's value of every knob (the search's defaults)."""
        config = self.preset["model"]
        return {name: self._base(name, config) for name in self.knobs}

    def _base(self, name, config):
        if name == "learning_rate":
            return float(self.training.learning_rate)
        return config[name]

    def values(self, hp):
        """Declares the searched knobs in `hp`; returns every knob's value
        (the preset's for the knobs not searched)."""
        values = self.base_values()
        for name in self.tune:
            values[name] = self._declare(hp, name, values[name])
        return values

    def configuration(self, hp):
        """`(model arguments, LanguageModelTraining)` of a trial."""
        values = self.values(hp)
        config = self._model_config(values, dict(self.preset["model"]))
        training = dataclasses.replace(
            self.training, learning_rate=values["learning_rate"])
        return config, training

    def _declare(self, hp, name, base):
        raise NotImplementedError

    def _model_config(self, values, config):
        raise NotImplementedError

    # -- keras-tuner's HyperModel --------------------------------------------
    def build(self, hp):
        """A compiled model of the trial's hyperparameters, ready to `fit`.

        Args:
            hp: `keras_tuner.HyperParameters`.

        Returns:
            The language model in the hypermodel's `policy` (None: the
            global policy), compiled with the preset's optimizer at the
            trial's learning rate (its slots built), with its
            carried-state variables for the preset's training and
            evaluation batch sizes.
        """
        config, training = self.configuration(hp)
        if self.policy is not None:
            config["dtype"] = self.policy
        model = self.model_class(vocabulary=self.vocabulary, seed=self.seed,
                                 **config)
        self.compile_model(model, training)
        # Built now, the optimizer's slots (Adam's moments) are in the
        # checkpoints keras-tuner writes, and a trial Hyperband continues
        # gets them back with the weights.
        model.optimizer.build(model.trainable_variables)
        return model

    def compile_model(self, model, training):
        """Compiles `model` for a trial's `LanguageModelTraining`: the
        preset's optimizer at the trial's rate, truncated BPTT with the
        carried state of the training and evaluation batches."""
        model.compile(optimizer=make_optimizer(training))
        model.configure_bptt(training.batch_size, training.eval_batch_size,
                             clip_norm=training.clip_norm)

    def fit(self, hp, model, x, validation_data=None, epochs=1,
            initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            callbacks=None, verbose="auto", output=None, **kwargs):
        """Trains a trial's model: a `keras_ordered.tuning.trial.TrialTask`
        run by `keras_ordered.training.runner.Runner`.

        Args:
            hp: `keras_tuner.HyperParameters`.
            model: the model `build(hp)` returned.
            x: 1-D int array, the training text's token ids.
            validation_data: 1-D int array, the validation text's ids.
            epochs: int (Hyperband sets it per round).
            initial_epoch: int (Hyperband continues earlier trials).
            steps_per_epoch: int or None, cap on the training windows per
                epoch (quick searches).
            validation_steps: int or None, validate on the first windows
                only.
            callbacks: the tuner's callbacks (run after the runner's and
                the trial's own).
            verbose: as `keras.Model.fit`.
            output: str, the trial's folder, where the runner keeps its
                files (the search's tuner gives keras-tuner's trial folder;
                None: a temporary folder, removed after the trial).
            **kwargs: refused (a clear error instead of an ignored option).

        Returns:
            The `keras.callbacks.History` of the epochs trained, with
            `val_perplexity` (and `parse_f1` with a treebank) per epoch.
        """
        if kwargs:
            raise TypeError(
                f"Unexpected fit option(s) {', '.join(sorted(kwargs))}: a "
                "language-model search takes the training ids, "
                "validation_data, epochs, steps_per_epoch, validation_steps, "
                "callbacks, verbose and output."
            )
        if validation_data is None:
            raise ValueError(
                "A search needs `validation_data` (the validation text's "
                "token ids): the objective is measured on it."
            )
        if output is None:
            # A tuner of keras-tuner's own: the runner's files last the trial.
            with tempfile.TemporaryDirectory(
                    prefix="keras_ordered_trial_") as folder:
                return self.fit(hp, model, x, validation_data, epochs,
                                initial_epoch, steps_per_epoch,
                                validation_steps, callbacks, verbose, folder)
        config = RunConfig(output=output, seed=self.seed,
                           verbose=1 if verbose == "auto" else verbose,
                           tf32=self.tf32)
        task = TrialTask(config, self, hp, model, x, validation_data,
                         epochs=epochs, initial_epoch=initial_epoch,
                         steps_per_epoch=steps_per_epoch,
                         validation_steps=validation_steps)
        Runner(task, callbacks=callbacks or ()).run()
        return task.outcome()

    def records(self):
        """The treebank's sentences parsed after every epoch (read once)."""
        if self._treebank_records is None:
            if isinstance(self.treebank, (list, tuple)):
                self._treebank_records = list(self.treebank)
            else:
                from keras_ordered.datasets.treebank import load_treebank

                self._treebank_records = load_treebank(self.treebank)
        return self._treebank_records


def _rate(hp, name, base, high):
    """A dropout rate in `[0, high]` on a 0.05 grid, the preset's by default."""
    high = max(high, base)
    return hp.Float(name, 0.0, high, step=_RATE_STEP, default=base)


def _learning_rate(hp, base):
    """A log-uniform learning rate in `[base / 10, 3 base]`."""
    return hp.Float("learning_rate", base / 10.0, base * 3.0,
                    sampling="log", default=base)


def _sizes(base):
    """Half, the same and one and a half times a layer size."""
    return sorted({max(1, base // 2), base, base * 3 // 2})


def _round_up(value, multiple):
    return int(math.ceil(value / multiple) * multiple)


class ONLSTMHyperModel(LanguageModelHyperModel):
    """Search space and training of the ON-LSTM language model.

    Knobs (Shen et al., 2019, and the AWD-LSTM regularisation it uses),
    each centred on the preset's value, which is its default:

    - `chunk_size`: half, the same or twice the preset's, among those that
      divide the last layer (its size is the embedding's: tied weights);
    - `hidden_size`: the layers before the last, half, the same or 1.5
      times the preset's, rounded up to a multiple of the chunk size;
    - `dropout_output`, `dropout_hidden`, `dropout_input`,
      `dropout_embedding`, `weight_drop`: 0 to 0.6 (0.7 for the input,
      0.3 for the embedding) on a 0.05 grid;
    - `learning_rate`: log-uniform in [lr / 10, 3 lr] (SGD, lr 30 in the
      paper).

    Args:
        vocabulary: list of str, the words (index = token id).
        preset: str, the preset the space is centred on and whose other
            settings (embedding, layers, AR/TAR, batch sizes, BPTT length,
            optimizer, clipping) every trial keeps.
        tune: list of str or None, the knobs to search (None: all); the
            others keep the preset's values.
        objective: `"perplexity"` (validation perplexity, minimised) or
            `"parse_f1"` (sentence-level F1 on `treebank`, maximised).
        treebank: str or None, a folder of `.mrg` files, or a list of
            `TreebankSentence`: its first `parse_sentences` sentences of
            two words or more are parsed after every epoch.
        parse_sentences: int.
        seed: int, initialisation, dropout and window seeds of every trial.
        policy: str or None, the Keras dtype policy the trials' models are
            built and trained in (e.g. `"mixed_bfloat16"`): `build` gives
            it to the model, the runner sets it for the trial and puts the
            global policy back after (None: whatever the global policy is).
        tf32: bool, let float32 products run in TensorFloat-32 on GPUs
            that have it (False: true float32, as the recipes' default).
        name, tunable: as `keras_tuner.HyperModel`.

    Example:

    ```python
    # needs: ptb
    import keras_tuner

    (train, valid, _), vocabulary = keras_ordered.datasets.ptb.load_data(
        max_lines=200
    )
    hypermodel = keras_ordered.tuning.ONLSTMHyperModel(
        vocabulary, preset="tiny", tune=["chunk_size", "learning_rate"]
    )
    tuner = keras_tuner.RandomSearch(
        hypermodel, objective=hypermodel.objective, max_trials=2,
        directory="tune_example", overwrite=True,
    )
    tuner.search(train, validation_data=valid, epochs=1, steps_per_epoch=3,
                 validation_steps=2, verbose=0)
    best = tuner.get_best_models(1)[0]
    best.save("best.keras")  # keras-ordered parse --model best.keras ...
    ```

    Reference:
        Shen et al., "Ordered Neurons: Integrating Tree Structures into
        Recurrent Neural Networks", ICLR 2019; Li et al., "Hyperband",
        JMLR 2018.
    """

    model_class = ONLSTMLanguageModel
    get_preset = staticmethod(get_onlstm_preset)
    knobs = (
        "chunk_size", "hidden_size", "dropout_output", "dropout_hidden",
        "dropout_input", "dropout_embedding", "weight_drop", "learning_rate",
    )
    _rate_limits = {
        "dropout_output": 0.6, "dropout_hidden": 0.6, "dropout_input": 0.7,
        "dropout_embedding": 0.3, "weight_drop": 0.6,
    }

    def _base(self, name, config):
        if name == "hidden_size":
            dims = list(config["hidden_dims"])
            return dims[0] if len(dims) > 1 else None
        return super()._base(name, config)

    def _declare(self, hp, name, base):
        if name == "chunk_size":
            last = self.preset["model"]["hidden_dims"][-1]
            choices = sorted(
                c for c in {max(1, base // 2), base, base * 2} if last % c == 0
            )
            return hp.Choice("chunk_size", choices, default=base)
        if name == "hidden_size":
            if base is None:
                return None  # one layer: its size is the embedding's
            return hp.Choice("hidden_size", _sizes(base), default=base)
        if name == "learning_rate":
            return _learning_rate(hp, base)
        return _rate(hp, name, base, self._rate_limits[name])

    def _model_config(self, values, config):
        dims = list(config["hidden_dims"])
        chunk = values["chunk_size"]
        if values["hidden_size"] is not None:
            inner = _round_up(values["hidden_size"], chunk)
            dims = [inner] * (len(dims) - 1) + [dims[-1]]
        config["hidden_dims"] = dims
        for name in self.knobs:
            if name not in ("hidden_size", "learning_rate"):
                config[name] = values[name]
        return config


class PRPNHyperModel(LanguageModelHyperModel):
    """Search space and training of the PRPN language model.

    Knobs (Shen et al., 2018), each centred on the preset's value, which is
    its default:

    - `hidden_dim`: half, the same or 1.5 times the preset's (the parser's
      convolution keeps the preset's `parser_units`, or follows
      `hidden_dim` where the preset ties them);
    - `num_slots`: the memory the attention reads, half, the same or twice
      the preset's;
    - `dropout` (0 to 0.7), `input_dropout` and `recurrent_dropout` (0 to
      0.6) on a 0.05 grid;
    - `learning_rate`: log-uniform in [lr / 10, 3 lr] (Adam, 0.003 in the
      paper).

    Args:
        vocabulary, preset, tune, objective, treebank, parse_sentences,
        seed, policy, tf32, name, tunable: as `ONLSTMHyperModel`.

    Example:

    ```python
    # needs: ptb
    import keras_tuner

    (train, valid, _), vocabulary = keras_ordered.datasets.ptb.load_data(
        max_lines=200
    )
    # Parsing F1 as the objective: objective="parse_f1", treebank=DIR.
    hypermodel = keras_ordered.tuning.PRPNHyperModel(
        vocabulary, preset="tiny", tune=["dropout", "learning_rate"]
    )
    tuner = keras_tuner.BayesianOptimization(
        hypermodel, objective=hypermodel.objective, max_trials=2,
        directory="tune_example_prpn", overwrite=True,
    )
    tuner.search(train, validation_data=valid, epochs=1, steps_per_epoch=3,
                 validation_steps=2, verbose=0)
    tuner.results_summary(1)
    ```

    Reference:
        Shen et al., "Neural Language Modeling by Jointly Learning Syntax
        and Lexicon", ICLR 2018.
    """

    model_class = PRPNLanguageModel
    get_preset = staticmethod(get_prpn_preset)
    knobs = (
        "hidden_dim", "num_slots", "dropout", "input_dropout",
        "recurrent_dropout", "learning_rate",
    )
    _rate_limits = {
        "dropout": 0.7, "input_dropout": 0.6, "recurrent_dropout": 0.6,
    }

    def _declare(self, hp, name, base):
        if name == "hidden_dim":
            return hp.Choice("hidden_dim", _sizes(base), default=base)
        if name == "num_slots":
            choices = sorted({max(2, base // 2), base, base * 2})
            return hp.Choice("num_slots", choices, default=base)
        if name == "learning_rate":
            return _learning_rate(hp, base)
        return _rate(hp, name, base, self._rate_limits[name])

    def _model_config(self, values, config):
        for name in self.knobs:
            if name != "learning_rate":
                config[name] = values[name]
        return config
