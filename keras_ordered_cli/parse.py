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

import dataclasses
import sys

from keras_ordered_options import MAX_SENTENCE_LENGTH

from keras_ordered_cli import _common
from keras_ordered_cli import _draw
from keras_ordered_cli import _lines
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError

NAME = "parse"
ON_ERROR = ("fail", "skip")


@dataclasses.dataclass(frozen=True)
class ParseRequest:
    """What `keras-ordered parse` is asked to do, read once from its
    options; the parsing after that never sees them.

    Args:
        sentences: tuple of str, the sentences given as arguments.
        file: str or None, `--file` (`-`: stdin).
        max_length: int, `--max-length`.
        tokenize: bool, split the sentences into words (not
            `--no-tokenize`).
        on_error: str, `--on-error` (`fail` or `skip`).
        format: str, `--format`.
        output: str or None, `--output` (svg and png).
        distances: bool, `--distances`.
        labels: bool, `--labels`.
        baseline: str or None, `--baseline`.
        seed: int, `--seed`.
        models: tuple of str, the `--model` values.
        ensemble: bool, whether the models ask for tree averaging
            (several, a `MODEL:DISTANCE` member, a shipped ensemble).
        weights: the `--weights`, or None.
        tie: str, `--tie`.
        smoothing: float or None, `--smoothing`.
        votes: bool, `--votes`.
        layer: int or None, `--layer`.
        distance: str or None, `--distance`.
        beam_size: int or None, `--beam-size`.
        decoder: str or None, `--decoder` (None: the model's own).
        batch_size: int, `--batch-size`.

    Example:

    ```python
    from keras_ordered_cli import build_parser
    from keras_ordered_cli.parse import ParseRequest

    args = build_parser().parse_args(
        ["parse", "--baseline", "right-branching", "The cat sat ."])
    request = ParseRequest.from_args(args)
    print(request.baseline, request.model)  # right-branching None
    ```
    """

    sentences: tuple = ()
    file: str | None = None
    max_length: int = MAX_SENTENCE_LENGTH
    tokenize: bool = True
    on_error: str = "fail"
    format: str = "brackets"
    output: str | None = None
    distances: bool = False
    labels: bool = False
    baseline: str | None = None
    seed: int = 0
    models: tuple = ()
    ensemble: bool = False
    weights: tuple | None = None
    tie: str = "right"
    smoothing: float | None = None
    votes: bool = False
    layer: int | None = None
    distance: str | None = None
    beam_size: int | None = None
    decoder: str | None = None
    batch_size: int = 64

    @classmethod
    def from_args(cls, args):
        """The request of parsed `parse` options, checked.

        Args:
            args: the `argparse.Namespace` of `parse`.

        Returns:
            A `ParseRequest`.

        Raises:
            UsageError, CommandError: options that do not go together (one
                line).
        """
        request = cls(
            sentences=tuple(args.sentences or ()), file=args.file,
            max_length=args.max_length, tokenize=args.tokenize,
            on_error=args.on_error, format=args.format, output=args.output,
            distances=args.distances, labels=args.labels,
            baseline=args.baseline, seed=args.seed,
            models=tuple(args.model or ()),
            weights=(None if args.weights is None else tuple(args.weights)),
            tie=args.tie, smoothing=args.smoothing, votes=args.votes,
            layer=args.layer,
            distance=args.distance, beam_size=args.beam_size,
            decoder=args.decoder, batch_size=args.batch_size,
        )
        _check_drawing_options(request)
        request = dataclasses.replace(
            request, ensemble=_check_ensemble_options(request))
        request.check()
        return request

    @property
    def model(self):
        """The one `--model` of a run without an ensemble, or None."""
        return self.models[0] if self.models and not self.ensemble else None

    def check(self):
        """Refuses `--layer`, `--distance`, `--beam-size` and `--decoder`
        with `--baseline`.

        Raises:
            CommandError: one line naming the options.
        """
        if self.baseline and (self.layer is not None
                              or self.distance is not None):
            raise CommandError("--layer and --distance need --model.")
        if self.baseline and self.beam_size is not None:
            raise CommandError("--beam-size needs --model (a GFL parser).")
        if self.baseline and self.decoder is not None:
            raise CommandError("--decoder needs --model: a baseline's trees "
                               "are not made from distances.")


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


