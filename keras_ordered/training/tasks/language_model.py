"""The language-model task of the ON-LSTM, PRPN and LSTM recipes.

`recipes/ptb_onlstm.py`, `recipes/ptb_prpn.py` and `recipes/ptb_lstm.py`
are short drivers over `main(...)` here. `LanguageModelTask` gives
`keras_ordered.training.runner.Runner` its hooks:

1. the run's `LanguageModelExperiment` (`keras_ordered.training.config`),
   read from the options once; the strategy (with `--cpu-devices`) and
   the precision it names;
2. inputs: the PTB text, or the sentences of a treebank (`_load_data`),
   as `BPTTBatches` windows or `SentenceBatches` (`_make_batches`);
3. the preset's model, compiled and configured for truncated BPTT;
4. callbacks: NT-ASGD or the plateau schedule, and the parsing F1 per
   epoch; backups every `--save-freq` windows;
5. the training windows from the one a backup stopped at;
6. evaluation: validation and test perplexity
   (`keras_ordered.training.evaluation.evaluate_stream`) and parsing F1
   of the best checkpoint, against right-branching.

The CPU-time warning of step 1 and its measured table are in
`keras_ordered.training.cpu_time`.

The runner does the rest (the dtype policy, the callbacks every run has,
the resume, the loop, the float32 copy, `model.keras` and
`results.json`); the options and `--help` come from
`keras_ordered.training.tasks.language_model_options`, made from the
experiment's fields, the exit status from
`keras_ordered.training.driver.run_recipe`.
"""

import sys
import types

import numpy as np

from keras_ordered.datasets import ptb
from keras_ordered.datasets.folders import data_dir
from keras_ordered.datasets.treebank import BOS
from keras_ordered.datasets.treebank import load_lm_sentences
from keras_ordered.datasets.treebank import lm_text_sentences
from keras_ordered.parsing import RIGHT_BRANCHING_MARGIN
from keras_ordered.training.batching import BPTTBatches
from keras_ordered.training.batching import SentenceBatches
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import make_plateau
from keras_ordered.training.cpu_time import CPU_MINUTES_PER_EPOCH
from keras_ordered.training.cpu_time import cpu_warning
from keras_ordered.training.distributed import is_chief
from keras_ordered.training.distributed import is_multi_worker
from keras_ordered.training.distributed import print_worker_error
from keras_ordered.training.distributed import split_cpu
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.evaluation import evaluate_stream
from keras_ordered.training.evaluation import perplexity
from keras_ordered.training.optimizers import make_optimizer
from keras_ordered.training.precision import emulated_bfloat16_warning
from keras_ordered.training.precision import training_policy
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task
from keras_ordered.training.tasks.language_model_options import build_parser
from keras_ordered.training.tasks.language_model_options import experiment_from_options
from keras_ordered.training.tasks.language_model_options import family_of
from keras_ordered.training.callbacks import ParsingEvaluation
from keras_ordered import backend

tf = backend.tensorflow_on_use("the language-model recipes")




def main(argv, *, model_class, description, default_output, get_preset=None,
         presets=None):
    """Runs a language-model recipe; returns the process exit code.

    0 on success (or when the run in `--output` is already finished), 2 on
    a usage or input error (one line on stderr), 130 after Ctrl-C (one line
    saying how to resume); under `--strategy multi-worker`, 1 after a
    worker's error, reported as one paragraph.

    Args:
        argv: list of arguments (None: `sys.argv[1:]`).
        model_class: the model's class; its `get_preset` and
            `preset_table` give the presets.
        description: the first line of `--help`.
        default_output: the default `--output`.
        get_preset, presets: other presets than the class's (tests).
    """
    presets = model_class.preset_table if presets is None else presets
    return run_recipe(
        build_parser(description, presets, default_output,
                     family=family_of(model_class)),
        train, argv,
        model_class=model_class, get_preset=get_preset, presets=presets,
    )


