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

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class EvaluateParsingRequest:
    """What `keras-ordered evaluate-parsing` is asked to do, read once from
    its options; the evaluation after that never sees them.

    Args:
        treebank: str, the folder of .mrg files (`--treebank`).
        split: str or None, a split of `SPLIT_NAMES` (`--split`).
        limit: int or None, the first N sentences only (`--limit`).
        json: bool, print one JSON object (`--json`).
        models: tuple of str, the `--model` paths or names, as given.
        ensemble: bool, average the models' trees (`--ensemble`, a
            `MODEL:DISTANCE` member, or a shipped ensemble: `from_args`
            decides).
        weights: the members' `--weights`, or None.
        tie: str, the ensemble's `--tie` rule (`right`, `left`, `both`).
        smoothing: float or None, the ensemble's `--smoothing`.
        layer: int or None, `--layer`.
        distance: str or None, `--distance`.
        protocols: tuple of str, the `--protocol` names, once each
            (`all` expanded).
        random_seeds: int, `--random-seeds`.
        baselines: tuple of str, the `--baseline` names, once each.
        decoder: str or None, `--decoder` (None: each model's own).
        shift: int, `--shift`.
        batch_size: int, `--batch-size`.
        seed: int, `--seed`.

    Example:

    ```python
    from keras_ordered_cli import build_parser
    from keras_ordered_cli.evaluate_parsing import EvaluateParsingRequest

    args = build_parser().parse_args(
        ["evaluate-parsing", "--treebank", "trees", "--baseline",
         "right-branching", "random", "random"])
    request = EvaluateParsingRequest.from_args(args)
    print(request.baselines)  # ('right-branching', 'random')
    ```
    """

    treebank: str
    split: str | None = None
    limit: int | None = None
    json: bool = False
    models: tuple = ()
    ensemble: bool = False
    weights: tuple | None = None
    tie: str = "right"
    smoothing: float | None = None
    layer: int | None = None
    distance: str | None = None
    protocols: tuple = ()
    random_seeds: int = 5
    baselines: tuple = ()
    decoder: str | None = None
    shift: int = 0
    batch_size: int = 64
    seed: int = 0

    @classmethod
    def from_args(cls, args):
        """The request of parsed `evaluate-parsing` options.

        Args:
            args: the `argparse.Namespace` of `evaluate-parsing`.

        Returns:
            An `EvaluateParsingRequest`.

        Raises:
            UsageError: neither `--model`, `--baseline` nor `--protocol`.
            CommandError: options that do not go together (one line).
        """
        protocols = _dedup(args.protocol)
        if "all" in protocols:
            protocols = list(PROTOCOL_NAMES)
        request = cls(
            treebank=args.treebank, split=args.split, limit=args.limit,
            json=args.json, models=tuple(args.model or ()),
            ensemble=args.ensemble,
            weights=(None if args.weights is None else tuple(args.weights)),
            tie=args.tie, smoothing=args.smoothing, layer=args.layer,
            distance=args.distance,
            protocols=tuple(protocols), random_seeds=args.random_seeds,
            baselines=tuple(_dedup(args.baseline)), decoder=args.decoder,
            shift=args.shift, batch_size=args.batch_size, seed=args.seed,
        )
        request.check()
        return dataclasses.replace(request,
                                   ensemble=_ensemble_requested(request))

    def check(self):
        """Refuses options that need `--model` without it.

        Raises:
            UsageError: neither `--model`, `--baseline` nor `--protocol`.
            CommandError: `--shift`, `--decoder left|gap|both`, `--layer`
                or `--distance` without `--model`.
        """
        if not self.models and not self.baselines and not self.protocols:
            raise UsageError("give --model PATH, --baseline NAME, or both.")
        if self.shift and not self.models:
            raise CommandError("--shift needs --model.")
        if self.decoder not in (None, "right") and not self.models:
            raise CommandError("--decoder needs --model: the baselines are "
                               "trees, not distances.")
        if not self.models and (self.layer is not None
                                or self.distance is not None):
            raise CommandError("--layer and --distance need --model.")


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


