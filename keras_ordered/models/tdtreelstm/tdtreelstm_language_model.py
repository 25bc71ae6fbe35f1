"""The top-down TreeLSTM language model P(S | T) and LdTreeLSTM.

Structure
=========

Inputs (a dict; `keras_ordered.models.tdtreelstm.inputs` builds it from
dependency trees): `words`, `actions`, `sources`, `targets` int32 `(batch,
T)`, for LdTreeLSTM `left_context` int32 `(batch, T, K)`, and optionally
`schedule` int32 `(iterations, rows)`, the batch's action-homogeneous
schedule (`inputs.action_schedule`; the batches carry one by default): the
generation LSTMs then run one action per loop iteration (the exported
SavedModel builds it in the graph). Without it, they run in generation
order; same numbers.

```
x_t = E[words_t]                                   shared word embedding
q_t = LSTM^LD(E[left_context_t])                   LdTreeLSTM only, GEN-R steps
h_t = LSTM^{actions_t}(x_t [, q_t], H[sources_t])  TopDownTreeLSTM
log P(targets_t | D) = log_softmax(W_o dropout(h_t) + b_o)[targets_t]
```

Output of `call`: float32 `(batch, T)`, each step's log-probability of its
target word under the exact normalised softmax (0 at padding, target 0).

Training (`train_step`): the official objective, the negative
log-likelihood summed over the words of the batch and divided by its
sentences (`loss="softmax"`), or NCE (`loss="nce"`, see
`keras_ordered.models.tdtreelstm.nce`; no output bias, learned `ln Z`);
gradients clipped to a global norm (`clip_norm`). The logged `loss` is
the objective per word; validation (`test_step`) logs the exact per-word
negative log-likelihood as `loss` and its `perplexity`.

Backends
========

The forward pass (`call`, `hidden_states`, `score`), `objective` (the
softmax or NCE loss) and its gradient run on every Keras backend
(TensorFlow, JAX, PyTorch), written with `keras.ops`; on TensorFlow the
generation LSTMs run their TensorFlow-tuned loops and `score` a
`tf.function`. Training and evaluating with `fit` / `evaluate`
(`train_step`, `test_step`) need the TensorFlow backend.
"""

import json
import os

import keras
import numpy as np
from keras import ops

from keras_ordered import backend
from keras_ordered._keras_private import SymbolicBuildWithoutData
from keras_ordered._tokens import check_token_list
from keras_ordered.datasets.dependency import DependencyTree
from keras_ordered.datasets.dependency import DependencyVocabulary
from keras_ordered.layers._checks import check_positive_int as _positive_int
from keras_ordered.layers._checks import check_rate
from keras_ordered.layers.tree_lstm import LeftDependentLSTM
from keras_ordered.layers.tree_lstm import TopDownTreeLSTM
from keras_ordered.models.base import RegisteredPresets
from keras_ordered.models.base import Vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.base import base_model_config
from keras_ordered.models.tdtreelstm import nce
from keras_ordered.models.tdtreelstm.inputs import SCHEDULE_ROWS
from keras_ordered.models.tdtreelstm.inputs import batch_arrays
from keras_ordered.models.tdtreelstm.inputs import encode_tree
from keras_ordered.models.tdtreelstm.presets import PRESETS

VOCABULARY_ASSET = "tdtreelstm_vocabulary.json"
LOSSES = ("softmax", "nce")


def _tensorflow_for(what):
    """The `tensorflow` module for `fit` / `evaluate`; on another backend a
    one-line error (the model's own train and test steps are TensorFlow's)."""
    if not backend.is_tensorflow():
        raise NotImplementedError(
            f"TDTreeLSTMLanguageModel: {what} needs the TensorFlow backend "
            f"(running: {backend.name()}); on this backend use the model's "
            "call, objective() and score().")
    return backend.require_tensorflow(f"TD-TreeLSTM {what}")


def _replicas():
    """Replicas of the `tf.distribute` strategy in scope (1 off TensorFlow)."""
    if not backend.is_tensorflow():
        return 1
    tf = backend.require_tensorflow("tf.distribute")
    return tf.distribute.get_strategy().num_replicas_in_sync


