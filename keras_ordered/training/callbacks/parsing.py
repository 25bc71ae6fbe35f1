"""Watching syntax emerge: parse gold trees while a language model trains."""

import contextlib
import itertools
import os

import keras

from keras_ordered.datasets.treebank import iter_treebank
from keras_ordered.parsing import distances_to_tree
from keras_ordered.parsing import evaluate_trees
from keras_ordered.parsing import model_trees
from keras_ordered.parsing import right_branching_tree
from keras_ordered.parsing.drawing import draw_text
from keras_ordered.training.crash_safety import check_interrupt
from keras_ordered import backend

tf = backend.tensorflow_on_use("the parsing callback's TensorBoard summaries")


class ParsingEvaluation(keras.callbacks.Callback):
    """Unlabeled parsing F1 of a distance model, every `every` epochs.

    At the end of an epoch, parses a fixed development subset of gold trees
    (the first `max_sentences` sentences of the treebank directory, in file
    order) with every syntactic distance the model has
    (`model.sentence_distances`, inference mode), and

    - adds `parse_f1/<distance>` (sentence-level F1, the papers' protocol)
      to the epoch logs, hence to the history and the progress bar;
    - writes those F1s and the corpus-level F1s as TensorBoard scalars,
      under `<log_dir>/parsing`, with right-branching's F1 on the same
      sentences as the scalars `sentence_f1/right-branching` and
      `corpus_f1/right-branching` (the line a distance must clear);
    - writes the trees of the first `num_trees` sentences of the subset
      (the model's default distance) as the text summary `trees`: each
      drawn (`keras_ordered.parsing.drawing.draw_text`) in a Markdown code
      block, beside its gold tree, so that TensorBoard's Text tab shows the
      trees forming epoch after epoch.

    `right_branching` holds right-branching's scores on the subset.

    Args:
        treebank: str, a directory of Penn Treebank `.mrg` files, or a list
            of `keras_ordered.datasets.treebank.TreebankSentence`.
        log_dir: str or None, TensorBoard directory (None: logs only).
        max_sentences: int, size of the development subset.
        every: int, evaluate every `every` epochs.
        num_trees: int, trees shown as text summaries.
        batch_size: int, sentences per forward pass.
        weights_context: None, or a function returning a context manager
            within which the model holds the weights to parse with, e.g.
            `NTASGD.validated_weights`: under averaged SGD the trees are
            then those of the averaged weights, which validation, the best
            checkpoint and the saved model use (None: the weights as they
            are).

    Example:

    ```python
    import nltk
    from keras_ordered.datasets.treebank import make_sentence

    gold = [make_sentence(nltk.Tree.fromstring(
        "(S (NP (DT the) (NN cat)) (VP (VBD sat) (ADVP (RB down))))"
    ))]
    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "down"]
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary
    )
    model.configure_bptt(batch_size=2)
    model.compile(optimizer="sgd")
    # Or a directory of .mrg files: ParsingEvaluation("wsj_sample/mrg", ...).
    callback = keras_ordered.training.ParsingEvaluation(
        gold, log_dir="logs", max_sentences=200
    )
    train = keras_ordered.training.BPTTBatches(np.tile(np.arange(6), 30), 2, 8)
    model.fit(train.dataset(), epochs=1, callbacks=[callback], shuffle=False)
    callback.results["layer1/forget"]["sentence_f1"]
    ```
    """

    def __init__(self, treebank, log_dir=None, max_sentences=200, every=1,
                 num_trees=3, batch_size=64, weights_context=None):
        super().__init__()
        if max_sentences < 1 or every < 1:
            raise ValueError("`max_sentences` and `every` must be >= 1.")
        self.treebank = treebank
        self.log_dir = log_dir
        self.max_sentences = int(max_sentences)
        self.every = int(every)
        self.num_trees = int(num_trees)
        self.batch_size = int(batch_size)
        self.weights_context = weights_context
        self.records = None
        self.results = {}
        self._right_branching = None
        self._writer = None

    def _load(self):
        if self.records is None:
            if isinstance(self.treebank, (str, os.PathLike)):
                # Only the files that hold the first `max_sentences`.
                records = iter_treebank(self.treebank)
            else:
                records = list(self.treebank)
            self.records = list(itertools.islice(
                (r for r in records if len(r.words) > 1), self.max_sentences))
            if not self.records:
                raise ValueError(
                    f"No sentence of two words or more in {self.treebank}."
                )
        return self.records

    @property
    def right_branching(self):
        """Right-branching trees' scores on the subset (`evaluate_trees`)."""
        if self._right_branching is None:
            records = self._load()
            self._right_branching = evaluate_trees(
                records, [right_branching_tree(list(r.words)) for r in records]
            )
        return self._right_branching

    def on_train_begin(self, logs=None):
        self._load()
        if self.log_dir and self._writer is None:
            self._writer = tf.summary.create_file_writer(
                os.path.join(self.log_dir, "parsing")
            )

    def evaluate(self):
        """Parses the subset now; returns name -> scores.

        Parses `batch_size` sentences at a time; a Ctrl-C within
        `crash_safety.CtrlC` stops it between two batches.
        """
        records = self._load()
        trees = {}
        for start in range(0, len(records), self.batch_size):
            check_interrupt()
            part = model_trees(records[start:start + self.batch_size],
                               self.model, batch_size=self.batch_size)
            for name, some in part.items():
                trees.setdefault(name, []).extend(some)
        return {name: evaluate_trees(records, induced)
                for name, induced in trees.items()}

    def on_epoch_end(self, epoch, logs=None):
        if (epoch + 1) % self.every:
            return
        context = (self.weights_context() if self.weights_context
                   else contextlib.nullcontext())
        with context:
            self._log(epoch, logs)

    def _log(self, epoch, logs):
        self.results = self.evaluate()
        if logs is not None:
            for name, scores in self.results.items():
                logs[f"parse_f1/{name}"] = scores["sentence_f1"]
        if self._writer is None:
            return
        with self._writer.as_default(step=epoch):
            scored = dict(self.results)
            scored["right-branching"] = self.right_branching
            for name, scores in scored.items():
                tf.summary.scalar(f"sentence_f1/{name}", scores["sentence_f1"])
                tf.summary.scalar(f"corpus_f1/{name}", scores["corpus_f1"])
            name = self.model.default_distance
            records = self.records[: self.num_trees]
            # The drawn trees are parsed again, in a pass of their own: it
            # traces its own functions, which keeps TensorFlow's per-op
            # random seeds of the following epochs, hence a run and its
            # trees for a given --seed, those of the committed study
            # records (benchmarks/records/).
            distances = self.model.sentence_distances(
                [list(r.words) for r in records], normalized=True
            )[name]
            lines = []
            for record, d in zip(records, distances):
                induced = distances_to_tree(record.words, d)
                gold = " ".join(str(record.tree).split())
                lines.append(f"induced ({name}):\n\n```\n"
                             f"{draw_text(induced)}\n```\n\ngold: {gold}")
            tf.summary.text("trees", "\n\n---\n\n".join(lines))
        self._writer.flush()
