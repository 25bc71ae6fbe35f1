"""`keras-ordered parse`: one bracketed tree per sentence.

Reads sentences (arguments, `--file`, or stdin, one per line; blank lines
are skipped and give blank lines, so that line N of the output is the tree
of line N of the input), splits
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

`--labels` writes the same tree with a label on every constituent and a
POS tag `XX` on every word, the Treebank's format, which
`nltk.Tree.fromstring` and EVALB read:

```
keras-ordered parse --labels "The cat sat."
(X (X (XX The) (XX cat)) (X (XX sat) (XX .)))
```

Input is UTF-8; a byte-order mark is dropped. A line that is not valid
UTF-8, holds a control character or has more than `--max-length` tokens
stops the command with one line naming it; `--on-error skip` parses the
other lines instead, prints an empty line in the bad line's place and
names it on stderr (exit status 1).

`--format text` draws each tree in the terminal (nltk's Unicode drawing,
the words in sentence order); `--format svg` and `--format png` write
drawings to `--output FILE`, or to a folder, one file per sentence
numbered by input line (`tree_0001.svg`), and need the `draw` extra
(`pip install "keras-ordered[draw]"`). `--distances` puts the model's
syntactic distance of each word under it as a bar, scaled to the
sentence's largest (`--layer` / `--distance` pick which):

```
keras-ordered parse --format text --distances "The cat sat."
keras-ordered parse --format svg --output tree.svg "The cat sat on the mat."
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
from keras_ordered_cli import _options

from keras_ordered_cli import _draw
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError

NAME = "parse"
ON_ERROR = ("fail", "skip")


def add_parser(subparsers):
    """Adds the `parse` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="Print the tree a model induces for each sentence.",
        description="Parse sentences (arguments, --file, or stdin; one per "
        "line, UTF-8; blank lines are skipped and give blank lines) and "
        "print one bracketed tree per sentence. A line that is not valid "
        "UTF-8, holds a control character, or is longer than --max-length "
        "is refused with its line number (see --on-error). Punctuation is "
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
    _options.add_no_tokenize(
        parser, "Split the sentences at whitespace only (for text already "
        "tokenized the PTB way).")
    _options.add_max_length(parser, "a longer one is refused (see "
                            "--on-error).")
    parser.add_argument(
        "--on-error",
        choices=ON_ERROR,
        default="fail",
        help="What a bad line does (invalid UTF-8, a control character, "
        "more tokens than --max-length, an empty argument): 'fail' (the "
        "default) stops with one line naming it; 'skip' parses the other "
        "lines, prints an empty line in its place and names it on stderr "
        "(exit status 1).",
    )
    parser.add_argument(
        "--labels",
        action="store_true",
        help="Write the Treebank's labelled format, every constituent "
        "labelled X and every word tagged XX: '(X (X (XX The) (XX cat)) "
        "(XX sat))', which nltk.Tree.fromstring and EVALB read (the "
        "default '((The cat) sat)' has no labels: read it with "
        "keras_ordered.parsing.brackets_to_tree).",
    )
    parser.add_argument(
        "--format",
        choices=_draw.FORMATS,
        default="brackets",
        help="'brackets' (the default): one bracketed tree per line; "
        "'text': each tree drawn in Unicode characters (several sentences: "
        "each drawing after the name of its line, blank lines between); "
        "'svg' or 'png': drawings written to --output (needs the draw "
        "extra: pip install \"keras-ordered[draw]\").",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="Where --format svg or png writes: a file for one sentence, or "
        "a folder (made if missing) with one file per sentence, numbered by "
        "input line (tree_0001.svg). Files are written whole or not at all.",
    )
    parser.add_argument(
        "--distances",
        action="store_true",
        help="With --format text, svg or png: draw each word's syntactic "
        "distance (the one --layer/--distance pick) as a bar under it, "
        "scaled to the sentence's largest. Needs a model: baselines and "
        "GFL parsers have no distances.",
    )
    source = parser.add_mutually_exclusive_group()
    _options.add_model(
        source, repeat="append",
        help="A saved model that yields syntactic distances (.keras), or "
        "the name of a shipped model (keras-ordered list-models). Without "
        "--layer/--distance, its default distance is used. A saved GFL "
        "parser prints labelled trees (POS tags as XX). Default: the "
        "shipped prpn_ptb_quick. Repeated (--model A --model B), or as "
        "MODEL:DISTANCE (onlstm_ptb_small:layer2/forget) or MODEL:all "
        "(every distance), or a shipped ensemble (ensemble_ptb): the "
        "members' trees are averaged, the tree with the most member votes "
        "for its spans (see --weights, --tie, --votes).",
    )
    _options.add_baseline(source, "Use trivial trees instead of a model.")
    _options.add_distance_selection(parser)
    _options.add_decoder(parser, _common.DECODER_HELP)
    _options.add_beam_size(
        parser, "GFL parsers only: beam search keeping K prefixes (the paper "
        "uses 10; default: greedy decoding).")
    _common.add_ensemble_arguments(parser)
    parser.add_argument(
        "--votes",
        action="store_true",
        help="Ensembles: label each constituent with its votes out of the "
        "members' total ('2/3'), in the drawings and, with --format "
        "brackets, as the labelled format's labels.",
    )
    return parser


