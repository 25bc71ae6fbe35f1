"""SavedModels of the GFL parser (LSTM+A, "Grammar as a Foreign Language").

`export_gfl_parser` writes a versioned SavedModel whose signature `parse`
(also `serving_default`) takes raw sentences (`tf.string`, shape `[None]`)
and runs the parser's whole text path in the graph, the path of
`keras-ordered parse --model gfl.keras` (`keras_ordered_cli._gfl` over
`keras_ordered.models.gfl.inference.parse_sentences`):

1. UTF-8 repair and Treebank tokenization (`keras_ordered.export.text`,
   the tokenizer of the command line), per-sentence checks;
2. the words as the trees write them (`(` -> `-LRB-`, `)` -> `-RRB-`),
   looked up in the parser's `SourceVocabulary` (lower-cased first when
   the vocabulary lower-cases; no digit normalisation; `<unk>` for the
   others) through a table whose file is an asset of the SavedModel;
3. the words reversed, encoded, and decoded in the graph by the parser's
   own decoding function (greedy, or beam search with the beam chosen at
   export), at most `max_length_factor * n + max_length_offset` symbols
   for `n` words;
4. the symbols turned into a labelled tree by the in-graph
   `keras_ordered.export.linearized.delinearize`, with the repairs of
   `keras_ordered.parsing.linearize.delinearize` (every POS tag `XX`).

Outputs, the batch first: `tokens` (string `[batch, max_tokens]`, padded
with `""`; tokens as written), `length` (int32), `tree` (the labelled
bracketed tree, exactly the line `keras-ordered parse` prints), `symbols`
(the decoded linearized tree, space-separated), `malformed` (bool: the
output needed a repair), `repairs` (int32 `[batch, 8]`, the counts of
`keras_ordered.export.linearized.REPAIR_KINDS`), `valid` and `error`. A
sentence that cannot be read (empty, only whitespace, longer than the
exported limit, invalid UTF-8) gets `valid` false, an `error` message and
empty outputs; the other sentences get the answers they would get alone.
"""

import os
import tempfile

import keras
import tensorflow as tf

from keras_ordered.export import text as text_lib
from keras_ordered.export.language_model import DEFAULT_MAX_LENGTH
from keras_ordered.export.language_model import SENTENCES_SPEC
from keras_ordered.export.layout import version_path
from keras_ordered.export.layout import write_version
from keras_ordered.export.linearized import REPAIR_KINDS
from keras_ordered.export.linearized import delinearize
from keras_ordered.export.linearized import symbols_from_ids
from keras_ordered.models.gfl.gfl_parser import GFLParser
from keras_ordered.models.gfl.vocabulary import EOS_ID
from keras_ordered.models.gfl.vocabulary import GO_ID
from keras_ordered.models.gfl.vocabulary import PAD_ID
from keras_ordered.models.gfl.vocabulary import UNK_ID

VOCABULARY_FILE = "source_vocabulary.txt"
"""The name of the source vocabulary under the SavedModel's `assets/`."""


def _escape(tokens):
    """Brackets inside words as the Treebank writes them (`_common.escape`)."""
    tokens = tf.strings.regex_replace(tokens, r"\(", "-LRB-")
    return tf.strings.regex_replace(tokens, r"\)", "-RRB-")


def _is_gfl_parser(model):

    return isinstance(model, GFLParser)


