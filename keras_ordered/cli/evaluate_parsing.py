"""`keras-ordered evaluate-parsing`: induced trees against gold trees.

Scores a saved model's distances and any number of baselines on the same
gold Penn Treebank sentences, and prints one comparison table (a row per
distance of the model, then a row per baseline) or, with `--json`, one
JSON object:

```
{"treebank": "/data/wsj_sample/mrg",
 "model": "model.keras", "default_distance": "layer2/forget",
 "distances": {"layer1/forget": {"sentences": 3253, "sentence_f1": ...}, ...},
 "baselines": {"right-branching": {"sentences": 3253, ...}}}
```

`model`, `default_distance` and `distances` are there with `--model`,
`baselines` with `--baseline`; each row holds the metrics of
`keras_ordered.parsing.evaluate_parsing` (and `seed` for `random`).

Example:

```
keras-ordered evaluate-parsing --treebank ../shared/data/wsj_sample/mrg \\
    --model model.keras --baseline right-branching random
```
"""

import json

from keras_ordered.cli import _common
from keras_ordered.cli._common import CommandError
from keras_ordered.cli._common import UsageError

NAME = "evaluate-parsing"

METRIC_KEYS = (
    "sentences",
    "sentence_f1",
    "sentence_precision",
    "sentence_recall",
    "corpus_f1",
    "corpus_precision",
    "corpus_recall",
    "wsj10_sentences",
    "wsj10_sentence_f1",
    "wsj10_corpus_f1",
    "label_recall",
    "depth",
    "gold_depth",
)
"""The metrics of each row of the JSON object, in order."""


def add_parser(subparsers):
    """Adds the `evaluate-parsing` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="Score induced trees against gold Penn Treebank trees.",
        description="Unlabeled F1 (sentence-level and corpus-level), WSJ10, "
        "per-label recall and tree depth of a model's trees and of "
        "baselines' trees against gold .mrg trees, in one table (a row per "
        "distance of the model and per baseline). Give --model, --baseline "
        "or both.",
    )
    parser.add_argument(
        "--treebank",
        metavar="DIR",
        help="Folder of .mrg files (default: "
        "$KERAS_ORDERED_DATA/wsj_sample/mrg).",
    )
    parser.add_argument(
        "--json", action="store_true", help="Print one JSON object."
    )
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="Evaluate only the first N sentences (quick checks).",
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help="A saved model that yields syntactic distances (.keras). "
        "Without --layer/--distance, every distance of the model is "
        "evaluated.",
    )
    parser.add_argument(
        "--baseline",
        action="extend",
        nargs="+",
        choices=_common.BASELINE_NAMES,
        metavar="NAME",
        help="Also score trivial trees: one or more of "
        f"{', '.join(_common.BASELINE_NAMES)} (the option may be repeated).",
    )
    parser.add_argument(
        "--shift",
        type=int,
        default=0,
        metavar="K",
        help="Score each word with the model's distance K positions later "
        "(a diagnostic: a PRPN run whose distances are aligned one word "
        "late parses better with --shift 1; default 0, the official "
        "reading).",
    )
    _common.add_model_arguments(parser)
    return parser


def _metrics_only(scores):
    return {key: scores[key] for key in METRIC_KEYS if key in scores}


def _row_name(baseline, seed):
    return f"{baseline} (seed {seed})" if baseline == "random" else baseline


def format_table(rows, header_lines):
    """The comparison table: one row per `(name, scores)`, gold depth last."""
    example = rows[0][1]
    labels = list(example["label_recall"])
    name_width = max(12, *(len(name) for name, _ in rows))
    columns = ["sent-F1", "corpus-F1", "WSJ10-F1", *labels, "depth"]
    widths = [max(7, len(c)) for c in columns]
    lines = list(header_lines)
    lines.append(
        "  ".join(
            [f"{'trees':<{name_width}}"]
            + [f"{c:>{w}}" for c, w in zip(columns, widths)]
        )
    )

    def number(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    for name, scores in rows:
        values = [
            number(scores["sentence_f1"]),
            number(scores["corpus_f1"]),
            number(scores["wsj10_sentence_f1"]),
            *(number(scores["label_recall"][label], 1) for label in labels),
            number(scores["depth"]),
        ]
        lines.append(
            "  ".join(
                [f"{name:<{name_width}}"]
                + [f"{v:>{w}}" for v, w in zip(values, widths)]
            )
        )
    blanks = ["" for _ in columns[:-1]]
    lines.append(
        "  ".join(
            [f"{'gold':<{name_width}}"]
            + [f"{v:>{w}}" for v, w in zip(blanks, widths)]
            + [f"{example['gold_depth']:>{widths[-1]}.2f}"]
        )
    )
    lines.append(
        "sent-F1: unlabeled F1 per sentence, averaged (no one-word or "
        "whole-sentence spans); corpus-F1: EVALB-style counts over the "
        "corpus (whole-sentence span kept); WSJ10: sentences of <= 10 "
        "words; label columns: recall of gold constituents; depth: mean "
        "tree depth."
    )
    return "\n".join(lines)


def run(args):
    """Runs `keras-ordered evaluate-parsing`; returns the exit status."""
    if not args.model and not args.baseline:
        raise UsageError("give --model PATH, --baseline NAME, or both.")
    if args.limit is not None and args.limit < 1:
        raise CommandError("--limit must be at least 1.")
    if args.shift and not args.model:
        raise CommandError("--shift needs --model.")
    if not args.model and (args.layer is not None or args.distance is not None):
        raise CommandError("--layer and --distance need --model.")
    _common.check_seed(args.seed)
    baselines = list(dict.fromkeys(args.baseline or ()))  # once each, in order

    from keras_ordered.datasets.treebank import resolve_treebank_dir

    directory = resolve_treebank_dir(args.treebank)
    model = None
    if args.model:  # fail on a bad model before reading the treebank
        model = _common.load_model(args.model, args)
        available = _common.model_distances(model)
        default = getattr(model, "default_distance", None)
        names = _common.select_distance_names(
            available, default, layer=args.layer, kind=args.distance
        )

    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import evaluate_model
    from keras_ordered.parsing.evaluate import evaluate_parsing

    records = load_treebank(directory)
    if args.limit is not None:
        records = records[: args.limit]

    result = {"treebank": directory}
    rows = []
    if model is not None:
        by_name = evaluate_model(
            records, model, names=names, batch_size=args.batch_size,
            shift=args.shift,
        )
        result["model"] = args.model
        result["shift"] = args.shift
        result["default_distance"] = default
        result["distances"] = {
            name: _metrics_only(scores) for name, scores in by_name.items()
        }
        rows.extend(by_name.items())
    if baselines:
        result["baselines"] = {}
        for baseline in baselines:
            scores = evaluate_parsing(
                records, baseline_predictor(baseline, seed=args.seed)
            )
            entry = _metrics_only(scores)
            if baseline == "random":
                entry = {"seed": args.seed, **entry}
            result["baselines"][baseline] = entry
            rows.append((_row_name(baseline, args.seed), scores))

    if args.json:
        print(json.dumps(result))
        return 0
    first = rows[0][1]
    header = [
        f"treebank: {directory} ({first['sentences']} sentences, "
        f"{first['wsj10_sentences']} of at most 10 words)"
    ]
    if model is not None:
        header.append(
            f"model: {args.model} (default distance: {default})"
            if default
            else f"model: {args.model}"
        )
        if args.shift:
            header.append(f"distances read {args.shift} position(s) later "
                          "(--shift)")
    print(format_table(rows, header))
    return 0