def train(args, *, model_class, get_preset=None, presets=None):
    """Trains, evaluates and saves a language model as the options say.

    Args:
        args: the parsed options of `build_parser`.
        model_class, get_preset, presets: as `main`'s.

    Returns:
        0, after printing and writing `results.json` to `--output`.
    """
    experiment = experiment_from_options(args, model_class, get_preset)
    return run_experiment(experiment, presets)


def run_experiment(experiment, presets=None):
    """Runs a `LanguageModelExperiment`; returns the exit status.

    Args:
        experiment: a `keras_ordered.training.config.LanguageModelExperiment`.
        presets: the family's presets, for the CPU-time warning (None:
            no warning).

    Returns:
        0 after the run; 1 after a worker's TensorFlow error under the
        multi-worker strategy, reported as one paragraph
        (`keras_ordered.training.distributed.print_worker_error`).
    """
    try:
        return Runner(LanguageModelTask(experiment, presets)).run()
    except Exception as error:
        if experiment.strategy != "multi-worker" or not isinstance(
            error, tf.errors.OpError
        ):
            raise
        print_worker_error(error)
        return 1


class LanguageModelTask(Task):
    """The hooks of the ON-LSTM, PRPN and LSTM recipes
    (`keras_ordered.training.runner`).

    Args:
        experiment: the run, a
            `keras_ordered.training.config.LanguageModelExperiment`.
        presets: the family's presets, for the CPU-time warning (None:
            no warning).

    Example:

    ```python
    # needs: ptb
    from keras_ordered.models import PRPNLanguageModel
    from keras_ordered.training.config import LanguageModelExperiment
    from keras_ordered.training.runner import Runner
    from keras_ordered.training.tasks.language_model import LanguageModelTask

    experiment = LanguageModelExperiment.from_preset(
        PRPNLanguageModel, "tiny", output="runs/prpn_tiny", max_lines=200,
        steps_per_epoch=2, eval_steps=1, skip_test=True, verbose=0,
        training={"epochs": 1})
    Runner(LanguageModelTask(experiment)).run()
    ```
    """

    def __init__(self, experiment, presets=None):
        super().__init__(experiment)
        self.model_class = experiment.model_class
        self.presets = presets
        self.save_freq = experiment.save_freq
        self.log_every = experiment.log_every
        self.training = experiment.training
        self.ntasgd = None
        self.parsing = None

    def make_strategy(self):
        # A CPU split into logical devices and a multi-worker strategy both
        # need a TensorFlow runtime that has not started yet.
        if self.config.cpu_devices:
            split_cpu(self.config.cpu_devices)
        return super().make_strategy()

    def policy(self):
        return training_policy(self.config.precision,
                               self.config.mixed_precision)

    def warnings(self, policy):
        lines = []
        name = self.config.preset
        if self.presets is not None and name in self.presets:
            lines.append(cpu_warning(
                name, self.presets, CPU_MINUTES_PER_EPOCH.get(
                    self.model_class.__name__, {})))
        lines.append(emulated_bfloat16_warning(policy))
        return [line for line in lines if line]

    def build_inputs(self, replicas):
        self.data = _load_data(self.config)
        self.batches = _make_batches(self.config, self.data, replicas)
        self.steps_per_epoch = self.batches.steps
        self.epochs = self.training.epochs

    def build_model(self):
        config = self.config
        return self.model_class.from_preset(
            config.preset, self.data.vocabulary, seed=config.seed,
            **config.model_args)

    def compile_model(self, model):
        # JAX runs a step op by op unless it is compiled: its step always is.
        model.compile(optimizer=make_optimizer(self.training),
                      jit_compile=(self.config.jit_compile
                                   or backend.name() == "jax"))
        model.configure_bptt(self.batches.batch, self.batches.eval_batch,
                             clip_norm=self.training.clip_norm)

    def announce(self, model, strategy, policy):
        """Prints what trains where, under which policy, into which folder."""
        config = self.config
        chief = is_chief(strategy)
        where = ", ".join(strategy.extended.worker_devices)
        if is_multi_worker(strategy):
            where = (f"{strategy.cluster_resolver.task_type} "
                     f"{strategy.cluster_resolver.task_id} of a multi-worker "
                     f"cluster{'' if not chief else ', the chief'}")
        print(
            f"Training {self.model_class.__name__} preset {config.preset!r} on "
            f"{len(self.data.train_ids)} tokens with "
            f"{strategy.num_replicas_in_sync} replica(s) ({where}) under the "
            f"{policy} policy; output in {config.output}"
            f"{'' if chief else ' (written by the chief only)'}."
        )

    def fingerprint(self, model):
        fingerprint = {
            "model": self.model_class.__name__,
            "preset": self.config.preset,
            "batch_size": self.batches.batch,
            "bptt": self.training.bptt,
            "vocabulary_size": len(self.data.vocabulary),
        }
        if self.config.model_args:
            # Only when given: backups of runs without them stay resumable.
            fingerprint["model_args"] = dict(self.config.model_args)
        fingerprint["parameters"] = int(model.count_params())
        return fingerprint

    def callbacks(self, model, log_dir, chief):
        """NT-ASGD or the plateau schedule, and the parsing F1 per epoch
        (the chief's)."""
        config, training = self.config, self.training
        callbacks = []
        if training.ntasgd:
            self.ntasgd = NTASGD(training.nonmono, verbose=config.verbose,
                                 average_from_epoch=config.average_from_epoch)
            callbacks.append(self.ntasgd)
        plateau = make_plateau(training, verbose=config.verbose)
        if plateau is not None:
            callbacks.append(plateau)
        records = self.data.treebank_records
        if chief and (config.parse_eval or records is not None):
            self.parsing = ParsingEvaluation(
                config.parse_eval or records,
                log_dir=log_dir,
                max_sentences=(config.parse_eval_sentences
                               if config.parse_eval else len(records)),
                # Under NT-ASGD: the trees of the averaged weights, which
                # validation and the checkpoints use.
                weights_context=self.validated_weights(),
            )
            callbacks.append(self.parsing)
        return callbacks

    def validated_weights(self):
        # Under NT-ASGD validation runs on the averaged weights: the best
        # checkpoint saves those.
        return self.ntasgd.validated_weights if self.ntasgd else None

    def train_data(self, epoch, start_batch):
        train, steps = self.batches.train, self.steps_per_epoch
        if start_batch:
            return train.dataset(epoch, start_batch, steps)
        return train.stream(epoch, steps)

    def validation_data(self):
        return self.batches.valid.dataset(
            0, steps_per_epoch=self.config.eval_steps)

    def results(self, model, facts):
        config = self.config
        results = {"preset": config.preset, "epochs": self.epochs,
                   "train_seconds": facts["train_seconds"],
                   "parameters": int(model.count_params())}
        if config.model_args:
            results["model_args"] = dict(config.model_args)
        if config.average_from_epoch is not None:
            results["average_from_epoch"] = config.average_from_epoch
        return results

    def restore_best(self, model, checkpoint, chief, results):
        restored = super().restore_best(model, checkpoint, chief, results)
        if not restored and self.ntasgd is not None:
            self.ntasgd.finalize()
        return restored

    def evaluate(self, model, results, loop):
        """Validation and test perplexity, and the parsing F1 of the
        evaluated weights against right-branching."""
        config, batches = self.config, self.batches
        eval_steps, bptt = config.eval_steps, self.training.bptt
        partial = ""
        if eval_steps:
            results["eval_steps"] = eval_steps
            results["evaluation"] = (
                f"partial: the first {eval_steps} windows of each split "
                "only (--eval-steps), not comparable with whole-split figures"
            )
            partial = f" (first {eval_steps} windows only: --eval-steps)"
        if self.data.treebank_records is not None:
            results["valid_split"] = "the training sentences (official setup)"
        stream = dict(sentence_level=batches.sentence_level, eos=batches.eos,
                      bos=batches.bos, loop=loop)
        results["valid_loss"] = evaluate_stream(
            model, self.data.valid_ids, batches.eval_batch, bptt,
            eval_steps, config.verbose, **stream,
        )
        results["valid_perplexity"] = perplexity(results["valid_loss"])
        print(f"Validation perplexity{partial}: "
              f"{results['valid_perplexity']:.2f}")
        if _tests(config, self.data):
            results["test_loss"] = evaluate_stream(
                model, self.data.test_ids, batches.test_batch, bptt,
                eval_steps, config.verbose, **stream,
            )
            results["test_perplexity"] = perplexity(results["test_loss"])
            print(f"Test perplexity{partial}: "
                  f"{results['test_perplexity']:.2f}")
        parsing = self.parsing
        if parsing is not None:
            # The evaluated weights (the best checkpoint) parse the subset.
            parsing.set_model(model)
            final_scores = parsing.evaluate()
            results["parse_sentences"] = len(parsing.records)
            results["parse_f1"] = {}
            for name, scores in final_scores.items():
                results["parse_f1"][name] = {
                    key: scores[key] for key in (
                        "sentence_f1", "corpus_f1", "wsj10_sentences",
                        "wsj10_sentence_f1", "wsj10_corpus_f1",
                    ) if key in scores
                }
                print(
                    f"Parsing F1 ({name}, {results['parse_sentences']} gold "
                    f"trees): sentence-level {scores['sentence_f1']:.1f}, "
                    f"corpus-level {scores['corpus_f1']:.1f}"
                )
            _compare_with_right_branching(model, parsing, final_scores,
                                          results)
        return model


