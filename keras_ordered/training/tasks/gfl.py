"""The task of `recipes/wsj_gfl.py`: a supervised LSTM+A constituency
parser (Vinyals et al., 2015) trained on Penn Treebank `.mrg` files.

The options are in `gfl_options`; here are the hooks `GFLTask` gives
`keras_ordered.training.runner.Runner`: the data (`GFLBatches`:
teacher-forcing batches of linearized trees, in a fixed order per epoch so
that a resumed run sees what an uninterrupted one would), the model and
its optimizer, the validation EVALB F1 every epoch (`EVALBValidation`,
which the best checkpoint watches), and the final test evaluation with
greedy and beam decoding (EVALB F1 for all lengths and <= 40, malformed
rate, sentences per second). The runner does the rest: the strategy,
progress bars, TensorBoard, crash-safe backups at epoch ends, the resume,
`model.keras` and `results.json`.
"""

import os

import keras

from keras_ordered.datasets import treebank_files
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary
from keras_ordered.models.gfl import load_word_vectors
from keras_ordered.models.gfl.inference import evaluate_parser
from keras_ordered.models.gfl.inference import parse_sentences
from keras_ordered.models.gfl.inference import scores
from keras_ordered.parsing import linearize
from keras_ordered.training.batching import GFLBatches
from keras_ordered.training.callbacks import EVALBValidation
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task
from keras_ordered.training.tasks.gfl_options import build_parser
from keras_ordered.training.tasks.gfl_options import experiment_from_options

def main(argv=None, callbacks=()):
    """Runs the recipe; returns the process exit code.

    0 on success (or when the run in `--output` is already finished), 2 on
    an input error (one line on stderr), 130 after Ctrl-C (one line saying
    how to resume).

    Args:
        argv: list of arguments (None: `sys.argv[1:]`).
        callbacks: extra Keras callbacks for `fit` (tests use this).
    """
    return run_recipe(build_parser(), train, argv, callbacks=callbacks)


def load_splits(experiment):
    """`{split: trees}` of the training, validation and test splits of a
    `GFLExperiment`."""
    directory = experiment.treebank or treebank_files.default_treebank_dir()
    treebank_files.check_treebank_dir(directory)
    patterns = experiment.splits or treebank_files.SAMPLE_SPLITS
    splits = {}
    for split in ("train", "valid", "test"):
        trees, files = treebank_files.load_split(
            directory, list(patterns[split]), split,
            max_sentences=experiment.max_sentences,
        )
        splits[split] = trees
        print(f"{split}: {len(trees)} trees from {len(files)} file(s)")
    return splits


def train(args, callbacks=()):
    """Trains, evaluates and saves a GFL parser as `args` say; returns 0."""
    experiment = experiment_from_options(args)
    if experiment.attention_map:
        # Checked before training, not after it: the map is drawn last.
        from keras_ordered.models.gfl.attention_map import require_matplotlib

        require_matplotlib()
    return Runner(GFLTask(experiment), callbacks).run()


