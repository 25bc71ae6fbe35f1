"""The machinery the PTB recipes share: arguments, strategy, data, model,
callbacks, crash-safe resumption, final evaluation.

`recipes/ptb_onlstm.py` and `recipes/ptb_prpn.py` are thin scripts over
`main(...)` here; everything a recipe does is importable and testable.
"""

import argparse
import json
import os
import sys
import time

import keras
import numpy as np
import tensorflow as tf

from keras_ordered.datasets import ptb
from keras_ordered.training.bptt import BPTTBatches
from keras_ordered.training.bptt import SentenceBatches
from keras_ordered.training.bptt import perplexity
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import LearningRateLogger
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import ResumableReduceLROnPlateau
from keras_ordered.training.callbacks import TrainingBackup


def build_parser(description, presets, default_output):
    """Command-line options common to the language-model recipes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--preset", default="ptb",
        help=f"model and training preset: {', '.join(sorted(presets))} "
        "(default: ptb, the paper's setup)",
    )
    parser.add_argument(
        "--data", default=None,
        help="directory with the PTB train.txt / valid.txt / test.txt "
        "(default: $KERAS_ORDERED_DATA/ptb, else download)",
    )
    parser.add_argument("--output", default=default_output,
                        help="directory for logs, backups and the model")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--bptt", type=int, default=None)
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument("--steps-per-epoch", type=int, default=None,
                        help="cap on training windows per epoch (quick runs)")
    parser.add_argument("--eval-steps", type=int, default=None,
                        help="cap on evaluation windows (quick runs)")
    parser.add_argument("--max-lines", type=int, default=None,
                        help="read only the first lines of each split")
    parser.add_argument("--save-freq", type=int, default=200,
                        help="steps between crash-safe backups")
    parser.add_argument("--parse-eval", default=None, metavar="DIR",
                        help="Treebank .mrg directory: parse a development "
                        "subset every epoch and log F1 to TensorBoard")
    parser.add_argument("--parse-eval-sentences", type=int, default=200)
    parser.add_argument("--mixed-precision", action="store_true",
                        help="mixed_float16 on GPU, mixed_bfloat16 on CPU")
    parser.add_argument("--jit-compile", action="store_true",
                        help="XLA-compile the train step (one compilation per "
                        "window length: use with fixed-length windows)")
    parser.add_argument("--fixed-length", action="store_true",
                        help="fixed-length windows instead of the AWD schedule")
    parser.add_argument("--skip-test", action="store_true",
                        help="skip the final test-set evaluation")
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--verbose", type=int, default=1, choices=[0, 1, 2])
    return parser


def make_optimizer(settings):
    """The optimizer a preset's training settings name."""
    name = settings["optimizer"]
    if name == "sgd":
        return keras.optimizers.SGD(
            settings["learning_rate"],
            weight_decay=settings.get("weight_decay") or None,
        )
    if name == "adam":
        return keras.optimizers.Adam(
            settings["learning_rate"],
            beta_1=settings.get("beta_1", 0.9),
            beta_2=settings.get("beta_2", 0.999),
            epsilon=settings.get("epsilon", 1e-7),
            weight_decay=settings.get("weight_decay") or None,
        )
    raise ValueError(f"Unknown optimizer {name!r}: use 'sgd' or 'adam'.")


def _fail(message):
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv, *, model_class, get_preset, presets, description,
         default_output):
    """Runs a language-model recipe; returns the process exit code."""
    parser = build_parser(description, presets, default_output)
    args = parser.parse_args(argv)
    try:
        return train(args, model_class=model_class, get_preset=get_preset)
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))


