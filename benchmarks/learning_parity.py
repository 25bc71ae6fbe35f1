"""Learning parity with the official ON-LSTM code, as JSON.

The ON-LSTM language model trained under the plain loop of the official
code and the validation perplexity after a fixed number of steps, to set
against the official implementation's figures on the same machine (quoted
in benchmarks/README.md; there is no copy of that code here).

The loop: PTB; embedding 200, layers 600 / 600 / 200,
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
parity alone can pass a precision whose trees are worse, so a change
judged here is judged on trees too (over seeds:
benchmarks/parsing_quality.py and the rule for defaults).

`--record DIR` also writes the run's result to DIR/seed_N.json (the
committed records of benchmarks/README.md). `--rule DIR --against DIR`
trains nothing: it applies the rule for defaults (benchmarks/README.md,
"The rule for defaults"; `keras_ordered.parsing.studies.rule_verdict`)
to two record folders, a candidate and its float32 reference, with the
1,500-step validation perplexity and the development split's sentence F1 of the
model's default distance (layer 2's forget gate):

    python benchmarks/learning_parity.py \
        --rule benchmarks/records/learning_parity_mixed_bfloat16 \
        --against benchmarks/records/learning_parity_float32

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
from keras_ordered.training.evaluation import perplexity  # noqa: E402

from keras_ordered.parsing.studies import read_records  # noqa: E402
from keras_ordered.parsing.studies import rule_lines  # noqa: E402
from keras_ordered.parsing.studies import rule_verdict  # noqa: E402
from keras_ordered.parsing.studies import stats  # noqa: E402

MODEL = dict(
    embedding_dim=200, hidden_dims=[600, 600, 200], chunk_size=10,
    dropout_output=0.45, dropout_hidden=0.3, dropout_input=0.5,
    dropout_embedding=0.1, weight_drop=0.45, ar_alpha=0.0, tar_beta=0.0,
)
OFFICIAL = {"steps": 1500, "valid_perplexity": [219.4, 217.4]}
# ONLSTMLanguageModel's default distance for MODEL's three layers.
DEFAULT_DISTANCE = "layer2/forget"


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
            "default_distance": model.default_distance,
            "right_branching": round(right["sentence_f1"], 2)}


def rule_summary(candidate_folder, reference_folder):
    """The rule for defaults on two folders of `--treebank` records: the
    printable lines (a table per seed, then the verdict) and the verdict's
    figures."""
    candidate = read_records(candidate_folder)
    reference = read_records(reference_folder)
    lines = ["| run | seed | valid ppl | dev sentence F1 | best distance "
             "| right-branching |", "|---|---|---|---|---|---|"]
    label = {f: os.path.basename(os.path.normpath(f))
             for f in (candidate_folder, reference_folder)}
    pairs = {}
    rights = set()
    for name, folder, runs in (("candidate", candidate_folder, candidate),
                               ("reference", reference_folder, reference)):
        pairs[name] = []
        for result in runs:
            trees = result.get("dev_trees")
            if not trees:
                raise ValueError(
                    f"{folder}: seed {result['seed']} was run without "
                    "--treebank; the rule needs its trees.")
            distance = trees.get("default_distance", DEFAULT_DISTANCE)
            f1 = trees["sentence_f1"][distance]
            ppl = result["valid_perplexity"][str(result["steps"])]
            rights.add(trees["right_branching"])
            pairs[name].append((f1, ppl))
            best = max(trees["sentence_f1"], key=trees["sentence_f1"].get)
            lines.append(f"| {label[folder]} "
                         f"| {result['seed']} | {ppl:.2f} | {f1:.1f} "
                         f"| {best} {trees['sentence_f1'][best]:.1f} "
                         f"| {trees['right_branching']:.1f} |")
    if len(rights) != 1:
        raise ValueError("The records were scored on different "
                         f"development sentences (right-branching {rights}).")
    rule = rule_verdict("onlstm", pairs["candidate"], pairs["reference"],
                        rights.pop())
    names = sorted(candidate[0]["dev_trees"]["sentence_f1"])
    lines += ["", f"| distance | {label[candidate_folder]} "
              f"| {label[reference_folder]} |", "|---|---|---|"]
    for name in names:
        cells = []
        for runs in (candidate, reference):
            st = stats([r["dev_trees"]["sentence_f1"][name] for r in runs])
            cells.append(f"{st['mean']:.1f} +- {st['std']:.1f} "
                         f"({st['min']:.1f}-{st['max']:.1f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""] + rule_lines(rule, reference_folder), rule


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
    parser.add_argument("--record", default=None, metavar="DIR",
                        help="also write the result to DIR/seed_N.json")
    parser.add_argument("--rule", default=None, metavar="DIR",
                        help="train nothing: apply the rule for defaults "
                        "to this folder of records (the candidate) ...")
    parser.add_argument("--against", default=None, metavar="DIR",
                        help="... against this one (the float32 reference)")
    args = parser.parse_args()
    if bool(args.rule) != bool(args.against):
        parser.error("--rule and --against go together")
    if args.rule:
        lines, _ = rule_summary(args.rule, args.against)
        print("\n".join(lines))
        return
    data = ptb.load_data(args.data, download=False)
    result = run(data, args.seed, args.steps, args.every,
                 weight_drop_scaling=args.weight_drop_scaling,
                 precision=args.precision, train_losses=args.train_losses,
                 treebank=args.treebank)
    print(json.dumps(result), flush=True)
    if args.record and not args.train_losses:
        os.makedirs(args.record, exist_ok=True)
        with open(os.path.join(args.record, f"seed_{args.seed}.json"),
                  "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
