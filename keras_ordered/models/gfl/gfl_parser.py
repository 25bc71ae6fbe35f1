"""The sequence-to-sequence constituency parser of "Grammar as a Foreign
Language" (Vinyals et al., 2015): LSTM+A.

Structure of the functional model
=================================

Inputs (a list in this order, or a dict keyed by the names):

- `source_ids` `(batch, S)` int32: the sentence's words *reversed* (the
  paper reverses the input), right-padded with `<pad>` = 0, which the
  encoder and the attention mask;
- `target_in` `(batch, T)` int32: the decoder's inputs under teacher
  forcing, `<go> y_1 .. y_{T-1}` (see `TargetVocabulary.teacher_forcing_batch`).

Output: `logits` `(batch, T, target_vocabulary)` float32, position `t`
predicting `y_{t+1}` (`target_out`, with `<eos>` last); the default loss of
`compile()` is the sparse cross-entropy averaged over the non-padding
targets (`<pad>` = 0 ignored).

`source embedding -> encoder (L stacked LSTMs, dropout between them) ->
decoder (L stacked LSTMs starting from the encoder's final states, with
attention over the encoder's top states and input feeding) -> dropout ->
Dense softmax layer over the target symbols`.

Decoding (`greedy_decode`, `beam_decode`) runs the decoder step by step
in one loop (`keras_ordered.models.gfl.decoding`: on TensorFlow inside a
`tf.function`, the graph a SavedModel export serves; on JAX and PyTorch
in `keras.ops.while_loop`), batched over sentences, with at most
`max_length_factor * n + max_length_offset` symbols for a sentence of `n`
words. `<pad>` and `<go>` are never decoded: the decoding softmax runs
over the other symbols (scores are log-probabilities under that restricted
softmax).

Design choices (where the paper leaves room)
============================================

- The decoder continues from the encoder's final states, with or without
  attention. The paper's model is one deep LSTM reading
  `A_1 .. A_{T_A}, B_1 .. B_{T_B}` (with "different sets of LSTM
  parameters" for the two parts), so its decoder starts where the encoder
  stopped.
- Input feeding: `[d_t ; d'_t]` "is fed to the next time step": by default
  `d'_{t-1}` enters the top decoder layer, which is the same as that
  layer's recurrent state being `[d_{t-1} ; d'_{t-1}]` (see
  `keras_ordered.layers.attention_decoder`).
- Dropout ("used between the LSTMs when training on small datasets"): on
  the inputs of encoder and decoder layers 2 .. L, a fresh mask per step,
  and on `[d_t ; d'_t]` before the softmax layer (so that a one-layer
  model has dropout too). No dropout on recurrent connections.
- Without attention (`attention=False`), the decoder predicts from `d_t`
  alone: the paper's LSTM baseline.
"""

import json
import os

import keras
import numpy as np
from keras import ops

from keras_ordered import backend
from keras_ordered._keras_private import SymbolicBuildWithoutData
from keras_ordered.layers._checks import check_positive_int as _positive_int
from keras_ordered.layers._checks import check_rate
from keras_ordered.layers.attention_decoder import INPUT_FEEDING
from keras_ordered.layers.attention_decoder import AttentionDecoder
from keras_ordered.models.base import RegisteredPresets
from keras_ordered.models.base import Vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.base import base_model_config
from keras_ordered.models.gfl import decoding
from keras_ordered.models.gfl.presets import PRESETS
from keras_ordered.models.gfl.vocabulary import EOS_ID
from keras_ordered.models.gfl.vocabulary import GO_ID
from keras_ordered.models.gfl.vocabulary import PAD_ID
from keras_ordered.models.gfl.vocabulary import SourceVocabulary
from keras_ordered.models.gfl.vocabulary import TargetVocabulary
from keras_ordered._tokens import TokenVocabulary

VOCABULARY_ASSET = "gfl_vocabulary.json"
"""The asset of a `.keras` archive holding the source words and target symbols."""


