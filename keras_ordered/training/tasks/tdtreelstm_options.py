"""The options and `--help` of `recipes/wsj_tdtreelstm.py` (the task is
in `keras_ordered.training.tasks.tdtreelstm`).

The options are made from the typed configs' fields
(`TDTreeLSTMExperiment` and, where the preset decides,
`TDTreeLSTMTraining`) by `keras_ordered.training.options.add_config_options`,
plus the splits, the files' format and the option groups every recipe
shares. `experiment_from_options` reads them back, once, into a
`TDTreeLSTMExperiment`.

Example:

```python
from keras_ordered.training.tasks import tdtreelstm_options

args = tdtreelstm_options.build_parser().parse_args(["--preset", "tiny",
                                                     "--ld"])
experiment = tdtreelstm_options.experiment_from_options(args)
assert experiment.ld
```
"""

from keras_ordered.datasets import dependency
from keras_ordered.models.tdtreelstm import PRESETS
from keras_ordered.models.tdtreelstm import TDTreeLSTMLanguageModel
from keras_ordered.training import options
from keras_ordered.training.config import TDTreeLSTMExperiment
from keras_ordered.training.config import default_of


DESCRIPTION = (
    "Train a top-down TreeLSTM (or LdTreeLSTM) language model P(S|T) on "
    "dependency trees (Zhang, Lu and Lapata, 2016) and evaluate it on the "
    "validation trees: perplexity, MSR-style completion accuracy, gold-vs-"
    "perturbed tree preference."
)

EPILOG = """\
data: --data is a folder of dependency files (Malt-TAB `word TAB POS TAB
head`, CoNLL-X or CoNLL-U; the format is guessed per file unless --format
names it); --train/--valid/--test take shell patterns relative to it (a
folder pattern takes its files recursively). Default: the WSJ sample's
Malt-TAB files, wsj_0001-0139 train, wsj_0140-0149 validation, no test.
A Universal Dependencies treebank:

  python recipes/wsj_tdtreelstm.py --data UD_English-EWT \\
      --train '*-train.conllu' --valid '*-dev.conllu' --test '*-test.conllu'

presets (keras_ordered.models.tdtreelstm.PRESETS): wsj (the official
dependency-reranking setup: 100/200, 2 layers, dropout 0.2, softmax), msr
(the MSR completion setup: 200/400, 1 layer, NCE; GPU), small (64/128, 1
layer; CPU), tiny (tests). --ld makes it an LdTreeLSTM; --sequential trains
the same network on left-to-right chains instead of the trees: a
sequential LSTM language model of the same size (the baseline).

training: the official optimisation, SGD at 1.0, batch 64, gradient norm
clipped at 5, weights uniform in +-0.1; when the validation loss improves
by less than a factor 1.0001 the learning rate is halved (and every epoch
after), training going on from the best weights; the second time, it stops.
Running the same command again resumes a killed run from its last epoch.
"""


def build_parser():
    """The recipe's command-line options: those of `TDTreeLSTMExperiment`'s
    and (where the preset decides) `TDTreeLSTMTraining`'s fields, the
    splits and the files' format, and the groups every recipe shares."""
    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="wsj_tdtreelstm.py")
    options.add_preset(parser, default="small", choices=PRESETS)
    parser.add_argument("--train", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["train"]),
                        help="files or folders of the training split")
    parser.add_argument("--valid", nargs="+", metavar="PATTERN",
                        default=list(dependency.SAMPLE_SPLITS["valid"]),
                        help="files or folders of the validation split")
    parser.add_argument("--test", nargs="+", metavar="PATTERN", default=None,
                        help="files or folders of a test split (default: "
                        "none; the evaluation runs on the validation split)")
    parser.add_argument("--format", default=default_of(TDTreeLSTMExperiment,
                                                       "format"),
                        choices=("auto",) + dependency.FORMATS,
                        help="format of the dependency files")
    options.add_experiment_options(parser, TDTreeLSTMExperiment,
                                   "runs/tdtreelstm")
    options.add_tf32(parser)
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


def experiment_from_options(args):
    """The run the options of `build_parser` describe (the one place that
    reads them): a `TDTreeLSTMExperiment`."""
    return options.experiment_from_preset(
        TDTreeLSTMExperiment, TDTreeLSTMLanguageModel, args,
        ("train", "valid", "test"))