class _GFLSignatures:
    """The graph function of the `parse` signature, over one parser."""

    def __init__(self, model, vocabulary_file, beam_size, max_length,
                 max_length_factor, max_length_offset, lowercase, treebank):

        self.vocabulary = text_lib.VocabularyTable(
            vocabulary_file, unk_token=text_lib.UNK, name="source_vocabulary"
        )
        self._decode = model._decode_function(beam_size)
        self._symbols = list(model.target_vocabulary)
        self._ids = {"eos": EOS_ID, "skip": (PAD_ID, GO_ID), "unk": UNK_ID}
        self._max_length = max_length
        self._factor = max_length_factor
        self._offset = max_length_offset
        self._lowercase = lowercase
        self._treebank = treebank

    def parse(self, sentences):
        repaired, valid_utf8 = text_lib.repair_utf8(sentences)
        tokens = text_lib.tokenize(repaired, treebank=self._treebank)
        valid, message = text_lib.check_sentences(
            sentences, tokens, self._max_length, valid_utf8
        )
        row_lengths = tokens.row_lengths()
        keep = tf.RaggedTensor.from_row_lengths(
            tf.repeat(valid, row_lengths), row_lengths
        )
        tokens = tf.ragged.boolean_mask(tokens, keep)
        words = _escape(tokens)
        keys = text_lib.normalize(words, numbers=None, lowercase=self._lowercase)
        ids = tf.cast(self.vocabulary(keys), tf.int32)
        # The encoder reads the words backwards; a refused sentence reads
        # one <unk> (its outputs are dropped).
        source = tf.reverse(ids, [1]).to_tensor(default_value=0)
        source = tf.pad(
            source, [[0, 0], [0, tf.maximum(1 - tf.shape(source)[1], 0)]]
        )
        first = tf.equal(tf.range(tf.shape(source)[1]), 0)[None, :]
        source = tf.where(
            valid[:, None], source, tf.where(first, self._ids["unk"], 0)
        )
        batch = tf.shape(source)[0]
        # The recurrent layers cannot run a batch of 0: one dummy row.
        padded = tf.cond(
            batch > 0, lambda: source, lambda: tf.fill([1, 1], self._ids["unk"])
        )
        decoded = self._decode(
            padded,
            tf.constant(self._factor, tf.int32),
            tf.constant(self._offset, tf.int32),
        )["tokens"][:batch]
        symbols = symbols_from_ids(
            decoded, self._symbols, self._ids["eos"], self._ids["skip"]
        )
        symbols = tf.ragged.boolean_mask(
            symbols,
            tf.RaggedTensor.from_row_lengths(
                tf.repeat(valid, symbols.row_lengths()), symbols.row_lengths()
            ),
        )
        parsed = delinearize(symbols, words)
        lengths = tf.cast(tokens.row_lengths(), tf.int32)
        return {
            "tokens": tokens.to_tensor(default_value=""),
            "length": lengths,
            "tree": tf.where(valid, parsed["tree"], ""),
            "symbols": tf.strings.reduce_join(symbols, axis=1, separator=" "),
            "malformed": valid & parsed["malformed"],
            "repairs": tf.where(valid[:, None], parsed["repairs"], 0),
            "valid": valid,
            "error": message,
        }


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"`{name}` must be an int >= {minimum}. Received: {name}={value!r}"
        )
    return value


