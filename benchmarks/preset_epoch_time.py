"""Time per PTB epoch of each recipe preset on this machine, as JSON.

For every preset of a model family: builds the model with the PTB
vocabulary, times full training steps (the recipe's `train_step`: dropout,
clipping, carried state) at the preset's batch size and window length, and
the validation pass (the recipe's evaluation batch, fixed windows), then
scales both to one epoch of the PTB training text and one pass over the
validation text. The recipes' `--help` names this command (the time
depends on the machine); their warning for a preset too long for a CPU
quotes the figures of
`keras_ordered.training.cpu_time.CPU_MINUTES_PER_EPOCH`, measured so.

    python benchmarks/preset_epoch_time.py --model prpn --presets quick small
    python benchmarks/preset_epoch_time.py --model onlstm --data ../shared/data/ptb
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from keras_ordered.datasets import ptb  # noqa: E402
from keras_ordered.models import lstm  # noqa: E402
from keras_ordered.models import onlstm  # noqa: E402
from keras_ordered.models import prpn  # noqa: E402
from keras_ordered.training.batching import BPTTBatches  # noqa: E402
from keras_ordered.training.batching import SentenceBatches  # noqa: E402
from keras_ordered.training.config import LanguageModelTraining  # noqa: E402
from keras_ordered.training.optimizers import make_optimizer  # noqa: E402

FAMILIES = {
    "lstm": (lstm.LSTMLanguageModel, lstm.PRESETS, lstm.get_preset),
    "onlstm": (onlstm.ONLSTMLanguageModel, onlstm.PRESETS, onlstm.get_preset),
    "prpn": (prpn.PRPNLanguageModel, prpn.PRESETS, prpn.get_preset),
}


def _seconds_per_step(run, steps, warmup):
    run(warmup)  # tracing and first steps
    started = time.perf_counter()
    run(steps)
    return (time.perf_counter() - started) / steps


def time_preset(model_class, get_preset, name, data, steps, warmup):
    preset = get_preset(name)
    training = LanguageModelTraining.from_dict(preset["training"])
    (train_ids, valid_ids, _), vocabulary = data
    keras.utils.set_random_seed(0)
    model = model_class.from_preset(name, vocabulary, seed=0)
    model.compile(optimizer=make_optimizer(training))
    batch, eval_batch = training.batch_size, training.eval_batch_size
    model.configure_bptt(batch, eval_batch, clip_norm=training.clip_norm)
    eos = vocabulary.index(ptb.EOS)
    if training.sentence_level:
        train = SentenceBatches(train_ids, batch, eos)
        valid = SentenceBatches(valid_ids, eval_batch, eos, shuffle=False)
    else:
        train = BPTTBatches(train_ids, batch, training.bptt,
                            variable_length=training.variable_length)
        valid = BPTTBatches(valid_ids, eval_batch, training.bptt,
                            variable_length=False)

    def fit(n):
        model.fit(train.dataset(0, steps_per_epoch=n), verbose=0, shuffle=False)

    def evaluate(n):
        model.evaluate(valid.dataset(0, steps_per_epoch=n), verbose=0)

    train_step = _seconds_per_step(fit, steps, warmup)
    eval_step = _seconds_per_step(evaluate, steps, warmup)
    epoch = train_step * len(train) + eval_step * len(valid)
    return {
        "preset": name,
        "parameters": int(model.count_params()),
        "train_windows_per_epoch": len(train),
        "seconds_per_train_window": round(train_step, 3),
        "valid_windows": len(valid),
        "seconds_per_valid_window": round(eval_step, 3),
        "minutes_per_epoch": round(epoch / 60, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(FAMILIES), required=True)
    parser.add_argument("--presets", nargs="*", default=None,
                        help="presets to time (default: all)")
    parser.add_argument("--data", default=None,
                        help="PTB directory (default: $KERAS_ORDERED_DATA/ptb)")
    parser.add_argument("--steps", type=int, default=6,
                        help="timed steps per preset, after the warm-up")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    model_class, presets, get_preset = FAMILIES[args.model]
    data = ptb.load_data(args.data, download=False)
    for name in args.presets or list(presets):
        result = time_preset(model_class, get_preset, name, data,
                             args.steps, args.warmup)
        print(json.dumps({"model": args.model, **result}), flush=True)


if __name__ == "__main__":
    main()
