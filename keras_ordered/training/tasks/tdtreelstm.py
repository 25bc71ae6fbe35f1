"""The task of `recipes/wsj_tdtreelstm.py`: a top-down TreeLSTM (or
LdTreeLSTM) language model trained on dependency trees.

The options (`build_parser`) and the hooks `TDTreeLSTMTask` gives
`keras_ordered.training.runner.Runner`: the data (trees from Malt-TAB /
CoNLL files, encoded as generation steps, `TreeBatches` in a fixed order
per epoch), the model under `tf.distribute.MirroredStrategy`, the official
optimisation (SGD, `callbacks.HalveLearningRateOnPlateau`), and the final
evaluation on the validation trees (perplexity of P(S | T), MSR-style
completion accuracy, gold-vs-perturbed tree preference). The runner does
the rest: progress bars, TensorBoard, crash-safe backups at epoch ends,
the resume, `model.keras` and `results.json`.
"""

import os
import time

import keras
import numpy as np

from keras_ordered.datasets import dependency
from keras_ordered.models.tdtreelstm import PRESETS
from keras_ordered.models.tdtreelstm import TDTreeLSTMLanguageModel
from keras_ordered.models.tdtreelstm import evaluation
from keras_ordered.models.tdtreelstm.inputs import encode_tree
from keras_ordered.training import options
from keras_ordered.training.batching import TreeBatches
from keras_ordered.training.callbacks import HalveLearningRateOnPlateau
from keras_ordered.training.callbacks import TimeLimit
from keras_ordered.training.config import TDTreeLSTMExperiment
from keras_ordered.training.config import TDTreeLSTMTraining
from keras_ordered.training.config import default_of
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task
from keras_ordered import backend

tf = backend.tensorflow_on_use("the TD-TreeLSTM recipe")


DESCRIPTION = (
    "Train a top-down TreeLSTM (or LdTreeLSTM) language model P(S|T) on "
    "dependency trees (Zhang, Lu and Lapata, 2016) and evaluate it on the "
    "validation trees: perplexity, MSR-style completion accuracy, gold-vs-"
    "perturbed tree preference."
)

EPILOG = """\
data: --data is a folder of dependency files (Malt-TAB `word TAB POS TAB
head`, CoNLL-X or CoNLL-U; the format is guessed per file unless --format
names it); --train/--valid/--test take shell patterns relative to it (a
folder pattern takes its files recursively). Default: the WSJ sample's
Malt-TAB files, wsj_0001-0139 train, wsj_0140-0149 validation, no test.
A Universal Dependencies treebank:

  python recipes/wsj_tdtreelstm.py --data UD_English-EWT \\
      --train '*-train.conllu' --valid '*-dev.conllu' --test '*-test.conllu'

presets (keras_ordered.models.tdtreelstm.PRESETS): wsj (the official
dependency-reranking setup: 100/200, 2 layers, dropout 0.2, softmax), msr
(the MSR completion setup: 200/400, 1 layer, NCE; GPU), small (64/128, 1
layer; CPU), tiny (tests). --ld makes it an LdTreeLSTM; --sequential trains
the same network on left-to-right chains instead of the trees: a
sequential LSTM language model of the same size (the baseline).

training: the official optimisation, SGD at 1.0, batch 64, gradient norm
clipped at 5, weights uniform in +-0.1; when the validation loss improves
by less than a factor 1.0001 the learning rate is halved (and every epoch
after), training going on from the best weights; the second time, it stops.
Running the same command again resumes a killed run from its last epoch.
"""


def build_parser():
    """The recipe's command-line options: those of `TDTreeLSTMExperiment`'s
    and (where the preset decides) `TDTreeLSTMTraining`'s fields, the
    splits and the files' format, and the groups every recipe shares."""
    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="wsj_tdtreelstm.py")
    options.add_preset(parser, default="small", choices=PRESETS)
    parser.add_argument("--train", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["train"]),
                        help="files or folders of the training split")
    parser.add_argument("--valid", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["valid"]),
                        help="files or folders of the validation split")
    parser.add_argument("--test", nargs="+", metavar="PATTERN", default=None,
                        help="files or folders of a test split (default: "
                        "none; the evaluation runs on the validation split)")
    parser.add_argument("--format", default=default_of(TDTreeLSTMExperiment,
                                                       "format"),
                        choices=("auto",) + dependency.FORMATS,
                        help="format of the dependency files")
    options.add_output(parser, default="runs/tdtreelstm")
    options.add_config_options(parser, TDTreeLSTMTraining, by_preset=True)
    options.add_config_options(parser, TDTreeLSTMExperiment)
    options.add_tf32(parser)
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


