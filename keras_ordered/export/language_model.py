"""SavedModels of the tree-inducing language models (ON-LSTM, PRPN).

`export_language_model` writes a versioned SavedModel whose signatures take
raw sentences (`tf.string`, shape `[None]`) and run the whole path in the
graph: UTF-8 repair, Treebank tokenization, normalisation (lower case,
digit runs as `N`), vocabulary lookup with `<unk>` (the vocabulary file is
an asset of the SavedModel), one inference pass of the model from a zero
state, and the top-down parse of `keras_ordered.parsing`:

- `parse` (also `serving_default`): the tokens, every syntactic distance of
  the model (`distance_<name>`, e.g. `distance_layer2_forget`), the
  distance used for the trees (`distance`) and the bracketed tree of each
  sentence (`tree`);
- `score`: the tokens, each token's log-probability given the words
  before it (`token_log_probs`), the sentence's log-probability (the
  tokens and the end of the sentence) and its perplexity
  (`exp(-sentence_log_prob / (length + 1))`).

Every output has the batch as its first dimension (TF Serving's row format
works). Per-token outputs are padded at the end: `length` says how many
entries of a row count. A sentence that cannot be read (empty, only
whitespace, longer than the exported limit, invalid UTF-8) gets `valid`
false, an `error` message, no tokens and zeros; the other sentences of the
batch get the answers they would get alone. The graph holds no state:
identical requests get identical answers.
"""

import os
import tempfile

import keras
import tensorflow as tf

from keras_ordered.export import text as text_lib
from keras_ordered.export.layout import version_path
from keras_ordered.export.layout import write_version
from keras_ordered.export.trees import distances_to_brackets
from keras_ordered._tokens import BOS
from keras_ordered._tokens import EOS
from keras_ordered_options import MAX_SENTENCE_LENGTH

DEFAULT_MAX_LENGTH = MAX_SENTENCE_LENGTH
"""The longest sentence (in tokens) an exported model reads by default:
the package's one limit (`keras_ordered_options.MAX_SENTENCE_LENGTH`),
that of `keras-ordered parse` too."""

SENTENCES_SPEC = tf.TensorSpec([None], tf.string, name="sentences")
"""The input of every signature: a batch of raw UTF-8 sentences."""


def output_name(distance_name):
    """The signature output of a distance: `layer2/forget` -> `distance_layer2_forget`."""
    return "distance_" + distance_name.replace("/", "_")


class _LanguageModelSignatures:
    """The graph functions of the signatures, over one model."""

    def __init__(self, model, preprocessor, distance, decoder="right"):
        self.model = model
        self.preprocessor = preprocessor
        self.distance = distance
        self.decoder = decoder
        index = model._word_index()
        self.eos_id = index[EOS]
        self.bos_id = index.get(BOS, self.eos_id)

    def _read(self, sentences):
        """Tokens and model inputs, invalid sentences emptied."""
        text = self.preprocessor(sentences)
        valid = text["valid"]
        row_lengths = text["tokens"].row_lengths()
        keep = tf.RaggedTensor.from_row_lengths(
            tf.repeat(valid, row_lengths), row_lengths
        )
        tokens = tf.ragged.boolean_mask(text["tokens"], keep)
        ids = tf.cast(tf.ragged.boolean_mask(text["ids"], keep), "int32")
        lengths = tf.cast(tokens.row_lengths(), tf.int32)
        words = ids.to_tensor(default_value=self.eos_id)
        batch = tf.shape(words)[0]
        column = tf.ones([batch, 1], tf.int32)
        inputs = tf.concat(
            [column * self.bos_id, words, column * self.eos_id], axis=1
        )
        return {
            "tokens": tokens,
            "lengths": lengths,
            "inputs": inputs,
            "width": tf.shape(words)[1],
            "valid": valid,
            "error": text["message"],
        }

    def _forward(self, inputs, lengths=None):
        """`serving_outputs`; an empty batch runs one dummy row instead.

        (The recurrent layers cannot run a batch of 0; the dummy row's
        outputs are sliced away.) A distance parser reads the sentences'
        `lengths` too and gives no logits (None).
        """
        batch = tf.shape(inputs)[0]
        padded = tf.cond(
            batch > 0,
            lambda: inputs,
            lambda: tf.fill([1, tf.shape(inputs)[1]], self.eos_id),
        )
        if _is_parser(self.model):
            padded_lengths = tf.cond(batch > 0, lambda: lengths,
                                     lambda: tf.zeros([1], lengths.dtype))
            distances = self.model.serving_outputs(padded, padded_lengths)
            return None, {name: values[:batch]
                          for name, values in distances.items()}
        logits, distances = self.model.serving_outputs(padded)
        return logits[:batch], {
            name: values[:batch] for name, values in distances.items()
        }

    def _common(self, read):
        return {
            "tokens": read["tokens"].to_tensor(default_value=""),
            "length": read["lengths"],
            "valid": read["valid"],
            "error": read["error"],
        }

    def parse(self, sentences):
        read = self._read(sentences)
        _, distances = self._forward(read["inputs"], read["lengths"])
        width = read["width"]
        mask = tf.sequence_mask(read["lengths"], width)
        outputs = self._common(read)
        for name, values in distances.items():
            # The distance of word k is computed at its own position k
            # (after <s>/<eos> at position 0), as `sentence_distances`.
            outputs[output_name(name)] = tf.where(
                mask, values[:, 1 : 1 + width], 0.0
            )
        chosen = outputs[output_name(self.distance)]
        outputs["distance"] = chosen
        parsed = distances_to_brackets(read["tokens"], chosen, read["lengths"],
                                       decoder=self.decoder)
        outputs["tree"] = parsed["trees"]
        return outputs

    def score(self, sentences):
        read = self._read(sentences)
        logits, _ = self._forward(read["inputs"])
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        targets = read["inputs"][:, 1:]
        target_log_probs = tf.gather(
            log_probs[:, :-1], targets, axis=2, batch_dims=2
        )
        width = read["width"]
        lengths = read["lengths"]
        mask = tf.sequence_mask(lengths, width)
        token_log_probs = tf.where(mask, target_log_probs[:, :width], 0.0)
        end_log_prob = tf.gather(target_log_probs, lengths, axis=1, batch_dims=1)
        valid = read["valid"]
        sentence_log_prob = tf.where(
            valid, tf.reduce_sum(token_log_probs, axis=1) + end_log_prob, 0.0
        )
        perplexity = tf.where(
            valid,
            tf.exp(-sentence_log_prob / tf.cast(lengths + 1, tf.float32)),
            0.0,
        )
        outputs = self._common(read)
        outputs["token_log_probs"] = token_log_probs
        outputs["sentence_log_prob"] = sentence_log_prob
        outputs["perplexity"] = perplexity
        return outputs


