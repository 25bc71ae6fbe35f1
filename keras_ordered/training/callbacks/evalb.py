"""Validation EVALB F1 of a GFL parser while it trains."""

import keras

from keras_ordered.models.gfl.inference import evaluate_parser


class EVALBValidation(keras.callbacks.Callback):
    """Greedy-decodes validation sentences every epoch and scores them with EVALB.

    At the end of every `every`-th epoch, the parser greedily decodes the
    words of the validation trees, its outputs become trees with the gold
    POS tags (`delinearize`), and the Python EVALB (COLLINS.prm settings
    unless `params` says otherwise) scores them. The callback adds to the
    epoch logs (hence to the history, the progress bar and, placed before
    it, Keras' `TensorBoard` callback):

    - `val_evalb_f1`: the labelled bracketing F-measure (all lengths);
    - `val_malformed_rate`: the fraction of outputs that needed a repair.

    Args:
        gold_trees: list of cleaned `nltk.Tree`
            (`keras_ordered.parsing.linearize.clean_tree`).
        batch_size: int, sentences decoded together.
        every: int, evaluate every `every` epochs.
        params: EVALB parameters (None: COLLINS.prm's).
        verbose: int, print the figures.

    Example:

    ```python
    import nltk
    from keras_ordered.models.gfl import SourceVocabulary, TargetVocabulary
    from keras_ordered.parsing import linearize
    from keras_ordered.training.callbacks import EVALBValidation
    trees = [nltk.Tree.fromstring("(S (NP (NNP John)) (VP (VBZ runs)) (. .))")]
    source = SourceVocabulary.from_sentences(t.leaves() for t in trees)
    target = TargetVocabulary.from_sequences(linearize.linearize(t) for t in trees)
    parser = keras_ordered.models.GFLParser.from_preset("tiny", source, target)
    parser.compile(optimizer="adam")
    source_ids = source.encode_batch([t.leaves()[::-1] for t in trees])
    target_in, target_out = target.teacher_forcing_batch(
        [linearize.linearize(t) for t in trees])
    callback = EVALBValidation(trees)  # the validation trees
    parser.fit([source_ids, target_in], target_out, epochs=2, verbose=0,
               callbacks=[callback, keras.callbacks.TensorBoard("logs")])
    callback.history  # [{"epoch": 1, "val_evalb_f1": ..., ...}, ...]
    ```
    """

    def __init__(self, gold_trees, batch_size=64, every=1, params=None,
                 verbose=0):
        super().__init__()
        self.gold_trees = list(gold_trees)
        if not self.gold_trees:
            raise ValueError("EVALBValidation needs at least one gold tree.")
        if every < 1:
            raise ValueError(f"`every` must be >= 1. Received: {every}")
        self.batch_size = int(batch_size)
        self.every = int(every)
        self.evalb_params = params
        self.verbose = verbose
        self.history = []

    def evaluate(self):
        """`(evalb_result, parse_result)` of the model's greedy parses now."""
        return evaluate_parser(self.model, self.gold_trees, beam_size=None,
                               batch_size=self.batch_size, params=self.evalb_params,
                               warm_up=False)

    def on_epoch_end(self, epoch, logs=None):
        if (epoch + 1) % self.every:
            return
        result, parsed = self.evaluate()
        figures = {
            "val_evalb_f1": float(result.summary.f_measure),
            "val_malformed_rate": float(parsed.malformed_rate),
        }
        if logs is not None:
            logs.update(figures)
        self.history.append({"epoch": epoch + 1, **figures})
        if self.verbose:
            # After a progress bar (verbose 1), start a new line.
            start = "\n" if self.verbose == 1 else ""
            print(
                f"{start}Validation EVALB F1 (greedy, {len(self.gold_trees)} "
                f"sentences): {figures['val_evalb_f1']:.2f}; malformed "
                f"{100 * figures['val_malformed_rate']:.1f}%"
            )
