"""Parsing quality over seeds: the distribution of a recipe's trees, as JSON.

Trains one model per seed through the recipe's own path
(`recipes/ptb_{family}.py`, in a subprocess, with `--seed`), then parses
two disjoint splits of the WSJ sample with each model:

- development: files wsj_0001-0099 (anything may be chosen on it: a
  checkpoint, a seed, a preset);
- test: files wsj_0100-0149 (reported, never used to choose).

Per seed it records validation perplexity (PTB valid) and, on each split,
sentence-level F1 (the papers' measure), corpus-level F1 (EVALB-style) and
WSJ10 sentence F1, for every distance of the model, plus the model's
default distance read one word later (`shift_distances(..., 1)`: a
collapsed PRPN run is often aligned one word late). Over the seeds: mean
+- std, min and max, the fraction of seeds whose sentence F1 beats
right-branching by at least 2 points, and the agreement between the seeds'
trees (self-F1: mean pairwise sentence-level F1). Baselines on the same
splits: right-branching, left-branching, balanced, and random (mean over
5 seeds).

A study resumes: a seed whose `parsing.json` exists is not trained or
parsed again, and a seed whose training was interrupted resumes from the
recipe's backup (the recipe's own resumption).

    python benchmarks/parsing_quality.py --family prpn --preset quick \
        --precision float32 --seeds 1 2 3 4 5 6 7 8 9 10 \
        --data ../shared/data/ptb --treebank ../shared/data/wsj_sample/mrg \
        --output runs/parsing_quality/prpn_quick_float32

With `--parse-eval DIR` each recipe also parses DIR's first sentences at
every epoch end (`history.csv` in the seed's folder) and the summary adds
F1 and validation perplexity per epoch over the seeds: when trees appear,
peak or collapse in a run, not only where it ends.
`--epoch-distances layer2/forget layer3/forget` puts those distances'
F1 beside it, epoch by epoch, with how many seeds each one leads.

`--summary-only` prints the summary of the seeds already finished
(`--markdown`: also as the tables of benchmarks/README.md). Extra
recipe options go after `--`, e.g. `-- --epochs 1 --steps-per-epoch 50`.

`--record DIR` keeps each finished seed's scores (no trees, no text) in
`DIR/seed_N.json`, a folder meant to be committed (the studies of
benchmarks/README.md use `benchmarks/records/<family>_<preset>_<precision>`):
a study spread over machines whose `--output` folders are lost counts a
recorded seed as finished, is not trained again, and its summary covers
every recorded seed. Self-F1 needs the trees, so it covers only the seeds
whose `parsing.json` is in `--output` (the summary names them). A record
written with other study options (family, preset, precision, recipe
options) is an error, never mixed in.
"""

import argparse
import functools
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS
from keras_ordered.datasets.treebank import load_treebank
from keras_ordered.parsing import RIGHT_BRANCHING_MARGIN
from keras_ordered.parsing import baseline_predictor
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import evaluate_parsing
from keras_ordered.parsing import evaluate_trees
from keras_ordered.parsing import self_f1
from keras_ordered.parsing import shift_distances
from keras_ordered.parsing import tree_to_spans
from keras_ordered.parsing.studies import read_records
from keras_ordered.parsing.studies import rule_lines
from keras_ordered.parsing.studies import rule_verdict
from keras_ordered.parsing.studies import stats
from keras_ordered.saving import load_model
from keras_ordered.training.callbacks import read_epoch_history
from keras_ordered.training.crash_safety import write_json_atomically

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPLITS = WSJ_SAMPLE_SPLITS
MARGIN = RIGHT_BRANCHING_MARGIN  # F1 points above right-branching: parsing
MEASURES = ("sentence_f1", "corpus_f1", "wsj10_sentence_f1")
# How a seed's `parsing.json` was made; one made another way is parsed
# again: treebank words looked up exactly, every distance under the right
# (published) and the left (mirror) decoder.
PARSING = "exact words; right and left decoders"


def _seed_dir(output, seed):
    return os.path.join(output, f"seed_{seed}")


