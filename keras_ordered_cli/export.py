"""`keras-ordered export`: a SavedModel for TF Serving that reads raw text.

Writes `OUTPUT/VERSION/`, the layout TF Serving watches, from a saved
model (a `.keras` file or the name of a shipped model). The signatures
take a batch of UTF-8 sentences and run tokenization, vocabulary lookup,
the model and the tree building in the graph (see
`keras_ordered.export`): `parse` (also `serving_default`) returns the
tokens, the syntactic distances and a bracketed tree per sentence, `score`
the per-token and sentence log-probabilities and the perplexity. A GFL
parser's `parse` returns the labelled tree `keras-ordered parse` prints,
decoded in the graph (greedy, or beam search with `--beam-size`). A
TD-TreeLSTM / LdTreeLSTM's `score` (also `serving_default`) takes one
dependency block per sentence (Malt-TAB or CoNLL-X/U lines) and returns
log P(S | T) per word and per sentence (`keras_ordered.export.tdtreelstm`).

Example:

```
keras-ordered export --model prpn_ptb_quick --output exported/prpn
saved_model_cli show --dir exported/prpn/1 --all
keras-ordered export --model runs/gfl_wsj/model.keras --output exported/gfl --beam-size 10
keras-ordered export --model runs/td_small_ld/model.keras --output exported/td
```
"""


from keras_ordered_cli import _common
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError

NAME = "export"


def add_parser(subparsers):
    """Adds the `export` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="Write a SavedModel for TF Serving that takes raw sentences.",
        description="Export a model as a versioned SavedModel (OUTPUT/N/) "
        "whose signatures take raw UTF-8 sentences: `parse` (also "
        "serving_default: tokens, syntactic distances, one bracketed tree "
        "per sentence) and `score` (per-token and sentence "
        "log-probabilities, perplexity). The text is read as the model's "
        "training text was written (PTB: lower case, digit runs as N, "
        "punctuation split off as the Penn Treebank does). A TD-TreeLSTM's "
        "`score` (serving_default) takes one Malt-TAB or CoNLL block per "
        "sentence and returns log P(S | T) per word and sentence.",
    )
    _options.add_model(
        parser, required=True,
        help="The .keras file of a model, or the name of a shipped model "
        "(keras-ordered list-models).",
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="DIR",
        help="The model folder TF Serving watches; the SavedModel goes to "
        "DIR/VERSION/.",
    )
    parser.add_argument(
        "--version",
        type=_common.positive_int,
        metavar="N",
        help="Version folder (default: one more than the largest in DIR, "
        "1 in a new folder).",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="Replace DIR/VERSION if it exists.",
    )
    _options.add_layer(
        parser, "Layer whose distances make the `tree` output (ON-LSTM).")
    _options.add_distance(
        parser, "Forget or input master-gate distances for `tree` (ON-LSTM).")
    _options.add_beam_size(
        parser, "GFL parsers: decode with a beam of K in the served graph "
        "(default: greedy decoding).")
    _options.add_max_length(
        parser, "the served model answers a longer one with an error for "
        "that sentence.")
    parser.add_argument(
        "--numbers",
        choices=("digit-runs", "ptb", "keep"),
        help="How the training text wrote numbers: every digit run as N "
        "(default), a number token as N (ptb), or unchanged (keep). "
        "Language models only (a GFL parser reads words as its "
        "vocabulary writes them).",
    )
    parser.add_argument(
        "--no-lowercase",
        dest="lowercase",
        action="store_false",
        help="Keep the case (for a model trained on cased text; a GFL "
        "parser follows its vocabulary's case unless this is given).",
    )
    _options.add_no_tokenize(
        parser, "Split sentences at whitespace only (clients send tokenized "
        "text).")
    return parser


def _is_tdtreelstm(model):
    """Whether `model` is a TD-TreeLSTM (imports nothing new)."""
    import sys

    module = sys.modules.get(
        "keras_ordered.models.tdtreelstm.tdtreelstm_language_model")
    return module is not None and isinstance(
        model, module.TDTreeLSTMLanguageModel)


def run(args):
    """Runs `keras-ordered export`; returns the exit status."""
    from keras_ordered import _quiet
    from keras_ordered import backend

    # Before anything loads: a SavedModel needs TensorFlow, installed (its
    # start-up log silenced, as the command's) and as the backend.
    try:
        _quiet.import_tensorflow()
    except ImportError:
        backend.require_tensorflow("SavedModel export")  # its one line
        raise
    backend.check_tensorflow_backend("SavedModel export")
    from keras_ordered.export.layout import version_path

    # Before the model loads: an output that cannot be written fails at once.
    version_path(args.output, args.version, args.overwrite)
    model = _common.load_model(args.model)
    from keras_ordered_cli import _gfl
    from keras_ordered.export import export_model

    options = {}
    names = list(getattr(model, "distance_names", []) or [])
    if names:
        (options["distance"],) = _common.select_distance_names(
            names,
            getattr(model, "default_distance", None),
            layer=args.layer,
            kind=args.distance,
            single=True,
        )
    elif args.layer is not None or args.distance is not None:
        raise CommandError(
            "--layer and --distance apply to models that induce trees "
            "from syntactic distances (ON-LSTM, PRPN)."
        )
    td = _is_tdtreelstm(model)
    if td:
        refused = [flag for flag, given in (
            ("--beam-size", args.beam_size is not None),
            ("--numbers", args.numbers is not None),
            ("--no-lowercase", not args.lowercase),
            ("--no-tokenize", not args.tokenize),
        ) if given]
        if refused:
            raise CommandError(
                f"{', '.join(refused)}: not for a TD-TreeLSTM, which reads "
                "dependency blocks, its words as written (cased as its "
                "vocabulary says)."
            )
    elif _gfl.is_gfl_parser(model):
        if args.numbers is not None:
            raise CommandError(
                "--numbers applies to language models: a GFL parser reads "
                "words as its source vocabulary writes them."
            )
        options["beam_size"] = args.beam_size
        options["lowercase"] = None if args.lowercase else False
    else:
        if args.beam_size is not None:
            raise CommandError("--beam-size applies to GFL parsers only.")
        numbers = args.numbers or "digit-runs"
        options["numbers"] = None if numbers == "keep" else numbers
        options["lowercase"] = args.lowercase
    if not td:
        options["treebank"] = args.tokenize
    try:
        path = export_model(
            model,
            args.output,
            version=args.version,
            overwrite=args.overwrite,
            max_length=args.max_length,
            **options,
        )
    except ValueError as error:
        raise CommandError(str(error)) from None
    print(path)
    signatures = (
        f"signature parse (serving_default), "
        f"{_gfl.decoding_name(options.get('beam_size'))}"
        if _gfl.is_gfl_parser(model)
        else "signature score (serving_default), dependency blocks in"
        if td
        else "signature parse (serving_default)"
        if getattr(model, "default_decoder", None) == "gap"
        else "signatures parse (serving_default) and score"
    )
    _common.note(
        f"exported {type(model).__name__} to {path}: {signatures}; inspect "
        f"with `saved_model_cli show --dir {path} --all`"
    )
    return 0
