"""The machinery of `recipes/wsj_gfl.py`: a supervised LSTM+A constituency
parser (Vinyals et al., 2015) trained on Penn Treebank `.mrg` files.

Everything the recipe does is here, importable and testable: the options
(`build_parser`), the data (`GFLBatches`: teacher-forcing batches of
linearized trees, in a fixed order per epoch so that a resumed run sees
what an uninterrupted one would), `model.fit` under
`tf.distribute.MirroredStrategy` with progress bars, TensorBoard, the
validation EVALB F1 every epoch (`EVALBValidation`), crash-safe backups at
epoch ends (`TrainingBackup`), and the final test evaluation with greedy
and beam decoding (EVALB F1 for all lengths and <= 40, malformed rate,
sentences per second) written to `results.json` beside `model.keras`.
"""

import json
import os
import time

import keras
import numpy as np

from keras_ordered_cli.option_types import non_negative_int
from keras_ordered_cli.option_types import positive_int
from keras_ordered.datasets import treebank_files
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary
from keras_ordered.models.gfl import get_preset
from keras_ordered.models.gfl import load_word_vectors
from keras_ordered.models.gfl.inference import evaluate_parser
from keras_ordered.models.gfl.inference import parse_sentences
from keras_ordered.models.gfl.inference import scores
from keras_ordered.parsing import linearize
from keras_ordered.training import options
from keras_ordered.training.batching import GFLBatches
from keras_ordered.training.callbacks import EVALBValidation
from keras_ordered.training.callbacks import LearningRateLogger
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import StopOnCtrlC
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.crash_safety import save_run
from keras_ordered.training.distributed import make_strategy
from keras_ordered.training.driver import run_recipe

TRAINING = {
    "paper": {
        "optimizer": "sgd", "learning_rate": 0.7, "batch_size": 128,
        "epochs": 10, "clip_norm": 5.0, "min_count": 2,
    },
    "small": {
        "optimizer": "adam", "learning_rate": 0.001, "batch_size": 32,
        "epochs": 40, "clip_norm": 5.0, "min_count": 2,
    },
    "tiny": {
        "optimizer": "adam", "learning_rate": 0.01, "batch_size": 8,
        "epochs": 2, "clip_norm": 5.0, "min_count": 2,
    },
}
"""Training settings per preset, where the GFL presets leave them open.

The paper's notes give only "stochastic gradient descent"; the `paper`
numbers (SGD at 0.7, batch 128, gradient norm clipped at 5) are those of
the sequence-to-sequence setup of the same group (Sutskever et al., 2014),
and the 10 epochs ours; `small`'s 40 epochs are those of the README's
results on the WSJ sample. `small` and `tiny` take their optimizer and
learning rate from their GFL presets. `min_count`: training words seen
fewer times are `<unk>`, so that the `<unk>` embedding is trained (ours).
"""

DESCRIPTION = (
    "Train the LSTM+A constituency parser of Grammar as a Foreign Language "
    "(Vinyals et al., 2015) on Penn Treebank .mrg files, and evaluate it on "
    "the test split with EVALB (greedy and beam search)."
)

EPILOG = """\
splits: each of --train/--valid/--test takes shell patterns relative to
--treebank; a pattern names .mrg files, or folders whose .mrg files (found
recursively) are all taken. The defaults split the WSJ sample:
wsj_0001-0129 / 0130-0139 / 0140-0149. The full WSJ with the standard
sections 02-21 / 22 / 23:

  python recipes/wsj_gfl.py --treebank .../treebank_3/parsed/mrg/wsj \\
      --train '0[2-9]' '1?' '2[01]' --valid 22 --test 23

presets (keras_ordered.models.gfl.PRESETS):
  paper  3 x 256 LSTMs, 512-d embeddings, attention 256, dropout 0.3;
         SGD 0.7, batch 128, 10 epochs; beam 10. Needs a GPU.
  small  2 x 128 LSTMs, attention 128, dropout 0.2; Adam 1e-3, batch 32,
         40 epochs; beam 10.
  tiny   2 x 16 LSTMs, for tests; Adam 0.01, batch 8, 2 epochs; beam 3.

Running the same command again resumes a killed run from the last finished
epoch (backup in OUTPUT/backup); a finished run says so and stops.
"""


