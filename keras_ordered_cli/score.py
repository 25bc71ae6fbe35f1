"""`keras-ordered score`: log P(S | T) of dependency trees under a TD-TreeLSTM.

Reads a file of dependency trees (Malt-TAB `word TAB POS TAB head`,
CoNLL-X, CoNLL-U or Stanford-dependency tuples; the format is guessed from
the first line unless `--format` names it) and prints, per sentence, the log-probability of its
words given its tree under a saved top-down TreeLSTM language model
(`keras_ordered.models.TDTreeLSTMLanguageModel`) and the per-word
perplexity. A bad tree (a head out of range, a cycle, no root) is
reported with its file and line number.

Example:

```
keras-ordered score --model runs/tdtreelstm_small/model.keras \\
    ../shared/data/wsj_sample/dep/wsj_0140.dp
```
"""

from keras_ordered_cli import _common
from keras_ordered_cli import _options
from keras_ordered_cli._common import CommandError

NAME = "score"


def add_parser(subparsers):
    """Adds the `score` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="log P(S|T) and perplexity per sentence of dependency trees "
        "under a top-down TreeLSTM.",
        description="Score each dependency tree of FILE with a saved "
        "top-down TreeLSTM (or LdTreeLSTM) language model: one line per "
        "sentence with its log-probability log P(S|T) (natural log), its "
        "word count and its per-word perplexity, then a total line.",
    )
    parser.add_argument("file", metavar="FILE",
                        help="Dependency trees (Malt-TAB, CoNLL-X, CoNLL-U or "
                        "Stanford tuples).")
    _options.add_model(parser, "A saved TDTreeLSTMLanguageModel (.keras).",
                       required=True)
    parser.add_argument("--format", choices=("auto", "malt", "conll", "stanford"),
                        default="auto",
                        help="Input format (default: guessed from the columns).")
    _options.add_batch_size(parser, "Sentences scored together")
    parser.add_argument("--per-word", action="store_true",
                        help="Also print each word's log-probability.")
    return parser


def run(args):
    """Runs `keras-ordered score`; returns the exit status.

    Prints one tab-separated line per sentence: its number, log P(S|T)
    (natural log), its word count, its perplexity and its words (with
    `--per-word`, each word's log-probability after it), then a `total`
    line; a summary goes to stderr.
    """
    from keras_ordered.datasets import dependency

    try:
        trees = dependency.read_trees(args.file, args.format)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    if not trees:
        raise CommandError(f"{args.file} holds no sentence.")
    model = _common.load_model(args.model)
    from keras_ordered.models import TDTreeLSTMLanguageModel

    if not isinstance(model, TDTreeLSTMLanguageModel):
        hint = _common.commands_for(model, args.model)
        raise CommandError(
            f"{args.model} is a {type(model).__name__}, not a "
            "TDTreeLSTMLanguageModel (train one with recipes/wsj_tdtreelstm.py)"
            + (f"; for this model use {hint}." if hint else ".")
        )
    import math
    import time

    started = time.time()
    try:
        with _common.progress_bar(len(trees), "scoring") as bar:
            scores = model.score(trees, batch_size=args.batch_size,
                                 progress=bar.update)
    except ValueError as error:
        raise CommandError(str(error)) from None
    seconds = time.time() - started
    total, words = 0.0, 0
    for k, (tree, score) in enumerate(zip(trees, scores), 1):
        if args.per_word:
            text = " ".join(f"{w}/{p:.3f}" for w, p in
                            zip(tree.words, score["word_log_probs"]))
        else:
            text = " ".join(tree.words)
        print(f"{k}\t{score['log_prob']:.4f}\t{score['words']}\t"
              f"{score['perplexity']:.3f}\t{text}")
        total += score["log_prob"]
        words += score["words"]
    print(f"total\t{total:.4f}\t{words}\t{math.exp(min(-total / words, 50)):.3f}")
    _common.note(
        f"{len(trees)} sentences, {words} words scored in {seconds:.2f} s "
        f"({len(trees) / max(seconds, 1e-9):.1f} sentences/s)")
    return 0
