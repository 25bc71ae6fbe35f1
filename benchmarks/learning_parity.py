"""Learning parity with the official ON-LSTM code, as JSON.

The ON-LSTM language model trained under the plain loop of the official
code and the validation perplexity after a fixed number of steps, to set
against the official implementation's figures on the same machine (quoted
in benchmarks/README.md; there is no copy of that code here).

The loop (issue 7, section 5): PTB; embedding 200, layers 600 / 600 / 200,
chunk size 10; batch 20, fixed windows of 70 tokens with the recurrent state
carried from one window to the next; SGD, learning rate 30, gradient-norm
clip 0.25, weight decay 1.2e-6; the paper's dropouts (output 0.45, between
layers 0.3, input 0.5, embedding 0.1, weight drop 0.45); no AR / TAR, no
averaging. Validation perplexity on the whole validation text read as 10
streams, from the weights after every `--every` steps.

    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 1
    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 2
    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 1 \
        --weight-drop-scaling inverted
    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 1 \
        --precision mixed_bfloat16
    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 2 \
        --train-losses 30
    python benchmarks/learning_parity.py --data ../shared/data/ptb --seed 1 \
        --treebank ../shared/data/wsj_sample/mrg

`--treebank DIR` (the WSJ sample's `.mrg` folder) also parses its
development split (wsj_0001-0099) with the final weights and reports the
sentence F1 of every distance beside right-branching's: perplexity
parity alone let a precision become the default while the trees broke
(issue 23), so a change judged here is judged on trees too (over seeds:
benchmarks/parsing_quality.py and the rule for defaults).

`--train-losses N` trains N steps only and prints each step's training
loss (no validation): two versions of the code run this way from the same
seed show how soon rounding differences part their trajectories.
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_ordered.datasets import ptb  # noqa: E402
from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS  # noqa: E402
from keras_ordered.datasets.treebank import load_treebank  # noqa: E402
from keras_ordered.models import ONLSTMLanguageModel  # noqa: E402
from keras_ordered.parsing import baseline_predictor  # noqa: E402
from keras_ordered.parsing import evaluate_model  # noqa: E402
from keras_ordered.parsing import evaluate_parsing  # noqa: E402
from keras_ordered.training.batching import BPTTBatches  # noqa: E402
from keras_ordered.training.tasks.language_model import perplexity  # noqa: E402

MODEL = dict(
    embedding_dim=200, hidden_dims=[600, 600, 200], chunk_size=10,
    dropout_output=0.45, dropout_hidden=0.3, dropout_input=0.5,
    dropout_embedding=0.1, weight_drop=0.45, ar_alpha=0.0, tar_beta=0.0,
)
OFFICIAL = {"steps": 1500, "valid_perplexity": [219.4, 217.4]}


class Snapshots(keras.callbacks.Callback):
    """Copies the weights at the end of every (`--every`-step) Keras epoch."""

    def __init__(self):
        super().__init__()
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])


class StepLosses(keras.callbacks.Callback):
    """Each step's training loss, with one step per Keras "epoch"."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_epoch_end(self, epoch, logs=None):
        self.losses.append(round(float(logs["loss"]), 7))


def dev_tree_scores(model, treebank):
    """Sentence F1 of every distance on the development split, and
    right-branching's (the test split is never read)."""
    records = load_treebank(treebank, fileids=WSJ_SAMPLE_SPLITS["dev"])
    scores = {name: round(result["sentence_f1"], 2) for name, result in
              evaluate_model(records, model).items()}
    right = evaluate_parsing(records, baseline_predictor("right-branching"))
    return {"sentences": len(records), "sentence_f1": scores,
            "right_branching": round(right["sentence_f1"], 2)}


def run(data, seed, steps, every, batch=20, bptt=70, eval_batch=10,
        weight_drop_scaling="official", precision="float32",
        train_losses=None, treebank=None):
    (train_ids, valid_ids, _), vocabulary = data
    keras.utils.set_random_seed(seed)
    keras.mixed_precision.set_global_policy(precision)
    model = ONLSTMLanguageModel(vocabulary, seed=seed,
                                weight_drop_scaling=weight_drop_scaling,
                                **MODEL)
    model.configure_bptt(batch, eval_batch, clip_norm=0.25)
    model.compile(optimizer=keras.optimizers.SGD(30.0, weight_decay=1.2e-6))
    train = BPTTBatches(train_ids, batch, bptt, variable_length=False,
                        seed=seed)
    valid = BPTTBatches(valid_ids, eval_batch, bptt, variable_length=False)
    if train_losses:
        losses = StepLosses()
        model.fit(train.stream(0, len(train)), steps_per_epoch=1,
                  epochs=train_losses, callbacks=[losses], verbose=0,
                  shuffle=False)
        return {"seed": seed, "precision": precision,
                "train_losses": losses.losses}
    snapshots = Snapshots()
    started = time.time()
    # One Keras "epoch" = `every` windows of one continuous stream (the
    # state restarts from zero at each pass over the training text only).
    history = model.fit(
        train.stream(0, len(train)), steps_per_epoch=every,
        epochs=steps // every, callbacks=[snapshots], verbose=2,
        shuffle=False,
    )
    seconds = time.time() - started
    curve = {}
    for index, weights in enumerate(snapshots.weights):
        model.set_weights(weights)
        logs = model.evaluate(valid.dataset(), verbose=0, return_dict=True)
        curve[(index + 1) * every] = round(perplexity(logs["loss"]), 2)
        print(json.dumps({"seed": seed, "step": (index + 1) * every,
                          "valid_perplexity": curve[(index + 1) * every]}),
              flush=True)
    trees = None
    if treebank:
        trees = dev_tree_scores(model, treebank)  # the last weights
    return {
        "seed": seed,
        "dev_trees": trees,
        "weight_drop_scaling": weight_drop_scaling,
        "precision": precision,
        "steps": steps,
        "train_seconds": round(seconds, 1),
        "tokens_per_second": round(steps * batch * bptt / seconds, 1),
        "train_perplexity_last": round(
            float(np.exp(history.history["loss"][-1])), 2),
        "valid_perplexity": curve,
        "official_at_1500_steps": OFFICIAL["valid_perplexity"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None,
                        help="PTB directory (default: $KERAS_ORDERED_DATA/ptb)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=300,
                        help="steps between validation perplexities")
    parser.add_argument("--weight-drop-scaling", default="official",
                        choices=["inverted", "official"],
                        help="DropConnect convention (see ONLSTMCell)")
    parser.add_argument("--precision", default="float32",
                        choices=["float32", "mixed_bfloat16"],
                        help="Keras dtype policy of the model")
    parser.add_argument("--train-losses", type=int, default=None,
                        metavar="N", help="only train N steps and print "
                        "each step's training loss")
    parser.add_argument("--treebank", default=None, metavar="DIR",
                        help="WSJ sample .mrg folder: also report the "
                        "development split's sentence F1 of every distance")
    args = parser.parse_args()
    data = ptb.load_data(args.data, download=False)
    print(json.dumps(run(data, args.seed, args.steps, args.every,
                         weight_drop_scaling=args.weight_drop_scaling,
                         precision=args.precision,
                         train_losses=args.train_losses,
                         treebank=args.treebank)),
          flush=True)


if __name__ == "__main__":
    main()