def _check_vocabulary(value, cls, name, lowercase):
    """`(size, vocabulary object or None)` of a vocabulary argument."""
    if isinstance(value, Vocabulary):
        value = value.size if value.words is None else list(value.words)
    minimum = len(cls.specials) + 1
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < minimum:
            raise ValueError(
                f"`{name}` must have at least {minimum} tokens (the specials "
                f"{', '.join(cls.specials)} and one more). Received: {value}"
            )
        return int(value), None
    if isinstance(value, TokenVocabulary) and not isinstance(value, cls):
        raise ValueError(
            f"`{name}` must be a {cls.__name__}, not a "
            f"{type(value).__name__}: did you swap the source and target "
            "vocabularies?"
        )
    if isinstance(value, cls):
        vocabulary = value
    elif isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(
            f"`{name}` must be a {cls.__name__}, a list of tokens or a size. "
            f"Received: {value!r}"
        )
    elif cls is SourceVocabulary:
        vocabulary = SourceVocabulary(list(value), lowercase=lowercase)
    else:
        vocabulary = cls(list(value))
    if len(vocabulary) < minimum:
        raise ValueError(
            f"`{name}` has only its special tokens; build it from the data "
            f"({cls.__name__}.from_...)."
        )
    return len(vocabulary), vocabulary


def _to_numpy(value):
    """A tensor of any backend, a NumPy array or nested lists as NumPy."""
    if isinstance(value, (np.ndarray, list, tuple, int, float, np.generic)):
        return np.asarray(value)
    return ops.convert_to_numpy(value)


class _FunctionCache:
    """Holds the decoding `tf.function`s out of Keras' attribute tracking."""

    def __init__(self):
        self.functions = {}


