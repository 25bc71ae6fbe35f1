"""The machinery of `recipes/wsj_tdtreelstm.py`: a top-down TreeLSTM (or
LdTreeLSTM) language model trained on dependency trees.

Everything the recipe does is here, importable and testable: the options
(`build_parser`), the data (trees from Malt-TAB / CoNLL files, encoded as
generation steps, `TreeBatches` in a fixed order per epoch), `model.fit`
under `tf.distribute.MirroredStrategy` with progress bars, TensorBoard,
crash-safe backups at epoch ends (`TrainingBackup`), the official
optimisation (`callbacks.HalveLearningRateOnPlateau`), and the final evaluation on
the validation trees (perplexity of P(S | T), MSR-style completion
accuracy, gold-vs-perturbed tree preference) written to `results.json`
beside `model.keras`.
"""

import json
import os
import time

import keras
import numpy as np

from keras_ordered_cli.option_types import positive_float
from keras_ordered_cli.option_types import positive_int
from keras_ordered.datasets import dependency
from keras_ordered.models.tdtreelstm import PRESETS
from keras_ordered.models.tdtreelstm import TDTreeLSTMLanguageModel
from keras_ordered.models.tdtreelstm import evaluation
from keras_ordered.models.tdtreelstm import get_preset
from keras_ordered.models.tdtreelstm.inputs import encode_tree
from keras_ordered.training import options
from keras_ordered.training.batching import TreeBatches
from keras_ordered.training.callbacks import HalveLearningRateOnPlateau
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import StopOnCtrlC
from keras_ordered.training.callbacks import TimeLimit
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.crash_safety import save_run
from keras_ordered.training.driver import run_recipe
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
    """The recipe's command-line options."""

    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="wsj_tdtreelstm.py")
    options.add_preset(parser, default="small", choices=PRESETS)
    parser.add_argument("--ld", action="store_true",
                        help="LdTreeLSTM: a fifth LSTM over each head's left "
                        "dependents feeds its GEN-R step")
    parser.add_argument("--sequential", action="store_true",
                        help="the baseline: the same network on left-to-right "
                        "chains (a sequential LSTM language model)")
    parser.add_argument("--data", default=None, metavar="DIR",
                        help="folder of dependency files (default: "
                        "$KERAS_ORDERED_DATA/wsj_sample/dep)")
    parser.add_argument("--train", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["train"]),
                        help="files or folders of the training split")
    parser.add_argument("--valid", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["valid"]),
                        help="files or folders of the validation split")
    parser.add_argument("--test", nargs="+", metavar="PATTERN", default=None,
                        help="files or folders of a test split (default: "
                        "none; the evaluation runs on the validation split)")
    parser.add_argument("--format", default="auto",
                        choices=("auto",) + dependency.FORMATS,
                        help="format of the dependency files")
    options.add_output(parser, default="runs/tdtreelstm")
    options.add_schedule(
        parser, epochs="at most this many epochs",
        batches="sentences per batch", learning_rate="SGD learning rate",
        steps="at most N batches per epoch (quick runs)",
    )
    parser.add_argument("--time-limit", type=positive_float, default=None,
                        metavar="MIN", help="stop training after MIN minutes "
                        "(models compared in the same time; default: none)")
    parser.add_argument("--min-count", type=positive_int, default=None,
                        metavar="N",
                        help="training words seen fewer than N times are "
                        "<unk> (default: the preset's)")
    parser.add_argument("--lowercase", action="store_true",
                        help="lower-case the words")
    parser.add_argument("--max-sentences", type=positive_int, default=None,
                        metavar="N",
                        help="read only the first N trees of each split "
                        "(quick runs)")
    parser.add_argument("--no-jit", action="store_true",
                        help="do not XLA-compile the training step "
                        "(default: compiled, about twice as fast on CPU)")
    parser.add_argument("--eval-batch-size", type=positive_int, default=64,
                        metavar="N", help="sentences scored together")
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


def main(argv=None, callbacks=()):
    """Runs the recipe; returns the exit status (0, 2 on an input error,
    130 after Ctrl-C)."""
    return run_recipe(build_parser(), train, argv, callbacks=callbacks)


def _check_args(args):
    if args.ld and args.sequential:
        raise ValueError("--ld and --sequential exclude each other (the "
                         "sequential baseline has no left dependents).")