def _end_with_parent(parent):
    """In the recipe's process: end it when the study (`parent`) dies (Linux).

    A study killed with SIGKILL would otherwise leave its recipe training
    on, and the next run of the study would start a second one writing
    the same backup. The recipe's files are written whole, so the next run
    resumes from its last backup.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # it died before prctl
            os._exit(1)


def train_seed(args, seed, extra):
    """Runs (or resumes) the recipe for one seed; returns its results dict."""
    out = _seed_dir(args.output, seed)
    results_path = os.path.join(out, "results.json")
    if os.path.exists(results_path):
        with open(results_path) as f:
            return json.load(f)
    os.makedirs(out, exist_ok=True)
    command = [
        sys.executable, os.path.join(ROOT, "recipes", f"ptb_{args.family}.py"),
        "--preset", args.preset, "--output", out, "--seed", str(seed),
        "--precision", args.precision, "--skip-test", "--verbose", "2",
    ]
    if args.data:
        command += ["--data", args.data]
    if args.parse_eval:
        # The recipe's per-epoch F1 reads the first sentences of this
        # folder: give it the development files only.
        command += ["--parse-eval", args.parse_eval]
    command += extra
    print(f"[seed {seed}] {' '.join(command)}", flush=True)
    started = time.time()
    for attempt in range(3):
        with open(os.path.join(out, "train.log"), "a") as log:
            code = subprocess.call(command, stdout=log,
                                   stderr=subprocess.STDOUT,
                                   preexec_fn=functools.partial(
                                       _end_with_parent, os.getpid()))
        if code >= 0:
            break
        # Killed by a signal (e.g. a segmentation fault inside
        # TensorFlow): the recipe resumes from its last backup.
        print(f"[seed {seed}] the recipe died of signal {-code}; resuming "
              "it from its backup", flush=True)
    if code != 0:
        raise SystemExit(
            f"The recipe failed for seed {seed} (exit {code}): see "
            f"{os.path.join(out, 'train.log')}. Run the same command again "
            "to resume."
        )
    print(f"[seed {seed}] trained in {time.time() - started:.0f} s",
          flush=True)
    with open(results_path) as f:
        return json.load(f)


def _spans(trees):
    return [sorted(tree_to_spans(t)) for t in trees]


def _study(args, extra):
    """The options a recorded seed must share with the study reading it."""
    return {"family": args.family, "preset": args.preset,
            "precision": args.precision, "recipe_options": list(extra)}


def _record_path(args, seed):
    return os.path.join(args.record, f"seed_{seed}.json")


def _commit():
    """The checkout's commit (the code that trained), or None."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_record(args, extra, entry):
    """`--record`: the seed's scores without trees, with the study options."""
    record = {key: entry[key] for key in entry if key != "splits"}
    record["study"] = _study(args, extra)
    record["commit"] = _commit()
    record["splits"] = {split: {"scores": block["scores"]}
                        for split, block in entry["splits"].items()}
    os.makedirs(args.record, exist_ok=True)
    write_json_atomically(_record_path(args, entry["seed"]), record, indent=1)


def read_record(args, extra, seed):
    """A recorded seed's entry (no trees), or None; refuses another study's."""
    if not args.record:
        return None
    path = _record_path(args, seed)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        record = json.load(f)
    if record.get("study") != _study(args, extra):
        raise SystemExit(
            f"{path} records another study ({record.get('study')}), not "
            f"this one ({_study(args, extra)}): give another --record "
            "folder.")
    return record


def _dev_f1(entry):
    """A seed's development-split sentence F1 with its default distance."""
    return entry["splits"]["dev"]["scores"][entry["default_distance"]][
        "sentence_f1"]


def epoch_curve(out):
    """Per epoch of a seed's run: validation perplexity and the F1s of the
    recipe's `--parse-eval` callback (`history.csv`), or None."""
    rows = read_epoch_history(os.path.join(out, "history.csv"))
    if not rows:
        return None
    return [{key: row[key] for key in row
             if key in ("epoch", "val_perplexity")
             or key.startswith("parse_f1/")} for row in rows]