def _is_parser(model):
    """Whether `model` is a supervised distance parser (no word
    probabilities, its own decoder), not a language model."""
    return getattr(model, "default_decoder", None) == "gap"


def export_language_model(model, output, version=None, distance=None,
                          max_length=DEFAULT_MAX_LENGTH, numbers="digit-runs",
                          lowercase=True, treebank=True, overwrite=False,
                          verbose=False):
    """Writes a SavedModel of an ON-LSTM or PRPN language model for serving.

    A `DistanceParser` (the student of tree averaging) exports the same
    way, with the `parse` signature only (it gives no word
    probabilities) and its trees built by the gap decoder.

    Args:
        model: an `ONLSTMLanguageModel`, `PRPNLanguageModel` or
            `DistanceParser` that knows its words (built with a vocabulary
            list, or loaded from its `.keras` file).
        output: the folder TF Serving watches; the SavedModel goes to
            `output/<version>/`.
        version: int, the version folder; `None` for one more than the
            largest present (1 in a new folder).
        distance: the distance the `tree` output parses with (e.g.
            `"layer3/forget"`); `None` for the model's `default_distance`.
        max_length: the most tokens a sentence may have; longer ones are
            answered with an error (for that sentence only).
        numbers: how the model's text writes numbers (`"digit-runs"`,
            `"ptb"`, `None`; see `keras_ordered.export.text.normalize`).
        lowercase: whether the model's text is lower-cased (PTB's is).
        treebank: split punctuation off the words as the Penn Treebank
            does (`False`: split at whitespace only).
        overwrite: replace an existing `output/<version>/`.
        verbose: let Keras print the exported endpoints.

    Returns:
        The path of the written SavedModel (`output/<version>`).

    Example:

    ```python
    import tensorflow as tf

    model = keras_ordered.models.PRPNLanguageModel.from_preset("prpn_ptb_quick")
    path = keras_ordered.export.export_language_model(model, "exported/prpn")
    served = tf.saved_model.load(path)
    out = served.signatures["parse"](tf.constant(["The cat sat on the mat."]))
    print(out["tree"].numpy())
    ```
    """
    names = list(getattr(model, "distance_names", []) or [])
    if not names or not callable(getattr(model, "serving_outputs", None)):
        raise ValueError(
            f"{type(model).__name__} is not a tree-inducing language model "
            "of keras_ordered (ONLSTMLanguageModel, PRPNLanguageModel): "
            "export_language_model cannot export it."
        )
    if not getattr(model, "_vocabulary_given", False):
        raise ValueError(
            "The model knows only its vocabulary size, not its words: an "
            "exported model must map text to ids. Load it from its .keras "
            "file, or build it with vocabulary=[...words]."
        )
    if getattr(model, "direction", "forward") != "forward":
        raise ValueError(
            "The model reads backward (direction='backward'): its served "
            "signatures would read the sentences forward. Export supports "
            "forward models only; parse with it in Python or the CLI, or "
            "in an ensemble.")
    distance = distance or model.default_distance or names[0]
    if distance not in names:
        raise ValueError(
            f"The model has no distance {distance!r}; available: "
            f"{', '.join(names)}."
        )
    path = version_path(output, version, overwrite)

    with tempfile.TemporaryDirectory() as scratch:
        vocabulary_file = text_lib.write_vocabulary(
            list(model.vocabulary), os.path.join(scratch, "vocabulary.txt")
        )
        preprocessor = text_lib.TextPreprocessor(
            vocabulary_file,
            numbers=numbers,
            lowercase=lowercase,
            treebank=treebank,
            max_length=max_length,
            name="text",
        )
        if isinstance(preprocessor, keras.layers.Layer) and not preprocessor.built:
            preprocessor(tf.constant(["a"]))  # builds it (ExportArchive needs that)
        functions = _LanguageModelSignatures(
            model, preprocessor, distance,
            decoder="gap" if _is_parser(model) else "right")
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.track(preprocessor)
        # The first endpoint is also `serving_default`.
        archive.add_endpoint("parse", functions.parse, [SENTENCES_SPEC])
        if not _is_parser(model):
            archive.add_endpoint("score", functions.score, [SENTENCES_SPEC])
        write_version(
            lambda folder: archive.write_out(folder, verbose=verbose), path
        )
    return path