def build_parser():
    """The recipe's command-line options."""
    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="wsj_gfl.py")
    options.add_preset(parser, default="small", choices=TRAINING)
    parser.add_argument(
        "--treebank", default=None, metavar="DIR",
        help="folder the split patterns start from (default: "
        "$KERAS_ORDERED_DATA/wsj_sample/mrg)",
    )
    for split, patterns in treebank_files.SAMPLE_SPLITS.items():
        parser.add_argument(
            f"--{split}", nargs="+", default=list(patterns), metavar="PATTERN",
            help=f"files or folders of the {split} split, relative to "
            "--treebank",
        )
    options.add_output(parser, default="runs/gfl_wsj")
    options.add_schedule(parser, learning_rate="learning rate")
    parser.add_argument("--beam-size", type=positive_int, default=None,
                        help="beam of the final beam-search evaluation "
                        "(default: the preset's; the paper's is 10)")
    parser.add_argument("--no-attention", action="store_true",
                        help="the paper's LSTM baseline without attention "
                        "(default: with attention, LSTM+A)")
    parser.add_argument("--word-vectors", default=None, metavar="FILE",
                        help="initialise the source embeddings from this "
                        "word2vec/GloVe text file, of the preset's embedding "
                        "size (default: random initialisation)")
    parser.add_argument("--min-count", type=positive_int, default=None,
                        metavar="N",
                        help="training words seen fewer than N times become "
                        "<unk> (default: the preset's, 2)")
    parser.add_argument("--max-sentences", type=positive_int, default=None,
                        metavar="N",
                        help="read only the first N trees of each split, for "
                        "quick runs (default: all)")
    parser.add_argument("--eval-batch-size", type=positive_int, default=64,
                        metavar="N", help="sentences decoded together")
    parser.add_argument("--attention-map", default=None, metavar="PNG",
                        help="write the attention heat map of one test "
                        "sentence (greedy decoding) to this PNG file, as the "
                        "paper's Figure 4 (default: none)")
    parser.add_argument("--attention-sentence", type=non_negative_int,
                        default=0, metavar="I",
                        help="which test sentence --attention-map draws "
                        "(0: the first)")
    options.add_strategy(parser, ("auto", "mirrored", "one-device"))
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


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


def _check_args(args):
    if args.word_vectors and not os.path.isfile(args.word_vectors):
        raise ValueError(f"No word-vector file at {args.word_vectors!r}.")


def load_splits(args):
    """`{split: trees}` of the training, validation and test splits."""
    directory = args.treebank or treebank_files.default_treebank_dir()
    treebank_files.check_treebank_dir(directory)
    splits = {}
    for split in ("train", "valid", "test"):
        trees, files = treebank_files.load_split(
            directory, getattr(args, split), split,
            max_sentences=args.max_sentences,
        )
        splits[split] = trees
        print(f"{split}: {len(trees)} trees from {len(files)} file(s)")
    return splits