def _vocabulary(value, lowercase):
    """`(size, DependencyVocabulary or None)`."""
    if isinstance(value, Vocabulary):
        value = value.size if value.words is None else list(value.words)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 4:
            raise ValueError(
                "`vocabulary` must have at least 4 words (<pad>, <unk>, "
                f"<root> and one more). Received: {value}"
            )
        return int(value), None
    if isinstance(value, DependencyVocabulary):
        return len(value), value
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(
            "`vocabulary` must be a DependencyVocabulary, a list of words or "
            f"a size. Received: {value!r}"
        )
    vocabulary = DependencyVocabulary(list(value), lowercase=lowercase)
    return len(vocabulary), vocabulary


@keras.saving.register_keras_serializable(package="keras_ordered")
class TDTreeLSTMLanguageModel(RegisteredPresets, SymbolicBuildWithoutData,
                              keras.Model):
    """Top-down TreeLSTM (or LdTreeLSTM) language model of sentences given
    their dependency trees.

    Generates a sentence top-down along its dependency tree with four LSTMs
    (GEN-L, GEN-R, GEN-NX-L, GEN-NX-R; `keras_ordered.layers.
    TopDownTreeLSTM`), sharing the input word embedding and the output
    softmax, and scores `log P(S | T)`. With `ld=True`, LdTreeLSTM: a fifth
    LSTM (`keras_ordered.layers.LeftDependentLSTM`) reads a head's left
    dependents in sentence order and its final state joins the input of
    the head's GEN-R step (its first right dependent) only. The module
    docstring gives the inputs and outputs.

    Args:
        vocabulary: `keras_ordered.datasets.dependency.DependencyVocabulary`,
            list of words (`<pad>`, `<unk>`, `<root>` first) or the size.
        embedding_dim: int, word embedding size (the official `nin`).
        units: int, LSTM state size (`nhid`).
        num_layers: int, layers of each generation LSTM (`nlayers`).
        dropout: float, dropout on `h_t` before the output layer.
        loss: `"softmax"` (full softmax negative log-likelihood; the output
            layer has a bias) or `"nce"` (noise-contrastive estimation; no
            output bias, learned ln Z).
        ld: bool, LdTreeLSTM.
        ld_units: int or None, the left-dependent LSTM's size (`nlchid`;
            None: `units`).
        ld_layers: int, its layers (`nlclayers`, 1).
        nce_samples: int, noise words per target (`nneg`, 20).
        nce_power: float, the unigram distribution's exponent (0.75).
        nce_log_z: float, the initial ln Z (`lnZ`, 9).
        unigram_counts: array of the training counts of every vocabulary
            word, for the NCE noise (needed to train with `loss="nce"`; kept
            in the model's weights).
        initial_value: float, every unit of the root's state (`initHidVal`,
            0.01).
        init_range: float, every weight starts uniform in `+-init_range`
            (`initRange`, 0.1).
        lowercase: bool, lower-case words before the vocabulary lookup.
        seed: int or None, seed of the dropout and the noise samples.
        dtype: the dtype policy of every layer of the model (a
            `keras.DTypePolicy` or its name, such as `"mixed_bfloat16"`);
            None: the global policy. Kept in the config.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

    Example:

    ```python
    from keras_ordered.datasets.dependency import DependencyVocabulary
    vocabulary = DependencyVocabulary(["the", "cat", "sat"])
    model = keras_ordered.models.TDTreeLSTMLanguageModel.from_preset(
        "tiny", vocabulary, ld=True)
    scores = model.score([(["the", "cat", "sat"], [2, 3, 0])])
    scores[0]["log_prob"], scores[0]["word_log_probs"]  # float, 3 floats
    ```

    Reference:
        Zhang, Lu, Lapata. "Top-down Tree Long Short-Term Memory Networks".
        NAACL 2016.
    """

    preset_table = PRESETS
    preset_family = "TD-TreeLSTM"

    def __init__(
        self,
        vocabulary,
        embedding_dim=100,
        units=200,
        num_layers=2,
        dropout=0.2,
        loss="softmax",
        ld=False,
        ld_units=None,
        ld_layers=1,
        nce_samples=20,
        nce_power=0.75,
        nce_log_z=9.0,
        unigram_counts=None,
        initial_value=0.01,
        init_range=0.1,
        lowercase=False,
        seed=None,
        dtype=None,
        **kwargs,
    ):
        with dtype_policy_scope(dtype):
            super().__init__(**kwargs)
            size, words = _vocabulary(vocabulary, lowercase)
            _positive_int("embedding_dim", embedding_dim)
            _positive_int("units", units)
            _positive_int("num_layers", num_layers)
            _positive_int("ld_layers", ld_layers)
            _positive_int("nce_samples", nce_samples)
            if ld_units is not None:
                _positive_int("ld_units", ld_units)
            if loss not in LOSSES:
                raise ValueError(
                    f"`loss` must be 'softmax' (full softmax) or 'nce'. Received: "
                    f"loss={loss!r}"
                )
            if not init_range > 0:
                raise ValueError(f"`init_range` must be positive. Received: {init_range}")
            self.dropout_rate = check_rate("dropout", dropout)
            self.vocabulary = words
            self.vocabulary_size = size
            self.embedding_dim = embedding_dim
            self.units = units
            self.num_layers = num_layers
            self.loss_name = loss
            self.ld = bool(ld)
            self.ld_units = ld_units
            self.ld_layers = ld_layers
            self.nce_samples = nce_samples
            self.nce_power = float(nce_power)
            self.nce_log_z = float(nce_log_z)
            self.initial_value = float(initial_value)
            self.init_range = float(init_range)
            if isinstance(vocabulary, DependencyVocabulary):
                # The vocabulary's own setting decides (and is what the config
                # saves): a lower-casing vocabulary must stay one after a
                # `.keras` round trip.
                if lowercase and not vocabulary.lowercase:
                    raise ValueError(
                        "`lowercase=True` contradicts the DependencyVocabulary "
                        "given, which keeps the case: build the vocabulary with "
                        "lowercase=True instead."
                    )
                lowercase = vocabulary.lowercase
            self.lowercase = bool(lowercase)
            self.seed = seed
            self.clip_norm = None

            def uniform(offset):
                return keras.initializers.RandomUniform(
                    -init_range, init_range,
                    seed=None if seed is None else seed + offset)

            # === Layers ===
            self.embedding = keras.layers.Embedding(
                size, embedding_dim, embeddings_initializer=uniform(1),
                name="word_embedding")
            self.left_dependent_lstm = None
            if self.ld:
                self.left_dependent_lstm = LeftDependentLSTM(
                    ld_units or units, num_layers=ld_layers,
                    initial_value=initial_value, kernel_initializer=uniform(2),
                    recurrent_initializer=uniform(3), bias_initializer=uniform(4),
                    name="left_dependent_lstm")
            self.tree_lstm = TopDownTreeLSTM(
                units, num_layers=num_layers,
                context_dim=(ld_units or units) if self.ld else None,
                initial_value=initial_value, kernel_initializer=uniform(5),
                recurrent_initializer=uniform(6), bias_initializer=uniform(7),
                name="generation_lstms")
            self.output_dropout = keras.layers.Dropout(
                self.dropout_rate, seed=None if seed is None else seed + 8,
                name="output_dropout")
            self._unigram_counts = (None if unigram_counts is None
                                    else np.asarray(unigram_counts, "float64"))
            if self._unigram_counts is not None and self._unigram_counts.shape != (size,):
                raise ValueError(
                    f"`unigram_counts` needs one count per vocabulary word "
                    f"({size}). Received shape {self._unigram_counts.shape}"
                )
            self.noise_seed = keras.random.SeedGenerator(
                None if seed is None else seed + 9)
            self._token_loss_tracker = keras.metrics.Mean(name="loss")
            self._build_weights()

    # --- weights ------------------------------------------------------------
    def _build_weights(self):
        size, units = self.vocabulary_size, self.units
        self.embedding.build((None,))
        self.output_embedding = self.add_weight(
            shape=(size, units), name="output_embedding",
            initializer=keras.initializers.RandomUniform(
                -self.init_range, self.init_range,
                seed=None if self.seed is None else self.seed + 10))
        self.output_bias = None
        self.log_z = None
        if self.loss_name == "softmax":
            self.output_bias = self.add_weight(
                shape=(size,), name="output_bias",
                initializer=keras.initializers.RandomUniform(
                    -self.init_range, self.init_range,
                    seed=None if self.seed is None else self.seed + 11))
        else:
            self.log_z = self.add_weight(
                shape=(), name="log_z",
                initializer=keras.initializers.Constant(self.nce_log_z))
            probs = (np.full(size, 1.0 / size) if self._unigram_counts is None
                     else nce.noise_distribution(self._unigram_counts,
                                                 self.nce_power))
            self.noise_log_probs = self.add_weight(
                shape=(size,), name="noise_log_probs", trainable=False,
                initializer=keras.initializers.Constant(
                    np.log(np.maximum(probs, 1e-30)).astype("float32")))
            self.noise_cdf = self.add_weight(
                shape=(size,), name="noise_cdf", trainable=False,
                initializer=keras.initializers.Constant(
                    np.cumsum(probs).astype("float32")))
        embedded = (None, None, self.embedding_dim)
        shapes = [embedded, (None, None), (None, None)]
        if self.ld:
            self.left_dependent_lstm.build(
                [(None, None, None, self.embedding_dim), (None, None, None)])
            shapes.append((None, None, self.ld_units or self.units))
        self.tree_lstm.build(shapes)
        self.built = True

    # --- forward ----------------------------------------------------------------
    def hidden_states(self, inputs, training=False):
        """`h_t` of every step, after the output dropout: `(batch, T, units)`."""
        words = ops.cast(inputs["words"], "int32")
        x = self.embedding(words)
        lstm_inputs = [x, inputs["actions"], inputs["sources"]]
        if self.ld:
            if "left_context" not in inputs:
                raise ValueError(
                    "An LdTreeLSTM needs the input `left_context` (build the "
                    "batches with left_context=True).")
            context_ids = ops.cast(inputs["left_context"], "int32")
            q = self.left_dependent_lstm(
                [self.embedding(context_ids), ops.not_equal(context_ids, 0)])
            lstm_inputs.append(q)
        schedule = inputs.get("schedule")
        if schedule is not None and _replicas() > 1:
            # A strategy splits the schedule's iterations, not its trees,
            # across replicas: fall back to the generation order.
            schedule = None
        h = self.tree_lstm(lstm_inputs, schedule=schedule)
        return self.output_dropout(h, training=training)

    def logits(self, hidden):
        """Output scores `W_o h (+ b_o)`, float32 `(..., vocabulary)`."""
        hidden = ops.cast(hidden, "float32")
        weights = ops.cast(self.output_embedding, "float32")
        if backend.is_tensorflow():
            # TensorFlow: the transposed product in one `tf.matmul`.
            tf = backend.require_tensorflow("the TD-TreeLSTM's output layer")
            logits = tf.matmul(hidden, weights, transpose_b=True)
        else:
            logits = ops.matmul(hidden, ops.transpose(weights))
        if self.output_bias is not None:
            logits = logits + ops.cast(self.output_bias, "float32")
        return logits

    def _target_log_probs(self, hidden, targets):
        log_probs = ops.log_softmax(self.logits(hidden), axis=-1)
        picked = ops.squeeze(ops.take_along_axis(
            log_probs, ops.expand_dims(targets, -1), axis=-1), -1)
        return ops.where(targets > 0, picked, 0.0)

    def call(self, inputs, training=False):
        targets = ops.cast(inputs["targets"], "int32")
        return self._target_log_probs(self.hidden_states(inputs, training), targets)

    # --- training -----------------------------------------------------------------
    def compile(self, optimizer="sgd", clip_norm=5.0, **kwargs):
        """`keras.Model.compile` with the model's own loss.

        Args:
            optimizer: a Keras optimizer (official: `SGD(1.0)`).
            clip_norm: float or None, gradient global-norm clipping (5).
            **kwargs: other `compile` arguments (`jit_compile`, ...).
        """
        if "loss" in kwargs:
            raise ValueError(
                "TDTreeLSTMLanguageModel computes its own loss (the `loss` "
                "constructor argument: 'softmax' or 'nce').")
        self.clip_norm = clip_norm
        super().compile(optimizer=optimizer, **kwargs)

    def get_compile_config(self):
        """The optimizer and `clip_norm`, saved with the model."""
        if getattr(self, "optimizer", None) is None:
            return None
        return {"optimizer": keras.saving.serialize_keras_object(self.optimizer),
                "clip_norm": self.clip_norm}

    def compile_from_config(self, config):
        """Compiles a loaded model as it was saved (Keras calls this on load)."""
        optimizer = keras.saving.deserialize_keras_object(config["optimizer"])
        self.compile(optimizer=optimizer, clip_norm=config.get("clip_norm"))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def objective(self, inputs, training=True):
        """`(summed loss, words)` of a batch: NLL or NCE summed over words
        (every backend)."""
        targets = ops.cast(inputs["targets"], "int32")
        mask = ops.cast(targets > 0, "float32")
        hidden = self.hidden_states(inputs, training=training)
        if self.loss_name == "softmax" or not training:
            token = -self._target_log_probs(hidden, targets)
        else:
            flat_hidden = ops.reshape(hidden, (-1, self.units))
            flat_targets = ops.reshape(targets, (-1,))
            noise = nce.sample_noise(
                self.noise_cdf, (ops.shape(flat_targets)[0], self.nce_samples),
                seed=self.noise_seed)
            token = nce.nce_loss(flat_hidden, flat_targets, noise,
                                 self.output_embedding, self.log_z,
                                 self.noise_log_probs)
            token = ops.reshape(token, ops.shape(targets))
        return ops.sum(token * mask), ops.sum(mask)

    def make_train_function(self, force=False):
        """Keras' (TensorFlow only: off it, `fit` stops here with one line,
        before it starts)."""
        _tensorflow_for("training with fit()")
        return super().make_train_function(force)

    def make_test_function(self, force=False):
        """Keras' (TensorFlow only: off it, `evaluate` stops here with one
        line, before it starts)."""
        _tensorflow_for("evaluate()")
        return super().make_test_function(force)

    def train_step(self, data, *state):
        tf = _tensorflow_for("training with fit()")
        inputs = data[0] if isinstance(data, tuple) else data
        sentences = tf.cast(tf.shape(inputs["targets"])[0], tf.float32)
        with tf.GradientTape() as tape:
            total, words = self.objective(inputs, training=True)
            # The official objective: summed over words, per sentence.
            loss = total / sentences
            scaled = loss / tf.distribute.get_strategy().num_replicas_in_sync
            scaled = self.optimizer.scale_loss(scaled)
        weights = self.trainable_weights
        grads = tape.gradient(scaled, weights)
        if self.clip_norm:
            grads, _ = tf.clip_by_global_norm(grads, self.clip_norm)
        self.optimizer.apply_gradients(zip(grads, weights))
        self._token_loss_tracker.update_state(
            total / tf.maximum(words, 1.0), sample_weight=words)
        return {"loss": self._token_loss_tracker.result()}

    def test_step(self, data, *state):
        tf = _tensorflow_for("evaluate()")
        inputs = data[0] if isinstance(data, tuple) else data
        total, words = self.objective(inputs, training=False)
        self._token_loss_tracker.update_state(
            total / tf.maximum(words, 1.0), sample_weight=words)
        value = self._token_loss_tracker.result()
        return {"loss": value, "perplexity": tf.exp(tf.minimum(value, 50.0))}

    @property
    def metrics(self):
        return [self._token_loss_tracker]

    # --- scoring ------------------------------------------------------------------
    def encode(self, sentences):
        """Encodes `(words, heads)` pairs or `DependencyTree`s (see `score`)."""
        if self.vocabulary is None:
            raise ValueError(
                "The model knows only its vocabulary size, not its words: "
                "build it with a vocabulary or load it from its .keras file.")
        encoded = []
        for k, sentence in enumerate(sentences):
            if isinstance(sentence, DependencyTree):
                words, heads, where = sentence.words, sentence.heads, sentence.where()
            else:
                try:
                    words, heads = sentence
                except (TypeError, ValueError):
                    raise ValueError(
                        f"Sentence {k + 1}: pass (words, heads) pairs or "
                        "DependencyTree objects.") from None
                where = f"sentence {k + 1}"
            words = check_token_list(words, f"the words of sentence {k + 1}")
            try:
                encoded.append(encode_tree(self.vocabulary.encode(words),
                                           list(heads)))
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
        return encoded

    def _score_function(self):
        """The forward pass `score` runs, compiled for the backend
        (`backend.compiled_inference`: a `tf.function` on TensorFlow, one
        `jax.jit` program per batch shape on JAX, eager on PyTorch)."""
        forward = backend.compiled_inference(
            self, "score", lambda inputs: self(inputs, training=False))

        def function(arrays):
            return forward({k: ops.convert_to_tensor(v)
                            for k, v in arrays.items()})

        return function

    def score(self, sentences, batch_size=64, schedule_rows=SCHEDULE_ROWS,
              progress=None):
        """log P(S | T) of sentences with their trees, per sentence and word.

        Args:
            sentences: list of `(words, heads)` pairs (`heads[i]` the head
                of word `i + 1`, 0 = root) or `DependencyTree`s.
            batch_size: int, sentences per forward pass.
            schedule_rows: int or None, the rows of the action-homogeneous
                schedule each batch runs in
                (`keras_ordered.models.tdtreelstm.inputs.action_schedule`;
                None: the generation order). Same numbers.
            progress: optional function called after each forward pass
                with the number of sentences it scored (e.g. a progress
                bar's `update`).

        Returns:
            list of dicts, in the input order: `log_prob` (float, natural
            log), `word_log_probs` (list of floats in sentence order),
            `words` (int), `perplexity` (`exp(-log_prob / words)`).

        Raises:
            ValueError: a malformed tree (naming the sentence).
        """
        if batch_size < 1:
            raise ValueError(f"`batch_size` must be >= 1. Received: {batch_size}")
        encoded = self.encode(sentences)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["targets"]))
        results = [None] * len(encoded)
        function = self._score_function()
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            arrays, positions = batch_arrays([encoded[i] for i in chunk],
                                             left_context=self.ld,
                                             schedule_rows=schedule_rows)
            values = ops.convert_to_numpy(function(arrays)).astype("float64")
            for row, i in enumerate(chunk):
                n = len(encoded[i]["targets"])
                per_word = np.zeros(n)
                per_word[positions[row, :n] - 1] = values[row, :n]
                total = float(per_word.sum())
                results[i] = {
                    "log_prob": total,
                    "word_log_probs": per_word.tolist(),
                    "words": n,
                    "perplexity": float(np.exp(min(-total / n, 50.0))),
                }
            if progress is not None:
                progress(len(chunk))
        return results

    # --- saving -------------------------------------------------------------------
    def save_assets(self, dir_path):
        """Writes the words to `tdtreelstm_vocabulary.json` (Keras calls this)."""
        if self.vocabulary is not None:
            with open(os.path.join(dir_path, VOCABULARY_ASSET), "w",
                      encoding="utf-8") as f:
                json.dump(list(self.vocabulary), f, ensure_ascii=False)

    def load_assets(self, dir_path):
        """Reads the words back (Keras calls this on load)."""
        path = os.path.join(dir_path, VOCABULARY_ASSET)
        if not os.path.exists(path):
            return
        with open(path, encoding="utf-8") as f:
            words = json.load(f)
        if len(words) != self.vocabulary_size:
            raise ValueError(
                f"The saved vocabulary has {len(words)} words but the model's "
                f"config says {self.vocabulary_size}: the file is damaged.")
        self.vocabulary = DependencyVocabulary(words, lowercase=self.lowercase)

    @classmethod
    def from_preset(cls, preset, vocabulary, **overrides):
        """Builds the model of a named preset (`wsj`, `msr`, `small`, `tiny`).

        Args:
            preset: str, a name of `keras_ordered.models.tdtreelstm.PRESETS`.
            vocabulary: as the constructor.
            **overrides: constructor arguments replacing the preset's
                (`ld=True` for LdTreeLSTM).
        """
        config = dict(cls.get_preset(preset)["model"])
        config.update(overrides)
        return cls(vocabulary, **config)

    def get_config(self):
        return {
            **base_model_config(self),
            "vocabulary": (self.vocabulary_size if self.vocabulary is None
                           else Vocabulary(list(self.vocabulary))),
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "num_layers": self.num_layers,
            "dropout": self.dropout_rate,
            "loss": self.loss_name,
            "ld": self.ld,
            "ld_units": self.ld_units,
            "ld_layers": self.ld_layers,
            "nce_samples": self.nce_samples,
            "nce_power": self.nce_power,
            "nce_log_z": self.nce_log_z,
            "initial_value": self.initial_value,
            "init_range": self.init_range,
            "lowercase": self.lowercase,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("vocabulary"), dict):
            config["vocabulary"] = keras.saving.deserialize_keras_object(
                config["vocabulary"])
        return cls(**config)


get_preset = TDTreeLSTMLanguageModel.get_preset
