"""The task of `recipes/ptb_distance_parser.py`: a distance parser that
learns the averaged trees of several parsers (tree-averaging distillation).

1. The teacher (a shipped ensemble such as `ensemble_ptb`, or any members
   `keras-ordered parse --model` takes) parses the PTB training and
   validation text. The training text leaves out every sentence of the
   evaluation's treebank (`ptb.drop_sentences`), so the student never
   reads a sentence it is judged on. The silver trees are kept in
   `OUTPUT/silver/` (`train.txt`, `valid.txt`: one bracketed tree per
   line, written as they are made), so a resumed run parses only what is
   missing.
2. A `DistanceParser` learns their gap heights with the ranking loss,
   or their spans with the span cross-entropy (the `span` presets: CKY
   parses); Adam, gradient norm clipped; the best checkpoint is the epoch
   with the lowest loss on the silver validation trees: no gold tree
   chooses anything.
3. The evaluation parses the treebank's dev and test splits (gold trees)
   with the gap decoder and writes their sentence F1 to `results.json`.
"""

import os
import time

import keras
import numpy as np

from keras_ordered import saving
from keras_ordered import shipped
from keras_ordered._tokens import BOS
from keras_ordered._tokens import EOS
from keras_ordered._tokens import UNK
from keras_ordered.datasets import ptb
from keras_ordered.datasets import treebank as treebank_lib
from keras_ordered.models.distance_parser import PRESETS
from keras_ordered.models.distance_parser import DistanceParser
from keras_ordered.parsing import ensemble as ensemble_lib
from keras_ordered.parsing import evaluate as evaluate_lib
from keras_ordered.parsing import trees as trees_lib
from keras_ordered.training import options
from keras_ordered.training.batching import DistanceBatches
from keras_ordered.training.config import DistanceParserExperiment
from keras_ordered.training.driver import run_recipe
from keras_ordered.training.runner import Runner
from keras_ordered.training.runner import Task

DESCRIPTION = (
    "Train a syntactic-distance parser (Shen et al., 2018) on the trees a "
    "teacher (an ensemble of parsers, averaged by tree averaging) gives "
    "the PTB text: one model that parses as the ensemble does (Shayegh, "
    "Cao and Mou, 2024)."
)

EPILOG = """\
The teacher parses the PTB training text without the evaluation's
treebank sentences, and the validation text; the silver trees are kept in
OUTPUT/silver/ and the same command again resumes (parsing, then
training). The best epoch is the one with the lowest loss on the
silver validation trees; the gold dev and test trees are read only by the
final evaluation (results.json).

presets (keras_ordered.models.distance_parser.PRESETS): small (the
student; CPU), compact and fast (lighter students), span, span_compact
and span_fast (span-scoring students, parsed by CKY), tiny and span_tiny
(tests).

  python recipes/ptb_distance_parser.py --data ../shared/data/ptb \\
      --treebank ../shared/data/wsj_sample/mrg --teacher ensemble_ptb
"""

SILVER_CHUNK = 2000
"""Sentences the teacher parses between two writes of the silver file."""


def build_parser():
    """The recipe's command-line options, from `DistanceParserExperiment`."""
    parser = options.recipe_parser(DESCRIPTION, epilog=EPILOG,
                                   prog="ptb_distance_parser.py")
    options.add_output(parser, default="runs/distance_parser",
                       holds="the silver trees, logs, backups, model.keras "
                       "and results.json")
    options.add_config_options(parser, DistanceParserExperiment)
    options.add_seed(parser)
    options.add_logging(parser)
    return parser


def main(argv=None, callbacks=()):
    """Runs the recipe; returns the exit status (0, 2 on an input error,
    130 after Ctrl-C)."""
    return run_recipe(build_parser(), train, argv, callbacks=callbacks)


def train(args, callbacks=()):
    """Makes the silver trees, trains and evaluates the student; returns 0."""
    experiment = options.config_from_options(DistanceParserExperiment, args)
    return Runner(DistanceParserTask(experiment), callbacks).run()