def parse_seed(args, seed, records, results):
    """Parses both splits with one seed's model; returns its `parsing.json`."""
    out = _seed_dir(args.output, seed)
    path = os.path.join(out, "parsing.json")
    if os.path.exists(path):
        with open(path) as f:
            entry = json.load(f)
        trained = results.get("valid_perplexity")
        if entry.get("parsing") != PARSING:
            print(f"[seed {seed}] {path} was parsed another way "
                  f"({entry.get('parsing')!r}, now {PARSING!r}): parsing "
                  "again", flush=True)
        elif trained is None or trained == entry["valid_perplexity"]:
            curve = epoch_curve(out)
            if "epochs" not in entry and curve:
                entry["epochs"] = curve  # parsed before this existed
            return entry
        # The trees of an earlier model (the run was trained on since, or
        # its folder copied): parse again with the model of results.json.
        print(f"[seed {seed}] {path} holds the trees of another model "
              f"(validation perplexity {entry['valid_perplexity']:.2f}, "
              f"results.json {trained:.2f}): parsing again", flush=True)
    model = load_model(os.path.join(out, "model.keras"), compile=False)
    entry = {
        "parsing": PARSING,
        "seed": seed,
        "valid_perplexity": results["valid_perplexity"],
        "train_seconds": results.get("train_seconds"),
        "precision": results.get("precision"),
        "default_distance": model.default_distance,
        "splits": {},
    }
    curve = epoch_curve(out)
    if curve:
        entry["epochs"] = curve
    for split, split_records in records.items():
        words = [list(r.words) for r in split_records]
        # Treebank words are normalised: looked up exactly, as the
        # official evaluations do.
        distances = model.sentence_distances(words, batch_size=64,
                                             normalized=True)
        scores, trees = {}, None
        variants = {name: (distances[name], "right")
                    for name in model.distance_names}
        variants[f"{model.default_distance}@shift1"] = (shift_distances(
            distances[model.default_distance], 1), "right")
        # The mirror-image decoder (Dyer et al., 2019): how much of each
        # distance's F1 is the right decoder's bias.
        variants.update({f"{name}@left": (distances[name], "left")
                         for name in model.distance_names})
        for name, (values, decoder) in variants.items():
            predicted = [distances_to_tree(w, d, decoder=decoder)
                         for w, d in zip(words, values)]
            result = evaluate_trees(split_records, predicted)
            scores[name] = {key: result[key] for key in MEASURES}
            if name == model.default_distance:
                trees = predicted
        entry["splits"][split] = {"scores": scores, "spans": _spans(trees)}
    write_json_atomically(path, entry)
    return entry


def baselines(records):
    """Baseline F1 on each split (random: mean over 5 seeds)."""
    table = {}
    for split, split_records in records.items():
        table[split] = {}
        for name in ("right-branching", "left-branching", "balanced"):
            result = evaluate_parsing(split_records, baseline_predictor(name))
            table[split][name] = {key: result[key] for key in MEASURES}
        draws = [evaluate_parsing(split_records,
                                  baseline_predictor("random", seed=s))
                 for s in range(5)]
        table[split]["random"] = {
            key: float(np.mean([d[key] for d in draws])) for key in MEASURES
        }
    return table


def summarize(entries, records, table, epoch_distances=()):
    """Seed statistics of the finished seeds."""
    if not entries:
        return {"seeds": []}
    default = entries[0]["default_distance"]
    summary = {
        "seeds": [e["seed"] for e in entries],
        "default_distance": default,
        "valid_perplexity": stats([e["valid_perplexity"] for e in entries]),
        "baselines": table,
        "splits": {},
    }
    for split, split_records in records.items():
        right = table[split]["right-branching"]["sentence_f1"]
        # The distances every seed has (a record of an older study may
        # lack the left decoder's).
        names = [n for n in entries[0]["splits"][split]["scores"]
                 if all(n in e["splits"][split]["scores"] for e in entries)]
        block = {"distances": {}}
        for name in names:
            block["distances"][name] = {
                key: stats([e["splits"][split]["scores"][name][key]
                            for e in entries])
                for key in MEASURES
            }
        f1s = [e["splits"][split]["scores"][default]["sentence_f1"]
               for e in entries]
        block["beats_right_branching"] = {
            "margin": MARGIN,
            "seeds": int(sum(f >= right + MARGIN for f in f1s)),
            "of": len(f1s),
        }
        lengths = [len(r.words) for r in split_records]
        with_trees = [e for e in entries if "spans" in e["splits"][split]]
        runs = [[set(map(tuple, spans))
                 for spans in e["splits"][split]["spans"]] for e in with_trees]
        agreement = self_f1(runs, lengths)
        block["self_f1"] = None if agreement is None else 100.0 * agreement
        block["self_f1_seeds"] = [e["seed"] for e in with_trees]
        summary["splits"][split] = block
    summary["per_epoch"] = per_epoch(entries, default, epoch_distances)
    return summary