class GFLTask(Task):
    """The hooks of the GFL recipe (`keras_ordered.training.runner`).

    Teacher-forcing batches of linearized trees in a fixed order per epoch,
    the validation EVALB F1 every epoch (the best checkpoint keeps its
    best), backups at epoch ends, and the test evaluation with greedy and
    beam decoding.

    Args:
        experiment: the run, a
            `keras_ordered.training.config.GFLExperiment`.
    """

    best_monitor = "val_evalb_f1"
    best_mode = "max"

    def __init__(self, experiment):
        super().__init__(experiment)
        if experiment.word_vectors and not os.path.isfile(
                experiment.word_vectors):
            raise ValueError(
                f"No word-vector file at {experiment.word_vectors!r}.")
        self.training = experiment.training

    def build_inputs(self, replicas):
        config, training = self.config, self.training
        self.splits = splits = load_splits(config)
        train_trees = splits["train"]
        self.source_vocabulary = source_vocabulary = (
            SourceVocabulary.from_sentences(
                (t.leaves() for t in train_trees),
                min_count=training.min_count))
        train_targets = [linearize.linearize(t, clean=False)
                         for t in train_trees]
        self.target_vocabulary = target_vocabulary = (
            TargetVocabulary.from_sequences(train_targets))

        def encode(trees, targets=None):
            targets = targets or [linearize.linearize(t, clean=False)
                                  for t in trees]
            sources, encoded = [], []
            for tree, target in zip(trees, targets):
                if all(symbol in target_vocabulary for symbol in target):
                    sources.append(
                        source_vocabulary.encode(tree.leaves()[::-1]))
                    encoded.append(target_vocabulary.encode(target))
            return sources, encoded

        self.train_batches = GFLBatches(*encode(train_trees, train_targets),
                                        training.batch_size,
                                        seed=config.seed)
        valid_sources, valid_targets = encode(splits["valid"])
        if len(valid_sources) < len(splits["valid"]):
            print(f"note: {len(splits['valid']) - len(valid_sources)} "
                  "validation tree(s) have a label the training trees lack: "
                  "left out of the validation loss (not of the EVALB F1).")
        self.valid_batches = (
            GFLBatches(valid_sources, valid_targets, config.eval_batch_size,
                       shuffle=False) if valid_sources else None
        )
        steps = len(self.train_batches)
        if config.steps_per_epoch:
            steps = min(steps, config.steps_per_epoch)
        self.steps_per_epoch = steps
        self.epochs = training.epochs

    def build_model(self):
        config = self.config
        overrides = {"seed": config.seed}
        if not config.attention:
            overrides["attention"] = False
        model = GFLParser.from_preset(config.preset, self.source_vocabulary,
                                      self.target_vocabulary, **overrides)
        if config.word_vectors:
            matrix, found = load_word_vectors(
                config.word_vectors, self.source_vocabulary,
                model.embedding_dim, seed=config.seed,
            )
            model.set_source_embeddings(matrix)
            print(f"Word vectors: {found} of {len(self.source_vocabulary)} "
                  f"words found in {config.word_vectors}.")
        return model

    def compile_model(self, model):
        training = self.training
        optimizer = (keras.optimizers.SGD if training.optimizer == "sgd"
                     else keras.optimizers.Adam)
        model.compile(optimizer=optimizer(training.learning_rate,
                                          clipnorm=training.clip_norm))

    def announce(self, model, strategy, policy):
        config = self.config
        print(
            f"Training GFLParser preset {config.preset!r} "
            f"({'LSTM+A' if config.attention else 'LSTM'}, "
            f"{int(model.count_params()):,} parameters; vocabularies "
            f"{len(self.source_vocabulary)} words, "
            f"{len(self.target_vocabulary)} symbols) on "
            f"{len(self.splits['train'])} trees, {self.steps_per_epoch} "
            f"batches of {self.training.batch_size} per epoch, with "
            f"{strategy.num_replicas_in_sync} replica(s) "
            f"({', '.join(strategy.extended.worker_devices)}); output in "
            f"{config.output}."
        )

    def fingerprint(self, model):
        config = self.config
        return {
            "model": "GFLParser", "preset": config.preset,
            "attention": config.attention,
            "batch_size": self.training.batch_size,
            "source_vocabulary": len(self.source_vocabulary),
            "target_vocabulary": len(self.target_vocabulary),
            "parameters": int(model.count_params()),
        }

    def callbacks(self, model, log_dir, chief):
        return [EVALBValidation(self.splits["valid"],
                                batch_size=self.config.eval_batch_size,
                                verbose=self.config.verbose)]

    def train_data(self, epoch, start_batch):
        batches, steps = self.train_batches, self.steps_per_epoch
        return batches.dataset(lambda: batches.stream(epoch, steps))

    def validation_data(self):
        batches = self.valid_batches
        if batches is None:
            return None
        return batches.dataset(lambda: batches.epoch(0), len(batches))

    def results(self, model, facts):
        config, training = self.config, self.training
        return {
            "preset": config.preset,
            "attention": config.attention,
            "epochs": self.epochs,
            "resumed_from_epoch": facts["start_epoch"],
            "batch_size": training.batch_size,
            "learning_rate": training.learning_rate,
            "optimizer": training.optimizer,
            "train_seconds": facts["train_seconds"],
            "parameters": int(model.count_params()),
            "source_vocabulary": len(self.source_vocabulary),
            "target_vocabulary": len(self.target_vocabulary),
            "sentences": {split: len(trees)
                          for split, trees in self.splits.items()},
            "evalb_params": "COLLINS.prm",
            "pos_tags": "gold (the trees get the gold tags; EVALB scores "
                        "brackets)",
        }

    def evaluate(self, model, results, loop):
        config = self.config
        test_trees = self.splits["test"]
        results["test"] = {}
        for name, beam in (("greedy", None), ("beam", config.beam_size)):
            evalb_result, parsed = evaluate_parser(
                model, test_trees, beam_size=beam,
                batch_size=config.eval_batch_size, warm_up=True,
            )
            figures = scores(evalb_result, parsed)
            if beam is not None:
                figures["beam_size"] = beam
            results["test"][name] = figures
            print(
                f"Test ({name}{'' if beam is None else f', beam {beam}'}): "
                f"EVALB F1 {figures['evalb_f1']:.2f} (all), "
                f"{figures['evalb_f1_len_le_40']:.2f} (<= 40 words); "
                f"malformed {100 * figures['malformed_rate']:.1f}%; "
                f"{figures['sentences_per_second']:.1f} sentences/s"
            )
        if config.attention_map:
            write_attention_map(model, test_trees, config.attention_sentence,
                                config.attention_map)
            results["attention_map"] = config.attention_map
            print(f"Attention map of test sentence "
                  f"{config.attention_sentence}: {config.attention_map}")
        return model


def write_attention_map(model, trees, index, path):
    """Draws the greedy attention of test sentence `index` into `path`."""
    from keras_ordered.models.gfl.attention_map import plot_attention_map

    if index >= len(trees):
        raise ValueError(
            f"--attention-sentence {index}: the test split has only "
            f"{len(trees)} sentences."
        )
    words = trees[index].leaves()
    parsed = parse_sentences(model, [words], keep_attention=True)
    symbols = parsed.symbols[0]
    if not symbols:
        raise ValueError("The parser decoded nothing for that sentence.")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    plot_attention_map(parsed.attention[0], words, symbols, path,
                       title=f"test sentence {index}")
    return path
