"""The task of `recipes/wsj_tdtreelstm.py`: a top-down TreeLSTM (or
LdTreeLSTM) language model trained on dependency trees.

The options are in `tdtreelstm_options`; here are the hooks `TDTreeLSTMTask` gives
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
from keras_ordered.models.tdtreelstm import TDTreeLSTMLanguageModel
from keras_ordered.models.tdtreelstm import evaluation
from keras_ordered.models.tdtreelstm.inputs import encode_tree
from keras_ordered.training.batching import TreeBatches
from keras_ordered.training.callbacks import HalveLearningRateOnPlateau
from keras_ordered.training.callbacks import TimeLimit
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task
from keras_ordered.training.tasks.tdtreelstm_options import build_parser
from keras_ordered.training.tasks.tdtreelstm_options import experiment_from_options
from keras_ordered import backend

tf = backend.tensorflow_on_use("the TD-TreeLSTM recipe")


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
