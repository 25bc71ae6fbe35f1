"""The machinery the PTB recipes share: arguments, strategy, data, model,
callbacks, crash-safe resumption, final evaluation.

`recipes/ptb_onlstm.py` and `recipes/ptb_prpn.py` are thin scripts over
`main(...)` here; everything a recipe does is importable and testable.
"""

import argparse
import json
import os
import sys
import textwrap
import time

import keras
from keras import ops
import numpy as np
import tensorflow as tf

from keras_ordered._cpu import CPUINFO
from keras_ordered._cpu import cpu_flags
from keras_ordered.datasets import ptb
from keras_ordered.datasets.treebank import BOS
from keras_ordered.datasets.treebank import load_lm_sentences
from keras_ordered.training.bptt import BPTTBatches
from keras_ordered.training.bptt import SentenceBatches
from keras_ordered.training.bptt import perplexity
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import LearningRateLogger
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import ResumableReduceLROnPlateau
from keras_ordered.training.callbacks import StepLogger
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.crash_safety import CtrlC
from keras_ordered.training.crash_safety import StopOnCtrlC
from keras_ordered.training.crash_safety import save_run
from keras_ordered.training.distributed import STRATEGIES
from keras_ordered.training.distributed import CustomTrainingLoop
from keras_ordered.training.distributed import barrier
from keras_ordered.training.distributed import is_chief
from keras_ordered.training.distributed import is_multi_worker
from keras_ordered.training.distributed import make_strategy
from keras_ordered.training.distributed import print_worker_error
from keras_ordered.training.distributed import split_cpu
from keras_ordered.training.optimizers import TorchAdam
from keras_ordered.training.cli_help import HelpFormatter as _HelpFormatter


def describe_presets(presets, default="ptb"):
    """The presets as `--help` lists them: description, size, CPU time."""
    lines = [textwrap.fill(
        "presets (size with the 10,000-word PTB vocabulary; time per epoch "
        "of training and validation on a 2-core CPU, measured with "
        "benchmarks/preset_epoch_time.py):", width=79,
    )]
    for name, preset in presets.items():
        facts = []
        if preset.get("parameters"):
            facts.append(f"{preset['parameters'] / 1e6:.1f}M parameters")
        minutes = preset.get("cpu_minutes_per_epoch")
        if minutes:
            facts.append(f"~{_duration(minutes)} per epoch on CPU")
        facts.append(f"{preset['training']['epochs']} epoch(s)")
        marker = " [default]" if name == default else ""
        lines.append(textwrap.fill(
            f"{preset.get('description', '')}{marker}", width=79,
            initial_indent=f"  {name:<7}", subsequent_indent=" " * 9,
        ))
        lines.append(textwrap.fill("; ".join(facts), width=79,
                                   initial_indent=" " * 9,
                                   subsequent_indent=" " * 9))
    return "\n".join(lines)


def _duration(minutes):
    if minutes < 1:
        return f"{minutes * 60:.0f} s"
    if minutes < 10:
        return f"{minutes:.1f} min"
    if minutes < 90:
        return f"{minutes:.0f} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 60 / 24:.0f} days"


def cpu_warning(name, preset, presets):
    """A warning when a preset would run for many hours without a GPU.

    Returns None when a GPU is visible, or when the preset's whole training
    takes less than 3 hours on a CPU (by its measured time per epoch).
    """
    minutes = preset.get("cpu_minutes_per_epoch")
    epochs = preset["training"]["epochs"]
    if not minutes or minutes * epochs < 180:
        return None
    if tf.config.list_physical_devices("GPU"):
        return None
    alternatives = [
        f"--preset {other} (~{_duration(p['cpu_minutes_per_epoch'])} per "
        f"epoch, {p['training']['epochs']} epoch(s))"
        for other, p in presets.items()
        if other in ("small", "quick") and p.get("cpu_minutes_per_epoch")
    ]
    return (
        f"warning: no GPU is visible. Preset {name!r} takes about "
        f"{_duration(minutes)} per epoch on a CPU, so its {epochs} epochs "
        f"would take about {_duration(minutes * epochs)}. On a CPU, try "
        f"{' or '.join(alternatives) or 'a smaller preset'}."
    )