def load_splits(args):
    """`{split: trees}` of the splits the options name."""
    directory = args.data or dependency.default_dependency_dir()
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"No dependency folder at {directory!r}.")
    splits = {}
    for split in ("train", "valid", "test"):
        patterns = getattr(args, split)
        if patterns is None:
            continue
        trees, files = dependency.load_split(
            directory, patterns, split, format=args.format,
            max_sentences=args.max_sentences)
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
    _check_args(args)

    preset = get_preset(args.preset)
    settings = dict(preset["training"])
    for key, option in (("max_epochs", "epochs"), ("batch_size", "batch_size"),
                        ("learning_rate", "learning_rate"),
                        ("min_count", "min_count")):
        if getattr(args, option) is not None:
            settings[key] = getattr(args, option)
    splits = load_splits(args)

    keras.utils.set_random_seed(args.seed)
    train_trees = splits["train"]
    vocabulary = dependency.DependencyVocabulary.from_sentences(
        (t.words for t in train_trees), lowercase=args.lowercase,
        min_count=settings["min_count"])
    counts = np.zeros(len(vocabulary))
    for tree in train_trees:
        for i in vocabulary.encode(tree.words):
            counts[i] += 1

    def encode(trees):
        pairs = [(t.words, evaluation.chain_heads(len(t.words))
                  if args.sequential else t.heads) for t in trees]
        return [e for e in _encode(vocabulary, pairs)]

    train_batches = TreeBatches(encode(train_trees), settings["batch_size"],
                                seed=args.seed, left_context=args.ld)
    valid_batches = TreeBatches(encode(splits["valid"]), args.eval_batch_size,
                                shuffle=False, left_context=args.ld)
    steps = len(train_batches)
    if args.steps_per_epoch:
        steps = min(steps, args.steps_per_epoch)
    epochs = settings["max_epochs"]

    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = TDTreeLSTMLanguageModel.from_preset(
            args.preset, vocabulary, ld=args.ld, lowercase=args.lowercase,
            unigram_counts=counts, seed=args.seed)
        model.compile(keras.optimizers.SGD(settings["learning_rate"]),
                      clip_norm=settings["clip_norm"],
                      jit_compile=not args.no_jit)
    parameters = int(model.count_params())
    kind = ("sequential LSTM (chains)" if args.sequential
            else "LdTreeLSTM" if args.ld else "TreeLSTM")
    print(f"Training {kind} preset {args.preset!r} ({parameters:,} parameters, "
          f"vocabulary {len(vocabulary)}) on {len(train_trees)} trees, {steps} "
          f"batches of {settings['batch_size']} per epoch, with "
          f"{strategy.num_replicas_in_sync} replica(s); output in {args.output}.")

    os.makedirs(args.output, exist_ok=True)
    log_dir = os.path.join(args.output, "logs")
    schedule = HalveLearningRateOnPlateau(settings["min_improvement"],
                                          verbose=args.verbose)
    best_path = os.path.join(args.output, "best.weights.h5")
    best = ResumableModelCheckpoint(best_path, monitor="val_loss",
                                    save_best_only=True, save_weights_only=True)
    fingerprint = {"model": "TDTreeLSTMLanguageModel", "preset": args.preset,
                   "ld": args.ld, "sequential": args.sequential,
                   "batch_size": settings["batch_size"],
                   "vocabulary": len(vocabulary), "parameters": parameters}
    backup = TrainingBackup(os.path.join(args.output, "backup"), save_freq=0,
                            fingerprint=fingerprint,
                            extra_state=[schedule, best], steps_per_epoch=steps)
    limit = TimeLimit(args.time_limit) if args.time_limit else None
    fit_callbacks = [StopOnCtrlC(), schedule, best,
                     keras.callbacks.TensorBoard(log_dir, update_freq="epoch"),
                     backup, *([limit] if limit else []), *callbacks]
    with strategy.scope():
        start_epoch, _ = backup.restore(model)
    results_path = os.path.join(args.output, "results.json")
    model_path = os.path.join(args.output, "model.keras")
    finished = start_epoch >= epochs or schedule.stopped
    if finished and os.path.exists(results_path):
        print(f"The run in {args.output} is finished ({start_epoch} epochs): "
              f"results in {results_path}, model in {model_path}. Use another "
              "--output to start a new run.")
        return 0
    if start_epoch and not finished:
        print(f"Resuming at the start of epoch {start_epoch + 1} of at most "
              f"{epochs} (backup in {backup.directory}).")

    started = time.time()
    if not finished:
        history = model.fit(
            train_batches.dataset(lambda: train_batches.stream(start_epoch, steps)),
            steps_per_epoch=steps, epochs=epochs, initial_epoch=start_epoch,
            validation_data=valid_batches.dataset(
                lambda: valid_batches.epoch(0), len(valid_batches)),
            callbacks=fit_callbacks, verbose=args.verbose, shuffle=False)
        epochs_run = start_epoch + len(history.history.get("loss", []))
    else:
        epochs_run = start_epoch
        schedule.set_model(model)
        schedule.on_train_end()
    train_seconds = time.time() - started
    results = {
        "model": kind, "preset": args.preset, "ld": args.ld,
        "sequential": args.sequential, "parameters": parameters,
        "vocabulary": len(vocabulary), "epochs_run": epochs_run,
        "max_epochs": epochs, "resumed_from_epoch": start_epoch,
        "time_limit_minutes": args.time_limit,
        "time_limit_reached": bool(limit and limit.reached),
        "stopped_by_schedule": schedule.stopped,
        "train_seconds": round(train_seconds, 1),
        "train_words": train_batches.words,
        "learning_rate_final": float(np.asarray(model.optimizer.learning_rate)),
        "best_val_loss": schedule.best,
        "weights": "best validation epoch" if schedule.best is not None else "final",
        "sentences": {split: len(trees) for split, trees in splits.items()},
    }
    for split in ("valid", "test"):
        if split in splits:
            figures = evaluate(model, splits[split], train_trees,
                               args.sequential, args.eval_batch_size)
            results[split] = figures
            accuracy = figures["completion_accuracy"]
            line = (f"{split}: perplexity {figures['perplexity']:.2f}, "
                    "completion accuracy "
                    f"{'n/a' if accuracy is None else f'{accuracy:.1f}%'} "
                    f"({figures['completion_questions']} questions)")
            if "gold_tree_preferred" in figures:
                line += (f", gold tree preferred {figures['gold_tree_preferred']:.1f}%"
                         f" of {figures['tree_pairs']} pairs")
            print(line)
    save_run(model, model_path, results, results_path)
    print(json.dumps(results))
    return 0


def _encode(vocabulary, pairs):

    for words, heads in pairs:
        yield encode_tree(vocabulary.encode(list(words)), list(heads))
