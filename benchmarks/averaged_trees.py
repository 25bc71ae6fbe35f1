"""Trees of a run's raw SGD weights against its NT-ASGD averaged weights, as JSON.

A diagnostic of which ON-LSTM layer parses. The official code parses with
the model NT-ASGD averaged; short CPU runs never meet its trigger, and
`--average-from-epoch N` starts the averaging anyway. This reads a run's
latest backup (`<run>/backup`: the raw weights of SGD, and the running
average once averaging has begun), rebuilds the run's model
(`<run>/model.keras`) with each set of weights, and prints the
development-split sentence F1 (WSJ sample files wsj_0001-0099) of each
distance: the same trajectory, parsed with and without the averaging.

    python benchmarks/averaged_trees.py \\
        --run runs/pq/onlstm_medium_float32_avg13/seed_1 \\
        --treebank ../shared/data/wsj_sample/mrg
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS  # noqa: E402
from keras_ordered.datasets.treebank import load_treebank  # noqa: E402
from keras_ordered.parsing import evaluate_trees  # noqa: E402
from keras_ordered.parsing import model_trees  # noqa: E402
from keras_ordered.saving import load_model  # noqa: E402


def backup_weights(run):
    """The latest backup of `run`: (metadata, raw weights path, averages).

    The averages are NT-ASGD's arrays in the order of the model's trainable
    weights, or None when the run had not started averaging."""
    directory = os.path.join(run, "backup")
    with open(os.path.join(directory, "backup.json")) as f:
        meta = json.load(f)
    folder = os.path.join(directory, meta["folder"])
    arrays = np.load(os.path.join(folder, "state.npz"))
    averaging = [i for i, state in enumerate(meta["extra"])
                 if isinstance(state, dict) and state.get("averaging")]
    averages = None
    if averaging:
        prefix = f"extra{averaging[0]}_average_"
        names = sorted((k for k in arrays if k.startswith(prefix)),
                       key=lambda k: int(k[len(prefix):]))
        averages = [arrays[k] for k in names]
    return meta, os.path.join(folder, "model.weights.h5"), averages


def scores(model, records):
    return {name: round(evaluate_trees(records, trees)["sentence_f1"], 2)
            for name, trees in model_trees(records, model).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True,
                        help="a recipe's output folder, with model.keras and "
                        "backup/")
    parser.add_argument("--treebank", required=True,
                        help="the WSJ sample's .mrg folder")
    args = parser.parse_args(argv)
    records = load_treebank(args.treebank, fileids=WSJ_SAMPLE_SPLITS["dev"])
    meta, raw_path, averages = backup_weights(args.run)
    if averages is None:
        raise SystemExit(f"The backup of {args.run} holds no averaged "
                         "weights: the run never started NT-ASGD's averaging.")
    model = load_model(os.path.join(args.run, "model.keras"), compile=False)
    model.load_weights(raw_path)
    if len(averages) != len(model.trainable_weights):
        raise SystemExit(f"{len(averages)} averaged arrays for "
                         f"{len(model.trainable_weights)} trainable weights.")
    result = {"run": args.run, "epoch": meta["epoch"],
              "next_batch": meta["next_batch"],
              "dev_sentences": len(records), "raw": scores(model, records)}
    for weight, average in zip(model.trainable_weights, averages):
        weight.assign(average)
    result["averaged"] = scores(model, records)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
