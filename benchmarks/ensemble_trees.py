"""Tree averaging over members: ensembles' sentence F1 on the WSJ sample.

For each named ensemble (`--ensemble NAME=MEMBER+MEMBER+...`, members as
`keras-ordered parse --model` takes them: a shipped name or `.keras`
file, optionally `:DISTANCE` or `:all`), on the development split
(wsj_0001-0099, where an ensemble may be chosen) and the test split
(wsj_0100-0149, reported only): each member's sentence F1 and corpus F1,
and the averaged trees' under both decoders and both tie rules
(`keras_ordered.parsing.ensemble`), beside right-branching. Each model
reads each split once, for all its distances.

    python benchmarks/ensemble_trees.py --treebank ../shared/data/wsj_sample/mrg \
        --ensemble shipped=prpn_ptb_quick+prpn_ptb_small+onlstm_ptb_small \
        --record benchmarks/records/ensemble_trees/shipped.json

The record (JSON) holds the command, the CPU, and per ensemble and split
every figure; `--markdown` prints the table of benchmarks/README.md.

`--fit-weights NAME` also scores `NAME_fitted`: the same members with
weights fitted on the development split (`keras_ordered.parsing.
fit_weights`, coordinate ascent on sentence F1), reported on both splits.

`--smoothing NAME=S` smooths the votes of ensemble NAME
(`keras_ordered.parsing.TreeEnsemble(smoothing=S)`: each member votes for
a span with the share of its noisy trees that hold it); its fitted
weights are fitted on the smoothed votes.

`--ship NAME` writes the shipped ensemble `saved_models/NAME/`
(`ensemble.json` and its `README.md` card): of the run's ensembles, the
one with the best development-split sentence F1 (right decoder, right
ties, the package's defaults); the test split plays no part in the
choice. Its members must be shipped models.
"""

import argparse
import json
import os
import sys
import time

from keras_ordered._cpu import describe_cpu
from keras_ordered.datasets.treebank import load_treebank_split
from keras_ordered.parsing import baseline_predictor
from keras_ordered.parsing import TreeEnsemble
from keras_ordered.parsing import evaluate_trees
from keras_ordered.parsing import fit_weights
from keras_ordered.saving import load_ensemble
from keras_ordered.training.crash_safety import write_json_atomically

SPLITS = ("dev", "test")
COMBINATIONS = tuple((decoder, tie) for decoder in ("right", "left")
                     for tie in ("right", "left"))


def _figures(scores):
    return {"sentence_f1": round(scores["sentence_f1"], 2),
            "corpus_f1": round(scores["corpus_f1"], 2)}


