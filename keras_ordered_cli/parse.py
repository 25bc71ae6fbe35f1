"""`keras-ordered parse`: one bracketed tree per sentence.

Reads sentences (arguments, `--file`, or stdin, one per line), splits
punctuation off the words as the Penn Treebank does (nltk's
`TreebankWordTokenizer`, as the TensorFlow string ops of the exported
SavedModels: `mat.` -> `mat .`, `don't` -> `do n't`), and prints
the tree that a saved model's syntactic distances (or a baseline) give
each sentence, with the tokens as written. A line on stderr says which
distance of the model was used.

Without `--model` (or `--baseline`), the shipped `prpn_ptb_quick` model
parses (`keras-ordered list-models`); `--model` takes a file or the name
of a shipped model.

Example:

```
keras-ordered parse --model model.keras "The cat sat on the mat."
parsed with layer2/forget (the model's default; --layer/--distance pick another)
(((The cat) ((sat (on (the mat))) .))
```

A GFL parser (`keras_ordered.models.GFLParser`, e.g. the `model.keras` of
`recipes/wsj_gfl.py`) prints labelled trees instead, every POS tag `XX`
(the parser predicts constituents, not tags):

```
keras-ordered parse --model gfl.keras "The cat sat on the mat."
(S (NP (XX The) (XX cat)) (VP (XX sat) (PP (XX on) (NP (XX the) (XX mat)))) (XX .))
```
"""

import sys

from keras_ordered_cli import _common
from keras_ordered_cli._common import CommandError

NAME = "parse"
DEFAULT_MAX_LENGTH = 400