def parse_eval_right_branching(args, extra):
    """Right-branching's sentence F1 on the sentences the recipe's
    `--parse-eval` callback parses (those of `ParsingEvaluation`: the first
    N of two words or more), the reference of the per-epoch F1; or None."""
    if not args.parse_eval:
        return None
    count = 200  # the recipe's --parse-eval-sentences default
    for i, option in enumerate(extra):
        if option == "--parse-eval-sentences" and i + 1 < len(extra):
            count = int(extra[i + 1])
        elif option.startswith("--parse-eval-sentences="):
            count = int(option.split("=", 1)[1])
    sentences = [r for r in load_treebank(args.parse_eval)
                 if len(r.words) > 1][:count]
    result = evaluate_parsing(sentences, baseline_predictor("right-branching"))
    return {"sentences": len(sentences),
            "sentence_f1": result["sentence_f1"]}


def per_epoch(entries, default, others=()):
    """Over the seeds with a `history.csv`: per epoch, validation
    perplexity and the `--parse-eval` F1 of the default distance (mean
    +- std, min-max), or None when no seed has the F1s.

    With `others` (more distance names, `--epoch-distances`) each row also
    has every named distance's F1 (`parse_f1_by_distance`) and, over the
    seeds that have them all, how many seeds each one leads (`best`)."""
    key = f"parse_f1/{default}"
    curves = [e for e in entries
              if e.get("epochs") and any(key in row for row in e["epochs"])]
    if not curves:
        return None
    names = [default] + [name for name in others if name != default]
    epochs = sorted({row["epoch"] for e in curves for row in e["epochs"]})
    table = []
    for epoch in epochs:
        rows = [row for e in curves for row in e["epochs"]
                if row["epoch"] == epoch]
        f1s = [row[key] for row in rows if row.get(key) is not None]
        ppls = [row["val_perplexity"] for row in rows
                if row.get("val_perplexity") is not None]
        row_stats = {"epoch": epoch + 1, "seeds": len(f1s),
                     "parse_f1": stats(f1s) if f1s else None,
                     "val_perplexity": stats(ppls) if ppls else None}
        if len(names) > 1:
            by_name = {}
            for name in names:
                values = [row[f"parse_f1/{name}"] for row in rows
                          if row.get(f"parse_f1/{name}") is not None]
                by_name[name] = stats(values) if values else None
            complete = [row for row in rows if all(
                row.get(f"parse_f1/{name}") is not None for name in names)]
            leaders = [max(names, key=lambda n: row[f"parse_f1/{n}"])
                       for row in complete]
            row_stats["parse_f1_by_distance"] = by_name
            row_stats["best"] = {name: leaders.count(name) for name in names}
        table.append(row_stats)
    return {"distance": default, "distances": names,
            "seeds": [e["seed"] for e in curves], "epochs": table}


def best_on_dev(args, entries):
    """The seed whose default distance parses the development split best.

    The multi-seed recipe: train a few seeds, keep this one (chosen on
    the development split; the test split stays for reporting).
    """
    if not entries:
        return None
    best = max(entries, key=_dev_f1)
    model = os.path.join(_seed_dir(args.output, best["seed"]), "model.keras")
    return {
        "seed": best["seed"],
        "dev_sentence_f1": _dev_f1(best),
        "model": model if os.path.exists(model) else None,
    }


