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

Behind options (docs/evaluation.md, "Protocols"):

- `--protocol on-lstm prpn ...` (or `all`) adds, after the table, one
  block per named protocol (`keras_ordered.parsing.evaluate.PROTOCOLS`):
  the choices it implies, then F1 by length bucket (<= 10, <= 20, <= 40,
  all) of each row, of the baselines (all four without `--baseline`;
  random: mean +- std over `--random-seeds` seeds) and of the binarized
  gold trees (the best a binary tree can score); the JSON object gets a
  `protocols` key, last.
- `--split train|dev|test|wsj10` picks the standard sections of the full
  WSJ in the LDC layout (`--treebank .../parsed/mrg/wsj`, a folder of `SS/`
  section folders), or the dev / test files of the WSJ sample; `wsj10`
  keeps the sentences of at most 10 words (punctuation removed) from every
  section. The JSON object then has a `split` key after `treebank`.
- `--decoder left` parses the model's distances with the mirror image of
  the published parser (`keras_ordered.parsing.distances_to_tree`'s
  `decoder="left"`: the word of the largest distance closes the left part
  instead of opening the right one), and `--decoder both` with both: each
  distance gives the rows `NAME (right)` and `NAME (left)`, in the table,
  the JSON object (keys of `distances`), the summaries and the protocol
  blocks. The default, `right`, keeps the rows' names. The baselines are
  trees, not distances: `--decoder` does not change them. The JSON object
  has a `decoder` key after `shift` whenever `--model` is given.
- `--model a.keras b.keras c.keras` (several runs, e.g. seeds) prints a row
  per model and distance, then the mean +- std (n - 1) and the maximum over
  the models, and their self-F1 (agreement of their trees). The JSON object
  has then `models`, `shift`, `summary` and `self_f1` instead of `model`,
  `shift`, `default_distance` and `distances`.
"""

import json
import os

from keras_ordered_options import PROTOCOL_PUNCTUATION
from keras_ordered_options import SPLIT_NAMES
from keras_ordered_cli import _common
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError

NAME = "evaluate-parsing"

PROTOCOL_NAMES = tuple(PROTOCOL_PUNCTUATION)
"""`--protocol`'s names (`keras_ordered_options.PROTOCOL_PUNCTUATION`,
which `keras_ordered.parsing.evaluate.PROTOCOLS` reads too)."""

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
    _options.add_treebank(parser)
    parser.add_argument(
        "--json", action="store_true", help="Print one JSON object."
    )
    _options.add_limit(parser, "Evaluate only the first N sentences (quick "
                       "checks).")
    _options.add_model(
        parser, repeat="extend",
        help="A saved model that yields syntactic distances (.keras), or "
        "a shipped model's name. Without --layer/--distance, every "
        "distance of the model is evaluated. Several models (runs of "
        "different seeds): each is evaluated, then the mean +- std and max "
        "over them and the self-F1 of their trees are printed. With "
        "--ensemble (or MODEL:DISTANCE members, MODEL:all, a shipped "
        "ensemble), the members' trees are averaged and the ensemble is "
        "scored beside each member.",
    )
    parser.add_argument(
        "--ensemble",
        action="store_true",
        help="Average the --model members' trees (the tree with the most "
        "member votes for its spans) and score it beside each member: "
        "rows 'ensemble' per --decoder and --tie.",
    )
    _common.add_ensemble_arguments(parser, _common.TIE_RULES + ("both",))
    parser.add_argument(
        "--split",
        choices=SPLIT_NAMES,
        help="A split of the treebank: with the LDC layout "
        "(parsed/mrg/wsj/SS/wsj_SSNN.mrg) the standard sections 02-21 / 22 "
        "/ 23, or wsj10 (sentences of <= 10 words without punctuation, all "
        "sections); with the WSJ sample, dev / test (WSJ_SAMPLE_SPLITS) or "
        "wsj10.",
    )
    parser.add_argument(
        "--protocol",
        action="extend",
        nargs="+",
        choices=PROTOCOL_NAMES + ("all",),
        metavar="NAME",
        help="Also score under named protocols (a paper's choices: "
        f"{', '.join(PROTOCOL_NAMES)}, or all), by sentence length, with "
        "the baselines and the binarized-gold upper bound; prints the "
        "choices each implies.",
    )
    parser.add_argument(
        "--random-seeds",
        type=_common.positive_int,
        default=5,
        metavar="N",
        help="With --protocol: the random baseline is the mean over N "
        "seeds (--seed, --seed + 1, ...; default 5).",
    )
    _options.add_baseline(
        parser, repeat=True,
        help="Also score trivial trees: one or more of "
        f"{', '.join(_common.BASELINE_NAMES)} (the option may be repeated).",
    )
    _options.add_decoder(
        parser, more=("both",),
        help=_common.DECODER_HELP + " both: rows NAME (right) and NAME "
        "(left). Baselines do not change.",
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
    _options.add_distance_selection(parser)
    return parser


def _metrics_only(scores):
    return {key: scores[key] for key in METRIC_KEYS if key in scores}


def _row_name(baseline, seed):
    return f"{baseline} (seed {seed})" if baseline == "random" else baseline


DECODER_LINES = {
    "left": "decoder: left (the word of the largest distance closes the "
    "left part: the mirror image of the published parser)",
    "gap": "decoder: gap (a span splits between the two words of its "
    "largest gap)",
    "both": "decoders: right (the published parser: the word of the "
    "largest distance opens the right part) and left (its mirror image: "
    "that word closes the left part)",
}
"""The header line of the table for `--decoder left` and `both`."""

DECODER_NOTE = (
    " Baselines are trees, not distances: --decoder does not change them "
    "(random: random distances through the right decoder)."
)
"""Added to the table's note when `--decoder` is not the default."""