def _load_data(experiment):
    """Step 1: the token ids of the splits and the vocabulary.

    Returns:
        A namespace: `train_ids`, `valid_ids`, `test_ids` (None: no test
        split), `vocabulary`, `treebank_records` (the gold trees of the
        official unsupervised-parsing setup, or None), `sentence_level`
        (whether the model reads sentence by sentence).
    """
    training = experiment.training
    treebank_records = None
    sentence_level = training.sentence_level
    if experiment.treebank or training.data == "treebank":
        # The official unsupervised-parsing setup: the language model reads
        # the treebank's own sentences (in their order) and parses them.
        train_ids, vocabulary, treebank_records = load_lm_sentences(
            experiment.treebank,
            max_length=training.max_sentence_length,
            min_count=training.min_count,
        )
        if experiment.max_lines:
            keep = np.flatnonzero(train_ids == 0)[: experiment.max_lines]
            train_ids = train_ids[: keep[-1] + 1]
            treebank_records = treebank_records[: experiment.max_lines]
        valid_ids, test_ids = train_ids, None
        sentence_level = True
        print(f"Training on {len(treebank_records)} treebank sentences "
              f"(vocabulary {len(vocabulary)}); validation and parsing on "
              "the same sentences, as the official setup does.")
    else:
        excluded = None
        if experiment.exclude_treebank:
            excluded = lm_text_sentences(experiment.exclude_treebank)
        (train_ids, valid_ids, test_ids), vocabulary = ptb.load_data(
            data_dir(experiment.data, "ptb", "--data",
                     "PTB language-modelling text"),
            download=False, max_lines=experiment.max_lines,
            exclude=excluded,
        )
    if experiment.model_args.get("direction") == "backward":
        # A backward model: every split read with its sentences reversed
        # (the treebank records stay as written: the model reverses what
        # it parses itself).
        eos = vocabulary.index(ptb.EOS)
        train_ids, valid_ids = (ptb.reverse_sentences(train_ids, eos),
                                ptb.reverse_sentences(valid_ids, eos))
        if test_ids is not None:
            test_ids = ptb.reverse_sentences(test_ids, eos)
        print("Reading every sentence backward (direction=backward): the "
              "model trains and is evaluated on the sentences reversed.")
    return types.SimpleNamespace(
        train_ids=train_ids, valid_ids=valid_ids, test_ids=test_ids,
        vocabulary=vocabulary, treebank_records=treebank_records,
        sentence_level=sentence_level,
    )