def add_parser(subparsers):
    """Adds the `parse` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="Print the tree a model induces for each sentence.",
        description="Parse sentences (arguments, --file, or stdin; one per "
        "line, UTF-8: invalid UTF-8 is refused with its line number) and "
        "print one bracketed tree per sentence. Punctuation is "
        "split off the words as in the Penn Treebank (\"mat.\" -> \"mat .\", "
        "\"don't\" -> \"do n't\"; --no-tokenize splits at spaces only), and "
        "the trees keep the tokens as written. The model reads them as the "
        "PTB text it was trained on writes them: lower-cased, numbers as "
        "N, words outside its vocabulary as <unk>. That text has no "
        "punctuation and the parsing evaluations remove it: leave it out "
        "for trees comparable with theirs. A line on stderr says which "
        "distance of the model was used. A GFL parser's model (from "
        "recipes/wsj_gfl.py) prints labelled trees instead, read from the "
        "tokens as written, with every POS tag left as XX (the parser "
        "predicts constituents, not tags).",
    )
    parser.add_argument("sentences", nargs="*", metavar="SENTENCE")
    parser.add_argument(
        "--file", metavar="F", help="Read sentences from F ('-' for stdin)."
    )
    parser.add_argument(
        "--no-tokenize",
        dest="tokenize",
        action="store_false",
        help="Split the sentences at whitespace only (for text already "
        "tokenized the PTB way).",
    )
    parser.add_argument(
        "--max-length",
        type=_common.positive_int,
        default=DEFAULT_MAX_LENGTH,
        help=f"Longest sentence accepted, in tokens (default "
        f"{DEFAULT_MAX_LENGTH}).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--model",
        metavar="PATH",
        help="A saved model that yields syntactic distances (.keras), or "
        "the name of a shipped model (keras-ordered list-models). Without "
        "--layer/--distance, its default distance is used. A saved GFL "
        "parser prints labelled trees (POS tags as XX). Default: the "
        "shipped prpn_ptb_quick.",
    )
    source.add_argument(
        "--baseline",
        choices=_common.BASELINE_NAMES,
        help="Use trivial trees instead of a model.",
    )
    _common.add_model_arguments(parser)
    parser.add_argument(
        "--beam-size",
        type=_common.positive_int,
        metavar="K",
        help="GFL parsers only: beam search keeping K prefixes (the paper "
        "uses 10; default: greedy decoding).",
    )
    return parser


def _read_stdin():
    stream = getattr(sys.stdin, "buffer", sys.stdin)  # bytes when it can
    return _decode(stream.read(), "<stdin>")


def _decode(data, source):
    from keras_ordered._tokens import decode_utf8_text

    return decode_utf8_text(data, source).splitlines()


def read_lines(args):
    """The input lines and what to call them in messages.

    Invalid UTF-8 is refused (the package's one policy, see
    `keras_ordered._tokens.InvalidUTF8Error`): the error names the file
    (or `<stdin>`, or the argument), the line and the column.
    """
    if args.sentences and args.file:
        raise CommandError(
            "Give the sentences either as arguments or with --file, not both."
        )
    if args.sentences:
        from keras_ordered._tokens import check_utf8_lines

        return check_utf8_lines(args.sentences, "argument"), "argument"
    if args.file:
        if args.file == "-":
            return _read_stdin(), "line"
        try:
            with open(args.file, "rb") as f:
                data = f.read()
        except OSError as error:
            raise CommandError(
                f"Cannot read {args.file!r}: {error.strerror or error}."
            ) from None
        return _decode(data, repr(args.file)), "line"
    if sys.stdin is None or sys.stdin.isatty():
        raise CommandError(
            "No sentence given: pass sentences as arguments, with --file, "
            "or one per line on stdin."
        )
    return _read_stdin(), "line"


def tokenize(lines, what, max_length, treebank=True):
    """Splits each line into tokens.

    Args:
        lines: list of str, one sentence each.
        what: `"argument"` or `"line"`, for the messages.
        max_length: the most tokens a sentence may have.
        treebank: split punctuation off the words as the Penn Treebank
            does (else split at whitespace only).

    The tokenizer is the one of the exported SavedModels
    (`keras_ordered.export.text.tokenize`, nltk's `TreebankWordTokenizer`
    written as TensorFlow string ops): a sentence gets the same tokens
    here and served.

    Returns:
        A list of token lists.
    """
    from keras_ordered.export.text import tokenize_python

    sentences = []
    for number, tokens in enumerate(
        tokenize_python(lines, treebank=treebank), start=1
    ):
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


def _why(name, available, default, args):
    """Why `name` was used, for the line on stderr."""
    if args.layer is not None or args.distance is not None:
        given = " ".join(
            f"--{option} {value}"
            for option, value in (("layer", args.layer), ("distance", args.distance))
            if value is not None
        )
        return f"picked by {given}"
    if len(available) == 1:
        return "the model's only distance"
    if name == default:
        return "the model's default; --layer/--distance pick another"
    return "the model's first distance; --layer/--distance pick another"


def run(args):
    """Runs `keras-ordered parse`; returns the exit status."""
    if args.baseline and (args.layer is not None or args.distance is not None):
        raise CommandError("--layer and --distance need --model.")
    if args.baseline and args.beam_size is not None:
        raise CommandError("--beam-size needs --model (a GFL parser).")
    lines, what = read_lines(args)
    sentences = tokenize(lines, what, args.max_length, treebank=args.tokenize)
    bar = _common.progress_bar(len(sentences), "parsing")

    if args.baseline:
        from keras_ordered.parsing.baselines import baseline_predictor

        predict = baseline_predictor(args.baseline, seed=args.seed)
    else:
        if args.model is None:
            from keras_ordered import shipped

            args.model = shipped.DEFAULT_PARSER
            if not shipped.is_shipped(args.model):
                raise CommandError(
                    f"No --model given, and the default shipped model "
                    f"{args.model!r} is not at {shipped.saved_models_dir()} "
                    f"(set ${shipped.SAVED_MODELS_ENV}, or pass --model "
                    "FILE or --baseline NAME)."
                )
            _common.note(
                f"model: the shipped {args.model} (--model picks another)"
            )
        model = _common.load_model(args.model)
        from keras_ordered_cli import _gfl

        if _gfl.is_gfl_parser(model):
            return _gfl.parse(model, sentences, args)
        if args.beam_size is not None:
            raise CommandError("--beam-size applies to GFL parsers only.")
        from keras_ordered.parsing.evaluate import distance_predictor

        available = _common.model_distances(model, args.model)
        default = getattr(model, "default_distance", None)
        (name,) = _common.select_distance_names(
            available,
            default,
            layer=args.layer,
            kind=args.distance,
            single=True,
        )
        predict = distance_predictor(model, name, batch_size=args.batch_size,
                                     progress=bar.update)

    from keras_ordered.datasets.treebank import normalize_words
    from keras_ordered.parsing import trees as trees_lib

    with bar:
        trees = predict([normalize_words(tokens) for tokens in sentences])
    if not args.baseline:
        _common.note(
            f"parsed with {name} ({_why(name, available, default, args)})"
        )
    for tokens, tree in zip(sentences, trees):
        print(trees_lib.tree_to_brackets(_common.with_leaves(tree, tokens)))
    return 0