def export_gfl_parser(model, output, version=None, beam_size=None,
                      max_length=DEFAULT_MAX_LENGTH, max_length_factor=3,
                      max_length_offset=10, lowercase=None, treebank=True,
                      overwrite=False, verbose=False):
    """Writes a SavedModel of a `GFLParser` that parses raw sentences.

    The signature `parse` (also `serving_default`) gives, for every
    sentence, the labelled tree `keras-ordered parse --model M.keras`
    prints (the module docstring lists the outputs). The source vocabulary
    file becomes an asset; the target symbols are constants of the graph.
    The encoder's LSTMs are traced without cuDNN kernels, so that a GPU
    export serves on CPU too.

    Args:
        model: a `keras_ordered.models.GFLParser` that knows its
            vocabularies (loaded from its `.keras` file, or built with a
            `SourceVocabulary` and a `TargetVocabulary`).
        output: the folder TF Serving watches; the SavedModel goes to
            `output/<version>/`.
        version: int, the version folder; `None` for one more than the
            largest present (1 in a new folder).
        beam_size: `None` or 1 for greedy decoding, else the beam of the
            beam search (the paper's 10).
        max_length: the most tokens a sentence may have; longer ones are
            answered with an error (for that sentence only).
        max_length_factor, max_length_offset: a sentence of `n` words gets
            at most `factor * n + offset` symbols (`parse_sentences`'
            defaults, 3 and 10).
        lowercase: lower-case the words before the lookup; `None` for the
            source vocabulary's own setting (what `parse_sentences` does).
        treebank: split punctuation off the words as the Penn Treebank
            does (`False`: split at whitespace only).
        overwrite: replace an existing `output/<version>/`.
        verbose: let Keras print the exported endpoint.

    Returns:
        The path of the written SavedModel (`output/<version>`).

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.models.gfl import SourceVocabulary, TargetVocabulary
    source = SourceVocabulary(["the", "cat", "sat", "on", "mat", "."],
                              lowercase=True)
    target = TargetVocabulary(["(S", ")S", "(NP", ")NP", "(VP", ")VP", "XX"])
    # An untrained parser; `keras_ordered.load_model("runs/gfl_wsj/model.keras")`
    # gives a trained one.
    parser = keras_ordered.models.GFLParser.from_preset("tiny", source, target)
    path = keras_ordered.export.export_gfl_parser(
        parser, "exported/gfl", beam_size=3)  # exported/gfl/1
    served = tf.saved_model.load(path)
    out = served.signatures["parse"](tf.constant(["The cat sat on the mat."]))
    print(out["tree"].numpy()[0].decode(), out["malformed"].numpy()[0])
    ```
    """
    if not _is_gfl_parser(model):
        raise ValueError(
            f"{type(model).__name__} is not a keras_ordered GFLParser: "
            "export_gfl_parser cannot export it."
        )
    if model.source_vocabulary is None or model.target_vocabulary is None:
        raise ValueError(
            "The parser knows only its vocabularies' sizes, not their "
            "tokens: an exported parser must map text to ids. Load it from "
            "its .keras file, or build it with a SourceVocabulary and a "
            "TargetVocabulary."
        )
    if beam_size is not None:
        _check_int("beam_size", beam_size, 1)
        if beam_size == 1:
            beam_size = None  # a beam of one is greedy search, step for step
    _check_int("max_length", max_length, 1)
    _check_int("max_length_factor", max_length_factor, 0)
    _check_int("max_length_offset", max_length_offset, 0)
    if max_length_factor == 0 and max_length_offset == 0:
        raise ValueError(
            "`max_length_factor` and `max_length_offset` are both 0: nothing "
            "could be decoded. The default is 3 * n + 10."
        )
    if lowercase is None:
        lowercase = bool(getattr(model.source_vocabulary, "lowercase", False))
    path = version_path(output, version, overwrite)

    # A fresh trace of the decoding function, without cuDNN kernels (the
    # model's cached trace may hold them when it ran on a GPU).
    lstms = [layer for layer in model.encoder_layers if hasattr(layer, "use_cudnn")]
    saved_cudnn = [layer.use_cudnn for layer in lstms]
    saved_cache = model._decode_cache
    try:
        for layer in lstms:
            layer.use_cudnn = False
        model._decode_cache = type(saved_cache)()
        with tempfile.TemporaryDirectory() as scratch:
            vocabulary_file = text_lib.write_vocabulary(
                list(model.source_vocabulary),
                os.path.join(scratch, VOCABULARY_FILE),
            )
            functions = _GFLSignatures(
                model, vocabulary_file, beam_size, max_length,
                max_length_factor, max_length_offset, lowercase, treebank,
            )
            archive = keras.export.ExportArchive()
            archive.track(model)
            archive.track(functions.vocabulary)
            archive.add_endpoint("parse", functions.parse, [SENTENCES_SPEC])
            write_version(
                lambda folder: archive.write_out(folder, verbose=verbose), path
            )
    finally:
        model._decode_cache = saved_cache
        for layer, value in zip(lstms, saved_cudnn):
            layer.use_cudnn = value
    return path


__all__ = ["export_gfl_parser", "REPAIR_KINDS"]