def _make_batches(experiment, data, replicas):
    """Step 2: the training and validation batches.

    Returns:
        A namespace: `train` and `valid` (`BPTTBatches` or
        `SentenceBatches`), `batch`, `eval_batch`, `test_batch` (None
        without a test evaluation), `steps` (training steps per epoch),
        `sentence_level`, `eos`, `bos`.
    """
    training, seed = experiment.training, experiment.seed
    batch = training.batch_size
    if batch % replicas:
        raise ValueError(
            f"The training batch size {batch} is not a multiple of the "
            f"{replicas} replicas: pass a --batch-size that is."
        )
    evaluation_batches = {}
    for key in ("eval_batch_size", "test_batch_size"):
        if key == "test_batch_size" and not _tests(experiment, data):
            continue
        size = getattr(training, key)
        if size % replicas:
            # Every replica evaluates an equal share of the streams.
            rounded = -(-size // replicas) * replicas
            print(f"Evaluating with batch size {rounded} instead of the "
                  f"preset's {key} {size}, a multiple of the "
                  f"{replicas} replicas (perplexities differ slightly).")
            size = rounded
        evaluation_batches[key] = size
    eval_batch = evaluation_batches["eval_batch_size"]
    sentence_level = data.sentence_level
    vocabulary = data.vocabulary
    eos = vocabulary.index(ptb.EOS)
    bos = vocabulary.index(BOS) if BOS in vocabulary else None
    if sentence_level:
        train_batches = SentenceBatches(
            data.train_ids, batch, eos, shuffle=training.shuffle,
            seed=seed, bos_id=bos,
        )
        valid_batches = SentenceBatches(data.valid_ids, eval_batch, eos,
                                        shuffle=False, bos_id=bos)
    else:
        train_batches = BPTTBatches(
            data.train_ids, batch, training.bptt,
            variable_length=training.variable_length, seed=seed,
        )
        valid_batches = BPTTBatches(
            data.valid_ids, eval_batch, training.bptt,
            variable_length=False,
        )
    return types.SimpleNamespace(
        train=train_batches, valid=valid_batches, batch=batch,
        eval_batch=eval_batch,
        test_batch=evaluation_batches.get("test_batch_size"),
        steps=train_batches.steps(experiment.steps_per_epoch),
        sentence_level=sentence_level, eos=eos, bos=bos,
    )


def _tests(experiment, data):
    """Whether the run ends with a test evaluation: not with --skip-test,
    nor in the unsupervised-parsing setup (no test split)."""
    return not experiment.skip_test and data.test_ids is not None


def _compare_with_right_branching(model, parsing, final_scores, results):
    """Prints right-branching's F1 on the parsed sentences, and a warning
    on stderr when the default distance does not clear it by
    `RIGHT_BRANCHING_MARGIN` (trees worth no more than the baseline)."""
    baseline = parsing.right_branching
    results["parse_right_branching"] = {
        key: baseline[key] for key in ("sentence_f1", "corpus_f1")}
    print(f"Right-branching on the same trees: sentence-level "
          f"{baseline['sentence_f1']:.1f}, corpus-level "
          f"{baseline['corpus_f1']:.1f}")
    default = model.default_distance
    f1 = final_scores[default]["sentence_f1"]
    results["beats_right_branching"] = bool(
        f1 >= baseline["sentence_f1"] + RIGHT_BRANCHING_MARGIN)
    if not results["beats_right_branching"]:
        print(
            f"Warning: the default distance ({default}) parses these "
            f"{len(parsing.records)} sentences no better than right-"
            f"branching trees ({f1:.1f} against {baseline['sentence_f1']:.1f}"
            f"; a parser clears them by {RIGHT_BRANCHING_MARGIN:g} points). "
            "Runs of these models end so for some seeds, and some presets "
            "for most (each preset's rate: docs/results.md): train another "
            "seed (--seed), or several and keep the one that parses "
            "development trees best (benchmarks/parsing_quality.py; the "
            "multi-seed recipe of docs/models/prpn.md).", file=sys.stderr,
        )