def experiment_from_options(args):
    """The run the options of `build_parser` describe (the one place that
    reads them): a `TDTreeLSTMExperiment`."""
    return TDTreeLSTMExperiment.from_preset(
        TDTreeLSTMLanguageModel, args.preset,
        training=options.preset_changes(TDTreeLSTMTraining, args),
        splits={split: getattr(args, split)
                for split in ("train", "valid", "test")},
        **options.config_values(TDTreeLSTMExperiment, args,
                                exclude=("preset", "training", "splits")))


def main(argv=None, callbacks=()):
    """Runs the recipe; returns the exit status (0, 2 on an input error,
    130 after Ctrl-C)."""
    return run_recipe(build_parser(), train, argv, callbacks=callbacks)


def load_splits(experiment):
    """`{split: trees}` of the splits a `TDTreeLSTMExperiment` names."""
    directory = experiment.data or dependency.default_dependency_dir()
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"No dependency folder at {directory!r}.")
    named = experiment.splits or {**dependency.SAMPLE_SPLITS, "test": None}
    splits = {}
    for split in ("train", "valid", "test"):
        patterns = named.get(split)
        if patterns is None:
            continue
        trees, files = dependency.load_split(
            directory, list(patterns), split, format=experiment.format,
            max_sentences=experiment.max_sentences)
        splits[split] = trees
        print(f"{split}: {len(trees)} trees, "
              f"{sum(len(t.words) for t in trees)} words from {len(files)} "
              "file(s)")
    return splits


def evaluate(model, trees, train_trees, sequential=False, batch_size=64):
    """The section-4 figures of a model on held-out trees (a dict)."""

    started = time.time()
    ppl, total, words = evaluation.perplexity(model, trees, sequential,
                                              batch_size)
    seconds = time.time() - started
    counts, tags = evaluation.training_statistics(train_trees, model.vocabulary)
    questions = evaluation.completion_questions(trees, model.vocabulary,
                                                counts, tags)
    accuracy = evaluation.completion_accuracy(model, trees, questions,
                                              sequential, batch_size)
    figures = {
        "sentences": len(trees), "words": words,
        "perplexity": round(ppl, 3), "log_prob": round(total, 3),
        "sentences_per_second": round(len(trees) / seconds, 1),
        "completion_questions": len(questions),
        "completion_accuracy": (None if not questions
                                else round(100 * accuracy, 2)),
    }
    if not sequential:
        preference, pairs = evaluation.tree_preference(model, trees,
                                                       batch_size=batch_size)
        figures["tree_pairs"] = pairs
        figures["gold_tree_preferred"] = round(100 * preference, 2)
    return figures


def train(args, callbacks=()):
    """Trains, evaluates and saves a TD-TreeLSTM as `args` say; returns 0."""
    experiment = experiment_from_options(args)
    return Runner(TDTreeLSTMTask(experiment), callbacks).run()