def _split_lines(data):
    """The lines of a whole input (`bytes` or `str`), line feeds removed."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    lines = data.split(newline)
    if lines[-1] == newline[:0]:  # the text ends with a line feed, or is empty
        lines.pop()
    return lines


def _read_stdin():
    stream = getattr(sys.stdin, "buffer", sys.stdin)  # bytes when it can
    return _split_lines(stream.read()), "<stdin>"


def read_lines(args):
    """The input's lines, and what to call the input in messages.

    Args:
        args: the parsed arguments (`sentences`, `file`).

    Returns:
        A pair `(lines, source)`: the lines (`bytes` or `str`, one per
        line of the input, in order, not yet decoded or checked), and
        `"argument"` for sentences given as arguments, else the name of
        the file (`"'f.txt'"`) or `"<stdin>"`.
    """
    if args.sentences and args.file:
        raise CommandError(
            "Give the sentences either as arguments or with --file, not both."
        )
    if args.sentences:
        return list(args.sentences), "argument"
    if args.file:
        if args.file == "-":
            return _read_stdin()
        try:
            with open(args.file, "rb") as f:
                data = f.read()
        except OSError as error:
            raise CommandError(
                f"Cannot read {args.file!r}: {error.strerror or error}."
            ) from None
        return _split_lines(data), repr(args.file)
    if sys.stdin is None or sys.stdin.isatty():
        raise CommandError(
            "No sentence given: pass sentences as arguments, with --file, "
            "or one per line on stdin."
        )
    return _read_stdin()


def line_name(source, number):
    """What to call line `number` of `source` in a message."""
    if source == "argument":
        return f"Argument {number}"
    return f"{source} line {number}"


def _checked_text(line, source):
    """`(text, problem)` of one input line: its text, or what is wrong."""
    from keras_ordered import _tokens

    problem = _tokens.utf8_problem(line)
    if problem is not None:
        return None, problem
    if isinstance(line, bytes):
        line = line.decode("utf-8")
    text = _tokens.strip_byte_order_mark(line)
    problem = _tokens.control_character_problem(text)
    if problem is not None:
        return None, problem
    if not text.strip() and source == "argument":
        return None, "is empty: give one non-empty sentence per argument"
    return text, None


def _tokenizer():
    """The tokenizer of raw lines: the exported models' in-graph ops where
    TensorFlow is installed (the same tokens offline and served), else
    nltk's `TreebankWordTokenizer`, which those ops port (they give its
    tokens on every sentence of the WSJ sample)."""
    try:
        from keras_ordered.export.text import tokenize_python
    except ImportError as error:
        if "tensorflow" not in str(error).lower():
            raise
        return _nltk_tokenize
    return tokenize_python


def _nltk_tokenize(lines, treebank=True):
    """`tokenize_python`'s checks and tokens, by nltk, without TensorFlow."""
    from nltk.tokenize import TreebankWordTokenizer

    from keras_ordered._tokens import check_control_characters
    from keras_ordered._tokens import check_utf8_lines

    lines = check_control_characters(check_utf8_lines(lines))
    tokenizer = TreebankWordTokenizer()
    lines = [line[1:] if line.startswith("\ufeff") else line
             for line in lines]
    if not treebank:
        return [line.split() for line in lines]
    return [tokenizer.tokenize(line) for line in lines]


