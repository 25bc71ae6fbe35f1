"""The `keras-ordered` command line.

Subcommands:

- `keras-ordered parse`: parses sentences with a saved model's syntactic
  distances (or a baseline) and prints one bracketed tree per sentence.
- `keras-ordered evaluate-parsing`: scores a model's induced trees (or a
  baseline's) against gold Penn Treebank trees.

Run `keras-ordered SUBCOMMAND --help` for the options. Exit status: 0 on
success, 2 on a usage or input error (the message goes to stderr).

Example:

```
keras-ordered evaluate-parsing --treebank ../shared/data/wsj_sample/mrg \\
    --baseline right-branching --json
echo "The cat sat on the mat ." | keras-ordered parse --model model.keras
```
"""

import argparse
import json
import os
import re
import sys

BASELINE_NAMES = ("right-branching", "left-branching", "balanced", "random")
DISTANCE_KINDS = ("forget", "input")
DEFAULT_MAX_LENGTH = 400


class CommandError(Exception):
    """A usage or input error, reported on stderr with exit status 2."""


# --- shared helpers --------------------------------------------------------


def _load_model(path):
    """Loads a saved Keras model (imports TensorFlow, so only when needed)."""
    if not os.path.exists(path):
        raise CommandError(
            f"No model at {path!r}: pass the path of a model saved with "
            "`model.save('model.keras')`."
        )
    import keras

    import keras_ordered  # noqa: F401  (registers the layers and models)
    try:
        return keras.saving.load_model(path)
    except (ValueError, OSError, TypeError) as error:
        raise CommandError(f"Could not load the model {path!r}: {error}")


def select_distance_names(available, default=None, layer=None, kind=None,
                          single=False):
    """Picks a model's distances from `--layer` / `--distance`.

    Args:
        available: the model's `distance_names`.
        default: the model's `default_distance`.
        layer: int or None, keeps names `layer{layer}/...`.
        kind: str or None (`"forget"`, `"input"`), keeps names `.../{kind}`.
        single: whether exactly one name is wanted. Then, without `layer`
            and `kind`, the default; with only one of them, the other is
            taken from the default when possible.

    Returns:
        A non-empty list of names, in the model's order.
    """
    available = list(available)
    if layer is None and kind is None:
        if not single:
            return available
        return [default if default in available else available[0]]
    matches = [
        name
        for name in available
        if (layer is None or name.startswith(f"layer{layer}/"))
        and (kind is None or name.endswith(f"/{kind}"))
    ]
    if not matches:
        wanted = f"layer{layer if layer is not None else '*'}/{kind or '*'}"
        raise CommandError(
            f"The model has no distance {wanted}; available: "
            f"{', '.join(available)}. Pick --layer / --distance among them."
        )
    if not single or len(matches) == 1:
        return matches
    if default in matches:
        return [default]
    default_layer, _, default_kind = (default or "").partition("/")
    for name in matches:
        name_layer, _, name_kind = name.partition("/")
        if (layer is None and name_layer == default_layer) or (
            kind is None and name_kind == default_kind
        ):
            return [name]
    return [matches[0]]


def _model_distances(model):
    from keras_ordered.parsing.evaluate import check_distance_model

    try:
        return check_distance_model(model)
    except ValueError as error:
        raise CommandError(str(error))


def _escape(word):
    return word.replace("(", "-LRB-").replace(")", "-RRB-")


def _with_leaves(tree, words):
    """A copy of `tree` whose leaves are `words` (in order)."""
    tree = tree.copy(deep=True)
    positions = tree.treepositions("leaves")
    if len(positions) != len(words):
        raise CommandError(
            f"The parser returned {len(positions)} leaves for "
            f"{len(words)} words."
        )
    for position, word in zip(positions, words):
        tree[position] = _escape(word)
    return tree


# --- parse -----------------------------------------------------------------