def format_table(rows, header_lines, note=""):
    """The comparison table: one row per `(name, scores)`, gold depth last;
    `note` is added to its last line."""
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
        "tree depth." + note
    )
    return "\n".join(lines)


def _number(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def _dedup(values):
    return list(dict.fromkeys(values or ()))


def _select_models(args):
    """Loads each `--model`; returns `[(path, model, default, names)]`."""
    models = []
    for path in _dedup(args.model):
        model = _common.load_model(path)
        available = _common.model_distances(model, path)
        default = getattr(model, "default_distance", None)
        names = _common.select_distance_names(
            available, default, layer=args.layer, kind=args.distance
        )
        models.append((path, model, default, names))
    return models


def _decoders(choice):
    """The decoders of `--decoder`: right and left for `both`, else the
    one named (None: each model's own)."""
    return list(_common.WORD_DECODERS) if choice == "both" else [choice]


def _row(name, decoder, choice):
    """A row's name: the distance, and its decoder unless `--decoder`
    is the default (each model's own) or `right`."""
    return name if choice in (None, "right") else f"{name} ({decoder})"


def _decoder_entry(args, models):
    """The JSON `decoder`: `--decoder`'s, else each model's own."""
    if args.decoder is not None:
        return args.decoder
    from keras_ordered.parsing.trees import model_decoder

    return "/".join(sorted({model_decoder(model) for _, model, _, _ in models}))


def _decoded_trees(records, model, names, args, progress):
    """`{row name: trees}` of each distance and decoder of `--decoder`,
    the model reading the sentences once."""
    from keras_ordered.parsing.evaluate import model_distances
    from keras_ordered.parsing.trees import distances_to_tree
    from keras_ordered.parsing.trees import model_decoder

    distances = model_distances(records, model, names=names,
                                batch_size=args.batch_size, shift=args.shift,
                                progress=progress)
    sentences = [list(r.words) for r in records]
    trees = {}
    for name in names:
        for decoder in _decoders(args.decoder):
            trees[_row(name, decoder, args.decoder)] = [
                distances_to_tree(words, d,
                                  decoder=model_decoder(model, decoder))
                for words, d in zip(sentences, distances[name])
            ]
    return trees


def _shared_distances(model_runs):
    """`[(key, [name of each run])]`: the rows every model has, or, when
    they share none (an ON-LSTM and a PRPN), each one's default distance
    under the key `"default"` (one per decoder: `"default (left)"`...)."""
    common = [n for n in model_runs[0]["names"]
              if all(n in r["names"] for r in model_runs)]
    if common:
        return [(n, [n] * len(model_runs)) for n in common]
    return [
        (key, [r["defaults"][key] for r in model_runs])
        for key in model_runs[0]["defaults"]
    ]


def _mean_std(entries, key="sentence_f1"):
    """Mean and std (n - 1) per bucket and metric of protocol scores."""
    from keras_ordered.parsing.evaluate import mean_std_max

    mean, std = {}, {}
    for bucket in entries[0]:
        mean[bucket], std[bucket] = {}, {}
        for metric in entries[0][bucket]:
            stats = mean_std_max([e[bucket][metric] for e in entries])
            mean[bucket][metric] = stats["mean"]
            std[bucket][metric] = stats["std"]
    return mean, std


def _protocol_blocks(args, protocols, records, punct_records, model_runs,
                     baselines):
    """Scores every protocol; returns `(json_dict, text_lines)`."""
    from keras_ordered.parsing import metrics
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import binarized_gold_trees
    from keras_ordered.parsing.evaluate import evaluate_protocol
    from keras_ordered.parsing.evaluate import get_protocol
    from keras_ordered.parsing.evaluate import mean_std_max

    bucket_lengths = [len(r.words) for r in records]
    buckets = [metrics.bucket_name(b) for b in metrics.LENGTH_BUCKETS]
    seeds = list(range(args.seed, args.seed + args.random_seeds))
    cache = {}

    def baseline_trees(name, seed, punctuation):
        key = (name, seed, punctuation)
        if key not in cache:
            recs = punct_records if punctuation else records
            cache[key] = baseline_predictor(name, seed=seed)(
                [list(r.words) for r in recs]
            )
        return cache[key]

    result, lines = {}, []
    for protocol_name in protocols:
        protocol = get_protocol(protocol_name)
        recs = punct_records if protocol.punctuation else records
        trees_key = "punct_trees" if protocol.punctuation else "trees"

        def score(trees):
            return evaluate_protocol(recs, trees, protocol,
                                     bucket_lengths=bucket_lengths)

        measure = f"{protocol.measure}_f1"
        entry = {
            "source": protocol.source,
            "choices": protocol.choices(),
            "measure": measure,
            "headline": metrics.bucket_name(protocol.headline),
        }
        rows = []  # (name, {bucket: value}, {bucket: std} or None)
        if model_runs:
            entry["models"] = []
            for index, run in enumerate(model_runs, 1):
                distances = {
                    name: score(run[trees_key][name]) for name in run["names"]
                }
                entry["models"].append(
                    {"model": run["path"], "distances": distances}
                )
                for name, scores in distances.items():
                    label = (f"[{index}] {name}" if len(model_runs) > 1
                             else name)
                    rows.append((label, scores, None))
            if len(model_runs) > 1:
                entry["summary"] = {}
                for name, per_run in _shared_distances(model_runs):
                    per_bucket = {
                        bucket: mean_std_max([
                            m["distances"][n][bucket][measure]
                            for m, n in zip(entry["models"], per_run)
                        ])
                        for bucket in buckets
                    }
                    entry["summary"][name] = per_bucket
                    rows.append((
                        f"mean {name}",
                        {b: {measure: v["mean"]} for b, v in per_bucket.items()},
                        {b: v["std"] for b, v in per_bucket.items()},
                    ))
        entry["baselines"] = {}
        for name in baselines:
            if name == "random":
                runs = [score(baseline_trees(name, seed, protocol.punctuation))
                        for seed in seeds]
                mean, std = _mean_std(runs)
                entry["baselines"][name] = {
                    "seeds": seeds, "mean": mean, "std": std,
                }
                rows.append((f"random ({len(seeds)} seeds)", mean,
                             {b: std[b][measure] for b in buckets}))
            else:
                scores = score(baseline_trees(name, 0, protocol.punctuation))
                entry["baselines"][name] = scores
                rows.append((name, scores, None))
        gold = score(binarized_gold_trees(recs))
        entry["binarized_gold"] = gold
        rows.append(("binarized gold", gold, None))
        result[protocol.name] = entry

        any_scores = gold
        lines.append("")
        lines.append(f"protocol {protocol.name}: {protocol.source}")
        lines.extend(f"  - {choice}" for choice in protocol.choices())
        lines.append(
            "  sentences: "
            + ", ".join(f"{b} {any_scores[b]['sentences']}" for b in buckets)
        )
        name_width = max(16, *(len(name) for name, _, _ in rows))
        cells = []
        for name, scores, std in rows:
            values = []
            for b in buckets:
                text = _number(scores[b][measure])
                if std is not None and std.get(b) is not None:
                    text += f"+-{std[b]:.2f}"
                values.append(text)
            cells.append((name, values))
        width = max(7, *(len(v) for _, values in cells for v in values))
        lines.append("  ".join([f"{'trees':<{name_width}}"]
                               + [f"{b:>{width}}" for b in buckets]))
        for name, values in cells:
            lines.append("  ".join([f"{name:<{name_width}}"]
                                   + [f"{v:>{width}}" for v in values]))
        lines.append(
            f"  {protocol.measure}-level F1 by length (words without "
            f"punctuation); the paper's figure is column "
            f"{metrics.bucket_name(protocol.headline)}; binarized gold: "
            "the best a binary tree can score."
        )
    return result, lines


def run(args):
    """Runs `keras-ordered evaluate-parsing`; returns the exit status."""
    protocols = _dedup(args.protocol)
    if "all" in protocols:
        protocols = list(PROTOCOL_NAMES)
    if not args.model and not args.baseline and not protocols:
        raise UsageError("give --model PATH, --baseline NAME, or both.")
    if args.shift and not args.model:
        raise CommandError("--shift needs --model.")
    if args.decoder not in (None, "right") and not args.model:
        raise CommandError("--decoder needs --model: the baselines are "
                           "trees, not distances.")
    if not args.model and (args.layer is not None or args.distance is not None):
        raise CommandError("--layer and --distance need --model.")
    baselines = _dedup(args.baseline)  # once each, in order
    ensemble = _ensemble_requested(args, protocols)

    from keras_ordered.datasets import treebank as treebank_lib

    files, layout = treebank_lib.treebank_split_files(args.treebank, args.split)
    directory = os.path.dirname(files[0])
    if layout == "ldc":
        directory = os.path.dirname(directory)
    # Fail on a bad model before reading trees.
    models = [] if ensemble else _select_models(args)
    ensemble = _common.load_ensemble(args.model, args) if ensemble else None

    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import evaluate_parsing
    from keras_ordered.parsing.evaluate import evaluate_trees

    need_punct = any(
        PROTOCOL_PUNCTUATION.get(name, False) for name in protocols
    )
    if layout == "folder" and args.split is None and not protocols:
        # A plain folder, no split and no protocol: `load_treebank` reads
        # every tree of the folder; no protocol needs the punctuated copy.
        records = treebank_lib.load_treebank(directory,
                                             max_sentences=args.limit)
        punct_records = None
    else:
        pairs = treebank_lib.load_treebank_files(
            files, punctuation=True,
            max_length=10 if args.split == "wsj10" else None,
            max_sentences=args.limit,
        )
        records = [pair[0] for pair in pairs]
        punct_records = [pair[1] for pair in pairs]

    result = {"treebank": directory}
    if args.split is not None:
        result["split"] = args.split
    rows = []
    model_runs = []
    for path, model, default, names in models:
        with _common.progress_bar(len(records), f"parsing with {path}") as bar:
            trees = _decoded_trees(records, model, names, args, bar.update)
        rows_of_run = list(trees)
        chosen = default if default in names else names[0]
        run_entry = {
            "path": path, "default": default, "names": rows_of_run,
            "trees": trees,
            "defaults": {
                _row("default", decoder, args.decoder):
                _row(chosen, decoder, args.decoder)
                for decoder in _decoders(args.decoder)
            },
            "scores": {n: evaluate_trees(records, trees[n])
                       for n in rows_of_run},
        }
        if need_punct:
            with _common.progress_bar(
                    len(punct_records), f"parsing with {path} (punctuation)"
            ) as bar:
                run_entry["punct_trees"] = _decoded_trees(
                    punct_records, model, names, args, bar.update)
        model_runs.append(run_entry)

    if ensemble is not None:
        result["ensemble"], ensemble_rows = _ensemble_scores(
            ensemble, records, args)
        rows.extend(ensemble_rows)
    if len(model_runs) == 1:
        only = model_runs[0]
        result["model"] = only["path"]
        result["shift"] = args.shift
        result["decoder"] = _decoder_entry(args, models)
        result["default_distance"] = only["default"]
        result["distances"] = {
            name: _metrics_only(scores) for name, scores in only["scores"].items()
        }
        rows.extend(only["scores"].items())
    elif model_runs:
        from keras_ordered.parsing.evaluate import summarize_runs
        from keras_ordered.parsing.evaluate import trees_self_f1

        result["models"] = [
            {"model": r["path"], "default_distance": r["default"],
             "distances": {n: _metrics_only(s) for n, s in r["scores"].items()}}
            for r in model_runs
        ]
        result["shift"] = args.shift
        result["decoder"] = _decoder_entry(args, models)
        shared = _shared_distances(model_runs)
        result["summary"] = {
            name: summarize_runs(
                [r["scores"][n] for r, n in zip(model_runs, per_run)]
            )
            for name, per_run in shared
        }
        result["self_f1"] = {
            name: trees_self_f1(
                [r["trees"][n] for r, n in zip(model_runs, per_run)]
            )
            for name, per_run in shared
        }
        for index, r in enumerate(model_runs, 1):
            rows.extend((f"[{index}] {n}", s) for n, s in r["scores"].items())
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
    if not rows:  # --protocol alone: the table shows the baselines
        for baseline in _common.BASELINE_NAMES:
            scores = evaluate_parsing(
                records, baseline_predictor(baseline, seed=args.seed)
            )
            rows.append((_row_name(baseline, args.seed), scores))

    protocol_lines = []
    if protocols:
        result["protocols"], protocol_lines = _protocol_blocks(
            args, protocols, records, punct_records, model_runs,
            baselines or list(_common.BASELINE_NAMES),
        )

    if args.json:
        print(json.dumps(result))
        return 0
    first = rows[0][1]
    header = [
        f"treebank: {directory}"
        + (f" (split {args.split})" if args.split else "")
        + f" ({first['sentences']} sentences, "
        f"{first['wsj10_sentences']} of at most 10 words)"
    ]
    if ensemble is not None:
        header.append(
            f"ensemble of {len(ensemble.members)} members, weights "
            f"{','.join(f'{w:g}' for w in ensemble.weights)}; tie rule "
            f"{args.tie} ({'towards right-branching' if args.tie == 'right' else 'towards left-branching' if args.tie == 'left' else 'a row each'})")
    elif len(model_runs) == 1:
        default = model_runs[0]["default"]
        header.append(
            f"model: {model_runs[0]['path']} (default distance: {default})"
            if default
            else f"model: {model_runs[0]['path']}"
        )
    else:
        for index, r in enumerate(model_runs, 1):
            header.append(f"model [{index}]: {r['path']}"
                          + (f" (default distance: {r['default']})"
                             if r["default"] else ""))
    if model_runs and args.shift:
        header.append(f"distances read {args.shift} position(s) later "
                      "(--shift)")
    if model_runs and args.decoder not in (None, "right"):
        header.append(DECODER_LINES[args.decoder])
    print(format_table(
        rows, header,
        note=(DECODER_NOTE if model_runs and args.decoder not in (None, "right")
              else ""),
    ))
    if len(model_runs) > 1:
        print(format_summary(result["summary"], result["self_f1"],
                             len(model_runs)))
    if protocol_lines:
        print("\n".join(protocol_lines))
    return 0


def _ensemble_requested(args, protocols):
    """Whether the run averages trees; refuses what does not go with it."""
    wanted = args.ensemble or (
        args.model and any(_common.split_member(m)[1] for m in args.model)
    ) or (args.model and len(args.model) == 1
          and _common.is_ensemble(args.model))
    if not wanted:
        for option, given in (("--weights", args.weights is not None),
                              ("--tie", args.tie != "right")):
            if given:
                raise CommandError(f"{option} applies to --ensemble.")
        return False
    if not args.model:
        raise CommandError("--ensemble needs --model members.")
    for option, given in (("--protocol", protocols), ("--shift", args.shift),
                          ("--layer", args.layer is not None),
                          ("--distance", args.distance is not None)):
        if given:
            raise CommandError(
                f"{option} does not apply to an ensemble (name each member's "
                "distance as MODEL:DISTANCE).")
    return True


def _ensemble_scores(ensemble, records, args):
    """Scores of each member and of the ensemble, per decoder and tie.

    Returns:
        `(entry, rows)`: the JSON entry (members, weights, and the scores
        of each row) and the table's rows `(name, scores)`.
    """
    from keras_ordered.parsing.evaluate import evaluate_trees

    ties = list(_common.TIE_RULES) if args.tie == "both" else [args.tie]
    models = {id(member.model) for member in ensemble.members}
    with _common.progress_bar(len(records) * len(models),
                              "parsing with the members") as bar:
        computed = ensemble.rows(records, _decoders(args.decoder), ties,
                                 batch_size=args.batch_size,
                                 progress=bar.update)
    rows, scores = [], {}
    for decoder, tie, member_trees, averaged in computed:
        if tie == ties[0]:
            for member, trees in zip(ensemble.members, member_trees):
                name = _row(member.name, ensemble.member_decoder(
                    member, decoder), args.decoder)
                if name not in scores:
                    scores[name] = evaluate_trees(records, trees)
                    rows.append((name, scores[name]))
        name = _row("ensemble", decoder, args.decoder) + (
            f", ties {tie}" if args.tie == "both" else "")
        scores[name] = evaluate_trees(records, averaged)
        rows.append((name, scores[name]))
    entry = {
        "members": [m.name for m in ensemble.members],
        "weights": ensemble.weights,
        "decoder": args.decoder or ensemble.decoder,
        "tie": args.tie,
        "rows": {name: _metrics_only(s) for name, s in scores.items()},
    }
    return entry, rows


def format_summary(summary, self_f1, count):
    """The lines of the statistics over several models (seeds)."""
    keys = (("sentence_f1", "sent-F1"), ("corpus_f1", "corpus-F1"),
            ("wsj10_sentence_f1", "WSJ10-F1"))
    name_width = max(12, *(len(n) for n in summary)) if summary else 12
    lines = [
        "",
        f"over the {count} models: mean +- std (n - 1), [max]; self-F1: "
        "mean sentence F1 of each pair of models' trees",
        "  ".join([f"{'distance':<{name_width}}"]
                  + [f"{label:>22}" for _, label in keys] + ["  self-F1"]),
    ]
    for name, stats in summary.items():
        cells = []
        for key, _ in keys:
            s = stats[key]
            cells.append(
                "-" if s["mean"] is None
                else f"{s['mean']:.2f} +- {s['std']:.2f} [{s['max']:.2f}]"
            )
        lines.append(
            "  ".join([f"{name:<{name_width}}"] + [f"{c:>22}" for c in cells]
                      + [f"{_number(self_f1.get(name)):>9}"])
        )
    return "\n".join(lines)