def tokenize(lines, source, max_length, treebank=True, on_error="fail"):
    """Checks and tokenizes each input line.

    A line is bad when it is not valid UTF-8, holds a control character
    (`keras_ordered._tokens.ControlCharacterError`), has more than
    `max_length` tokens, or is an empty argument. A byte-order mark that
    starts a line is dropped; a blank line of a file or stdin is skipped
    (it gives no tokens), and still counts in the line numbers.

    The tokenizer is the one of the exported SavedModels
    (`keras_ordered.export.text.tokenize`, nltk's `TreebankWordTokenizer`
    written as TensorFlow string ops): a sentence gets the same tokens
    here and served.

    Args:
        lines: the lines of `read_lines` (`str` or `bytes`).
        source: `"argument"`, or the name of the file or `<stdin>`, for
            the messages.
        max_length: the most tokens a sentence may have.
        treebank: split punctuation off the words as the Penn Treebank
            does (else split at whitespace only).
        on_error: `"fail"`: a bad line raises `CommandError` naming it;
            `"skip"`: it is named on stderr and gives no tokens.

    Returns:
        A pair `(sentences, skipped)`: one entry per line, its list of
        tokens, or `None` for a blank or skipped line; and the number of
        lines skipped.

    Raises:
        CommandError: a bad line (with `on_error="fail"`), or no line to
            parse at all.
    """
    tokenize_python = _tokenizer()
    texts = []
    problems = {}
    for number, line in enumerate(lines, start=1):
        text, problem = _checked_text(line, source)
        texts.append(text)
        if problem is not None:
            problems[number] = problem
    parsed = [i for i, text in enumerate(texts) if text and text.strip()]
    tokens = tokenize_python([texts[i] for i in parsed], treebank=treebank)
    sentences = [None] * len(texts)
    for i, words in zip(parsed, tokens):
        if len(words) > max_length:
            problem = (
                f"has {len(words)} tokens, more than --max-length "
                f"{max_length}: split it into sentences, or raise "
                "--max-length"
            )
            problems[i + 1] = problem
        elif words:
            sentences[i] = words
    if on_error == "fail" and problems:
        number = min(problems)
        raise CommandError(f"{line_name(source, number)} {problems[number]}.")
    for number in sorted(problems):
        _common.note(f"{line_name(source, number)} {problems[number]}; skipped.")
    if not problems and all(words is None for words in sentences):
        raise CommandError("No sentence given: the input is empty.")
    return sentences, len(problems)


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


def _check_drawing_options(args):
    """Refuses options that do not go with `--format`, in one line."""
    to_files = args.format in _draw.FILE_FORMATS
    if args.output is not None and not to_files:
        raise UsageError(
            "--output applies to --format svg and png (the other formats "
            "print on stdout)."
        )
    if to_files and args.output is None:
        raise UsageError(
            f"--format {args.format} writes files: give --output FILE (or a "
            "folder, for several sentences)."
        )
    if args.distances and args.format == "brackets":
        raise UsageError(
            "--distances draws bars under the words: use it with --format "
            "text, svg or png."
        )
    if args.labels and args.format != "brackets":
        raise UsageError(
            "--labels applies to --format brackets (the drawings label "
            "every constituent X)."
        )
    if args.distances and args.baseline:
        raise CommandError(
            "--distances draws a model's syntactic distances; a baseline "
            "has none: drop --distances, or parse with --model."
        )
    _draw.check_extras(args.format)