def load_teacher(specs, batch_size=128):
    """A function mapping word lists to the teacher's trees.

    Args:
        specs: the members, as `keras-ordered parse --model` takes them
            (one model parses alone with its own decoder; several, or a
            shipped ensemble, are averaged).
        batch_size: sentences per forward pass.

    Returns:
        `(predict, description)`.
    """
    specs = list(specs)
    if len(specs) == 1 and shipped.ensemble_members(
            ensemble_lib.split_member(specs[0])[0]) is None:
        path, distance = ensemble_lib.split_member(specs[0])
        if distance == "all":
            return (saving.load_ensemble(specs).predictor(batch_size),
                    specs[0])
        model = (saving.load_shipped(path) if shipped.is_shipped(path)
                 else saving.load_model(path, compile=False))
        decoder = getattr(model, "default_decoder", "right")
        return (evaluate_lib.distance_predictor(
            model, distance, batch_size=batch_size, decoder=decoder),
            specs[0])
    ensemble = saving.load_ensemble(specs)
    return ensemble.predictor(batch_size), " + ".join(
        member.name for member in ensemble.members)


def silver_trees(predict, sentences, path, chunk=SILVER_CHUNK, verbose=2):
    """The teacher's tree of every sentence, kept in `path`.

    The trees already in `path` (one bracketed tree per line, in the
    order of `sentences`) are read back; the others are parsed `chunk`
    sentences at a time and appended, so an interrupted run loses at most
    one chunk.

    Args:
        predict: a function mapping word lists to trees.
        sentences: list of word lists.
        path: the silver file.
        chunk: sentences per write.
        verbose: 0 silent; else one line per chunk.

    Returns:
        A list of bracketed trees, one per sentence.
    """
    done = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            done = [line.rstrip("\n") for line in f if line.strip()]
        if len(done) > len(sentences):
            raise ValueError(
                f"{path} holds {len(done)} trees for {len(sentences)} "
                "sentences: it belongs to another text; remove it.")
        for position in (0, len(done) - 1) if done else ():
            words = trees_lib.brackets_to_tree(done[position]).leaves()
            if words != list(sentences[position]):
                raise ValueError(
                    f"{path} line {position + 1} is not the tree of the "
                    "text's sentence: it belongs to another text; remove it.")
    started, resumed = time.time(), len(done)
    for first in range(len(done), len(sentences), chunk):
        part = sentences[first:first + chunk]
        trees = [trees_lib.tree_to_brackets(tree) for tree in predict(part)]
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(tree + "\n" for tree in trees))
            f.flush()
            os.fsync(f.fileno())
        done.extend(trees)
        if verbose:
            rate = (len(done) - resumed) / max(time.time() - started, 1e-9)
            print(f"  silver trees: {len(done)}/{len(sentences)} "
                  f"({rate:.0f} sentences/s)", flush=True)
    return done


