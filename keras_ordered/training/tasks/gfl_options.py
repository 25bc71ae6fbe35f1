"""The options and `--help` of `recipes/wsj_gfl.py` (the task is in
`keras_ordered.training.tasks.gfl`).

The options are made from the typed configs' fields (`GFLExperiment` and,
where the preset decides, `GFLTraining`) by
`keras_ordered.training.options.add_config_options`, plus the splits and the
option groups every recipe shares. `experiment_from_options` reads them
back, once, into a `GFLExperiment`.

Example:

```python
from keras_ordered.training.tasks import gfl_options

args = gfl_options.build_parser().parse_args(["--preset", "tiny",
                                              "--epochs", "3"])
experiment = gfl_options.experiment_from_options(args)
assert experiment.training.epochs == 3
```
"""

from keras_ordered.datasets import treebank_files
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import PRESETS
from keras_ordered.training import options
from keras_ordered.training.config import GFLExperiment


DESCRIPTION = (
    "Train the LSTM+A constituency parser of Grammar as a Foreign Language "
    "(Vinyals et al., 2015) on Penn Treebank .mrg files, and evaluate it on "
    "the test split with EVALB (greedy and beam search)."
)

EPILOG = """\
splits: each of --train/--valid/--test takes shell patterns relative to
--treebank; a pattern names .mrg files, or folders whose .mrg files (found
recursively) are all taken. The defaults split the WSJ sample:
wsj_0001-0129 / 0130-0139 / 0140-0149. The full WSJ with the standard
sections 02-21 / 22 / 23:

  python recipes/wsj_gfl.py --treebank .../treebank_3/parsed/mrg/wsj \\
      --train '0[2-9]' '1?' '2[01]' --valid 22 --test 23

presets (keras_ordered.models.gfl.PRESETS):
  paper  3 x 256 LSTMs, 512-d embeddings, attention 256, dropout 0.3;
         SGD 0.7, batch 128, 10 epochs; beam 10. Needs a GPU.
  small  2 x 128 LSTMs, attention 128, dropout 0.2; Adam 1e-3, batch 32,
         40 epochs; beam 10.
  tiny   2 x 16 LSTMs, for tests; Adam 0.01, batch 8, 2 epochs; beam 3.

Running the same command again resumes a killed run from the last finished
epoch (backup in OUTPUT/backup); a finished run says so and stops.
"""


def build_parser():
    """The recipe's command-line options: those of `GFLExperiment`'s and
    (where the preset decides) `GFLTraining`'s fields, the splits, and the
    groups every recipe shares."""
    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="wsj_gfl.py")
    options.add_preset(parser, default="small", choices=PRESETS)
    for split, patterns in treebank_files.SAMPLE_SPLITS.items():
        parser.add_argument(
            f"--{split}", nargs="+", default=list(patterns), metavar="PATTERN",
            help=f"files or folders of the {split} split, relative to "
            "--treebank",
        )
    options.add_experiment_options(parser, GFLExperiment, "runs/gfl_wsj")
    options.add_strategy(parser, ("auto", "mirrored", "one-device"))
    options.add_tf32(parser)
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


def experiment_from_options(args):
    """The run the options of `build_parser` describe (the one place that
    reads them): a `GFLExperiment`."""
    return options.experiment_from_preset(GFLExperiment, GFLParser, args,
                                          treebank_files.SAMPLE_SPLITS)