def score_ensemble(ensemble, records, distances=None):
    """Figures of the members and of the averaged trees on `records`
    (`distances`: the members' of `records`, None to read them)."""
    result = {"members": {}, "ensemble": {}}
    for decoder, tie, member_trees, averaged in ensemble.rows(
            records, ("right", "left"), ("right", "left"),
            distances=distances):
        if decoder == "right" and tie == "right":
            for member, trees in zip(ensemble.members, member_trees):
                result["members"][member.name] = _figures(
                    evaluate_trees(records, trees))
        result["ensemble"][f"{decoder} decoder, {tie} ties"] = _figures(
            evaluate_trees(records, averaged))
    best = max(result["members"].values(), key=lambda f: f["sentence_f1"])
    result["best_member_sentence_f1"] = best["sentence_f1"]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", required=True, metavar="DIR")
    parser.add_argument("--ensemble", action="append", required=True,
                        metavar="NAME=MEMBER+MEMBER",
                        help="a named ensemble (repeat for several)")
    parser.add_argument("--weights", action="append", default=[],
                        metavar="NAME=W,W",
                        help="weights of a named ensemble (default: 1 each)")
    parser.add_argument("--smoothing", action="append", default=[],
                        metavar="NAME=S",
                        help="smooth the votes of a named ensemble "
                        "(default: 0, hit counts)")
    parser.add_argument("--fit-weights", action="append", default=[],
                        metavar="NAME",
                        help="also score NAME_fitted: NAME with its weights "
                        "fitted on the development split "
                        "(keras_ordered.parsing.fit_weights)")
    parser.add_argument("--record", metavar="FILE",
                        help="write the figures to FILE (JSON)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the figures as a Markdown table")
    parser.add_argument("--ship", metavar="NAME",
                        help="write saved_models/NAME: the ensemble with "
                        "the best development-split F1")
    args = parser.parse_args(argv)
    names = [entry.partition("=")[0] for entry in args.ensemble]
    smoothing = {}
    for entry in args.smoothing:
        name, _, value = entry.partition("=")
        smoothing[name] = float(value)
    for option, named in (("--fit-weights", args.fit_weights),
                          ("--smoothing", smoothing)):
        for name in named:
            if name not in names:
                parser.error(f"{option} {name}: no --ensemble {name}=...; "
                             f"the ensembles are {', '.join(names)}.")
    weights = {}
    for entry in args.weights:
        name, _, values = entry.partition("=")
        weights[name] = [float(v) for v in values.split(",")]
    record = {
        "command": "python benchmarks/ensemble_trees.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        "cpu": describe_cpu(),
        "treebank": os.path.basename(os.path.normpath(args.treebank)),
        "splits": {},
        "ensembles": {},
    }
    records = {split: load_treebank_split(args.treebank, split)[0]
               for split in SPLITS}
    for split, split_records in records.items():
        record["splits"][split] = {
            "sentences": len(split_records),
            "right_branching": _figures(evaluate_trees(
                split_records,
                baseline_predictor("right-branching")(
                    [list(r.words) for r in split_records]))),
        }
    for entry in args.ensemble:
        name, _, members = entry.partition("=")
        start = time.time()
        ensemble = load_ensemble(members.split("+"),
                                 weights=weights.get(name),
                                 smoothing=smoothing.get(name))
        # Each model reads each split once, for every figure of this name.
        distances = {split: ensemble.member_distances(split_records)
                     for split, split_records in records.items()}
        record["ensembles"][name] = {
            "members": [m.name for m in ensemble.members],
            "weights": ensemble.weights,
            **_smoothing(ensemble),
            "splits": {split: score_ensemble(ensemble, split_records,
                                             distances[split])
                       for split, split_records in records.items()},
        }
        print(f"{name}: {len(ensemble.members)} members, "
              f"{time.time() - start:.0f} s", file=sys.stderr)
        if name in args.fit_weights:
            fitted = TreeEnsemble(
                ensemble.members, smoothing=ensemble.smoothing,
                samples=ensemble.samples, seed=ensemble.seed,
                weights=fit_weights(records["dev"], ensemble.member_votes(
                    records["dev"], distances=distances["dev"]),
                    start=ensemble.weights)[0])
            record["ensembles"][f"{name}_fitted"] = {
                "members": [m.name for m in fitted.members],
                "weights": fitted.weights,
                **_smoothing(fitted),
                "fitted_on": "dev",
                "splits": {split: score_ensemble(fitted, split_records,
                                                 distances[split])
                           for split, split_records in records.items()},
            }
            print(f"{name}_fitted: weights {fitted.weights}, "
                  f"{time.time() - start:.0f} s", file=sys.stderr)
    if args.record:
        write_json_atomically(args.record, record, indent=1)
    if args.ship:
        specs = {entry.partition("=")[0]: entry.partition("=")[2].split("+")
                 for entry in args.ensemble}
        specs.update({f"{name}_fitted": specs[name]
                      for name in args.fit_weights if name in specs})
        ship(record, args.ship, specs=specs, record_path=args.record)
    if args.markdown:
        print(markdown(record))
    else:
        print(json.dumps(record, indent=1))
    return 0


DEFAULT = "right decoder, right ties"


def _smoothing(ensemble):
    """The record's (and card's) `smoothing` entry: none for hit counts."""
    return {"smoothing": ensemble.smoothing} if ensemble.smoothing else {}


def ship(record, name, specs, record_path=None):
    """Writes `saved_models/<name>/` for the run's best ensemble on the
    development split."""
    from keras_ordered import shipped

    dev = {key: entry["splits"]["dev"]["ensemble"][DEFAULT]["sentence_f1"]
           for key, entry in record["ensembles"].items()}
    chosen = max(dev, key=dev.get)
    entry = record["ensembles"][chosen]
    splits = {}
    for split in SPLITS:
        figures = entry["splits"][split]
        splits[split] = {
            "sentences": record["splits"][split]["sentences"],
            **figures["ensemble"][DEFAULT],
            "best_member_sentence_f1": figures["best_member_sentence_f1"],
            "right_branching_sentence_f1":
                record["splits"][split]["right_branching"]["sentence_f1"],
            "left_ties_sentence_f1":
                figures["ensemble"]["right decoder, left ties"]["sentence_f1"],
        }
    card = {
        "name": name,
        "kind": "ensemble",
        "class": "TreeEnsemble",
        "members": specs[chosen],
        "expanded_members": entry["members"],
        "weights": None if len(set(entry["weights"])) == 1 else entry["weights"],
        "decoder": "right",
        "tie": "right",
        **({"smoothing": entry["smoothing"]} if "smoothing" in entry else {}),
        "command": record["command"],
        "record": record_path,
        "cpu": record["cpu"],
        "selection": (
            f"the ensemble {chosen!r}, of the {len(dev)} of the command "
            f"({', '.join(f'{k}: {v:.2f}' for k, v in dev.items())}), with "
            "the best development-split sentence F1 (wsj_0001-0099); the "
            "test split played no part"),
        "parsing": {
            "treebank": "wsj_sample/mrg (dev wsj_0001-0099, test "
                        "wsj_0100-0149)",
            "protocol": "keras-ordered evaluate-parsing: every sentence, "
                        "punctuation removed, sentence-level F1 of "
                        "unlabeled brackets of length > 1 without the "
                        "whole-sentence span",
            "splits": splits,
        },
    }
    folder = os.path.join(shipped.saved_models_dir(), name)
    os.makedirs(folder, exist_ok=True)
    write_json_atomically(os.path.join(folder, shipped.ENSEMBLE_FILE), card,
                          indent=1)
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as f:
        f.write(ensemble_readme(card))