@keras.saving.register_keras_serializable(package="keras_ordered")
class GFLParser(RegisteredPresets, SymbolicBuildWithoutData,
                keras.Model):
    """LSTM+A constituency parser: linearized trees from reversed sentences.

    Encoder: source embeddings (optionally pretrained: `load_word_vectors`,
    `set_source_embeddings`) and `num_layers` LSTMs over the reversed
    words. Decoder: `num_layers` LSTMs with separate weights
    (`keras_ordered.layers.AttentionDecoder`), additive attention
    `u_i^t = v^T tanh(W_1' h_i + W_2' d_t)` over the encoder's top states,
    and a softmax layer on `[d_t ; d'_t]`. The module docstring gives the
    inputs, the output and the design choices.

    Args:
        source_vocabulary: `SourceVocabulary`, list of words, or the size
            (ids 0 = `<pad>`, 1 = `<unk>`).
        target_vocabulary: `TargetVocabulary`, list of symbols, or the size
            (ids 0 = `<pad>`, 1 = `<go>`, 2 = `<eos>`).
        embedding_dim: int, source word embedding size (the paper's 512).
        target_embedding_dim: int or None, target symbol embedding size;
            None means `units`.
        units: int, size of every LSTM layer (the paper's 256).
        num_layers: int, LSTM layers in the encoder and in the decoder (3).
        attention: bool, False for the paper's no-attention baseline.
        attention_units: int or None, the attention's hidden size (256);
            None means `units`.
        input_feeding: `"top"` (default), `"bottom"` or None: where the
            previous context `d'_{t-1}` enters the decoder.
        dropout: float, between LSTM layers and before the softmax layer
            (training only).
        lowercase: bool or None, lower-case source words; None takes the
            `SourceVocabulary`'s setting (False for a list or a size).
        seed: int or None, seed of the dropouts.
        dtype: the dtype policy of every layer of the model (a
            `keras.DTypePolicy` or its name, such as `"mixed_bfloat16"`);
            None: the global policy. Kept in the config.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

    Example:

    ```python
    source = keras_ordered.models.gfl.SourceVocabulary(["dog", "a", "has", "John"])
    target = keras_ordered.models.gfl.TargetVocabulary(["(S", ")S", "(NP", ")NP", "XX"])
    parser = keras_ordered.models.GFLParser.from_preset("tiny", source, target)
    source_ids = source.encode_batch([["dog", "a", "has", "John"]])
    target_in, target_out = target.teacher_forcing_batch([["(S", "XX", ")S"]])
    logits = parser([source_ids, target_in])  # (1, 4, 8)
    parser.compile(optimizer="adam")
    parser.fit([source_ids, target_in], target_out, epochs=1, verbose=0)
    result = parser.beam_decode(source_ids, beam_size=3)
    symbols = parser.symbols(result["tokens"])  # [["(S", ...]]
    ```

    Reference:
        Vinyals, Kaiser, Koo, Petrov, Sutskever, Hinton. "Grammar as a
        Foreign Language". NeurIPS 2015.
    """

    preset_table = PRESETS
    preset_family = "GFL"

    def __init__(
        self,
        source_vocabulary,
        target_vocabulary,
        embedding_dim=512,
        target_embedding_dim=None,
        units=256,
        num_layers=3,
        attention=True,
        attention_units=None,
        input_feeding="top",
        dropout=0.3,
        lowercase=None,
        seed=None,
        dtype=None,
        **kwargs,
    ):
        with dtype_policy_scope(dtype):
            if lowercase is None:
                lowercase = bool(getattr(source_vocabulary, "lowercase", False))
            source_size, source_tokens = _check_vocabulary(
                source_vocabulary, SourceVocabulary, "source_vocabulary", lowercase
            )
            target_size, target_tokens = _check_vocabulary(
                target_vocabulary, TargetVocabulary, "target_vocabulary", False
            )
            _positive_int("embedding_dim", embedding_dim)
            _positive_int("units", units)
            _positive_int("num_layers", num_layers)
            if target_embedding_dim is not None:
                _positive_int("target_embedding_dim", target_embedding_dim)
            if attention_units is not None:
                _positive_int("attention_units", attention_units)
            if input_feeding not in INPUT_FEEDING:
                raise ValueError(
                    "`input_feeding` must be 'top' (the paper's reading), "
                    f"'bottom' or None. Received: input_feeding={input_feeding!r}"
                )
            dropout = check_rate("dropout", dropout)

            def seed_for(k):
                return None if seed is None else seed + 100 * k

            # === Layers ===
            source_embedding = keras.layers.Embedding(
                source_size, embedding_dim, name="source_embedding"
            )
            target_embedding = keras.layers.Embedding(
                target_size,
                target_embedding_dim or units,
                name="target_embedding",
            )
            encoder_layers = [
                keras.layers.LSTM(
                    units,
                    return_sequences=True,
                    return_state=True,
                    name=f"encoder_lstm_{index + 1}",
                )
                for index in range(num_layers)
            ]
            encoder_dropouts = [
                keras.layers.Dropout(
                    dropout, seed=seed_for(index + 1), name=f"encoder_dropout_{index + 1}"
                )
                for index in range(num_layers - 1)
            ]
            decoder = AttentionDecoder(
                units,
                num_layers=num_layers,
                attention=attention,
                attention_units=attention_units,
                input_feeding=input_feeding,
                dropout=dropout,
                seed=seed_for(num_layers + 1),
                name="decoder",
            )
            output_dropout = keras.layers.Dropout(
                dropout, seed=seed_for(num_layers + 2), name="output_dropout"
            )
            output_layer = keras.layers.Dense(target_size, name="output_projection")

            # === Functional graph ===
            source_ids = keras.Input((None,), dtype="int32", name="source_ids")
            target_in = keras.Input((None,), dtype="int32", name="target_in")
            memory, source_mask, encoder_states = _encode(
                source_embedding, encoder_layers, encoder_dropouts, source_ids
            )
            embedded_targets = target_embedding(target_in)
            features, _ = decoder(
                [embedded_targets, memory, source_mask, *encoder_states]
            )
            logits = keras.layers.Activation("linear", dtype="float32", name="logits")(
                output_layer(output_dropout(features))
            )
            super().__init__(inputs=[source_ids, target_in], outputs=logits, **kwargs)

            # === Config ===
            self.source_vocabulary = source_tokens
            self.target_vocabulary = target_tokens
            self.source_vocabulary_size = source_size
            self.target_vocabulary_size = target_size
            self.embedding_dim = embedding_dim
            self.target_embedding_dim = target_embedding_dim
            self.units = units
            self.num_layers = num_layers
            self.attention = bool(attention)
            self.attention_units = attention_units
            self.input_feeding = input_feeding
            self.dropout = dropout
            self.lowercase = bool(lowercase)
            self.seed = seed
            self.source_embedding = source_embedding
            self.target_embedding = target_embedding
            self.encoder_layers = encoder_layers
            self.encoder_dropouts = encoder_dropouts
            self.decoder = decoder
            self.output_layer = output_layer
            self._decode_cache = _FunctionCache()

    # --- training ---------------------------------------------------------
    def compile(self, optimizer="adam", loss="auto", **kwargs):
        """`keras.Model.compile`; `loss="auto"` is the masked cross-entropy.

        The default loss, `SparseCategoricalCrossentropy(from_logits=True,
        ignore_class=0)`, averages over the targets that are not `<pad>`.
        """
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=PAD_ID
            )
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def compile_from_config(self, config):
        """Compiles a loaded model as it was saved (Keras calls this on load)."""
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if getattr(self, "optimizer", None) is not None and self.built:
            self.optimizer.build(self.trainable_variables)

    def set_source_embeddings(self, matrix):
        """Loads pretrained source word vectors (see `load_word_vectors`)."""
        matrix = _to_numpy(matrix).astype("float32")
        expected = (self.source_vocabulary_size, self.embedding_dim)
        if matrix.shape != expected:
            raise ValueError(
                f"The embedding matrix must have shape {expected} (source "
                f"vocabulary, embedding_dim). Received: {matrix.shape}"
            )
        self.source_embedding.embeddings.assign(matrix)

    # --- step by step -----------------------------------------------------
    def encode(self, source_ids):
        """The encoder's output and the decoder's initial state (inference).

        Returns:
            dict with `memory` `(batch, S, units)`, `keys` (the attention's
            `W_1' h_i`), `mask` bool `(batch, S)` and `states` (the
            decoder's initial state list).
        """
        source_ids = ops.convert_to_tensor(source_ids, dtype="int32")
        memory, mask, encoder_states = _encode(
            self.source_embedding,
            self.encoder_layers,
            self.encoder_dropouts,
            source_ids,
            training=False,
        )
        memory = ops.cast(memory, self.decoder.compute_dtype)
        return {
            "memory": memory,
            "keys": self.decoder.project_memory(memory),
            "mask": mask,
            "states": self.decoder.initial_state(encoder_states, memory),
        }

    def decode_step(self, previous_ids, states, encoded):
        """One decoder step (inference).

        Args:
            previous_ids: int `(batch,)`, the previous symbols (`<go>` first).
            states: the decoder's state list (`encoded["states"]` first).
            encoded: the dict of `encode` (`memory`, `keys`, `mask`).

        Returns:
            `(logits, new_states, attention_weights)`: float32
            `(batch, target_vocabulary)`, the new state list, float32
            `(batch, S)`.
        """
        previous_ids = ops.convert_to_tensor(previous_ids, dtype="int32")
        embedded = self.target_embedding(previous_ids)
        features, new_states, weights = self.decoder.step(
            embedded, states, encoded["memory"], encoded["keys"], encoded["mask"]
        )
        logits = ops.cast(self.output_layer(features), "float32")
        return logits, new_states, weights

    # --- decoding -----------------------------------------------------------
    # "auto": the `tf.function` of `_decode_function` on TensorFlow, the
    # `keras.ops` searches elsewhere; "ops": the `keras.ops` searches on
    # every backend (the tests set it on an instance to check the fallback
    # against the fast path).
    _decoding_implementation = "auto"

    def _step_function(self):
        """The searches' `step_fn`: log-probabilities over every symbol but
        `<pad>` and `<go>`, which are never outputs (the softmax is taken
        over the other symbols)."""
        banned = np.isin(np.arange(self.target_vocabulary_size), [PAD_ID, GO_ID])

        def step_fn(previous, states, constants):
            memory, keys, mask = constants
            logits, new_states, weights = self.decode_step(
                previous, states, {"memory": memory, "keys": keys, "mask": mask}
            )
            logits = ops.where(banned, -1e9, logits)
            return ops.log_softmax(logits, axis=-1), new_states, weights

        return step_fn

    def _search(self, encoded, max_lengths, beam_size, max_steps, trim=True):
        """The `keras.ops` greedy (`beam_size` None) or beam search from the
        encoder's output `encoded` (`encode`), with buffers of `max_steps`
        columns; `trim` as `decoding.greedy_search`'s."""
        arguments = dict(
            step_fn=self._step_function(),
            states=encoded["states"],
            constants=[encoded["memory"], encoded["keys"], encoded["mask"]],
            max_lengths=max_lengths,
            go_id=GO_ID,
            eos_id=EOS_ID,
            pad_id=PAD_ID,
            max_steps=max_steps,
            implementation="ops",
            trim=trim,
        )
        if beam_size is None:
            return decoding.greedy_search(**arguments)
        return decoding.beam_search(beam_size=beam_size, **arguments)

    def _decode_ops(self, source_ids, beam_size, factor, offset):
        """Decoding with the `keras.ops` searches (the generic path):
        `source_ids` a NumPy int array; returns NumPy arrays."""
        if backend.name() == "jax":
            return self._decode_compiled(source_ids, beam_size, factor, offset)
        with decoding.no_grad():
            # The most symbols per sentence, from the host's copy of the ids
            # (the buffers' size must be a Python int).
            lengths = np.sum(source_ids != PAD_ID, axis=1).astype("int32")
            max_lengths = (factor * lengths + offset).astype("int32")
            max_steps = int(np.max(max_lengths, initial=0))
            result = self._search(self.encode(source_ids), max_lengths,
                                  beam_size, max_steps)
        return {name: ops.convert_to_numpy(value) for name, value in result.items()}

    # Sentences are padded to a multiple of this many words on JAX, where
    # each new input shape is compiled again.
    _length_bucket = 8

    def _decode_compiled(self, source_ids, beam_size, factor, offset):
        """`_decode_ops` compiled (`backend.compiled_inference`): on JAX the
        searches' while loops, run eagerly, would be traced and compiled
        again at every call. The batch's sentences are padded with `<pad>`
        to a multiple of `_length_bucket` words (the encoder and the
        attention mask padding out), and the loop's buffers sized for that
        length, so that one program serves every batch of a bucket."""
        batch, words = source_ids.shape
        bucket = backend.compiled_width(max(words, 1), self._length_bucket)
        padded = np.full((batch, bucket), PAD_ID, "int32")
        padded[:, :words] = source_ids
        # The most symbols of a sentence of `bucket` words: every row's
        # limit (`factor * n + offset`, n <= bucket) is within it.
        max_steps = factor * bucket + offset

        def run(source_ids, factor, offset):
            encoded = self.encode(source_ids)
            lengths = ops.sum(ops.cast(encoded["mask"], "int32"), axis=1)
            return self._search(encoded, factor * lengths + offset,
                                beam_size, max_steps, trim=False)

        decode = backend.compiled_inference(
            self, f"decode:{beam_size}:{max_steps}", run)
        result = decoding.trim_steps(decode(
            padded, np.int32(factor), np.int32(offset)))
        result = {name: ops.convert_to_numpy(value)
                  for name, value in result.items()}
        if "attention" in result:
            result["attention"] = result["attention"][:, :, :words]
        return result

    # TensorFlow fast path ----------------------------------------------------
    def _decode_function(self, beam_size):
        """The TensorFlow decoding graph (a `tf.function` of the ids, the
        length factor and offset) for `beam_size` (None: greedy), cached;
        the SavedModel export serves it."""
        tf = backend.require_tensorflow("the TensorFlow decoding graph")
        functions = self._decode_cache.functions
        if beam_size not in functions:

            def run(source_ids, factor, offset):
                encoded = self.encode(source_ids)
                lengths = tf.reduce_sum(tf.cast(encoded["mask"], tf.int32), axis=1)
                max_lengths = factor * lengths + offset
                constants = [encoded["memory"], encoded["keys"], encoded["mask"]]
                # <pad> and <go> are never outputs: the softmax is taken
                # over the other symbols.
                banned = tf.one_hot(PAD_ID, self.target_vocabulary_size) + tf.one_hot(
                    GO_ID, self.target_vocabulary_size
                )

                def step_fn(previous, states, constants):
                    memory, keys, mask = constants
                    logits, new_states, weights = self.decode_step(
                        previous, states, {"memory": memory, "keys": keys, "mask": mask}
                    )
                    logits = tf.where(banned > 0, -1e9, logits)
                    return tf.nn.log_softmax(logits), new_states, weights

                if beam_size is None:
                    return decoding.greedy_search(
                        step_fn, encoded["states"], constants, max_lengths,
                        GO_ID, EOS_ID, PAD_ID, implementation="tensorflow",
                    )
                return decoding.beam_search(
                    step_fn, encoded["states"], constants, max_lengths,
                    GO_ID, EOS_ID, beam_size=beam_size, pad_id=PAD_ID,
                    implementation="tensorflow",
                )

            functions[beam_size] = tf.function(
                run,
                input_signature=[
                    tf.TensorSpec([None, None], tf.int32),
                    tf.TensorSpec([], tf.int32),
                    tf.TensorSpec([], tf.int32),
                ],
            )
        return functions[beam_size]

    def _run_decoder(self, source_ids, beam_size, max_length_factor, max_length_offset):
        for name, value in (
            ("max_length_factor", max_length_factor),
            ("max_length_offset", max_length_offset),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(
                    f"`{name}` must be a non-negative integer. Received: "
                    f"{name}={value!r}"
                )
        if max_length_factor == 0 and max_length_offset == 0:
            raise ValueError(
                "`max_length_factor` and `max_length_offset` are both 0: "
                "nothing could be decoded. The default is 3 * n + 10."
            )
        source_ids = _to_numpy(source_ids)
        if source_ids.ndim != 2:
            raise ValueError(
                "`source_ids` must be a 2-D int array (batch, words), "
                f"0-padded. Received shape {source_ids.shape}."
            )
        if self._decoding_implementation == "auto" and backend.is_tensorflow():
            tf = backend.require_tensorflow("the TensorFlow decoding graph")
            result = self._decode_function(beam_size)(
                tf.constant(source_ids, tf.int32),
                tf.constant(int(max_length_factor), tf.int32),
                tf.constant(int(max_length_offset), tf.int32),
            )
            return {
                name: ops.convert_to_numpy(value) for name, value in result.items()
            }
        return self._decode_ops(
            source_ids.astype("int32"), beam_size, int(max_length_factor),
            int(max_length_offset),
        )

    def greedy_decode(self, source_ids, max_length_factor=3, max_length_offset=10):
        """Greedy decoding of a batch of (reversed, 0-padded) sentences.

        Args:
            source_ids: int array `(batch, S)`.
            max_length_factor, max_length_offset: int, a sentence of `n`
                words gets at most `factor * n + offset` symbols.

        Returns:
            dict of numpy arrays: `tokens` `(batch, steps)` (`<eos>`
            included when produced, then `<pad>`), `lengths` (symbols
            before `<eos>`), `scores` (log-probabilities) and `attention`
            `(batch, steps, S)` (each row sums to one over the sentence's
            words; zero on padding and after the end).
        """
        return self._run_decoder(source_ids, None, max_length_factor, max_length_offset)

    def beam_decode(
        self, source_ids, beam_size=10, max_length_factor=3, max_length_offset=10
    ):
        """Beam search decoding of a batch (the paper's beam of 10).

        Args:
            source_ids: int array `(batch, S)`.
            beam_size: int, prefixes kept per sentence.
            max_length_factor, max_length_offset: as `greedy_decode`.

        Returns:
            dict of numpy arrays: `tokens`, `lengths`, `scores` of the best
            output per sentence, and `beam_tokens` `(batch, K, steps)`,
            `beam_scores`, `beam_lengths` of all `K` final prefixes.
        """
        if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) or beam_size < 1:
            raise ValueError(
                f"`beam_size` must be a positive integer (the paper uses "
                f"10; 1 is greedy search). Received: beam_size={beam_size!r}"
            )
        return self._run_decoder(
            source_ids, int(beam_size), max_length_factor, max_length_offset
        )

    def symbols(self, tokens):
        """The target symbols of decoded `tokens` rows, up to `<eos>`."""
        if self.target_vocabulary is None:
            raise ValueError(
                "The parser knows only its target vocabulary's size: build "
                "it with a TargetVocabulary or load it from its .keras file."
            )
        return [self.target_vocabulary.decode(row) for row in _to_numpy(tokens)]

    # --- saving -------------------------------------------------------------
    def save_assets(self, dir_path):
        """Writes the vocabularies to `gfl_vocabulary.json` (Keras calls this)."""
        data = {
            "source": None if self.source_vocabulary is None
            else list(self.source_vocabulary),
            "target": None if self.target_vocabulary is None
            else list(self.target_vocabulary),
        }
        with open(os.path.join(dir_path, VOCABULARY_ASSET), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False)

    def load_assets(self, dir_path):
        """Reads the vocabularies back (Keras calls this on load)."""
        path = os.path.join(dir_path, VOCABULARY_ASSET)
        if not os.path.exists(path):
            return
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        for key, cls, size in (
            ("source", SourceVocabulary, self.source_vocabulary_size),
            ("target", TargetVocabulary, self.target_vocabulary_size),
        ):
            if data.get(key) is None:
                continue
            vocabulary = (
                cls(data[key], lowercase=self.lowercase)
                if cls is SourceVocabulary
                else cls(data[key])
            )
            if len(vocabulary) != size:
                raise ValueError(
                    f"The saved {key} vocabulary has {len(vocabulary)} tokens "
                    f"but the model's config says {size}: the file is damaged."
                )
            setattr(self, f"{key}_vocabulary", vocabulary)

    @classmethod
    def from_preset(cls, preset, source_vocabulary, target_vocabulary, **overrides):
        """Builds the parser of a named preset (`paper`, `small`, `tiny`).

        Args:
            preset: str, a name of `keras_ordered.models.gfl.PRESETS`.
            source_vocabulary, target_vocabulary: as the constructor.
            **overrides: constructor arguments replacing the preset's.
        """
        config = dict(cls.get_preset(preset)["model"])
        config.update(overrides)
        return cls(source_vocabulary, target_vocabulary, **config)

    def get_config(self):
        def vocabulary_config(vocabulary, size):
            return size if vocabulary is None else Vocabulary(list(vocabulary))

        return {
            **base_model_config(self),
            "source_vocabulary": vocabulary_config(
                self.source_vocabulary, self.source_vocabulary_size
            ),
            "target_vocabulary": vocabulary_config(
                self.target_vocabulary, self.target_vocabulary_size
            ),
            "embedding_dim": self.embedding_dim,
            "target_embedding_dim": self.target_embedding_dim,
            "units": self.units,
            "num_layers": self.num_layers,
            "attention": self.attention,
            "attention_units": self.attention_units,
            "input_feeding": self.input_feeding,
            "dropout": self.dropout,
            "lowercase": self.lowercase,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("source_vocabulary", "target_vocabulary"):
            if isinstance(config.get(key), dict):  # a serialized Vocabulary
                config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)


def _encode(embedding, lstms, dropouts, source_ids, training=None):
    """Encoder states `(memory, mask, [h_1, c_1, ..., h_L, c_L])`."""
    mask = ops.not_equal(source_ids, PAD_ID)
    x = embedding(source_ids)
    states = []
    for index, lstm in enumerate(lstms):
        if index > 0:
            x = dropouts[index - 1](x, training=training)
        x, h, c = lstm(x, mask=mask, training=training)
        states += [h, c]
    return x, mask, states


get_preset = GFLParser.get_preset