def _read_lines(args):
    if args.sentences and args.file:
        raise CommandError(
            "Give the sentences either as arguments or with --file, not both."
        )
    if args.sentences:
        return list(args.sentences), "argument"
    if args.file:
        if args.file == "-":
            return sys.stdin.read().splitlines(), "line"
        try:
            with open(args.file, encoding="utf-8") as f:
                return f.read().splitlines(), "line"
        except OSError as error:
            raise CommandError(f"Cannot read {args.file!r}: {error}")
    if sys.stdin is None or sys.stdin.isatty():
        raise CommandError(
            "No sentence given: pass sentences as arguments, with --file, "
            "or one per line on stdin."
        )
    return sys.stdin.read().splitlines(), "line"


def _tokenize(lines, what, max_length):
    sentences = []
    for number, line in enumerate(lines, start=1):
        tokens = line.split()
        if not tokens:
            raise CommandError(
                f"{what.capitalize()} {number} is empty: give one non-empty "
                "sentence per line."
            )
        if len(tokens) > max_length:
            raise CommandError(
                f"{what.capitalize()} {number} has {len(tokens)} tokens, more "
                f"than --max-length {max_length}: split it into sentences, "
                "or raise --max-length."
            )
        sentences.append(tokens)
    if not sentences:
        raise CommandError("No sentence given: the input is empty.")
    return sentences


def _run_parse(args):
    from keras_ordered.datasets.treebank import normalize_words
    from keras_ordered.parsing import trees as trees_lib
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import distance_predictor

    if args.max_length < 1:
        raise CommandError("--max-length must be at least 1.")
    lines, what = _read_lines(args)
    sentences = _tokenize(lines, what, args.max_length)
    normalised = [normalize_words(tokens) for tokens in sentences]
    if args.baseline:
        if args.layer is not None or args.distance is not None:
            raise CommandError("--layer and --distance need --model.")
        predict = baseline_predictor(args.baseline, seed=args.seed)
    else:
        model = _load_model(args.model)
        available = _model_distances(model)
        (name,) = select_distance_names(
            available,
            getattr(model, "default_distance", None),
            layer=args.layer,
            kind=args.distance,
            single=True,
        )
        predict = distance_predictor(model, name, batch_size=args.batch_size)
    trees = predict(normalised)
    for tokens, tree in zip(sentences, trees):
        print(trees_lib.tree_to_brackets(_with_leaves(tree, tokens)))
    return 0


# --- evaluate-parsing ------------------------------------------------------