def ensemble_readme(card):
    """The card for people of a shipped ensemble, from its
    `ensemble.json`."""
    test, dev = card["parsing"]["splits"]["test"], card["parsing"]["splits"]["dev"]
    weights = card.get("weights")
    members = "\n".join(
        f"- `{m}`" + ("" if weights is None else f", weight {w:g}")
        for m, w in zip(card["expanded_members"],
                        weights or [1] * len(card["expanded_members"])))
    weighting = "weight 1 each" if weights is None else "weighted"
    if card.get("smoothing"):
        weighting += f", votes smoothed ({card['smoothing']:g})"
    return f"""# {card['name']}

A shipped ensemble: no model of its own, the averaged trees of shipped
models (`keras_ordered.parsing.ensemble`: for each sentence, the binary
tree whose spans carry the most member votes, by CKY; ties towards
right-branching). Generated by `benchmarks/ensemble_trees.py --ship`.

```bash
keras-ordered parse --model {card['name']} "The cat sat on the mat."
```

Members ({len(card['expanded_members'])}, {weighting}, the {card['decoder']} decoder):

{members}

Chosen as {card['selection']}.

Sentence F1 on the WSJ sample (right-branching beside it):

| split | sentences | ensemble | ensemble, left ties | best member | right-branching |
|---|---|---|---|---|---|
| dev | {dev['sentences']} | {dev['sentence_f1']:.2f} | {dev['left_ties_sentence_f1']:.2f} | {dev['best_member_sentence_f1']:.2f} | {dev['right_branching_sentence_f1']:.2f} |
| test | {test['sentences']} | **{test['sentence_f1']:.2f}** | {test['left_ties_sentence_f1']:.2f} | {test['best_member_sentence_f1']:.2f} | {test['right_branching_sentence_f1']:.2f} |

Command ({card['cpu']}; record `{card['record']}`):

```bash
{card['command']}
```

{_read_the_sample(card["expanded_members"])}
"""


def _read_the_sample(members):
    """What the card says about the members and the WSJ sample's text."""
    from keras_ordered import shipped
    from keras_ordered.parsing.ensemble import split_member

    models = {split_member(member)[0] for member in members}
    students = sorted(m for m in models
                      if shipped.shipped_card(m)["class"] == "DistanceParser")
    if not students:
        return ("Every member has read the WSJ sample's sentences as "
                "language-modelling\ntext (they lie inside PTB's training "
                "text): see docs/results.md for what\nthat is worth.")
    return ("Every language model among the members has read the WSJ "
            "sample's sentences\nas language-modelling text (they lie "
            "inside PTB's training text); "
            + ", ".join(f"`{s}`" for s in students)
            + "\nlearnt from such models' trees of the PTB text without "
            "them: see\ndocs/results.md for what that is worth.")


def markdown(record):
    """The record as a table: one row per ensemble, dev and test F1 of the
    best member and of the ensemble (right decoder; both tie rules; the
    left decoder with right ties)."""
    lines = [
        "| ensemble | members | split | best member | ensemble, right ties "
        "| ensemble, left ties | left decoder | right-branching |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in record["ensembles"].items():
        for split in SPLITS:
            figures = entry["splits"][split]
            ens = figures["ensemble"]
            lines.append(
                f"| {name} | {len(entry['members'])} | {split} | "
                f"{figures['best_member_sentence_f1']:.2f} | "
                f"**{ens['right decoder, right ties']['sentence_f1']:.2f}** | "
                f"{ens['right decoder, left ties']['sentence_f1']:.2f} | "
                f"{ens['left decoder, right ties']['sentence_f1']:.2f} | "
                f"{record['splits'][split]['right_branching']['sentence_f1']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
