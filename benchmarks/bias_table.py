"""The parser's bias over seeds: one row per study of `parsing_quality.py`
(its `--record` folder), the study's distance chosen on the development
split (the best mean sentence F1 under the published right decoder), and
its sentence F1, mean +- std over the seeds, on both splits under the right
and the left (mirror-image) decoder. Prints Markdown and, with --json,
one JSON object.

    python benchmarks/bias_table.py \
        benchmarks/records/prpn_quick_float32_decoders \
        benchmarks/records/onlstm_small_float32_epochs1_decoders \
        benchmarks/records/lstm_small_float32_epochs1
"""

import argparse
import glob
import json
import os

import numpy as np


def read_study(folder):
    """The seeds' records of one study folder, in seed order."""
    paths = sorted(glob.glob(os.path.join(folder, "seed_*.json")),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if not paths:
        raise SystemExit(f"bias_table.py: no seed_N.json in {folder}")
    return [json.load(open(path)) for path in paths]


def _values(records, split, name):
    return [r["splits"][split]["scores"][name]["sentence_f1"]
            for r in records if name in r["splits"][split]["scores"]]


def study_row(folder):
    """The row of one study: its chosen distance and the four figures."""
    records = read_study(folder)
    names = [name for name in records[0]["splits"]["dev"]["scores"]
             if "@" not in name
             and len(_values(records, "dev", name + "@left")) == len(records)]
    if not names:
        raise SystemExit(f"bias_table.py: {folder} has no left-decoder "
                         "scores (parse its seeds again with "
                         "parsing_quality.py)")
    chosen = max(names, key=lambda n: np.mean(_values(records, "dev", n)))
    row = {"study": os.path.basename(os.path.normpath(folder)),
           "family": records[0]["study"]["family"],
           "preset": records[0]["study"]["preset"],
           "seeds": len(records), "distance": chosen}
    for split in ("dev", "test"):
        for decoder, name in (("right", chosen), ("left", chosen + "@left")):
            values = np.array(_values(records, split, name))
            row[f"{split}_{decoder}"] = {
                "mean": float(values.mean()),
                "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0}
    return row


def markdown(rows):
    def cell(figure):
        return f"{figure['mean']:.1f} +- {figure['std']:.1f}"

    lines = ["| model (study) | seeds | distance (chosen on dev) | dev, right "
             "| dev, left | test, right | test, left |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row['family']} `{row['preset']}` ({row['study']}) | "
            f"{row['seeds']} | {row['distance']} | {cell(row['dev_right'])} "
            f"| {cell(row['dev_left'])} | {cell(row['test_right'])} | "
            f"{cell(row['test_left'])} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+",
                        help="parsing_quality.py --record folders")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [study_row(folder) for folder in args.folders]
    print(markdown(rows))
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