def build_parser(description, presets, default_output):
    """Command-line options common to the language-model recipes."""
    parser = argparse.ArgumentParser(
        description=description,
        epilog=describe_presets(presets),
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--preset", default="ptb", metavar="NAME",
        help="model and training preset (listed below; ptb is the paper's "
        "setup)",
    )
    parser.add_argument(
        "--data", default=None, metavar="DIR",
        help="directory with the PTB train.txt / valid.txt / test.txt "
        "(default: $KERAS_ORDERED_DATA/ptb, else download the public copy)",
    )
    parser.add_argument(
        "--treebank", default=None, metavar="DIR",
        help="train on the sentences of this Treebank .mrg folder instead of "
        "the PTB text, as the official unsupervised-parsing setup does "
        "(default for the presets that train so, e.g. PRPN's up: "
        "$KERAS_ORDERED_DATA/wsj_sample/mrg)",
    )
    parser.add_argument("--output", default=default_output, metavar="DIR",
                        help="directory for logs, backups, the model and "
                        "results.json; running the same command again "
                        "resumes the run in it")
    parser.add_argument("--epochs", type=int, default=None,
                        help="training epochs (default: the preset's)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="training batch size (default: the preset's)")
    parser.add_argument("--bptt", type=int, default=None,
                        help="window length of truncated BPTT "
                        "(default: the preset's)")
    parser.add_argument("--learning-rate", type=float, default=None,
                        help="initial learning rate (default: the preset's)")
    parser.add_argument("--steps-per-epoch", type=int, default=None,
                        metavar="N",
                        help="train at most N windows per epoch, for quick "
                        "runs (default: the whole training text)")
    parser.add_argument("--eval-steps", type=int, default=None, metavar="N",
                        help="evaluate on the first N windows of each split "
                        "only, for quick runs: the printed and recorded "
                        "perplexities then cover only part of the data and "
                        "say so (default: the whole splits)")
    parser.add_argument("--max-lines", type=int, default=None, metavar="N",
                        help="read only the first N lines of each split "
                        "(default: all)")
    parser.add_argument("--save-freq", type=int, default=200, metavar="N",
                        help="steps between crash-safe backups (and one at "
                        "every epoch end)")
    parser.add_argument("--log-every", type=int, default=50, metavar="N",
                        help="write training loss, perplexity and learning "
                        "rate to TensorBoard every N steps (0: epoch ends "
                        "only)")
    parser.add_argument("--parse-eval", default=None, metavar="DIR",
                        help="Treebank .mrg directory: parse a development "
                        "subset every epoch and log F1 to TensorBoard "
                        "(default: no parsing evaluation)")
    parser.add_argument("--parse-eval-sentences", type=int, default=200,
                        metavar="N",
                        help="size of that development subset (the first N "
                        "sentences)")
    parser.add_argument(
        "--strategy", default="auto", choices=STRATEGIES,
        help="how to spread training over devices: auto (every visible GPU "
        "with MirroredStrategy, else the CPU), mirrored (every GPU, else "
        "every logical CPU device of --cpu-devices), one-device (the first "
        "GPU, else the CPU), multi-worker (several processes or machines "
        "configured by TF_CONFIG, with a training loop of our own; see "
        "README, 'Several GPUs and machines')",
    )
    parser.add_argument(
        "--cpu-devices", type=int, default=None, metavar="N",
        help="split the CPU into N logical devices, so that --strategy "
        "mirrored runs N replicas without a GPU (for trying and testing "
        "multi-device training; default: one CPU device)",
    )
    parser.add_argument(
        "--precision", default=DEFAULT_PRECISION, choices=PRECISIONS,
        help="the Keras dtype policy of training: float32 (the default, as "
        "the official code), mixed_bfloat16, mixed_float16 (GPU), or auto "
        "(mixed_bfloat16 on a CPU with native bfloat16 arithmetic "
        "(AVX512_BF16 or AMX), where it is faster, float32 elsewhere). "
        "bfloat16 is not the default: it keeps perplexity but its trees "
        "were not shown to match float32's over seeds "
        "(benchmarks/README.md, 'Parsing quality'). Whatever the policy of "
        "training, the final evaluation and the saved model are float32 "
        "(except under --strategy multi-worker)",
    )
    parser.add_argument(
        "--adam", default="official", choices=("official", "keras"),
        help="the arithmetic of the presets' Adam: official (PyTorch's, "
        "with coupled L2 weight decay: keras_ordered.training.optimizers."
        "TorchAdam) or keras (keras.optimizers.Adam: decoupled decay, "
        "epsilon before the bias correction; a departure)",
    )
    parser.add_argument("--mixed-precision", action="store_true",
                        help="the same as --precision mixed_float16 on GPU, "
                        "mixed_bfloat16 on CPU")
    parser.add_argument("--jit-compile", action="store_true",
                        help="XLA-compile the train step (one compilation per "
                        "window length: use with fixed-length windows; "
                        "default: off)")
    parser.add_argument("--fixed-length", action="store_true",
                        help="fixed-length windows instead of the AWD "
                        "schedule of variable lengths (default: the "
                        "preset's)")
    parser.add_argument("--skip-test", action="store_true",
                        help="skip the final test-set evaluation")
    parser.add_argument("--seed", type=int, default=1111,
                        help="random seed (initialisation, dropout, windows)")
    parser.add_argument("--verbose", type=int, default=None, choices=[0, 1, 2],
                        help="0: silent, 1: progress bar, 2: one line per "
                        "epoch (default: 1 on a terminal, 2 when the output "
                        "goes to a file or a pipe)")
    parser.add_argument("--tf-logs", action="store_true",
                        help="show TensorFlow's own start-up and C++ log "
                        "(also: KERAS_ORDERED_TF_LOGS=1)")
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
        # The official arithmetic (PyTorch's Adam, coupled L2 decay).
        return TorchAdam(
            settings["learning_rate"],
            beta_1=settings.get("beta_1", 0.9),
            beta_2=settings.get("beta_2", 0.999),
            epsilon=settings.get("epsilon", 1e-8),
            l2=settings.get("weight_decay") or 0.0,
        )
    if name == "keras_adam":
        # A documented departure: Keras' Adam (decoupled decay, epsilon
        # before the bias correction); see keras_ordered.training.optimizers.
        return keras.optimizers.Adam(
            settings["learning_rate"],
            beta_1=settings.get("beta_1", 0.9),
            beta_2=settings.get("beta_2", 0.999),
            epsilon=settings.get("epsilon", 1e-7),
            weight_decay=settings.get("weight_decay") or None,
        )
    raise ValueError(
        f"Unknown optimizer {name!r}: use 'sgd', 'adam' or 'keras_adam'."
    )


def make_plateau(settings, verbose=0):
    """The learning-rate plateau schedule of the official PRPN code.

    The official code uses PyTorch's `ReduceLROnPlateau(mode="min",
    factor, patience, threshold=0)`: the rate is multiplied by `factor`
    once more than `patience` epochs in a row brought no improvement
    (improvement: strictly lower than the best so far). Keras' callback
    reduces after `patience` such epochs and wants an improvement of
    `min_delta` (1e-4 by default), so it gets `patience + 1` and
    `min_delta=0`.

    Args:
        settings: a preset's `training` dict: `reduce_lr_patience` (None: no
            schedule), `reduce_lr_factor`, `reduce_lr_monitor` (`val_loss`
            by default; the `up` preset watches the training `loss`).
        verbose: int, print when the rate changes.

    Returns:
        A `ResumableReduceLROnPlateau`, or None.
    """
    patience = settings.get("reduce_lr_patience")
    if patience is None:
        return None
    return ResumableReduceLROnPlateau(
        monitor=settings.get("reduce_lr_monitor", "val_loss"),
        factor=settings.get("reduce_lr_factor", 0.5),
        patience=int(patience) + 1,
        min_delta=0.0,
        verbose=verbose,
    )


def _fail(message):
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv, *, model_class, get_preset, presets, description,
         default_output):
    """Runs a language-model recipe; returns the process exit code.

    0 on success (or when the run in `--output` is already finished), 2 on
    a usage or input error (one line on stderr), 130 after Ctrl-C (one line
    saying how to resume).
    """
    parser = build_parser(description, presets, default_output)
    args = parser.parse_args(argv)
    if args.verbose is None:
        args.verbose = 1 if sys.stdout.isatty() else 2
    try:
        # Ctrl-C stops the run within seconds, wherever it is (a training
        # step, validation, parsing, a backup, the final evaluation).
        return CtrlC(lambda: _interrupted(args.output)).call(
            train, args, model_class=model_class, get_preset=get_preset,
            presets=presets,
        )
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return _interrupted(args.output)
    except tf.errors.OpError as error:
        if args.strategy != "multi-worker":
            raise
        print_worker_error(error)
        return 1


def _interrupted(output):
    """After Ctrl-C: the latest backup is whole; say how to resume."""
    backup = TrainingBackup(os.path.join(output, "backup"))
    backup.remove_partial_saves()
    meta = backup.latest()
    if meta is None:
        message = (
            "Interrupted before the first backup: nothing to resume (run "
            "the same command again to start over)."
        )
    else:
        message = (
            f"Interrupted. The backup in {backup.directory} is whole "
            f"({_position(meta['epoch'], meta['next_batch'])}): run the same "
            "command again to resume from it."
        )
    print(f"\n{message}", file=sys.stderr)
    return 130


def _position(epoch, next_batch):
    if next_batch:
        return f"epoch {epoch + 1}, window {next_batch}"
    return f"start of epoch {epoch + 1}"


def _check_resume(backup, output, start_epoch, start_batch, steps, epochs):
    """What a restored run does next: 'train', 'evaluate' or 'finished'.

    Raises ValueError when the options would change the window layout of
    the epoch the backup stopped in, or end training inside it.
    """
    meta = backup.restored
    if meta is None:
        return "train"
    saved_steps = meta.get("steps_per_epoch")
    if start_batch and saved_steps is not None and saved_steps != steps:
        raise ValueError(
            f"The backup in {backup.directory} stopped at window "
            f"{start_batch} of an epoch of {saved_steps} windows; these "
            f"options make epochs of {steps} windows, which would skip or "
            "repeat part of it. Run with --steps-per-epoch "
            f"{saved_steps} (or the same --max-lines / --batch-size / --bptt) "
            "to finish that epoch, or use another --output (or delete "
            "the backup folder) to start over."
        )
    if start_batch and start_epoch >= epochs:
        raise ValueError(
            f"The backup in {backup.directory} stopped inside epoch "
            f"{start_epoch + 1}, but --epochs is {epochs}: pass --epochs "
            f"{start_epoch + 1} or more to finish it, or use another --output."
        )
    if start_epoch >= epochs:
        if os.path.exists(os.path.join(output, "results.json")):
            return "finished"
        return "evaluate"
    return "train"


PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
# The recipes' default policy: a precision becomes the default only where
# its trees, over seeds, match float32's (benchmarks/parsing_quality.py).
DEFAULT_PRECISION = "float32"


def cpu_has_native_bfloat16(cpuinfo=CPUINFO):
    """Whether the CPU does bfloat16 arithmetic natively (AVX512_BF16, AMX).

    Read from the flags of `/proc/cpuinfo` (False where that file does not
    exist, e.g. on macOS or Windows).
    """
    return bool(cpu_flags(cpuinfo) & {"avx512_bf16", "amx_bf16"})


def training_policy(precision="auto", mixed_precision=False, gpus=None,
                    native_bfloat16=None):
    """The dtype policy a recipe trains under (see `--precision`).

    Args:
        precision: one of `PRECISIONS`.
        mixed_precision: the `--mixed-precision` flag (mixed_float16 on
            GPU, mixed_bfloat16 on CPU); it overrides `precision`.
        gpus: whether a GPU is visible (default: asks TensorFlow).
        native_bfloat16: whether the CPU has native bfloat16 arithmetic
            (default: `cpu_has_native_bfloat16()`).

    Returns:
        A Keras dtype policy name.
    """
    if precision not in PRECISIONS:
        raise ValueError(
            f"Unknown precision {precision!r}: expected one of {PRECISIONS}."
        )
    if gpus is None:
        gpus = bool(tf.config.list_physical_devices("GPU"))
    if mixed_precision:
        return "mixed_float16" if gpus else "mixed_bfloat16"
    if precision != "auto":
        return precision
    if gpus:
        return "float32"
    if native_bfloat16 is None:
        native_bfloat16 = cpu_has_native_bfloat16()
    return "mixed_bfloat16" if native_bfloat16 else "float32"


def train(args, *, model_class, get_preset, presets=None):
    """Trains, evaluates and saves a language model as `args` say.

    Returns:
        0, after printing and writing `results.json` to `args.output`.
    """
    # The strategy first: a CPU split into logical devices and a
    # multi-worker strategy both need a TensorFlow runtime that has not
    # started yet.
    cpu_devices = getattr(args, "cpu_devices", None)
    if cpu_devices:
        split_cpu(cpu_devices)
    strategy = make_strategy(getattr(args, "strategy", "auto") or "auto")
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
    if getattr(args, "adam", "official") == "keras" and (
        settings["optimizer"] == "adam"
    ):
        settings["optimizer"] = "keras_adam"
    policy = training_policy(getattr(args, "precision", DEFAULT_PRECISION),
                             getattr(args, "mixed_precision", False))
    previous_policy = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy(policy)
    try:
        return _train(args, model_class, presets, strategy, preset,
                      settings, policy)
    finally:
        keras.mixed_precision.set_global_policy(previous_policy)


def _train(args, model_class, presets, strategy, preset, settings, policy):
    multi_worker = is_multi_worker(strategy)
    chief = is_chief(strategy)
    keras.utils.set_random_seed(args.seed)
    if presets is not None:
        warning = cpu_warning(args.preset, preset, presets)
        if warning:
            print(warning, file=sys.stderr)

    treebank_records = None
    if args.treebank or settings.get("data") == "treebank":
        # The official unsupervised-parsing setup: the language model reads
        # the treebank's own sentences (in their order) and parses them.
        train_ids, vocabulary, treebank_records = load_lm_sentences(
            args.treebank,
            max_length=settings.get("max_sentence_length"),
            min_count=settings.get("min_count", 3),
        )
        if args.max_lines:
            keep = np.flatnonzero(train_ids == 0)[: args.max_lines]
            train_ids = train_ids[: keep[-1] + 1]
            treebank_records = treebank_records[: args.max_lines]
        valid_ids, test_ids = train_ids, None
        settings["sentence_level"] = True
        args.skip_test = True
        print(f"Training on {len(treebank_records)} treebank sentences "
              f"(vocabulary {len(vocabulary)}); validation and parsing on "
              "the same sentences, as the official setup does.")
    else:
        (train_ids, valid_ids, test_ids), vocabulary = ptb.load_data(
            args.data, max_lines=args.max_lines
        )
    replicas = strategy.num_replicas_in_sync
    where = ", ".join(strategy.extended.worker_devices)
    if multi_worker:
        where = (f"{strategy.cluster_resolver.task_type} "
                 f"{strategy.cluster_resolver.task_id} of a multi-worker "
                 f"cluster{'' if not chief else ', the chief'}")
    print(
        f"Training {model_class.__name__} preset {args.preset!r} on "
        f"{len(train_ids)} tokens with {replicas} replica(s) "
        f"({where}) under the {policy} policy; output in {args.output}"
        f"{'' if chief else ' (written by the chief only)'}."
    )
    batch = settings["batch_size"]
    if batch % replicas:
        raise ValueError(
            f"The training batch size {batch} is not a multiple of the "
            f"{replicas} replicas: pass a --batch-size that is."
        )
    for key in ("eval_batch_size", "test_batch_size"):
        if key == "test_batch_size" and args.skip_test:
            continue
        if settings[key] % replicas:
            # Every replica evaluates an equal share of the streams.
            rounded = -(-settings[key] // replicas) * replicas
            print(f"Evaluating with batch size {rounded} instead of the "
                  f"preset's {key} {settings[key]}, a multiple of the "
                  f"{replicas} replicas (perplexities differ slightly).")
            settings[key] = rounded
    eval_batch = settings["eval_batch_size"]
    sentence_level = settings.get("sentence_level", False)
    eos = vocabulary.index(ptb.EOS)
    bos = vocabulary.index(BOS) if BOS in vocabulary else None
    if sentence_level:
        train_batches = SentenceBatches(
            train_ids, batch, eos, shuffle=settings.get("shuffle", True),
            seed=args.seed, bos_id=bos,
        )
        valid_batches = SentenceBatches(valid_ids, eval_batch, eos,
                                        shuffle=False, bos_id=bos)
    else:
        train_batches = BPTTBatches(
            train_ids, batch, settings["bptt"],
            variable_length=settings.get("variable_length", True),
            seed=args.seed,
        )
        valid_batches = BPTTBatches(
            valid_ids, eval_batch, settings["bptt"], variable_length=False
        )
    epochs = settings["epochs"]
    steps = train_batches.steps(args.steps_per_epoch)

    fingerprint = {
        "model": model_class.__name__,
        "preset": args.preset,
        "batch_size": batch,
        "bptt": settings["bptt"],
        "vocabulary_size": len(vocabulary),
    }
    model = _build_model(args, model_class, vocabulary, settings, batch,
                         eval_batch, strategy)
    fingerprint["parameters"] = int(model.count_params())

    # Under a multi-worker strategy only the chief writes files; the others
    # run the callbacks that change training (NT-ASGD, the learning-rate
    # schedule) and join the backups' collectives.
    if chief:
        os.makedirs(args.output, exist_ok=True)
    log_dir = os.path.join(args.output, "logs")
    step_logger = StepLogger(os.path.join(log_dir, "steps"),
                             every=args.log_every if chief else 0,
                             steps_per_epoch=steps)
    callbacks = [LearningRateLogger(), step_logger]
    ntasgd = None
    if settings["optimizer"] == "sgd" and settings.get("nonmono") is not None:
        ntasgd = NTASGD(settings["nonmono"], verbose=args.verbose)
        callbacks.append(ntasgd)
    resumable = [ntasgd] if ntasgd else []
    plateau = make_plateau(settings, verbose=args.verbose)
    if plateau is not None:
        callbacks.append(plateau)
        resumable.append(plateau)
    parsing = None
    if chief and (args.parse_eval or treebank_records is not None):
        from keras_ordered.training.parsing_callback import ParsingEvaluation

        parsing = ParsingEvaluation(
            args.parse_eval or treebank_records,
            log_dir=log_dir,
            max_sentences=(
                args.parse_eval_sentences if args.parse_eval
                else len(treebank_records)
            ),
        )
        callbacks.append(parsing)
    best_path = os.path.join(args.output, "best.weights.h5")
    best = ResumableModelCheckpoint(
        best_path, monitor="val_loss", save_best_only=True,
        save_weights_only=True,
        # Under NT-ASGD validation runs on the averaged weights: save those.
        weights_context=ntasgd.validated_weights if ntasgd else None,
    )
    resumable.append(best)
    if chief:
        callbacks += [
            best,
            keras.callbacks.TensorBoard(log_dir, update_freq="epoch"),
        ]
    backup = TrainingBackup(
        os.path.join(args.output, "backup"),
        save_freq=args.save_freq,
        fingerprint=fingerprint,
        extra_state=resumable,
        steps_per_epoch=steps,
        write=chief,
    )
    callbacks.append(backup)

    with strategy.scope():
        # Restoring builds the optimizer's slot variables (Adam's moments):
        # they must be created as the strategy's mirrored variables.
        start_epoch, start_batch = backup.restore(model)
    action = _check_resume(backup, args.output, start_epoch, start_batch,
                           steps, epochs)
    results_path = os.path.join(args.output, "results.json")
    if action == "finished":
        print(
            f"The run in {args.output} is finished ({start_epoch} epochs): "
            f"results in {results_path}, model in "
            f"{os.path.join(args.output, 'model.keras')}. Pass --epochs "
            f"{start_epoch + 1} or more to train it further, or use another "
            "--output to start a new run."
        )
        return 0
    if action == "evaluate":
        print(f"Training finished ({start_epoch} epochs) before the final "
              "evaluation: evaluating the final weights.")
    elif start_batch:
        print(f"Resuming from epoch {start_epoch + 1}, window {start_batch} "
              f"of {steps} (backup in {backup.directory}).")
    elif start_epoch:
        print(f"Resuming at the start of epoch {start_epoch + 1} of {epochs} "
              f"(backup in {backup.directory}).")
    step_logger.epoch, step_logger.start_batch = start_epoch, start_batch

    def validation():
        return valid_batches.dataset(0, steps_per_epoch=args.eval_steps)

    loop = None
    if multi_worker:
        # Keras 3's fit fails under MultiWorkerMirroredStrategy
        # (keras-team/keras#20585): the same train_step in a loop of ours.
        loop = CustomTrainingLoop(model, strategy, verbose=args.verbose)
    all_callbacks = [StopOnCtrlC(), *callbacks]

    def fit(dataset, steps_per_epoch, epochs, initial_epoch):
        if loop is not None:
            return loop.fit(
                dataset, steps_per_epoch, epochs, initial_epoch=initial_epoch,
                validation_data=validation, callbacks=all_callbacks,
            )
        return model.fit(
            dataset, steps_per_epoch=steps_per_epoch, epochs=epochs,
            initial_epoch=initial_epoch, validation_data=validation(),
            callbacks=all_callbacks, verbose=args.verbose, shuffle=False,
        )

    started = time.time()
    if action == "train" and start_batch:
        # Finish the interrupted epoch from the window it stopped at.
        fit(train_batches.dataset(start_epoch, start_batch, steps),
            steps - start_batch, start_epoch + 1, start_epoch)
        start_epoch += 1
    if action == "train" and start_epoch < epochs:
        fit(train_batches.stream(start_epoch, steps), steps, epochs,
            start_epoch)
    elapsed = time.time() - started
    if multi_worker:
        barrier(strategy)  # the chief's last checkpoint is written
    results = {"preset": args.preset, "epochs": epochs,
               "train_seconds": round(elapsed, 1),
               "parameters": fingerprint["parameters"]}
    if os.path.exists(best_path) and (best.best is not None or not chief):
        # As the official code does: the final figures (and the saved model)
        # are those of the best checkpoint, not of the last epoch.
        model.load_weights(best_path)
        results["weights"] = "best checkpoint"
        if best.best is not None:  # (the chief's; the others read it)
            results["best_val_loss"] = float(best.best)
            print(f"Evaluating the best checkpoint ({best_path}, validation "
                  f"loss {float(best.best):.4f} during training).")
    else:
        if ntasgd is not None:
            ntasgd.finalize()
        results["weights"] = "final"
    results["precision"] = policy
    if policy != "float32" and loop is None:
        # Trained under a mixed policy: evaluate and save a float32 copy, so
        # that the figures follow the official (float32) protocol and the
        # saved model computes in float32 wherever it is loaded.
        model = _float32_copy(model, args, model_class, vocabulary, settings,
                              batch, eval_batch, strategy)
        print(f"Trained under {policy}; evaluating in float32.")
    results["evaluation_precision"] = (
        "float32" if loop is None else policy
    )
    partial = ""
    if args.eval_steps:
        results["eval_steps"] = args.eval_steps
        results["evaluation"] = (
            f"partial: the first {args.eval_steps} windows of each split "
            "only (--eval-steps), not comparable with whole-split figures"
        )
        partial = f" (first {args.eval_steps} windows only: --eval-steps)"
    if treebank_records is not None:
        results["valid_split"] = "the training sentences (official setup)"
    results["valid_loss"] = evaluate_stream(
        model, valid_ids, eval_batch, settings["bptt"], args.eval_steps,
        args.verbose, sentence_level=sentence_level, eos=eos, bos=bos,
        loop=loop,
    )
    results["valid_perplexity"] = perplexity(results["valid_loss"])
    print(f"Validation perplexity{partial}: {results['valid_perplexity']:.2f}")
    if not args.skip_test:
        results["test_loss"] = evaluate_stream(
            model, test_ids, settings["test_batch_size"], settings["bptt"],
            args.eval_steps, args.verbose, sentence_level=sentence_level,
            eos=eos, bos=bos, loop=loop,
        )
        results["test_perplexity"] = perplexity(results["test_loss"])
        print(f"Test perplexity{partial}: {results['test_perplexity']:.2f}")
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
    if not chief:
        return 0
    save_run(model, os.path.join(args.output, "model.keras"), results,
             results_path)
    print(json.dumps(results))
    return 0


def _build_model(args, model_class, vocabulary, settings, batch,
                 eval_batch, strategy):
    """The preset's model, compiled and configured for BPTT, under
    `strategy` and the global dtype policy."""
    with strategy.scope():
        model = model_class.from_preset(args.preset, vocabulary,
                                        seed=args.seed)
        model.compile(optimizer=make_optimizer(settings),
                      jit_compile=args.jit_compile)
        model.configure_bptt(batch, eval_batch,
                             clip_norm=settings["clip_norm"])
    return model


def _float32_copy(model, args, model_class, vocabulary, settings, batch,
                  eval_batch, strategy):
    """A float32 model of the same preset holding `model`'s weights."""
    previous = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy("float32")
    try:
        copy = _build_model(args, model_class, vocabulary, settings, batch,
                            eval_batch, strategy)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    # The same preset built the same way: the same variables in the same
    # order, the optimizer's too (the saved model can go on training).
    pairs = [(copy.weights, model.weights)]
    source_optimizer = getattr(model.optimizer, "inner_optimizer",
                               model.optimizer)
    if source_optimizer is not None and source_optimizer.built:
        with strategy.scope():
            copy.optimizer.build(copy.trainable_variables)
        pairs.append((copy.optimizer.variables, source_optimizer.variables))
    for targets, sources in pairs:
        if len(targets) != len(sources):
            raise ValueError("The float32 copy does not have the trained "
                             "model's variables.")
        for target, source in zip(targets, sources):
            if tuple(target.shape) != tuple(source.shape):
                raise ValueError(
                    f"The float32 copy's {target.path} has shape "
                    f"{target.shape}, the trained {source.path} "
                    f"{source.shape}.")
            target.assign(ops.cast(source.value, target.dtype))
    return copy


def evaluate_stream(model, ids, batch_size, bptt, max_steps=None, verbose=0,
                    sentence_level=False, eos=0, bos=None, loop=None):
    """Mean token loss of a text read as `batch_size` streams from zero state
    (or, with `sentence_level`, sentence by sentence from zero states).

    Reconfigures the model's evaluation state for `batch_size` (the paper
    evaluates with batch 10 on validation and 1 on test). With `loop` (a
    `CustomTrainingLoop`, multi-worker runs) it evaluates through it
    instead of `model.evaluate`.
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
        batches = SentenceBatches(ids, batch_size, eos, shuffle=False,
                                  bos_id=bos)
    else:
        batches = BPTTBatches(ids, batch_size, bptt, variable_length=False)
    dataset = batches.dataset(0, steps_per_epoch=max_steps)
    if loop is not None:
        return float(loop.evaluate(dataset)["loss"])
    logs = model.evaluate(dataset, verbose=verbose, return_dict=True,
                          callbacks=[StopOnCtrlC()])
    return float(logs["loss"])
