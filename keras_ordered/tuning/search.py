"""What is a search's own in the search recipes (`recipes/tune_onlstm.py`,
`recipes/tune_prpn.py`): its typed config and options, the tuner, the check
that a continued search is the same, the summary and the best model.

A search writes under `--output`:

- `search/`: keras-tuner's project (the oracle, one folder per trial with
  its hyperparameters, metrics and best weights). Each trial is a
  `keras_ordered.tuning.trial.TrialTask` that
  `keras_ordered.training.runner.Runner` trains in its folder, as a recipe
  trains (its `results.json`, `history.csv`, TensorBoard logs, backup, and
  its best epoch as a float32 `model.keras`). Running the same command
  again continues the search in it (`overwrite=False`): finished trials are
  kept, a trial the previous run was killed in runs again, from its last
  epoch's backup.
- `logs/`: TensorBoard logs, one folder per trial, with the trial's
  hyperparameters for the HParams dashboard
  (`tensorboard --logdir <output>/logs`).
- `best_model.keras`: the best trial's model (its best epoch), a normal
  model file with its vocabulary (`keras-ordered parse --model ...`,
  `keras-ordered export --model ...`).
- `results.json`: every trial (hyperparameters, objective, metrics), the
  best one, and the search's wall time.
- `search.json`: the options that fix the search space and the data; a
  run with other values is refused instead of mixing two searches.
"""

import dataclasses
import json
import os
import shutil
import sys
import time
import typing

import keras_tuner as kt

from keras_ordered_options import positive_int
from keras_ordered import _environment
from keras_ordered import _keras_private
from keras_ordered.training import options
from keras_ordered.training.config import RunConfig
from keras_ordered.training.config import option_metadata
from keras_ordered.training.config import preset_precision
from keras_ordered.training.crash_safety import atomic_path
from keras_ordered.training.crash_safety import write_json_atomically
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.precision import global_policy
from keras_ordered.training.precision import training_policy
from keras_ordered.tuning.hypermodels import OBJECTIVES

TUNERS = ("hyperband", "random", "bayesian")
PROJECT = "search"


