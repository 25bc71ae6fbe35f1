"""`keras-ordered evaluate`: EVALB report of a supervised parser on a treebank.

Parses the sentences of gold Penn Treebank trees with a saved GFL parser
(`keras_ordered.models.GFLParser`, e.g. the `model.keras` of
`recipes/wsj_gfl.py`), puts the gold POS tags into its trees (the parser
predicts constituents, not tags), and prints the EVALB report of its
trees against the gold ones (COLLINS.prm's settings unless `-p` names a
parameter file): a row per sentence, then the summaries for all sentences
and for those of at most 40 words. A last line on stderr gives the
decoding, the malformed rate and the parsing speed.

Example:

```
keras-ordered evaluate --treebank ../shared/data/wsj_sample/mrg \\
    --files 'wsj_014*.mrg' --model runs/gfl_wsj/model.keras --beam-size 10
```
"""

from keras_ordered_cli import _common
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError

NAME = "evaluate"


def add_parser(subparsers):
    """Adds the `evaluate` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="EVALB report of a GFL parser's parses of treebank trees.",
        description="Parse the sentences of the gold trees of a treebank "
        "folder with a saved GFL parser and print the EVALB report of its "
        "trees (labelled bracketing recall, precision and F-measure, for "
        "all sentences and those of <= 40 words). The parser's trees get "
        "the gold POS tags (it predicts constituents only). Function tags "
        "and -NONE- elements of the gold trees are removed first, as for "
        "training.",
    )
    _options.add_treebank(parser)
    parser.add_argument(
        "--files",
        nargs="+",
        default=["*"],
        metavar="PATTERN",
        help="Files or folders of --treebank to read, as shell patterns "
        "(e.g. 'wsj_014*.mrg', or 23 in the full WSJ); a folder is read "
        "recursively (default: every .mrg file).",
    )
    _options.add_model(parser, "A saved GFL parser (.keras).", required=True)
    _options.add_beam_size(parser, "Beam search keeping K prefixes (the "
                           "paper uses 10; default: greedy decoding).")
    _options.add_batch_size(parser, "Sentences decoded together")
    _options.add_limit(parser, "Evaluate only the first N trees (quick "
                       "checks).")
    parser.add_argument(
        "-p",
        "--params",
        metavar="PRM",
        help="EVALB parameter file (default: COLLINS.prm's settings).",
    )
    return parser


def run(args):
    """Runs `keras-ordered evaluate`; returns the exit status."""
    from keras_ordered_cli import _gfl

    from keras_ordered.datasets import treebank_files
    from keras_ordered.parsing import evalb

    params = evalb.load_params(args.params) if args.params else None
    directory = args.treebank or treebank_files.default_treebank_dir()
    gold, _ = treebank_files.load_split(
        directory, args.files, "evaluation", max_sentences=args.limit
    )
    model = _common.load_model(args.model)
    if not _gfl.is_gfl_parser(model):
        hint = _common.commands_for(model, args.model)
        raise CommandError(
            f"{args.model} is a {type(model).__name__}, not a GFL parser"
            + (f": use {hint}." if hint else ".")
        )
    from keras_ordered.models.gfl.inference import evaluate_parser

    with _common.progress_bar(len(gold), "parsing") as bar:
        result, parsed = evaluate_parser(
            model, gold, beam_size=args.beam_size, batch_size=args.batch_size,
            params=params, progress=bar.update,
        )
    print(evalb.format_report(result), end="")
    malformed = sum(r.malformed for r in parsed.repairs)
    _common.note(
        f"{len(gold)} sentences parsed with {_gfl.decoding_name(args.beam_size)}"
        f" in {parsed.seconds:.2f} s ({parsed.sentences_per_second:.1f} "
        f"sentences/s); malformed outputs repaired: {malformed} "
        f"({100 * parsed.malformed_rate:.1f}%)"
    )
    return 0