def rule_for_defaults(family, entries, reference, table):
    """The rule for defaults: these seeds (the candidate) against the
    reference study's records (float32 with the official arithmetic); see
    `rule_verdict`."""
    def pairs(seeds):
        return [(_dev_f1(e), e["valid_perplexity"]) for e in seeds]

    return rule_verdict(family, pairs(entries), pairs(reference),
                        table["dev"]["right-branching"]["sentence_f1"])


def print_summary(summary, entries):
    default = summary.get("default_distance")
    if not entries:
        print("No finished seed yet.")
        return
    header = (f"{'seed':>6} {'valid ppl':>9}  " + "  ".join(
        f"{split} sent / corpus / WSJ10 / @shift1" for split in SPLITS))
    print(header)
    for e in entries:
        cells = []
        for split in SPLITS:
            scores = e["splits"][split]["scores"]
            main = scores[default]
            cells.append(
                f"{main['sentence_f1']:5.1f} / {main['corpus_f1']:5.1f} / "
                f"{main['wsj10_sentence_f1']:5.1f} / "
                f"{scores[default + '@shift1']['sentence_f1']:5.1f}")
        print(f"{e['seed']:>6} {e['valid_perplexity']:9.2f}  "
              + "  ".join(cells))
    ppl = summary["valid_perplexity"]
    print(f"valid perplexity {ppl['mean']:.2f} +- {ppl['std']:.2f} "
          f"({ppl['min']:.2f}-{ppl['max']:.2f})")
    for split in SPLITS:
        block = summary["splits"][split]
        st = block["distances"][default]
        beats = block["beats_right_branching"]
        rb = summary["baselines"][split]["right-branching"]
        rnd = summary["baselines"][split]["random"]
        print(f"{split}: " + ", ".join(
            f"{key} {st[key]['mean']:.1f} +- {st[key]['std']:.1f} "
            f"({st[key]['min']:.1f}-{st[key]['max']:.1f})"
            for key in MEASURES))
        print(f"  right-branching {rb['sentence_f1']:.1f} / "
              f"{rb['corpus_f1']:.1f} / {rb['wsj10_sentence_f1']:.1f}; "
              f"random {rnd['sentence_f1']:.1f} / {rnd['corpus_f1']:.1f} / "
              f"{rnd['wsj10_sentence_f1']:.1f}; seeds beating "
              f"right-branching by {beats['margin']:.0f}+ points: "
              f"{beats['seeds']} of {beats['of']}; self-F1 "
              + _self_f1_text(block, len(entries)))
    for line in _per_epoch_lines(summary.get("per_epoch")):
        print(line)


def _stats_text(st, digits=1):
    return (f"{st['mean']:.{digits}f} +- {st['std']:.{digits}f} "
            f"({st['min']:.{digits}f}-{st['max']:.{digits}f})")


def _per_epoch_lines(curve, markdown=False):
    """The per-epoch table (plain lines, or Markdown rows)."""
    if not curve:
        return []
    names = curve.get("distances", [curve["distance"]])
    reference = curve.get("right_branching")
    title = (f"F1 per epoch while training (the recipe's --parse-eval "
             f"sentences, {', '.join(names)}), seeds "
             + ", ".join(map(str, curve["seeds"])))
    if reference:
        title += (f"; right-branching {reference['sentence_f1']:.1f} on "
                  f"those {reference['sentences']} sentences")
    lines = ["", title + ":"] if markdown else [title + ":"]
    several = len(names) > 1
    if markdown and several:
        lines += ["", "| epoch | seeds | valid ppl | "
                  + " | ".join(f"{name} sentence F1" for name in names)
                  + " | seeds each leads |",
                  "|---" * (len(names) + 4) + "|"]
    elif markdown:
        lines += ["", "| epoch | seeds | valid ppl | sentence F1 |",
                  "|---|---|---|---|"]
    for row in curve["epochs"]:
        ppl = (_stats_text(row["val_perplexity"], 2)
               if row["val_perplexity"] else "n/a")
        if several:
            f1s = [_stats_text(row["parse_f1_by_distance"][name])
                   if row["parse_f1_by_distance"].get(name) else "n/a"
                   for name in names]
            leads = ", ".join(f"{name} {count}"
                              for name, count in row["best"].items())
        else:
            f1s = [_stats_text(row["parse_f1"]) if row["parse_f1"]
                   else "n/a"]
        if markdown:
            cells = " | ".join(f1s) + (f" | {leads}" if several else "")
            lines.append(f"| {row['epoch']} | {row['seeds']} | {ppl} | "
                         f"{cells} |")
        elif several:
            lines.append(f"  epoch {row['epoch']}: valid ppl {ppl}; "
                         + "; ".join(f"{name} {f1}"
                                     for name, f1 in zip(names, f1s))
                         + f"; leads: {leads} ({row['seeds']} seeds)")
        else:
            lines.append(f"  epoch {row['epoch']}: valid ppl {ppl}; "
                         f"sentence F1 {f1s[0]} ({row['seeds']} seeds)")
    return lines