def train(args, *, model_class, get_preset):
    """Trains, evaluates and saves a language model as `args` say.

    Returns:
        0, after printing and writing `results.json` to `args.output`.
    """
    preset = get_preset(args.preset)
    settings = preset["training"]
    for key, value in (
        ("epochs", args.epochs),
        ("batch_size", args.batch_size),
        ("bptt", args.bptt),
        ("learning_rate", args.learning_rate),
    ):
        if value is not None:
            settings[key] = value
    if args.fixed_length:
        settings["variable_length"] = False
    if args.mixed_precision:
        gpus = tf.config.list_physical_devices("GPU")
        keras.mixed_precision.set_global_policy(
            "mixed_float16" if gpus else "mixed_bfloat16"
        )
    keras.utils.set_random_seed(args.seed)

    (train_ids, valid_ids, test_ids), vocabulary = ptb.load_data(
        args.data, max_lines=args.max_lines
    )
    strategy = tf.distribute.MirroredStrategy()
    replicas = strategy.num_replicas_in_sync
    print(
        f"Training {model_class.__name__} preset {args.preset!r} on "
        f"{len(train_ids)} tokens with {replicas} replica(s) "
        f"({', '.join(strategy.extended.worker_devices)})."
    )
    batch = settings["batch_size"]
    eval_batch = settings["eval_batch_size"]
    sentence_level = settings.get("sentence_level", False)
    eos = vocabulary.index(ptb.EOS)
    if sentence_level:
        train_batches = SentenceBatches(train_ids, batch, eos, seed=args.seed)
        valid_batches = SentenceBatches(valid_ids, eval_batch, eos, shuffle=False)
    else:
        train_batches = BPTTBatches(
            train_ids, batch, settings["bptt"],
            variable_length=settings.get("variable_length", True),
            seed=args.seed,
        )
        valid_batches = BPTTBatches(
            valid_ids, eval_batch, settings["bptt"], variable_length=False
        )

    fingerprint = {
        "model": model_class.__name__,
        "preset": args.preset,
        "batch_size": batch,
        "bptt": settings["bptt"],
        "vocabulary_size": len(vocabulary),
    }
    with strategy.scope():
        model = model_class.from_preset(args.preset, vocabulary, seed=args.seed)
        optimizer = make_optimizer(settings)
        model.compile(optimizer=optimizer, jit_compile=args.jit_compile)
        model.configure_bptt(batch, eval_batch, clip_norm=settings["clip_norm"])
    fingerprint["parameters"] = int(model.count_params())

    os.makedirs(args.output, exist_ok=True)
    callbacks = [LearningRateLogger()]
    ntasgd = None
    if settings["optimizer"] == "sgd" and settings.get("nonmono") is not None:
        ntasgd = NTASGD(settings["nonmono"], verbose=args.verbose)
        callbacks.append(ntasgd)
    resumable = [ntasgd] if ntasgd else []
    if settings.get("reduce_lr_patience"):
        plateau = ResumableReduceLROnPlateau(
            monitor="val_loss",
            factor=settings.get("reduce_lr_factor", 0.5),
            patience=settings["reduce_lr_patience"],
            verbose=args.verbose,
        )
        callbacks.append(plateau)
        resumable.append(plateau)
    parsing = None
    if args.parse_eval:
        from keras_ordered.training.parsing_callback import ParsingEvaluation

        parsing = ParsingEvaluation(
            args.parse_eval,
            log_dir=os.path.join(args.output, "logs"),
            max_sentences=args.parse_eval_sentences,
        )
        callbacks.append(parsing)
    best = ResumableModelCheckpoint(
        os.path.join(args.output, "best.weights.h5"),
        monitor="val_loss", save_best_only=True, save_weights_only=True,
    )
    resumable.append(best)
    callbacks += [
        best,
        keras.callbacks.TensorBoard(
            os.path.join(args.output, "logs"), update_freq="epoch"
        ),
    ]
    backup = TrainingBackup(
        os.path.join(args.output, "backup"),
        save_freq=args.save_freq,
        fingerprint=fingerprint,
        extra_state=resumable,
    )
    callbacks.append(backup)

    with strategy.scope():
        # Restoring builds the optimizer's slot variables (Adam's moments):
        # they must be created as the strategy's mirrored variables.
        start_epoch, start_batch = backup.restore(model)
    if start_epoch or start_batch:
        print(f"Resuming from epoch {start_epoch + 1}, window {start_batch}.")
    epochs = settings["epochs"]
    steps = train_batches.steps(args.steps_per_epoch)

    def validation():
        return valid_batches.dataset(0, steps_per_epoch=args.eval_steps)

    fit_options = dict(
        validation_data=validation(), callbacks=callbacks,
        verbose=args.verbose, shuffle=False,
    )
    started = time.time()
    if start_batch and start_epoch < epochs and start_batch < steps:
        # Finish the interrupted epoch from the window it stopped at.
        model.fit(
            train_batches.dataset(start_epoch, start_batch, steps),
            epochs=start_epoch + 1, initial_epoch=start_epoch, **fit_options,
        )
        start_epoch += 1
    elif start_batch:
        start_epoch += 1
    if start_epoch < epochs:
        model.fit(
            train_batches.stream(start_epoch, steps), steps_per_epoch=steps,
            epochs=epochs, initial_epoch=start_epoch, **fit_options,
        )
    elapsed = time.time() - started
    if ntasgd is not None:
        ntasgd.finalize()

    results = {"preset": args.preset, "train_seconds": round(elapsed, 1),
               "parameters": fingerprint["parameters"]}
    results["valid_loss"] = evaluate_stream(
        model, valid_ids, eval_batch, settings["bptt"], args.eval_steps,
        args.verbose, sentence_level=sentence_level, eos=eos,
    )
    results["valid_perplexity"] = perplexity(results["valid_loss"])
    print(f"Validation perplexity: {results['valid_perplexity']:.2f}")
    if not args.skip_test:
        results["test_loss"] = evaluate_stream(
            model, test_ids, settings["test_batch_size"], settings["bptt"],
            args.eval_steps, args.verbose, sentence_level=sentence_level,
            eos=eos,
        )
        results["test_perplexity"] = perplexity(results["test_loss"])
        print(f"Test perplexity: {results['test_perplexity']:.2f}")
    if parsing is not None:
        # The final weights (averaged ones after NT-ASGD) parse the subset.
        parsing.set_model(model)
        final_scores = parsing.evaluate()
        results["parse_sentences"] = len(parsing.records)
        results["parse_f1"] = {}
        for name, scores in final_scores.items():
            results["parse_f1"][name] = {
                "sentence_f1": scores["sentence_f1"],
                "corpus_f1": scores["corpus_f1"],
            }
            print(
                f"Parsing F1 ({name}, {results['parse_sentences']} gold "
                f"trees): sentence-level {scores['sentence_f1']:.1f}, "
                f"corpus-level {scores['corpus_f1']:.1f}"
            )
    model.save(os.path.join(args.output, "model.keras"))
    with open(os.path.join(args.output, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results))
    return 0


def evaluate_stream(model, ids, batch_size, bptt, max_steps=None, verbose=0,
                    sentence_level=False, eos=0):
    """Mean token loss of a text read as `batch_size` streams from zero state
    (or, with `sentence_level`, sentence by sentence from zero states).

    Reconfigures the model's evaluation state for `batch_size` (the paper
    evaluates with batch 10 on validation and 1 on test).
    """
    train_vars = getattr(model, "_bptt", None)
    clip = model.clip_norm
    train_batch = None
    if train_vars is not None and train_vars.train is not None:
        train_batch = int(train_vars.train[0].shape[0]) * (
            tf.distribute.get_strategy().num_replicas_in_sync
        )
    with model.distribute_strategy.scope():
        model.configure_bptt(train_batch, batch_size, clip_norm=clip)
    model.test_function = None  # re-trace with the new state variables
    if sentence_level:
        batches = SentenceBatches(ids, batch_size, eos, shuffle=False)
    else:
        batches = BPTTBatches(ids, batch_size, bptt, variable_length=False)
    dataset = batches.dataset(0, steps_per_epoch=max_steps)
    logs = model.evaluate(dataset, verbose=verbose, return_dict=True)
    return float(logs["loss"])