def train(args, callbacks=()):
    """Trains, evaluates and saves a GFL parser as `args` say; returns 0."""
    _check_args(args)

    preset = get_preset(args.preset)
    settings = dict(TRAINING[args.preset])
    for key in ("epochs", "batch_size", "learning_rate", "min_count"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    beam_size = args.beam_size or preset["decoding"]["beam_size"]
    splits = load_splits(args)

    keras.utils.set_random_seed(args.seed)
    train_trees = splits["train"]
    source_vocabulary = SourceVocabulary.from_sentences(
        (t.leaves() for t in train_trees), min_count=settings["min_count"]
    )
    train_targets = [linearize.linearize(t, clean=False) for t in train_trees]
    target_vocabulary = TargetVocabulary.from_sequences(train_targets)

    def encode(trees, targets=None):
        targets = targets or [linearize.linearize(t, clean=False) for t in trees]
        sources, encoded = [], []
        for tree, target in zip(trees, targets):
            if all(symbol in target_vocabulary for symbol in target):
                sources.append(source_vocabulary.encode(tree.leaves()[::-1]))
                encoded.append(target_vocabulary.encode(target))
        return sources, encoded

    train_batches = GFLBatches(*encode(train_trees, train_targets),
                               settings["batch_size"], seed=args.seed)
    valid_sources, valid_targets = encode(splits["valid"])
    if len(valid_sources) < len(splits["valid"]):
        print(f"note: {len(splits['valid']) - len(valid_sources)} validation "
              "tree(s) have a label the training trees lack: left out of the "
              "validation loss (not of the EVALB F1).")
    valid_batches = (
        GFLBatches(valid_sources, valid_targets, args.eval_batch_size,
                   shuffle=False) if valid_sources else None
    )
    steps = len(train_batches)
    if args.steps_per_epoch:
        steps = min(steps, args.steps_per_epoch)
    epochs = settings["epochs"]

    strategy = make_strategy(getattr(args, "strategy", "auto") or "auto")
    overrides = {"seed": args.seed}
    if args.no_attention:
        overrides["attention"] = False
    with strategy.scope():
        model = GFLParser.from_preset(args.preset, source_vocabulary,
                                      target_vocabulary, **overrides)
        if settings["optimizer"] == "sgd":
            optimizer = keras.optimizers.SGD(settings["learning_rate"],
                                             clipnorm=settings["clip_norm"])
        else:
            optimizer = keras.optimizers.Adam(settings["learning_rate"],
                                              clipnorm=settings["clip_norm"])
        model.compile(optimizer=optimizer)
    parameters = int(model.count_params())
    print(
        f"Training GFLParser preset {args.preset!r} "
        f"({'LSTM' if args.no_attention else 'LSTM+A'}, {parameters:,} "
        f"parameters; vocabularies {len(source_vocabulary)} words, "
        f"{len(target_vocabulary)} symbols) on {len(train_trees)} trees, "
        f"{steps} batches of {settings['batch_size']} per epoch, with "
        f"{strategy.num_replicas_in_sync} replica(s) "
        f"({', '.join(strategy.extended.worker_devices)}); output in "
        f"{args.output}."
    )
    if args.word_vectors:
        matrix, found = load_word_vectors(
            args.word_vectors, source_vocabulary, model.embedding_dim,
            seed=args.seed,
        )
        model.set_source_embeddings(matrix)
        print(f"Word vectors: {found} of {len(source_vocabulary)} words found "
              f"in {args.word_vectors}.")

    os.makedirs(args.output, exist_ok=True)
    log_dir = os.path.join(args.output, "logs")
    validation = EVALBValidation(splits["valid"],
                                 batch_size=args.eval_batch_size,
                                 verbose=args.verbose)
    best_path = os.path.join(args.output, "best.weights.h5")
    best = ResumableModelCheckpoint(
        best_path, monitor="val_evalb_f1", mode="max", save_best_only=True,
        save_weights_only=True,
    )
    fingerprint = {
        "model": "GFLParser", "preset": args.preset,
        "attention": not args.no_attention,
        "batch_size": settings["batch_size"],
        "source_vocabulary": len(source_vocabulary),
        "target_vocabulary": len(target_vocabulary),
        "parameters": parameters,
    }
    backup = TrainingBackup(
        os.path.join(args.output, "backup"), save_freq=0,
        fingerprint=fingerprint, extra_state=[best], steps_per_epoch=steps,
    )
    fit_callbacks = [
        StopOnCtrlC(), LearningRateLogger(), validation, best,
        keras.callbacks.TensorBoard(log_dir, update_freq="epoch"),
        backup, *callbacks,
    ]
    with strategy.scope():
        start_epoch, _ = backup.restore(model)
    results_path = os.path.join(args.output, "results.json")
    model_path = os.path.join(args.output, "model.keras")
    if start_epoch >= epochs and os.path.exists(results_path):
        print(
            f"The run in {args.output} is finished ({start_epoch} epochs): "
            f"results in {results_path}, model in {model_path}. Pass "
            f"--epochs {start_epoch + 1} or more to train it further, or use "
            "another --output to start a new run."
        )
        return 0
    if start_epoch >= epochs:
        print(f"Training finished ({start_epoch} epochs) before the final "
              "evaluation: evaluating.")
    elif start_epoch:
        print(f"Resuming at the start of epoch {start_epoch + 1} of {epochs} "
              f"(backup in {backup.directory}).")

    started = time.time()
    if start_epoch < epochs:
        model.fit(
            train_batches.dataset(
                lambda: train_batches.stream(start_epoch, steps)),
            steps_per_epoch=steps, epochs=epochs, initial_epoch=start_epoch,
            validation_data=(
                valid_batches.dataset(lambda: valid_batches.epoch(0),
                                      len(valid_batches))
                if valid_batches else None
            ),
            callbacks=fit_callbacks, verbose=args.verbose, shuffle=False,
        )
    results = {
        "preset": args.preset,
        "attention": not args.no_attention,
        "epochs": epochs,
        "resumed_from_epoch": start_epoch,
        "batch_size": settings["batch_size"],
        "learning_rate": settings["learning_rate"],
        "optimizer": settings["optimizer"],
        "train_seconds": round(time.time() - started, 1),
        "parameters": parameters,
        "source_vocabulary": len(source_vocabulary),
        "target_vocabulary": len(target_vocabulary),
        "sentences": {split: len(trees) for split, trees in splits.items()},
        "evalb_params": "COLLINS.prm",
        "pos_tags": "gold (the trees get the gold tags; EVALB scores brackets)",
    }
    if os.path.exists(best_path) and best.best is not None and np.isfinite(best.best):
        model.load_weights(best_path)
        results["weights"] = "best checkpoint"
        results["best_val_evalb_f1"] = round(float(best.best), 2)
        print(f"Evaluating the best checkpoint (validation EVALB F1 "
              f"{float(best.best):.2f}).")
    else:
        results["weights"] = "final"

    test_trees = splits["test"]
    results["test"] = {}
    for name, beam in (("greedy", None), ("beam", beam_size)):
        evalb_result, parsed = evaluate_parser(
            model, test_trees, beam_size=beam, batch_size=args.eval_batch_size,
            warm_up=True,
        )
        figures = scores(evalb_result, parsed)
        if beam is not None:
            figures["beam_size"] = beam
        results["test"][name] = figures
        print(
            f"Test ({name}{'' if beam is None else f', beam {beam}'}): "
            f"EVALB F1 {figures['evalb_f1']:.2f} (all), "
            f"{figures['evalb_f1_len_le_40']:.2f} (<= 40 words); malformed "
            f"{100 * figures['malformed_rate']:.1f}%; "
            f"{figures['sentences_per_second']:.1f} sentences/s"
        )
    if args.attention_map:
        write_attention_map(model, test_trees, args.attention_sentence,
                            args.attention_map)
        results["attention_map"] = args.attention_map
        print(f"Attention map of test sentence {args.attention_sentence}: "
              f"{args.attention_map}")
    save_run(model, model_path, results, results_path)
    print(json.dumps(results))
    return 0


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
