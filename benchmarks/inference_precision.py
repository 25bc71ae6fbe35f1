"""Do a trained model's trees depend on the precision it is run in? JSON.

A diagnostic of the precision studies: ON-LSTM `small` runs trained under
mixed_bfloat16 parse better than runs trained in float32. This separates
the two places precision acts: each saved model is rebuilt under each
dtype policy (its own weights, cast as the policy does) and parses the
development split of the WSJ sample; the sentence F1 of every distance is
printed per model and policy. If a model's F1 hardly moves between the
policies, its trees were made by training, not by the arithmetic of the
forward pass.

    python benchmarks/inference_precision.py \\
        --model runs/pq/onlstm_small_mixed_bfloat16/seed_1/model.keras \\
        runs/pq/onlstm_small_float32/seed_1/model.keras \\
        --treebank ../shared/data/wsj_sample/mrg
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS  # noqa: E402
from keras_ordered.datasets.treebank import load_treebank  # noqa: E402
from keras_ordered.parsing import distances_to_tree  # noqa: E402
from keras_ordered.parsing import evaluate_trees  # noqa: E402
from keras_ordered.saving import load_model  # noqa: E402

POLICIES = ("float32", "mixed_bfloat16")


def rebuilt(path, policy):
    """The model saved at `path`, built again under dtype policy `policy`."""
    keras.mixed_precision.set_global_policy(policy)
    saved = load_model(path, compile=False)
    model = saved.__class__.from_config(saved.get_config())
    model.set_weights(saved.get_weights())
    return model


def sentence_f1(model, records):
    """Development-split sentence F1 of each of the model's distances."""
    words = [list(r.words) for r in records]
    distances = model.sentence_distances(words, batch_size=64)
    scores = {}
    for name in model.distance_names:
        trees = [distances_to_tree(w, d)
                 for w, d in zip(words, distances[name])]
        scores[name] = evaluate_trees(records, trees)["sentence_f1"]
    return scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", nargs="+", required=True,
                        help="Saved models (.keras) that yield distances.")
    parser.add_argument("--treebank", required=True,
                        help="Folder of the WSJ sample's .mrg files.")
    parser.add_argument("--split", default="dev", choices=WSJ_SAMPLE_SPLITS)
    args = parser.parse_args(argv)
    records = load_treebank(args.treebank,
                            fileids=WSJ_SAMPLE_SPLITS[args.split])
    results = []
    try:
        for path in args.model:
            for policy in POLICIES:
                scores = sentence_f1(rebuilt(path, policy), records)
                results.append({"model": path, "policy": policy,
                                "sentence_f1": scores})
    finally:
        keras.mixed_precision.set_global_policy("float32")
    print(json.dumps({"split": args.split, "sentences": len(records),
                      "results": results}, indent=1))


if __name__ == "__main__":
    main()
