"""Seed studies: their records, their statistics and the rule for defaults.

A seed study (`benchmarks/parsing_quality.py --record`,
`benchmarks/learning_parity.py --record`) keeps one `seed_N.json` per seed
in a record folder. The rule for defaults decides between two ways of
training (a precision, a kernel, a backend) on such studies: the
candidate passes when, over enough seeds of each, its mean development
sentence F1 (default distance) is at most `RULE_F1_POINTS` below the
reference's, no larger share of its seeds falls short of right-branching
+ `RIGHT_BRANCHING_MARGIN`, and its mean validation perplexity is at most
`RULE_PERPLEXITY` above the reference's. Plain Python and NumPy.
"""

import json
import os

import numpy as np

from keras_ordered.parsing.baselines import RIGHT_BRANCHING_MARGIN

# The candidate's mean development sentence F1 at most this far below the
# reference's ...
RULE_F1_POINTS = 1.5
# ... its mean validation perplexity at most this much above (the
# learning-parity criterion) ...
RULE_PERPLEXITY = 0.03
# ... over at least this many seeds of each.
RULE_SEEDS = {"prpn": 10, "onlstm": 5, "lstm": 5}


def stats(values):
    """Mean, sample standard deviation (0 for one value), min and max.

    Example:

    >>> stats([1.0, 2.0, 3.0])
    {'mean': 2.0, 'std': 1.0, 'min': 1.0, 'max': 3.0}
    """
    values = np.asarray(values, dtype="float64")
    return {
        "mean": float(values.mean()),
        "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
        "min": float(values.min()),
        "max": float(values.max()),
    }


def read_records(folder):
    """Every `seed_N.json` of a record folder, in seed order."""
    names = [n for n in os.listdir(folder)
             if n.startswith("seed_") and n.endswith(".json")]
    records = []
    for name in sorted(names, key=lambda n: int(n[5:-5])):
        with open(os.path.join(folder, name)) as f:
            records.append(json.load(f))
    return records


def rule_verdict(family, candidate, reference, right_branching):
    """The rule for defaults on two sets of seeds.

    Args:
        family: `"prpn"`, `"onlstm"` or `"lstm"` (the number of seeds
            needed, `RULE_SEEDS`).
        candidate: one `(dev sentence F1, validation perplexity)` pair
            per seed of the candidate.
        reference: the same for the reference (float32, the official
            arithmetic).
        right_branching: right-branching's development sentence F1.

    Returns:
        A dict: the `candidate`'s and the `reference`'s figures, the
        `checks`, `seeds_needed` and the `verdict` (`"passes"`,
        `"fails: ..."` naming the failed checks, or `"undecided: ..."`).
    """
    def figures(seeds):
        f1s = [f1 for f1, _ in seeds]
        return {
            "seeds": len(seeds),
            "dev_sentence_f1": float(np.mean(f1s)),
            "short_of_right_branching": int(sum(
                f < right_branching + RIGHT_BRANCHING_MARGIN for f in f1s)),
            "valid_perplexity": float(np.mean([p for _, p in seeds])),
        }

    candidate, base = figures(candidate), figures(reference)
    needed = RULE_SEEDS[family]
    checks = {
        "enough_seeds": min(candidate["seeds"], base["seeds"]) >= needed,
        "sentence_f1": candidate["dev_sentence_f1"]
        >= base["dev_sentence_f1"] - RULE_F1_POINTS,
        "collapses": candidate["short_of_right_branching"] / candidate["seeds"]
        <= base["short_of_right_branching"] / base["seeds"],
        "perplexity": candidate["valid_perplexity"]
        <= base["valid_perplexity"] * (1 + RULE_PERPLEXITY),
    }
    if not checks["enough_seeds"]:
        verdict = f"undecided: fewer than {needed} seeds"
    elif all(checks.values()):
        verdict = "passes"
    else:
        verdict = "fails: " + ", ".join(k for k, ok in checks.items() if not ok)
    return {"candidate": candidate, "reference": base, "checks": checks,
            "seeds_needed": needed, "verdict": verdict}


def rule_lines(rule, reference_folder):
    """The verdict of `rule_verdict` and its figures as two printable
    lines."""
    c, b = rule["candidate"], rule["reference"]
    return [
        f"Rule for defaults against {reference_folder}: {rule['verdict']}",
        f"  mean dev sentence F1 {c['dev_sentence_f1']:.1f} ({c['seeds']} "
        f"seeds) against {b['dev_sentence_f1']:.1f} ({b['seeds']} seeds); "
        f"short of right-branching + {RIGHT_BRANCHING_MARGIN:.0f}: "
        f"{c['short_of_right_branching']} of {c['seeds']} against "
        f"{b['short_of_right_branching']} of {b['seeds']}; valid perplexity "
        f"{c['valid_perplexity']:.2f} against {b['valid_perplexity']:.2f} "
        f"({100 * (c['valid_perplexity'] / b['valid_perplexity'] - 1):+.1f} %)",
    ]