def _knobs(text):
    """`argparse` type of `--tune`: comma-separated names, as a tuple."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


@dataclasses.dataclass(frozen=True, kw_only=True)
class SearchExperiment(RunConfig):
    """A search of the search recipes (`recipes/tune_onlstm.py`,
    `recipes/tune_prpn.py`): each field with option metadata is one of
    their options (`build_parser`).

    Args:
        preset: the preset the space is centred on.
        data: the PTB text folder (None: `$KERAS_ORDERED_DATA/ptb`).
        max_lines: read only the first N lines of each split.
        tuner: one of `TUNERS`.
        max_trials: at most N trials (None: 10 for random and Bayesian
            searches; Hyperband's own count).
        max_epochs: epochs of a trial (Hyperband: the most it gives one).
        factor: Hyperband's reduction factor.
        hyperband_iterations: times Hyperband runs its brackets.
        steps_per_epoch: train at most N windows per epoch.
        eval_steps: validate on the first N windows only.
        tune: the knobs to search (None: all).
        objective: a key of `keras_ordered.tuning.OBJECTIVES`.
        treebank: a Treebank folder parsed after every epoch (None: no
            parsing).
        parse_sentences: how many of its sentences.
        precision: the trials' dtype policy (None: the preset's).
        mixed_precision: the older switch for mixed precision.
        (and `RunConfig`'s fields: `output`, `seed`, `verbose`, `tf32`.)
    """

    preset: str = "small"
    data: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "directory with the PTB train.txt / valid.txt (default: "
            "$KERAS_ORDERED_DATA/ptb; nothing is downloaded)", metavar="DIR"))
    max_lines: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "read only the first N lines of each split, for quick searches "
            "(the vocabulary is then the words of those lines; default: "
            "all)", type=positive_int, metavar="N"))
    tuner: str = dataclasses.field(default="hyperband", metadata=option_metadata(
        "search algorithm: Hyperband (successive halving over epochs), "
        "random search, or Bayesian optimisation (Gaussian process)",
        choices=TUNERS))
    max_trials: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "at most N trials (models) in all (default: 10 for random and "
            "bayesian; Hyperband's own count from --max-epochs and "
            "--factor)", type=positive_int, metavar="N"))
    max_epochs: int = dataclasses.field(default=3, metadata=option_metadata(
        "epochs of a trial (random, bayesian), or the most epochs Hyperband "
        "gives one (it trains most trials fewer)", type=positive_int,
        metavar="N"))
    factor: int = dataclasses.field(default=3, metadata=option_metadata(
        "Hyperband's reduction factor (1 in FACTOR trials of a round go on "
        "to the next, FACTOR times longer)", type=int))
    hyperband_iterations: int = dataclasses.field(default=1, metadata=option_metadata(
        "times Hyperband runs its whole set of brackets", type=positive_int,
        metavar="N"))
    steps_per_epoch: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "train at most N windows per epoch, for quick searches "
            "(default: the whole training text)", type=positive_int,
            metavar="N"))
    eval_steps: typing.Optional[int] = dataclasses.field(
        default=None, metadata=option_metadata(
            "validate on the first N windows only, for quick searches "
            "(default: the whole validation text)", type=positive_int,
            metavar="N"))
    tune: typing.Optional[tuple] = dataclasses.field(
        default=None, metadata=option_metadata(
            "comma-separated knobs to search; the others keep the preset's "
            "values (default: all, listed below)", type=_knobs,
            metavar="KNOB,..."))
    objective: str = dataclasses.field(default="perplexity", metadata=option_metadata(
        "what the search optimises: validation perplexity (lower is "
        "better) or sentence-level parsing F1 on --treebank (higher)",
        choices=tuple(OBJECTIVES)))
    treebank: typing.Optional[str] = dataclasses.field(
        default=None, metadata=option_metadata(
            "Treebank .mrg folder: parse its first --parse-sentences "
            "sentences after every epoch and record the F1 of every trial "
            "(needed by --objective parse_f1; default: no parsing)",
            metavar="DIR"))
    parse_sentences: int = dataclasses.field(default=200, metadata=option_metadata(
        "sentences of --treebank parsed after every epoch",
        type=positive_int, metavar="N"))
    precision: typing.Optional[str] = None
    mixed_precision: bool = False


def build_parser(description, hypermodel_class, presets, default_output,
                 default_preset="small"):
    """The options of a search recipe: `SearchExperiment`'s fields, and
    the groups every recipe shares.

    Args:
        description: str, the first paragraph of `--help`.
        hypermodel_class: `ONLSTMHyperModel` or `PRPNHyperModel` (its knobs
            are listed after the options).
        presets: dict name -> preset, those of the model family.
        default_output: str, the default `--output`.
        default_preset: str, the default `--preset`.

    Returns:
        An `argparse.ArgumentParser`; `options.config_from_options(
        SearchExperiment, args)` reads what it parses.
    """
    parser = options.recipe_parser(
        description,
        epilog=(
            f"searched knobs: {', '.join(hypermodel_class.knobs)}\n"
            "presets (those training on a text stream) and the precision "
            "each trains in: "
            + ", ".join(sorted(
                f"{name} ({preset_precision(None, preset)})"
                for name, preset in presets.items()
                if not preset["training"].get("sentence_level")
            ))
        ),
    )
    options.add_preset(
        parser, default=default_preset,
        help="the preset the search space is centred on (its values are "
        "the defaults; its other settings are kept)",
    )
    options.add_output(
        parser, default_output,
        holds="the search (tuner state, logs, best model, results.json)",
        again="continues the search in it",
    )
    options.add_config_options(parser, SearchExperiment)
    options.add_precision(parser, by_preset=True)
    options.add_tf32(parser)
    options.add_seed(parser, "search, initialisation, dropout, windows")
    options.add_logging(parser)
    return parser


class _PresetFirst(_keras_private.FirstValuesHook):
    """Oracle mixin: the first trial of a search is the preset (every
    knob's default), the baseline the other trials are compared with."""

    def first_values(self):
        """Every hyperparameter's default."""
        return {hp.name: hp.default for hp in self.hyperparameters.space}


class _WholeStateFiles(_keras_private.StateFilesHook):
    """Oracle mixin: `oracle.json` and every `trial.json` written whole.

    keras-tuner truncates a state file, then writes it: a search killed in
    between (`kill -9`, a crash) left a file that the next run could not
    read. These go to a temporary name and replace the old file at once.
    """

    def write_state(self, path, state):
        """Writes `state` to `path` whole (`write_json_atomically`)."""
        write_json_atomically(path, state)


class _SearchTuner(_keras_private.TunerStateFileHook):
    """Tuner mixin: the tuner's own state file written whole, as the
    oracle's (`_WholeStateFiles`); each trial trains in its own folder
    (keras-tuner's, `search/trial_N`), where the runner keeps its files."""

    def write_state(self, path, state):
        """Writes `state` to `path` whole (`write_json_atomically`)."""
        write_json_atomically(path, state)

    def run_trial(self, trial, *args, **kwargs):
        """keras-tuner's trial, with the trial's folder as the fit's
        `output` (`LanguageModelHyperModel.fit`)."""
        kwargs["output"] = self.get_trial_dir(trial.trial_id)
        return super().run_trial(trial, *args, **kwargs)


class PresetFirstRandomSearchOracle(_PresetFirst, _WholeStateFiles,
                                    kt.oracles.RandomSearchOracle):
    """`keras_tuner.oracles.RandomSearchOracle`, the preset first."""


class PresetFirstBayesianOptimizationOracle(
    _PresetFirst, _WholeStateFiles, kt.oracles.BayesianOptimizationOracle
):
    """`keras_tuner.oracles.BayesianOptimizationOracle`, the preset first."""


class PresetFirstHyperbandOracle(_PresetFirst, _WholeStateFiles,
                                 kt.oracles.HyperbandOracle):
    """`keras_tuner.oracles.HyperbandOracle`, the preset first."""


class _Tuner(_SearchTuner, kt.Tuner):
    """`keras_tuner.Tuner` writing its state file whole."""


class _Hyperband(_SearchTuner, _keras_private.HyperbandWithOracle,
                 kt.Hyperband):
    """keras-tuner's Hyperband tuner (epochs per round, continued trials)
    around a given oracle."""


def make_tuner(hypermodel, tuner="hyperband", directory="runs/tune",
               max_trials=None, max_epochs=3, factor=3,
               hyperband_iterations=1, seed=1111, distribution_strategy=None):
    """The keras-tuner tuner of a search, continuing one found in `directory`.

    The first trial of every algorithm is the hypermodel's preset (every
    knob at its default), the baseline the others are compared with.

    Args:
        hypermodel: an `ONLSTMHyperModel` or `PRPNHyperModel`.
        tuner: `"hyperband"`, `"random"` or `"bayesian"`.
        directory: str, the search's folder (keras-tuner's project is its
            `search/` subfolder).
        max_trials: int or None, the most trials (None: 10 for random and
            Bayesian searches; Hyperband's own count).
        max_epochs: int, Hyperband's largest number of epochs per trial.
        factor, hyperband_iterations: Hyperband's.
        seed: int.
        distribution_strategy: a single-worker `tf.distribute.Strategy` or
            None (keras-tuner runs a trial under it; it does not support
            multi-worker strategies).

    Returns:
        A `keras_tuner.Tuner` with `overwrite=False`: trials already
        finished in `directory` are kept and not run again.

    Example:

    ```python
    # needs: ptb
    from keras_ordered.tuning.search import make_tuner

    (train, valid, _), vocabulary = keras_ordered.datasets.ptb.load_data(
        max_lines=200
    )
    hypermodel = keras_ordered.tuning.ONLSTMHyperModel(vocabulary, "tiny")
    tuner = make_tuner(hypermodel, "random", "tune_example", max_trials=2)
    tuner.search(train, validation_data=valid, epochs=1, steps_per_epoch=3,
                 validation_steps=2, verbose=0)
    ```
    """
    if max_trials is not None and max_trials < 1:
        raise ValueError(f"--max-trials must be >= 1 (received {max_trials}).")
    common = dict(objective=hypermodel.objective, seed=seed)
    project = dict(
        hypermodel=hypermodel, directory=directory, project_name=PROJECT,
        overwrite=False, distribution_strategy=distribution_strategy,
    )
    if tuner == "hyperband":
        if max_epochs < 1 or factor < 2:
            raise ValueError(
                "Hyperband needs --max-epochs >= 1 and --factor >= 2 "
                f"(received {max_epochs} and {factor})."
            )
        oracle = PresetFirstHyperbandOracle(
            max_epochs=max_epochs, factor=factor,
            hyperband_iterations=hyperband_iterations, **common,
        )
        # Hyperband has no trial budget of its own; its oracle honours one.
        oracle.max_trials = max_trials
        return _Hyperband(oracle=oracle, **project)
    if tuner == "random":
        oracle = PresetFirstRandomSearchOracle(
            max_trials=max_trials or 10, **common
        )
        return _Tuner(oracle=oracle, **project)
    if tuner == "bayesian":
        try:
            import scipy  # noqa: F401
            import sklearn  # noqa: F401
        except ImportError as error:
            raise ValueError(
                "Bayesian optimisation in keras-tuner needs scipy and "
                f"scikit-learn ({error}): "
                f"{_environment.install_hint('tensorflow')}."
            ) from None
        oracle = PresetFirstBayesianOptimizationOracle(
            max_trials=max_trials or 10, **common
        )
        return _Tuner(oracle=oracle, **project)
    raise ValueError(f"Unknown tuner {tuner!r}: use one of {', '.join(TUNERS)}.")


def default_strategy():
    """MirroredStrategy over several local GPUs, else None (one device).

    keras-tuner supports single-worker strategies only; a `TF_CONFIG`
    naming several workers is refused (run keras-tuner's own distributed
    search instead: one chief oracle, trials in parallel on the workers).
    """
    import tensorflow as tf

    config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    workers = config.get("cluster", {}).get("worker", [])
    if len(workers) > 1:
        raise ValueError(
            "keras-tuner supports single-worker strategies only, and "
            "TF_CONFIG names several workers: unset TF_CONFIG, or run "
            "keras-tuner's distributed search (KERASTUNER_TUNER_ID, "
            "KERASTUNER_ORACLE_IP, KERASTUNER_ORACLE_PORT), whose workers "
            "each run whole trials."
        )
    if len(tf.config.list_physical_devices("GPU")) > 1:
        return tf.distribute.MirroredStrategy()
    return None


def _check_same_search(output, settings):
    """Refuses to continue a search made with another space or data, or
    an output folder it could not write (one line)."""
    _environment.check_output_dir(output)
    path = os.path.join(output, "search.json")
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        # Searches made before --precision trained in float32.
        saved.setdefault("precision", "float32")
        changed = sorted(
            key for key in set(saved) | set(settings)
            if saved.get(key) != settings.get(key)
        )
        if changed:
            details = "; ".join(
                f"{key}: {saved.get(key)!r} then, {settings.get(key)!r} now"
                for key in changed
            )
            raise ValueError(
                f"The search in {output} was made with other settings "
                f"({details}). Run with the same options to continue it, "
                "or use another --output to start a new search."
            )
        return True
    os.makedirs(output, exist_ok=True)
    write_json_atomically(path, settings, indent=2)
    return False


def _at_step(metrics, name, step):
    """A metric's value at `step` (an epoch), else its best value."""
    if not metrics.exists(name):
        return None
    for observation in metrics.get_history(name):
        if observation.step == step:
            return float(observation.mean())
    best = metrics.get_best_value(name)
    return None if best is None else float(best)


def summarize(tuner):
    """Every trial of `tuner` as a dict, best first, unfinished ones last.

    Each has the trial's `hyperparameters`, its `score` (the objective at
    its best epoch), `best_epoch`, the `metrics` of that epoch (validation
    perplexity, parsing F1, ...) and `train_seconds` (its training and
    validation time up to that epoch).
    """
    objective = tuner.oracle.objective
    rows = []
    for trial in tuner.oracle.trials.values():
        metrics = trial.metrics
        step = trial.best_step
        rows.append({
            "trial_id": trial.trial_id,
            "status": str(trial.status),
            "score": None if trial.score is None else float(trial.score),
            "best_epoch": step,
            "hyperparameters": dict(trial.hyperparameters.values),
            "metrics": {
                name: _at_step(metrics, name, step)
                for name in metrics.metrics
                if name != "elapsed_seconds"
            },
            "train_seconds": round(
                _at_step(metrics, "elapsed_seconds", step) or 0.0, 1
            ),
        })
        message = (getattr(trial, "message", None) or "").strip()
        if message:  # a failed trial: the last line of its traceback
            rows[-1]["error"] = message.splitlines()[-1]
    sign = 1.0 if objective.direction == "min" else -1.0
    rows.sort(key=lambda r: (r["score"] is None,
                             sign * (r["score"] or 0.0), r["trial_id"]))
    return rows


def _format_row(row, objective_name, knobs):
    values = row["hyperparameters"]
    shown = ", ".join(
        f"{k}={_short(values[k])}" for k in knobs if k in values
    )
    facts = [row["status"].lower()]
    if "tuner/epochs" in values:
        facts.append(f"{values['tuner/epochs']} epoch(s)")
    facts.append(f"{row['train_seconds']:.0f} s")
    score = "-" if row["score"] is None else f"{row['score']:.2f}"
    also = ""
    for name in ("val_perplexity", "parse_f1"):
        value = row["metrics"].get(name)
        if name != objective_name and value is not None:
            also = f", {name} {value:.2f}"
    line = (f"  trial {row['trial_id']}: {objective_name} {score}{also} "
            f"[{', '.join(facts)}] {shown}")
    if row.get("error"):
        line += f"\n    failed: {row['error']}"
    return line


def _short(value):
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def run(args, hypermodel_class):
    """Runs (or continues) the search the options `args` describe (read
    once, into a `SearchExperiment`); returns 0."""
    return search(options.config_from_options(SearchExperiment, args),
                  hypermodel_class)


def search(config, hypermodel_class):
    """Runs (or continues) a search; returns 0.

    Each trial is a `keras_ordered.tuning.trial.TrialTask` that
    `keras_ordered.training.runner.Runner` trains in the trial's folder
    (its precision, seed, Ctrl-C, TensorBoard, checkpoint and saved model);
    this adds what is the search's own: the search space and the tuner,
    the check that a continued search is the same one, the HParams logs,
    the summary of every trial, and the best trial's model.

    Args:
        config: a `SearchExperiment`.
        hypermodel_class: `ONLSTMHyperModel` or `PRPNHyperModel`.

    Example:

    ```python
    # needs: ptb
    from keras_ordered.tuning import PRPNHyperModel
    from keras_ordered.tuning.search import SearchExperiment
    from keras_ordered.tuning.search import search

    search(SearchExperiment(output="tune_example", preset="tiny",
                            max_lines=200, tuner="random", max_trials=1,
                            max_epochs=1, steps_per_epoch=3, eval_steps=2,
                            verbose=0), PRPNHyperModel)
    ```
    """
    import keras

    from keras_ordered.datasets import ptb
    from keras_ordered.datasets.folders import data_dir

    (train_ids, valid_ids, _), vocabulary = ptb.load_data(
        data_dir(config.data, "ptb", "--data", "PTB language-modelling text"),
        download=False, max_lines=config.max_lines,
    )
    preset = hypermodel_class.get_preset(config.preset)
    # Trials train as the recipe would: in the preset's precision unless
    # --precision says otherwise. The best model is saved in float32.
    policy = training_policy(preset_precision(config.precision, preset),
                             config.mixed_precision)
    hypermodel = hypermodel_class(
        vocabulary, preset=config.preset, tune=config.tune or None,
        objective=config.objective, treebank=config.treebank,
        parse_sentences=config.parse_sentences, seed=config.seed,
        policy=policy, tf32=config.tf32,
    )
    settings = {
        "model": hypermodel_class.model_class.__name__,
        "preset": config.preset,
        "tune": list(hypermodel.tune),
        "objective": config.objective,
        "treebank": config.treebank,
        "parse_sentences": (config.parse_sentences if config.treebank
                            else None),
        "tuner": config.tuner,
        "max_epochs": config.max_epochs,
        "factor": config.factor if config.tuner == "hyperband" else None,
        "data_tokens": [int(len(train_ids)), int(len(valid_ids))],
        "vocabulary_size": len(vocabulary),
        "steps_per_epoch": config.steps_per_epoch,
        "eval_steps": config.eval_steps,
        "seed": config.seed,
        "precision": policy,
    }
    resuming = _check_same_search(config.output, settings)
    tuner = make_tuner(
        hypermodel, config.tuner, directory=config.output,
        max_trials=config.max_trials, max_epochs=config.max_epochs,
        factor=config.factor,
        hyperband_iterations=config.hyperband_iterations,
        seed=config.seed, distribution_strategy=default_strategy(),
    )
    done = [t for t in tuner.oracle.trials.values()
            if str(t.status) == "COMPLETED"]
    objective = hypermodel.objective.name
    print(
        f"{'Continuing' if resuming else 'Starting'} a {config.tuner} search "
        f"of {settings['model']} around preset {config.preset!r} "
        f"({', '.join(hypermodel.tune)}), objective {objective} "
        f"({hypermodel.objective.direction}), in {policy}, on "
        f"{len(train_ids)} training tokens; {len(done)} trial(s) already "
        f"finished in {config.output}."
    )
    log_dir = os.path.join(config.output, "logs")
    started = time.time()
    # keras-tuner's clear_session() before each trial resets the global
    # policy: it is put back after the search.
    with global_policy():
        tuner.search(
            train_ids, validation_data=valid_ids, epochs=config.max_epochs,
            steps_per_epoch=config.steps_per_epoch,
            validation_steps=config.eval_steps,
            # keras-tuner gives each trial a folder of it, with the trial's
            # hyperparameters for the HParams dashboard.
            callbacks=[keras.callbacks.TensorBoard(log_dir,
                                                   write_graph=False)],
            verbose=config.verbose,
        )
    elapsed = time.time() - started

    rows = summarize(tuner)
    finished = [r for r in rows if r["score"] is not None]
    if not finished:
        raise ValueError(
            f"No trial of the search in {config.output} finished (see the "
            "errors above)."
        )
    previous = {}
    results_path = os.path.join(config.output, "results.json")
    if os.path.exists(results_path):
        with open(results_path) as f:
            previous = json.load(f)
    model_path = os.path.join(config.output, "best_model.keras")
    # The runner saved each trial's best epoch as a float32 model.
    trial_model = os.path.join(tuner.get_trial_dir(finished[0]["trial_id"]),
                               "model.keras")
    with atomic_path(model_path) as partial:
        shutil.copyfile(trial_model, partial)
    results = {
        **settings,
        "search_seconds": round(
            previous.get("search_seconds", 0.0) + elapsed, 1
        ),
        "invocations": previous.get("invocations", 0) + 1,
        "trials_run": len(rows),
        "trials_finished": len(finished),
        "best": finished[0],
        "best_model": model_path,
        "trials": rows,
    }
    write_json_atomically(results_path, results, indent=2)
    print(f"\n{len(finished)} trial(s) finished ({elapsed / 60:.1f} min in "
          f"this run, {results['search_seconds'] / 60:.1f} min over the "
          "runs that reached their end), best first:")
    for row in rows:
        print(_format_row(row, objective, hypermodel.knobs))
    print(
        f"\nBest model: {model_path}\n"
        f"  keras-ordered parse --model {model_path} \"the cat sat on the "
        "mat\"\n"
        f"Results: {results_path}; TensorBoard HParams: tensorboard "
        f"--logdir {log_dir}"
    )
    return 0


def main(argv, *, hypermodel_class, description, default_output,
         presets=None):
    """Runs a search recipe; returns the process exit code.

    0 after the search (or when it had nothing left to run), 2 on a usage
    or input error (one line on stderr), 130 after Ctrl-C (run the same
    command again to continue).

    `presets` defaults to those of the hypermodel's model class.
    """
    if presets is None:
        presets = hypermodel_class.model_class.preset_table
    return run_recipe(
        build_parser(description, hypermodel_class, presets, default_output),
        run, argv, interrupted=_interrupted, hypermodel_class=hypermodel_class,
    )


def _interrupted(output):
    print(
        f"\nInterrupted. Finished trials are kept in {output}: run "
        "the same command again to continue the search (the trial that "
        "was running runs again, from its last backup).", file=sys.stderr,
    )
    return 130