_METRIC_KEYS = (
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


def _format_table(rows, scores_example, header_lines):
    labels = list(scores_example["label_recall"])
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
            + [f"{scores_example['gold_depth']:>{widths[-1]}.2f}"]
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


def _metrics_only(scores):
    return {key: scores[key] for key in _METRIC_KEYS if key in scores}


def _run_evaluate(args):
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.datasets.treebank import resolve_treebank_dir
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import evaluate_model
    from keras_ordered.parsing.evaluate import evaluate_parsing

    if args.limit is not None and args.limit < 1:
        raise CommandError("--limit must be at least 1.")
    if args.baseline and (args.layer is not None or args.distance is not None):
        raise CommandError("--layer and --distance need --model.")
    directory = resolve_treebank_dir(args.treebank)
    model = None
    if args.model:  # fail on a bad model before reading the treebank
        model = _load_model(args.model)
        available = _model_distances(model)
        default = getattr(model, "default_distance", None)
        names = select_distance_names(
            available, default, layer=args.layer, kind=args.distance
        )
    records = load_treebank(directory)
    if args.limit is not None:
        records = records[: args.limit]

    if model is None:
        scores = evaluate_parsing(
            records, baseline_predictor(args.baseline, seed=args.seed)
        )
        result = {"baseline": args.baseline}
        if args.baseline == "random":
            result["seed"] = args.seed
        result.update({"treebank": directory, **_metrics_only(scores)})
        rows = [(args.baseline, scores)]
    else:
        by_name = evaluate_model(
            records, model, names=names, batch_size=args.batch_size
        )
        main_name = default if default in by_name else names[0]
        result = {
            "model": args.model,
            "treebank": directory,
            "distance": main_name,
            **_metrics_only(by_name[main_name]),
            "distances": {
                name: _metrics_only(scores) for name, scores in by_name.items()
            },
        }
        rows = list(by_name.items())

    if args.json:
        print(json.dumps(result, indent=None, sort_keys=False))
    else:
        first = rows[0][1]
        header = [
            f"treebank: {directory} ({first['sentences']} sentences, "
            f"{first['wsj10_sentences']} of at most 10 words)"
        ]
        if model is not None:
            header.append(f"model: {args.model}")
        print(_format_table(rows, first, header))
    return 0


# --- parser ----------------------------------------------------------------


def _add_source_arguments(parser, model_help):
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", metavar="PATH", help=model_help)
    source.add_argument(
        "--baseline",
        choices=BASELINE_NAMES,
        help="Use trivial trees instead of a model.",
    )
    parser.add_argument(
        "--layer",
        type=int,
        metavar="L",
        help="Layer whose distances to use (1 = lowest), e.g. 2.",
    )
    parser.add_argument(
        "--distance",
        choices=DISTANCE_KINDS,
        help="Which distance of the layer: from the forget or the input "
        "master gate.",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="Seed of the random baseline."
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=64,
        help="Sentences per forward pass of the model.",
    )


def build_parser():
    """The `argparse` parser of the `keras-ordered` command."""
    parser = argparse.ArgumentParser(
        prog="keras-ordered",
        description="Syntax-aware language models: parse with syntactic "
        "distances and evaluate the induced trees.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    parse = commands.add_parser(
        "parse",
        help="Print the tree a model induces for each sentence.",
        description="Parse sentences (arguments, --file, or stdin; one per "
        "line, tokens separated by spaces) and print one bracketed tree per "
        "sentence, with the tokens as given. The model reads them as the PTB "
        "text it was trained on writes them: lower-cased, numbers as N, "
        "words outside its vocabulary as <unk>. That text has no "
        "punctuation, and the parsing evaluations remove it: leave it out "
        "for comparable trees.",
    )
    parse.add_argument("sentences", nargs="*", metavar="SENTENCE")
    parse.add_argument(
        "--file", metavar="F", help="Read sentences from F ('-' for stdin)."
    )
    parse.add_argument(
        "--max-length",
        type=int,
        default=DEFAULT_MAX_LENGTH,
        help=f"Longest sentence accepted, in tokens (default "
        f"{DEFAULT_MAX_LENGTH}).",
    )
    _add_source_arguments(
        parse,
        "A saved model that yields syntactic distances (.keras). Without "
        "--layer/--distance, its default distance is used.",
    )
    parse.set_defaults(func=_run_parse)

    evaluate = commands.add_parser(
        "evaluate-parsing",
        help="Score induced trees against gold Penn Treebank trees.",
        description="Unlabeled F1 (sentence-level and corpus-level), WSJ10, "
        "per-label recall and tree depth of a model's trees or a baseline's "
        "against gold .mrg trees.",
    )
    evaluate.add_argument(
        "--treebank",
        metavar="DIR",
        help="Folder of .mrg files (default: "
        "$KERAS_ORDERED_DATA/wsj_sample/mrg).",
    )
    evaluate.add_argument(
        "--json", action="store_true", help="Print one JSON object."
    )
    evaluate.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="Evaluate only the first N sentences (quick checks).",
    )
    _add_source_arguments(
        evaluate,
        "A saved model that yields syntactic distances (.keras). Without "
        "--layer/--distance, every distance of the model is evaluated.",
    )
    evaluate.set_defaults(func=_run_evaluate)
    return parser


def main(argv=None):
    """Entry point of the `keras-ordered` console script.

    Args:
        argv: list of arguments (without the program name); `None` reads
            `sys.argv`.

    Returns:
        The exit status: 0 on success, 2 on a usage or input error (with
        the message on stderr). Argument-syntax errors exit through
        `argparse` (`SystemExit(2)`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CommandError, ValueError) as error:
        message = re.sub(r"\s+", " ", str(error)).strip()
        print(f"keras-ordered {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