class TDTreeLSTMTask(Task):
    """The hooks of the TD-TreeLSTM recipe (`keras_ordered.training.runner`).

    Trees in a fixed order per epoch, SGD with the official plateau
    schedule (`HalveLearningRateOnPlateau`, whose best weights are the
    ones evaluated), backups at epoch ends, and the section-4 figures of
    the validation (and test) trees.

    Args:
        experiment: the run, a
            `keras_ordered.training.config.TDTreeLSTMExperiment`.
    """

    def __init__(self, experiment):
        super().__init__(experiment)
        self.training = experiment.training
        self.kind = experiment.kind

    def make_strategy(self):
        return tf.distribute.MirroredStrategy()

    def build_inputs(self, replicas):
        config, training = self.config, self.training
        self.splits = load_splits(config)
        self.train_trees = self.splits["train"]
        vocabulary = dependency.DependencyVocabulary.from_sentences(
            (t.words for t in self.train_trees), lowercase=config.lowercase,
            min_count=training.min_count)
        counts = np.zeros(len(vocabulary))
        for tree in self.train_trees:
            for i in vocabulary.encode(tree.words):
                counts[i] += 1
        self.vocabulary, self.counts = vocabulary, counts

        def encode(trees):
            pairs = [(t.words, evaluation.chain_heads(len(t.words))
                      if config.sequential else t.heads) for t in trees]
            return list(_encode(vocabulary, pairs))

        self.train_batches = TreeBatches(
            encode(self.train_trees), training.batch_size, seed=config.seed,
            left_context=config.ld)
        self.valid_batches = TreeBatches(
            encode(self.splits["valid"]), config.eval_batch_size,
            shuffle=False, left_context=config.ld)
        steps = len(self.train_batches)
        if config.steps_per_epoch:
            steps = min(steps, config.steps_per_epoch)
        self.steps_per_epoch = steps
        self.epochs = training.max_epochs

    def build_model(self):
        config = self.config
        return TDTreeLSTMLanguageModel.from_preset(
            config.preset, self.vocabulary, ld=config.ld,
            lowercase=config.lowercase, unigram_counts=self.counts,
            seed=config.seed)

    def compile_model(self, model):
        model.compile(keras.optimizers.SGD(self.training.learning_rate),
                      clip_norm=self.training.clip_norm,
                      jit_compile=self.config.jit_compile)

    def announce(self, model, strategy, policy):
        print(f"Training {self.kind} preset {self.config.preset!r} "
              f"({int(model.count_params()):,} parameters, vocabulary "
              f"{len(self.vocabulary)}) on {len(self.train_trees)} trees, "
              f"{self.steps_per_epoch} batches of "
              f"{self.training.batch_size} per epoch, with "
              f"{strategy.num_replicas_in_sync} replica(s); output in "
              f"{self.config.output}.")

    def fingerprint(self, model):
        config = self.config
        return {"model": "TDTreeLSTMLanguageModel", "preset": config.preset,
                "ld": config.ld, "sequential": config.sequential,
                "batch_size": self.training.batch_size,
                "vocabulary": len(self.vocabulary),
                "parameters": int(model.count_params())}

    def callbacks(self, model, log_dir, chief):
        self.schedule = HalveLearningRateOnPlateau(
            self.training.min_improvement, verbose=self.config.verbose)
        return [self.schedule]

    def late_callbacks(self):
        minutes = self.config.time_limit
        self.limit = TimeLimit(minutes) if minutes else None
        return [self.limit] if self.limit else []

    def train_data(self, epoch, start_batch):
        batches, steps = self.train_batches, self.steps_per_epoch
        return batches.dataset(lambda: batches.stream(epoch, steps))

    def validation_data(self):
        batches = self.valid_batches
        return batches.dataset(lambda: batches.epoch(0), len(batches))

    def training_done(self, start_epoch):
        return start_epoch >= self.epochs or self.schedule.stopped

    def results(self, model, facts):
        config, schedule = self.config, self.schedule
        return {
            "model": self.kind, "preset": config.preset, "ld": config.ld,
            "sequential": config.sequential,
            "parameters": int(model.count_params()),
            "vocabulary": len(self.vocabulary),
            "epochs_run": facts["epochs_run"], "max_epochs": self.epochs,
            "resumed_from_epoch": facts["start_epoch"],
            "time_limit_minutes": config.time_limit,
            "time_limit_reached": bool(self.limit and self.limit.reached),
            "stopped_by_schedule": schedule.stopped,
            "train_seconds": facts["train_seconds"],
            "train_words": self.train_batches.words,
            "learning_rate_final": float(
                np.asarray(model.optimizer.learning_rate)),
            "best_val_loss": schedule.best,
            "sentences": {split: len(trees)
                          for split, trees in self.splits.items()},
        }

    def restore_best(self, model, checkpoint, chief, results):
        # The schedule keeps the best epoch's weights (it trains on from
        # them): put back at the end of training, and here after a run
        # restored past its training.
        self.schedule.set_model(model)
        self.schedule.on_train_end()
        best = self.schedule.best is not None
        results["weights"] = "best validation epoch" if best else "final"
        return best

    def evaluate(self, model, results, loop):
        config = self.config
        for split in ("valid", "test"):
            if split not in self.splits:
                continue
            figures = evaluate(model, self.splits[split], self.train_trees,
                               config.sequential, config.eval_batch_size)
            results[split] = figures
            accuracy = figures["completion_accuracy"]
            line = (f"{split}: perplexity {figures['perplexity']:.2f}, "
                    "completion accuracy "
                    f"{'n/a' if accuracy is None else f'{accuracy:.1f}%'} "
                    f"({figures['completion_questions']} questions)")
            if "gold_tree_preferred" in figures:
                line += (f", gold tree preferred "
                         f"{figures['gold_tree_preferred']:.1f}% of "
                         f"{figures['tree_pairs']} pairs")
            print(line)
        return model


def _encode(vocabulary, pairs):

    for words, heads in pairs:
        yield encode_tree(vocabulary.encode(list(words)), list(heads))