def open_lines(request):
    """The input, to be read a chunk of lines at a time.

    Args:
        request: a `ParseRequest` (its `sentences` and `file`).

    Returns:
        A `keras_ordered_cli._lines.ArgumentLines` for sentences given as
        arguments, else a `FileLines` of the file or of stdin (its
        `source`, `"'f.txt'"` or `"<stdin>"`, names it in messages). Close
        it when done (stdin's copy is a temporary file).
    """
    if request.sentences and request.file:
        raise CommandError(
            "Give the sentences either as arguments or with --file, not both."
        )
    if request.sentences:
        return _lines.ArgumentLines(request.sentences)
    if request.file and request.file != "-":
        try:
            return _lines.FileLines(request.file, repr(request.file))
        except OSError as error:
            raise CommandError(
                f"Cannot read {request.file!r}: {error.strerror or error}."
            ) from None
    if not request.file and (sys.stdin is None or sys.stdin.isatty()):
        raise CommandError(
            "No sentence given: pass sentences as arguments, with --file, "
            "or one per line on stdin."
        )
    return _lines.FileLines("-", "<stdin>")


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


def tokenize(lines, source, max_length, treebank=True, on_error="fail",
             first=1, notes=True):
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
        lines: a chunk of the input's lines (`str` or `bytes`, see
            `open_lines`).
        source: `"argument"`, or the name of the file or `<stdin>`, for
            the messages.
        max_length: the most tokens a sentence may have.
        treebank: split punctuation off the words as the Penn Treebank
            does (else split at whitespace only).
        on_error: `"fail"`: a bad line raises `CommandError` naming it;
            `"skip"`: it is named on stderr and gives no tokens.
        first: the input line number of `lines[0]` (for the messages).
        notes: whether skipped lines are named on stderr.

    Returns:
        A pair `(sentences, skipped)`: one entry per line, its list of
        tokens, or `None` for a blank or skipped line; and the number of
        lines skipped.

    Raises:
        CommandError: a bad line (with `on_error="fail"`).
    """
    tokenize_python = _tokenizer()
    texts = []
    problems = {}
    for number, line in enumerate(lines, start=first):
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
            problems[first + i] = problem
        elif words:
            sentences[i] = words
    if on_error == "fail" and problems:
        number = min(problems)
        raise CommandError(f"{line_name(source, number)} {problems[number]}.")
    for number in sorted(problems) if notes else ():
        _common.note(f"{line_name(source, number)} {problems[number]}; skipped.")
    return sentences, len(problems)


def _why(name, available, default, request):
    """Why `name` was used, for the line on stderr."""
    if request.layer is not None or request.distance is not None:
        given = " ".join(
            f"--{option} {value}"
            for option, value in (("layer", request.layer), ("distance", request.distance))
            if value is not None
        )
        return f"picked by {given}"
    if len(available) == 1:
        return "the model's only distance"
    if name == default:
        return "the model's default; --layer/--distance pick another"
    return "the model's first distance; --layer/--distance pick another"


def _check_drawing_options(request):
    """Refuses options that do not go with `--format`, in one line."""
    to_files = request.format in _draw.FILE_FORMATS
    if request.output is not None and not to_files:
        raise UsageError(
            "--output applies to --format svg and png (the other formats "
            "print on stdout)."
        )
    if to_files and request.output is None:
        raise UsageError(
            f"--format {request.format} writes files: give --output FILE (or a "
            "folder, for several sentences)."
        )
    if request.distances and request.format == "brackets":
        raise UsageError(
            "--distances draws bars under the words: use it with --format "
            "text, svg or png."
        )
    if request.labels and request.format != "brackets":
        raise UsageError(
            "--labels applies to --format brackets (the drawings label "
            "every constituent X)."
        )
    if request.distances and request.baseline:
        raise CommandError(
            "--distances draws a model's syntactic distances; a baseline "
            "has none: drop --distances, or parse with --model."
        )
    _draw.check_extras(request.format)


def _check_ensemble_options(request):
    """Whether `--model` asks for an ensemble; refuses the options that
    do not go with the choice, in one line."""
    ensemble = _common.is_ensemble(list(request.models))
    if not ensemble:
        for option, given in (("--weights", request.weights is not None),
                              ("--tie", request.tie != "right"),
                              ("--smoothing", request.smoothing is not None),
                              ("--votes", request.votes)):
            if given:
                raise CommandError(
                    f"{option} applies to ensembles: give several --model "
                    "(or MODEL:DISTANCE members, or a shipped ensemble).")
        return False
    if request.layer is not None or request.distance is not None:
        raise CommandError(
            "--layer and --distance pick one model's distance: name each "
            "member's as MODEL:DISTANCE (e.g. onlstm_ptb_small:layer2/forget).")
    if request.distances:
        raise CommandError(
            "--distances draws one model's distances; an ensemble's tree "
            "comes from its members' votes: use --votes.")
    if request.beam_size is not None:
        raise CommandError("--beam-size applies to GFL parsers only.")
    return True


def _ensemble_parser(request, bar):
    """`(parse_chunk, finish, passes)` of an ensemble (see
    `_chunk_parser`)."""
    ensemble = _common.load_ensemble(list(request.models), weights=request.weights,
                                     decoder=request.decoder, tie=request.tie,
                                     smoothing=request.smoothing)
    from keras_ordered.parsing import trees as trees_lib

    def parse_chunk(sentences, numbers, source):
        del numbers, source  # the members' words need no note
        parsed = ensemble.parse(sentences, batch_size=request.batch_size,
                                progress=bar.update)
        escaped = [[_common.escape(w) for w in tokens] for tokens in sentences]
        trees = [p.voted_tree(words) if request.votes
                 else _common.with_leaves(p.tree, tokens)
                 for p, words, tokens in zip(parsed, escaped, sentences)]
        if request.format == "brackets":
            return [trees_lib.tree_to_brackets(
                tree, labels=request.labels or request.votes) for tree in trees]
        return [(tree, None) for tree in trees]

    def finish():
        _common.note(
            f"averaged the trees of {len(ensemble.members)} members "
            f"({', '.join(member.name for member in ensemble.members)}), "
            f"{ensemble.decoder} decoder, ties towards {ensemble.tie}-branching"
            + (f", votes smoothed ({ensemble.smoothing:g})"
               if ensemble.smoothing else ""))

    models = len({id(member.model) for member in ensemble.members})
    return parse_chunk, finish, models


def _gfl_parser(request, model, model_name):
    """`(parse_chunk, finish)` of a GFL parser (see `_chunk_parser`)."""
    from keras_ordered_cli import _gfl

    if request.decoder is not None:
        raise CommandError("--decoder applies to models of "
                           "syntactic distances, not GFL parsers.")
    if request.distances:
        raise CommandError(
            "--distances draws a model's syntactic distances; "
            f"{model_name} is a GFL parser, which has none: drop "
            "--distances."
        )

    def parse_chunk(sentences, numbers, source):
        del numbers, source
        parsed = _gfl.parse(
            model, sentences, model_name=model_name,
            beam_size=request.beam_size, batch_size=request.batch_size,
            layer=request.layer, distance=request.distance)
        if request.format == "brackets":
            return parsed
        import nltk

        return [(nltk.Tree.fromstring(tree), None) for tree in parsed]

    return parse_chunk, lambda: None


def _default_model():
    """The shipped default parser's name (a note says so), or a one-line
    error when it is not there."""
    from keras_ordered import shipped

    name = shipped.DEFAULT_PARSER
    if not shipped.is_shipped(name):
        raise CommandError(
            f"No --model given, and the default shipped model "
            f"{name!r} is not at {shipped.saved_models_dir()} "
            f"(set ${shipped.SAVED_MODELS_ENV}, or pass --model "
            "FILE or --baseline NAME)."
        )
    _common.note(f"model: the shipped {name} (--model picks another)")
    return name


def _chunk_parser(request, bar):
    """What parses the sentences, loaded once for every chunk.

    Args:
        request: the `ParseRequest`.
        bar: the progress bar (`_common.progress_bar`), updated with each
            forward pass.

    Returns:
        `(parse_chunk, finish, passes)`: `parse_chunk(sentences, numbers,
        source)` gives each sentence's bracketed string (`--format
        brackets`) or `(tree, distances or None)` (the drawings);
        `finish()` writes the closing note on stderr; `passes` is the
        number of forward passes over each sentence (the bar's unit).
    """
    if request.ensemble:
        return _ensemble_parser(request, bar)
    from keras_ordered.parsing import trees as trees_lib

    if request.baseline:
        from keras_ordered.parsing.baselines import baseline_predictor

        predict = baseline_predictor(request.baseline, seed=request.seed)
        finish = lambda: None  # noqa: E731
        unknown_words = None
    else:
        model_name = request.model or _default_model()
        model = _common.load_model(model_name)
        from keras_ordered_cli import _gfl

        if _gfl.is_gfl_parser(model):
            return (*_gfl_parser(request, model, model_name), 1)
        if request.beam_size is not None:
            raise CommandError("--beam-size applies to GFL parsers only.")
        from keras_ordered.parsing.evaluate import distance_predictor
        from keras_ordered.parsing.trees import model_decoder

        available = _common.model_distances(model, model_name)
        default = getattr(model, "default_distance", None)
        (name,) = _common.select_distance_names(
            available,
            default,
            layer=request.layer,
            kind=request.distance,
            single=True,
        )
        decoder = model_decoder(model, request.decoder)
        predict = distance_predictor(model, name, batch_size=request.batch_size,
                                     progress=bar.update,
                                     decoder=decoder,
                                     with_distances=request.distances)
        unknown_words = (model if callable(getattr(model, "token_ids", None))
                         else None)

        def finish():
            _common.note(
                f"parsed with {name} ({_why(name, available, default, request)})"
                + (f", {decoder} decoder" if decoder != "right" else ""))

    def parse_chunk(sentences, numbers, source):
        if unknown_words is not None:
            _note_unknown_sentences(unknown_words, sentences, numbers, source)
        # The model reads the words as written (it normalises them
        # itself, `SyntacticDistanceMixin.token_ids`).
        trees = predict(sentences)
        if request.distances:
            trees, distances = zip(*trees)
        else:
            distances = [None] * len(trees)
        trees = [_common.with_leaves(tree, tokens)
                 for tokens, tree in zip(sentences, trees)]
        if request.format == "brackets":
            return [trees_lib.tree_to_brackets(tree, labels=request.labels)
                    for tree in trees]
        return list(zip(trees, distances))

    return parse_chunk, finish, 1


def run(args):
    """Runs `keras-ordered parse`; returns the exit status."""
    return parse(ParseRequest.from_args(args))


def parse(request):
    """Parses the sentences a `ParseRequest` names and prints or draws
    their trees.

    With `--format brackets` the input is read, checked, parsed and
    printed a chunk of lines at a time (`_lines.CHUNK_LINES`), so a file
    of any length runs in flat memory; when it holds more than one chunk,
    a first pass checks every line before anything is printed. The
    drawings read the whole input at once.

    Args:
        request: a `ParseRequest`.

    Returns:
        The exit status: 0, or 1 when a sentence was skipped
        (`--on-error skip`) or none was left.

    Raises:
        CommandError: an input, a model or an option that cannot be used
            (one line).
    """
    lines = open_lines(request)
    try:
        return _parse_lines(request, lines)
    finally:
        lines.close()


def _tokenized(request, chunk, source, first, notes=True):
    return tokenize(chunk, source, request.max_length,
                    treebank=request.tokenize, on_error=request.on_error,
                    first=first, notes=notes)


def _count_sentences(request, lines, size):
    """The first pass over an input of several chunks: checks every line
    (a bad one raises, with `--on-error fail`) and returns the number of
    sentences and of lines skipped."""
    sentences = skipped = 0
    for first, chunk in lines.chunks(size):
        tokens, bad = _tokenized(request, chunk, lines.source, first,
                                 notes=False)
        sentences += sum(t is not None for t in tokens)
        skipped += bad
    return sentences, skipped


def _parse_lines(request, lines):
    """`parse` over the lines of an open input."""
    size = _lines.CHUNK_LINES if request.format == "brackets" else None
    source = lines.source
    chunks = lines.chunks(size)
    first_chunk = next(chunks, (1, []))
    several = next(chunks, None) is not None
    if several:
        total, skipped = _count_sentences(request, lines, size)
        chunks = lines.chunks(size)
    else:
        tokens, skipped = _tokenized(request, first_chunk[1], source,
                                     first_chunk[0])
        total = sum(t is not None for t in tokens)
        chunks = iter([(first_chunk[0], tokens)])
    if total == 0 and not skipped:
        raise CommandError("No sentence given: the input is empty.")
    parse_chunk = bar = None
    try:
        for first, chunk in chunks:
            all_lines = (_tokenized(request, chunk, source, first)[0]
                         if several else chunk)
            sentences = [tokens for tokens in all_lines if tokens is not None]
            if not sentences:
                _print_aligned(all_lines, [])
                continue
            numbers = [number for number, tokens
                       in enumerate(all_lines, start=first)
                       if tokens is not None]
            if parse_chunk is None:
                paths = folder_to_make = None
                if request.format in _draw.FILE_FORMATS:
                    # Checked before the model loads: a bad --output fails
                    # at once (the drawings come in one chunk).
                    paths, folder_to_make = _draw.output_paths(
                        request.output, numbers, request.format)
                bar = _common.progress_bar(total, "parsing")
                parse_chunk, finish, passes = _chunk_parser(request, bar)
                bar.total = total * passes
            outputs = parse_chunk(sentences, numbers, source)
            if request.format == "brackets":
                _print_aligned(all_lines, outputs)
                sys.stdout.flush()  # each chunk's trees as they come
            else:
                _show(request, source, all_lines, numbers, outputs, paths,
                      folder_to_make)
    finally:
        if bar is not None:
            bar.close()
    if parse_chunk is None:
        return 1  # every line was skipped
    finish()
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


def _show(request, source, lines, numbers, drawn, paths, folder_to_make):
    """Prints the text drawings, or writes the SVG / PNG files.

    Args:
        request: the `ParseRequest` (its `format`).
        source: what to call the input in messages (`read_lines`).
        lines: every input line's tokens, None for blank or skipped ones.
        numbers: the input line number of each sentence.
        drawn: `(tree, distances or None)` per sentence.
        paths, folder_to_make: where the files go (`_draw.output_paths`).
    """
    items = [(tree, distances, line_name(source, number))
             for (tree, distances), number in zip(drawn, numbers)]
    if request.format in _draw.FILE_FORMATS:
        _draw.write_drawings(items, request.format, paths, folder_to_make,
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