def _check_ensemble_options(args):
    """Whether `--model` asks for an ensemble; refuses the options that
    do not go with the choice, in one line."""
    ensemble = _common.is_ensemble(args.model)
    if not ensemble:
        args.model = args.model[0] if args.model else None
        for option, given in (("--weights", args.weights is not None),
                              ("--tie", args.tie != "right"),
                              ("--votes", args.votes)):
            if given:
                raise CommandError(
                    f"{option} applies to ensembles: give several --model "
                    "(or MODEL:DISTANCE members, or a shipped ensemble).")
        return False
    if args.layer is not None or args.distance is not None:
        raise CommandError(
            "--layer and --distance pick one model's distance: name each "
            "member's as MODEL:DISTANCE (e.g. onlstm_ptb_small:layer2/forget).")
    if args.distances:
        raise CommandError(
            "--distances draws one model's distances; an ensemble's tree "
            "comes from its members' votes: use --votes.")
    if args.beam_size is not None:
        raise CommandError("--beam-size applies to GFL parsers only.")
    return True


def _parse_ensemble(args, all_lines, sentences, numbers, source, paths,
                    folder_to_make, skipped):
    """The ensemble's trees of `sentences`, printed or drawn."""
    ensemble = _common.load_ensemble(args.model, args)
    models = len({id(member.model) for member in ensemble.members})
    bar = _common.progress_bar(len(sentences) * models, "parsing")
    with bar:
        parsed = ensemble.parse(sentences, batch_size=args.batch_size,
                                progress=bar.update)
    _common.note(
        f"averaged the trees of {len(ensemble.members)} members "
        f"({', '.join(member.name for member in ensemble.members)}), "
        f"{ensemble.decoder} decoder, ties towards {ensemble.tie}-branching")
    from keras_ordered.parsing import trees as trees_lib

    escaped = [[_common.escape(w) for w in tokens] for tokens in sentences]
    trees = [p.voted_tree(words) if args.votes
             else _common.with_leaves(p.tree, tokens)
             for p, words, tokens in zip(parsed, escaped, sentences)]
    if args.format == "brackets":
        _print_aligned(all_lines, [
            trees_lib.tree_to_brackets(tree, labels=args.labels or args.votes)
            for tree in trees
        ])
    else:
        _show(args, source, all_lines, numbers,
              [(tree, None) for tree in trees], paths, folder_to_make)
    return 1 if skipped else 0


def run(args):
    """Runs `keras-ordered parse`; returns the exit status."""
    _check_drawing_options(args)
    ensemble = _check_ensemble_options(args)
    if args.baseline and (args.layer is not None or args.distance is not None):
        raise CommandError("--layer and --distance need --model.")
    if args.baseline and args.beam_size is not None:
        raise CommandError("--beam-size needs --model (a GFL parser).")
    if args.baseline and args.decoder is not None:
        raise CommandError("--decoder needs --model: a baseline's trees "
                           "are not made from distances.")
    lines, source = read_lines(args)
    all_lines, skipped = tokenize(lines, source, args.max_length,
                                  treebank=args.tokenize,
                                  on_error=args.on_error)
    sentences = [tokens for tokens in all_lines if tokens is not None]
    if not sentences:
        _print_aligned(all_lines, [])
        return 1
    numbers = [number for number, tokens in enumerate(all_lines, start=1)
               if tokens is not None]
    paths = folder_to_make = None
    if args.format in _draw.FILE_FORMATS:
        # Checked before the model loads: a bad --output fails at once.
        paths, folder_to_make = _draw.output_paths(args.output, numbers,
                                                   args.format)
    if ensemble:
        return _parse_ensemble(args, all_lines, sentences, numbers, source,
                               paths, folder_to_make, skipped)
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
            if args.decoder is not None:
                raise CommandError("--decoder applies to models of "
                                   "syntactic distances, not GFL parsers.")
            if args.distances:
                raise CommandError(
                    "--distances draws a model's syntactic distances; "
                    f"{args.model} is a GFL parser, which has none: drop "
                    "--distances."
                )
            parsed = _gfl.parse(model, sentences, args)
            if args.format == "brackets":
                _print_aligned(all_lines, parsed)
            else:
                import nltk

                _show(args, source, all_lines, numbers,
                      [(nltk.Tree.fromstring(tree), None) for tree in parsed],
                      paths, folder_to_make)
            return 1 if skipped else 0
        if args.beam_size is not None:
            raise CommandError("--beam-size applies to GFL parsers only.")
        from keras_ordered.parsing.evaluate import distance_predictor

        if callable(getattr(model, "token_ids", None)):
            _note_unknown_sentences(model, sentences, numbers, source)
        available = _common.model_distances(model, args.model)
        default = getattr(model, "default_distance", None)
        (name,) = _common.select_distance_names(
            available,
            default,
            layer=args.layer,
            kind=args.distance,
            single=True,
        )
        from keras_ordered.parsing.trees import model_decoder

        decoder = model_decoder(model, args.decoder)
        predict = distance_predictor(model, name, batch_size=args.batch_size,
                                     progress=bar.update,
                                     decoder=decoder,
                                     with_distances=args.distances)

    from keras_ordered.parsing import trees as trees_lib

    # The model reads the words as written (it normalises them itself,
    # `SyntacticDistanceMixin.token_ids`).
    with bar:
        trees = predict(sentences)
    if not args.baseline:
        _common.note(
            f"parsed with {name} ({_why(name, available, default, args)})"
            + (f", {decoder} decoder" if decoder != "right" else "")
        )
    if args.distances:
        trees, distances = zip(*trees)
    else:
        distances = [None] * len(trees)
    trees = [_common.with_leaves(tree, tokens)
             for tokens, tree in zip(sentences, trees)]
    if args.format == "brackets":
        _print_aligned(all_lines, [
            trees_lib.tree_to_brackets(tree, labels=args.labels)
            for tree in trees
        ])
    else:
        _show(args, source, all_lines, numbers, list(zip(trees, distances)),
              paths, folder_to_make)
    return 1 if skipped else 0