def _select_models(request):
    """Loads each `--model`; returns `[(path, model, default, names)]`."""
    models = []
    for path in _dedup(request.models):
        model = _common.load_model(path)
        available = _common.model_distances(model, path)
        default = getattr(model, "default_distance", None)
        names = _common.select_distance_names(
            available, default, layer=request.layer, kind=request.distance
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


def _decoder_entry(request, models):
    """The JSON `decoder`: `--decoder`'s, else each model's own."""
    if request.decoder is not None:
        return request.decoder
    from keras_ordered.parsing.trees import model_decoder

    return "/".join(sorted({model_decoder(model) for _, model, _, _ in models}))


def _decoded_trees(records, model, names, request, progress):
    """`{row name: trees}` of each distance and decoder of `--decoder`,
    the model reading the sentences once."""
    from keras_ordered.parsing.evaluate import model_distances
    from keras_ordered.parsing.trees import distances_to_tree
    from keras_ordered.parsing.trees import model_decoder

    distances = model_distances(records, model, names=names,
                                batch_size=request.batch_size, shift=request.shift,
                                progress=progress)
    sentences = [list(r.words) for r in records]
    trees = {}
    for name in names:
        for decoder in _decoders(request.decoder):
            trees[_row(name, decoder, request.decoder)] = [
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


def _protocol_blocks(request, protocols, records, punct_records, model_runs,
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
    seeds = list(range(request.seed, request.seed + request.random_seeds))
    cache = {}

    def baseline_trees(name, seed, protocol):
        # A protocol scored on spans gets the baselines' spans (the random
        # baseline's without building its trees); EVALB gets trees.
        spans = protocol.scorer == "spans"
        key = (name, seed, protocol.punctuation, spans)
        if key not in cache:
            recs = punct_records if protocol.punctuation else records
            cache[key] = baseline_predictor(name, seed=seed, spans=spans)(
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
                runs = [score(baseline_trees(name, seed, protocol))
                        for seed in seeds]
                mean, std = _mean_std(runs)
                entry["baselines"][name] = {
                    "seeds": seeds, "mean": mean, "std": std,
                }
                rows.append((f"random ({len(seeds)} seeds)", mean,
                             {b: std[b][measure] for b in buckets}))
            else:
                scores = score(baseline_trees(name, 0, protocol))
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


def run(request):
    """Runs `keras-ordered evaluate-parsing`; returns the exit status."""
    return evaluate(EvaluateParsingRequest.from_args(request))


def evaluate(request):
    """Scores the trees an `EvaluateParsingRequest` asks for and prints the
    table or the JSON object; returns the exit status (0).

    Args:
        request: an `EvaluateParsingRequest`.

    Returns:
        0.

    Raises:
        CommandError: a model, member or treebank that cannot be read (one
            line).
    """
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import evaluate_parsing

    files, layout = _treebank_files(request)
    # Fail on a bad model before reading trees.
    ensemble = None
    models = []
    if request.ensemble:
        ensemble = _common.load_ensemble(
            list(request.models), weights=request.weights,
            decoder=request.decoder, tie=request.tie,
            smoothing=request.smoothing)
    else:
        models = _select_models(request)
    directory, records, punct_records = _read_treebank(request, files,
                                                       layout)
    result = {"treebank": directory}
    if request.split is not None:
        result["split"] = request.split
    rows = []
    model_runs = [_model_run(request, records, punct_records, *model)
                  for model in models]
    if ensemble is not None:
        result["ensemble"], ensemble_rows = _ensemble_scores(
            ensemble, records, request)
        rows.extend(ensemble_rows)
    if model_runs:
        result.update(_model_results(request, models, model_runs))
        if len(model_runs) == 1:
            rows.extend(model_runs[0]["scores"].items())
        for index, r in enumerate(model_runs, 1):
            if len(model_runs) > 1:
                rows.extend((f"[{index}] {n}", s)
                            for n, s in r["scores"].items())
    baselines = list(request.baselines)  # once each, in order
    if baselines:
        result["baselines"] = {}
        for baseline in baselines:
            scores = evaluate_parsing(
                records, baseline_predictor(baseline, seed=request.seed)
            )
            entry = _metrics_only(scores)
            if baseline == "random":
                entry = {"seed": request.seed, **entry}
            result["baselines"][baseline] = entry
            rows.append((_row_name(baseline, request.seed), scores))
    if not rows:  # --protocol alone: the table shows the baselines
        for baseline in _common.BASELINE_NAMES:
            scores = evaluate_parsing(
                records, baseline_predictor(baseline, seed=request.seed)
            )
            rows.append((_row_name(baseline, request.seed), scores))

    protocol_lines = []
    if request.protocols:
        result["protocols"], protocol_lines = _protocol_blocks(
            request, request.protocols, records, punct_records, model_runs,
            baselines or list(_common.BASELINE_NAMES),
        )

    if request.json:
        print(json.dumps(result))
        return 0
    other_decoder = bool(model_runs) and request.decoder not in (None,
                                                                 "right")
    print(format_table(
        rows, _header(request, directory, rows[0][1], ensemble, model_runs),
        note=DECODER_NOTE if other_decoder else "",
    ))
    if len(model_runs) > 1:
        print(format_summary(result["summary"], result["self_f1"],
                             len(model_runs)))
    if protocol_lines:
        print("\n".join(protocol_lines))
    return 0


def _treebank_files(request):
    """The .mrg files of `--treebank` and `--split`, and their layout."""
    from keras_ordered.datasets import treebank as treebank_lib

    return treebank_lib.treebank_split_files(request.treebank, request.split)


def _read_treebank(request, files, layout):
    """The gold trees of the request.

    Returns:
        `(directory, records, punct_records)`: the folder the table
        names, the records without punctuation, and the same sentences
        with it (None when no protocol needs them).
    """
    from keras_ordered.datasets import treebank as treebank_lib

    directory = os.path.dirname(files[0])
    if layout == "ldc":
        directory = os.path.dirname(directory)
    if layout == "folder" and request.split is None and not request.protocols:
        # A plain folder, no split and no protocol: `load_treebank` reads
        # every tree of the folder; no protocol needs the punctuated copy.
        records = treebank_lib.load_treebank(directory,
                                             max_sentences=request.limit)
        return directory, records, None
    pairs = treebank_lib.load_treebank_files(
        files, punctuation=True,
        max_length=10 if request.split == "wsj10" else None,
        max_sentences=request.limit,
    )
    return (directory, [pair[0] for pair in pairs],
            [pair[1] for pair in pairs])


def _model_run(request, records, punct_records, path, model, default, names):
    """One model's trees and scores: `{"path", "default", "names",
    "trees", "defaults", "scores"}`, and `"punct_trees"` when a protocol
    keeps punctuation."""
    from keras_ordered.parsing.evaluate import evaluate_trees

    with _common.progress_bar(len(records), f"parsing with {path}") as bar:
        trees = _decoded_trees(records, model, names, request, bar.update)
    rows_of_run = list(trees)
    chosen = default if default in names else names[0]
    run_entry = {
        "path": path, "default": default, "names": rows_of_run,
        "trees": trees,
        "defaults": {
            _row("default", decoder, request.decoder):
            _row(chosen, decoder, request.decoder)
            for decoder in _decoders(request.decoder)
        },
        "scores": {n: evaluate_trees(records, trees[n])
                   for n in rows_of_run},
    }
    if any(PROTOCOL_PUNCTUATION.get(name, False)
           for name in request.protocols):
        with _common.progress_bar(
                len(punct_records), f"parsing with {path} (punctuation)"
        ) as bar:
            run_entry["punct_trees"] = _decoded_trees(
                punct_records, model, names, request, bar.update)
    return run_entry


def _model_results(request, models, model_runs):
    """The JSON keys of the models' rows: `model`, `shift`, `decoder`,
    `default_distance`, `distances` for one model; `models`, `shift`,
    `decoder`, `summary`, `self_f1` for several."""
    if len(model_runs) == 1:
        only = model_runs[0]
        return {
            "model": only["path"], "shift": request.shift,
            "decoder": _decoder_entry(request, models),
            "default_distance": only["default"],
            "distances": {name: _metrics_only(scores)
                          for name, scores in only["scores"].items()},
        }
    from keras_ordered.parsing.evaluate import summarize_runs
    from keras_ordered.parsing.evaluate import trees_self_f1

    shared = _shared_distances(model_runs)
    return {
        "models": [
            {"model": r["path"], "default_distance": r["default"],
             "distances": {n: _metrics_only(s)
                           for n, s in r["scores"].items()}}
            for r in model_runs
        ],
        "shift": request.shift,
        "decoder": _decoder_entry(request, models),
        "summary": {
            name: summarize_runs(
                [r["scores"][n] for r, n in zip(model_runs, per_run)])
            for name, per_run in shared
        },
        "self_f1": {
            name: trees_self_f1(
                [r["trees"][n] for r, n in zip(model_runs, per_run)])
            for name, per_run in shared
        },
    }


TIE_LINES = {"right": "towards right-branching",
             "left": "towards left-branching", "both": "a row each"}
"""How the header names each `--tie`."""


def _header(request, directory, first, ensemble, model_runs):
    """The lines above the table: the treebank, the models or the
    ensemble, `--shift` and `--decoder`."""
    header = [
        f"treebank: {directory}"
        + (f" (split {request.split})" if request.split else "")
        + f" ({first['sentences']} sentences, "
        f"{first['wsj10_sentences']} of at most 10 words)"
    ]
    if ensemble is not None:
        header.append(
            f"ensemble of {len(ensemble.members)} members, weights "
            f"{','.join(f'{w:g}' for w in ensemble.weights)}; tie rule "
            f"{request.tie} ({TIE_LINES[request.tie]})"
            + (f"; votes smoothed ({ensemble.smoothing:g})"
               if ensemble.smoothing else ""))
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
    if model_runs and request.shift:
        header.append(f"distances read {request.shift} position(s) later "
                      "(--shift)")
    if model_runs and request.decoder not in (None, "right"):
        header.append(DECODER_LINES[request.decoder])
    return header


def _ensemble_requested(request):
    """Whether the run averages trees (`--ensemble`, a `MODEL:DISTANCE`
    member, a shipped ensemble); refuses what does not go with it."""
    models = list(request.models)
    wanted = request.ensemble or (
        models and any(_common.split_member(m)[1] for m in models)
    ) or (len(models) == 1 and _common.is_ensemble(models))
    if not wanted:
        for option, given in (("--weights", request.weights is not None),
                              ("--tie", request.tie != "right"),
                              ("--smoothing", request.smoothing is not None)):
            if given:
                raise CommandError(f"{option} applies to --ensemble.")
        return False
    if not request.models:
        raise CommandError("--ensemble needs --model members.")
    for option, given in (("--protocol", request.protocols),
                          ("--shift", request.shift),
                          ("--layer", request.layer is not None),
                          ("--distance", request.distance is not None)):
        if given:
            raise CommandError(
                f"{option} does not apply to an ensemble (name each member's "
                "distance as MODEL:DISTANCE).")
    return True


def _ensemble_scores(ensemble, records, request):
    """Scores of each member and of the ensemble, per decoder and tie.

    Returns:
        `(entry, rows)`: the JSON entry (members, weights, and the scores
        of each row) and the table's rows `(name, scores)`.
    """
    from keras_ordered.parsing.evaluate import evaluate_trees

    ties = list(_common.TIE_RULES) if request.tie == "both" else [request.tie]
    models = {id(member.model) for member in ensemble.members}
    with _common.progress_bar(len(records) * len(models),
                              "parsing with the members") as bar:
        computed = ensemble.rows(records, _decoders(request.decoder), ties,
                                 batch_size=request.batch_size,
                                 progress=bar.update)
    rows, scores = [], {}
    for decoder, tie, member_trees, averaged in computed:
        if tie == ties[0]:
            for member, trees in zip(ensemble.members, member_trees):
                name = _row(member.name, ensemble.member_decoder(
                    member, decoder), request.decoder)
                if name not in scores:
                    scores[name] = evaluate_trees(records, trees)
                    rows.append((name, scores[name]))
        name = _row("ensemble", decoder, request.decoder) + (
            f", ties {tie}" if request.tie == "both" else "")
        scores[name] = evaluate_trees(records, averaged)
        rows.append((name, scores[name]))
    entry = {
        "members": [m.name for m in ensemble.members],
        "weights": ensemble.weights,
        "decoder": request.decoder or ensemble.decoder,
        "tie": request.tie,
        "smoothing": ensemble.smoothing,
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