def _self_f1_text(block, num_entries):
    if block["self_f1"] is None:
        return "n/a (fewer than 2 seeds with their trees in --output)"
    text = f"{block['self_f1']:.1f}"
    if len(block["self_f1_seeds"]) < num_entries:
        text += " (seeds " + ", ".join(map(str, block["self_f1_seeds"])) + \
            ", whose trees are in --output)"
    return text


def markdown(summary, entries):
    """The per-seed table and the summary rows, as Markdown."""
    default = summary["default_distance"]
    lines = [
        "| seed | valid ppl | dev sentence F1 | dev corpus F1 | dev WSJ10 | "
        "test sentence F1 | test corpus F1 | test WSJ10 | test F1, read "
        "one word later |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        dev = e["splits"]["dev"]["scores"][default]
        test = e["splits"]["test"]["scores"][default]
        late = e["splits"]["test"]["scores"][default + "@shift1"]
        lines.append(
            f"| {e['seed']} | {e['valid_perplexity']:.2f} | "
            f"{dev['sentence_f1']:.1f} | {dev['corpus_f1']:.1f} | "
            f"{dev['wsj10_sentence_f1']:.1f} | {test['sentence_f1']:.1f} | "
            f"{test['corpus_f1']:.1f} | {test['wsj10_sentence_f1']:.1f} | "
            f"{late['sentence_f1']:.1f} |")

    def cell(split, key, name=default):
        return _stats_text(summary["splits"][split]["distances"][name][key])

    ppl = summary["valid_perplexity"]
    lines.append(
        f"| mean +- std (min-max) | {ppl['mean']:.2f} +- {ppl['std']:.2f} | "
        + " | ".join(cell("dev", key) for key in MEASURES) + " | "
        + " | ".join(cell("test", key) for key in MEASURES) + " | |")
    for name in ("right-branching", "random"):
        row = [summary["baselines"][split][name][key]
               for split in ("dev", "test") for key in MEASURES]
        lines.append(f"| {name} | | " + " | ".join(f"{v:.1f}" for v in row)
                     + " | |")
    lines += ["", "| distance | dev sentence F1 | test sentence F1 |",
              "|---|---|---|"]
    for name in summary["splits"]["dev"]["distances"]:
        marker = " (default)" if name == default else ""
        lines.append(f"| {name}{marker} | {cell('dev', 'sentence_f1', name)} "
                     f"| {cell('test', 'sentence_f1', name)} |")
    for split in ("dev", "test"):
        block = summary["splits"][split]
        beats = block["beats_right_branching"]
        lines.append(
            f"\n{split}: {beats['seeds']} of {beats['of']} seeds beat "
            f"right-branching by {beats['margin']:.0f}+ sentence-F1 points; "
            f"self-F1 {_self_f1_text(block, len(entries))}")
    lines += _per_epoch_lines(summary.get("per_epoch"), markdown=True)
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--family", choices=("prpn", "onlstm", "lstm"),
                        required=True)
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--precision", default="float32",
                        choices=("float32", "mixed_bfloat16", "auto"))
    parser.add_argument("--seeds", type=int, nargs="+",
                        default=[1, 2, 3, 4, 5])
    parser.add_argument("--data", default=None,
                        help="PTB folder (the recipe's --data)")
    parser.add_argument("--treebank", required=True,
                        help="WSJ sample .mrg folder (wsj_0001-0149)")
    parser.add_argument("--parse-eval", default=None, metavar="DIR",
                        help="pass the recipe this --parse-eval folder: "
                        "F1 per epoch (TensorBoard, the seed's history.csv, "
                        "and over the seeds in the summary); its first 200 "
                        "sentences are development sentences")
    parser.add_argument("--output", required=True)
    parser.add_argument("--record", default=None, metavar="DIR",
                        help="keep each finished seed's scores (no trees) in "
                        "DIR/seed_N.json, and count the seeds recorded there "
                        "as finished (for studies spread over machines)")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--rule-against", default=None, metavar="DIR",
                        help="apply the rule for defaults to these seeds "
                        "against the records in DIR (e.g. the float32 "
                        "study's benchmarks/records/<family>_<preset>_"
                        "float32)")
    parser.add_argument("--epoch-distances", nargs="+", default=(),
                        metavar="NAME",
                        help="with --parse-eval: the F1 per epoch of these "
                        "distances too (e.g. layer2/forget layer3/forget), "
                        "and how many seeds each leads at each epoch")
    parser.add_argument("--markdown", action="store_true",
                        help="also print the tables as Markdown")
    args = parser.parse_args(argv)


    records = {split: load_treebank(args.treebank, fileids=pattern)
               for split, pattern in SPLITS.items()}
    for split, split_records in records.items():
        if not split_records:
            raise SystemExit(f"No {split} trees ({SPLITS[split]}) in "
                             f"{args.treebank}.")
    os.makedirs(args.output, exist_ok=True)
    entries = []
    for seed in args.seeds:
        done = os.path.join(_seed_dir(args.output, seed), "parsing.json")
        recorded = read_record(args, extra, seed)
        if recorded is not None and not os.path.exists(done):
            print(f"[seed {seed}] recorded in {_record_path(args, seed)}",
                  flush=True)
            entries.append(recorded)
            continue
        if args.summary_only and not os.path.exists(done):
            continue
        results = train_seed(args, seed, extra)
        entry = parse_seed(args, seed, records, results)
        if args.record and recorded is None:
            # A record once written is kept (it names the commit that
            # trained the seed; this checkout may be another).
            write_record(args, extra, entry)
        entries.append(entry)
        print(f"[seed {seed}] done", flush=True)
    table = baselines(records)
    summary = summarize(entries, records, table, args.epoch_distances)
    summary.update({"family": args.family, "preset": args.preset,
                    "precision": args.precision,
                    "recipe_options": extra,
                    "splits_files": SPLITS})
    per_seed = [{key: e[key] for key in e if key != "splits"} | {
        "scores": {split: e["splits"][split]["scores"] for split in SPLITS}}
        for e in entries]
    summary["per_seed"] = per_seed
    if summary.get("per_epoch"):
        summary["per_epoch"]["right_branching"] = parse_eval_right_branching(
            args, extra)
    summary["best_on_dev"] = best_on_dev(args, entries)
    if args.rule_against and entries:
        summary["rule_for_defaults"] = rule_for_defaults(
            args.family, entries, read_records(args.rule_against), table)
    write_json_atomically(os.path.join(args.output, "summary.json"), summary,
                          indent=1)
    print_summary(summary, entries)
    if summary.get("rule_for_defaults"):
        for line in rule_lines(summary["rule_for_defaults"],
                                args.rule_against):
            print(line)
    if args.markdown and entries:
        print(markdown(summary, entries))
    best = summary["best_on_dev"]
    if best:
        print(f"best on the development split: seed {best['seed']} "
              f"(sentence F1 {best['dev_sentence_f1']:.1f}); model: "
              + (best["model"] or "not on this machine (a recorded seed)"))
    print(json.dumps({key: summary[key] for key in (
        "family", "preset", "precision", "seeds", "valid_perplexity")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
