"""`keras-ordered score`: log P(S | T) of dependency trees under a TD-TreeLSTM.

Reads a file of dependency trees (Malt-TAB `word TAB POS TAB head`,
CoNLL-X or CoNLL-U; the format is guessed from the columns unless
`--format` names it) and prints, per sentence, the log-probability of its
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

from keras_ordered.cli._common import CommandError

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
                        help="Dependency trees (Malt-TAB, CoNLL-X or CoNLL-U).")
    parser.add_argument("--model", required=True, metavar="PATH",
                        help="A saved TDTreeLSTMLanguageModel (.keras).")
    parser.add_argument("--format", choices=("auto", "malt", "conll"),
                        default="auto",
                        help="Input format (default: guessed from the columns).")
    parser.add_argument("--batch-size", type=int, default=64,
                        help="Sentences scored together (default 64).")
    parser.add_argument("--per-word", action="store_true",
                        help="Also print each word's log-probability.")
    return parser


def run(args):
    """Runs `keras-ordered score`; returns the exit status."""
    raise CommandError("keras-ordered score is not built yet.")