def _note_unknown_sentences(model, sentences, numbers, source):
    """A note on stderr for each sentence of which the model knows no word.

    The model reads such a sentence as a row of `<unk>` (Japanese text, say,
    is one unknown token for a PTB model): it still gets a tree, which
    says nothing about its words.

    Args:
        model: a model of syntactic distances (`token_ids`).
        sentences: the token lists.
        numbers: each sentence's input line number.
        source: what to call the input (`read_lines`).
    """
    from keras_ordered._tokens import UNK

    (unk,) = model.token_ids([UNK], normalized=True)
    for tokens, number in zip(sentences, numbers):
        unknown = sum(i == unk for i in model.token_ids(tokens))
        if unknown == len(tokens):
            _common.note(
                f"note: {line_name(source, number)}: {unknown} of "
                f"{len(tokens)} tokens (100 %) are outside the model's "
                "vocabulary and read as <unk>: its tree says nothing about "
                "the words."
            )


def _show(args, source, lines, numbers, drawn, paths, folder_to_make):
    """Prints the text drawings, or writes the SVG / PNG files.

    Args:
        args: the parsed arguments (`format`).
        source: what to call the input in messages (`read_lines`).
        lines: every input line's tokens, None for blank or skipped ones.
        numbers: the input line number of each sentence.
        drawn: `(tree, distances or None)` per sentence.
        paths, folder_to_make: where the files go (`_draw.output_paths`).
    """
    items = [(tree, distances, line_name(source, number))
             for (tree, distances), number in zip(drawn, numbers)]
    if args.format in _draw.FILE_FORMATS:
        _draw.write_drawings(items, args.format, paths, folder_to_make,
                             written=lambda path: print(path, flush=True))
        return
    drawings = [_draw.render(tree, distances, "text", name)
                for tree, distances, name in items]
    several = len(lines) > 1
    for position, ((_, _, name), drawing) in enumerate(zip(items, drawings)):
        if several:
            if position:
                print()  # a blank line between two drawings
            print(f"{name}:")
        print(drawing)


def _print_aligned(lines, outputs):
    """Prints `outputs` in the places of the lines that have tokens.

    Every other line (blank, or skipped) gets an empty line, so that line N
    of the output belongs to line N of the input.
    """
    outputs = iter(outputs)
    for tokens in lines:
        print("" if tokens is None else next(outputs))