class DistanceParserTask(Task):
    """The hooks of the distance-parser recipe (`keras_ordered.training.runner`).

    Args:
        experiment: the run, a
            `keras_ordered.training.config.DistanceParserExperiment`.
    """

    best_monitor = "val_loss"

    def __init__(self, experiment):
        super().__init__(experiment)
        if experiment.preset not in PRESETS:
            DistanceParser.get_preset(experiment.preset)  # the names, in a ValueError
        self.training = experiment.schedule(PRESETS[experiment.preset]["training"])

    def _treebank_dir(self):
        return treebank_lib.resolve_treebank_dir(self.config.treebank)

    def build_inputs(self, replicas):
        config, training = self.config, self.training
        files = ptb.locate_files(config.data, download=False)
        text = {split: ptb.read_words(files[split])
                for split in ("train", "valid")}
        vocabulary = ptb.build_vocabulary(text["train"])
        excluded_dir = config.exclude_treebank or self._treebank_dir()
        excluded = treebank_lib.lm_text_sentences(excluded_dir)
        total = len(text["train"])
        text["train"], dropped, matched = ptb.drop_sentences(
            text["train"], excluded, vocabulary)
        print(f"Left out {dropped} of the {total} training sentences: those "
              f"that match one of the {len(excluded)} sentences of "
              f"{excluded_dir} ({matched} found).")
        text = {split: [s for s in lines if s][:config.max_lines]
                for split, lines in text.items()}
        predict, self.teacher_name = load_teacher(
            config.teacher, config.teacher_batch_size)
        folder = os.path.join(config.output, "silver")
        os.makedirs(folder, exist_ok=True)
        print(f"Teacher: {self.teacher_name}")
        self.silver = {}
        for split, sentences in text.items():
            print(f"Parsing the {split} text ({len(sentences)} sentences) "
                  "with the teacher.")
            self.silver[split] = silver_trees(
                predict, sentences, os.path.join(folder, f"{split}.txt"),
                verbose=config.verbose)
        self.vocabulary = vocabulary
        index = {w: i for i, w in enumerate(vocabulary)}
        eos = index[EOS]
        bos = index.get(BOS, eos)
        unk = index[UNK]

        def encode(sentences, brackets):
            ids, heights = [], []
            for words, tree in zip(sentences, brackets):
                ids.append([bos] + [index.get(w, unk) for w in words] + [eos])
                heights.append(trees_lib.tree_to_distances(
                    trees_lib.brackets_to_tree(tree)))
            return ids, heights

        self.text = text
        train_ids, train_heights = encode(text["train"], self.silver["train"])
        valid_ids, valid_heights = encode(text["valid"], self.silver["valid"])
        self.train_batches = DistanceBatches(
            train_ids, train_heights, training["batch_size"], pad_id=eos,
            seed=config.seed)
        self.valid_batches = DistanceBatches(
            valid_ids, valid_heights, training["batch_size"], pad_id=eos,
            shuffle=False)
        steps = len(self.train_batches)
        if config.steps_per_epoch:
            steps = min(steps, config.steps_per_epoch)
        self.steps_per_epoch = steps
        self.epochs = training["epochs"]

    def build_model(self):
        return DistanceParser.from_preset(
            self.config.preset, vocabulary=self.vocabulary,
            seed=self.config.seed)

    def compile_model(self, model):
        model.compile(
            optimizer=keras.optimizers.Adam(self.training["learning_rate"],
                                            clipnorm=self.training["clip_norm"]),
            loss=model.training_loss)

    def announce(self, model, strategy, policy):
        print(f"Training DistanceParser preset {self.config.preset!r} "
              f"({model.head} head) "
              f"({int(model.count_params()):,} parameters) on "
              f"{len(self.text['train'])} silver trees, "
              f"{self.steps_per_epoch} batches of "
              f"{self.training['batch_size']} per epoch; output in "
              f"{self.config.output}.")

    def fingerprint(self, model):
        return {"model": "DistanceParser", "preset": self.config.preset,
                "teacher": list(self.config.teacher),
                "batch_size": self.training["batch_size"],
                "parameters": int(model.count_params())}

    def train_data(self, epoch, start_batch):
        batches, steps = self.train_batches, self.steps_per_epoch
        return batches.dataset(lambda: batches.stream(epoch, steps))

    def validation_data(self):
        batches = self.valid_batches
        return batches.dataset(lambda: batches.epoch(0), len(batches))

    def results(self, model, facts):
        loss_name = ("span cross-entropy" if model.head == "span"
                     else "ranking loss")
        return {
            "model": "DistanceParser", "preset": self.config.preset,
            "head": model.head, "teacher": " + ".join(self.config.teacher),
            "teacher_members": self.teacher_name,
            "parameters": int(model.count_params()),
            "training": dict(self.training),
            "silver_trees": {split: len(trees)
                             for split, trees in self.silver.items()},
            "epochs_run": facts["epochs_run"],
            "resumed_from_epoch": facts["start_epoch"],
            "train_seconds": facts["train_seconds"],
            "selection": f"the epoch with the lowest {loss_name} on the "
                         "teacher's trees of the PTB validation text",
        }

    def evaluate(self, model, results, loop):
        directory = self._treebank_dir()
        parsing = {}
        for split in ("dev", "test"):
            records, _, _ = treebank_lib.load_treebank_split(directory, split)
            scores = evaluate_lib.evaluate_model(
                records, model, decoder="gap",
                batch_size=self.config.teacher_batch_size)
            figures = scores[model.default_distance]
            parsing[split] = {
                "sentences": len(records),
                "sentence_f1": round(figures["sentence_f1"], 2),
                "corpus_f1": round(figures["corpus_f1"], 2),
            }
            print(f"{split}: sentence F1 {parsing[split]['sentence_f1']:.2f}, "
                  f"corpus F1 {parsing[split]['corpus_f1']:.2f} "
                  f"({len(records)} sentences, gap decoder)")
        results["parsing"] = {"treebank": directory, "decoder": "gap",
                              "splits": parsing}
        return model
