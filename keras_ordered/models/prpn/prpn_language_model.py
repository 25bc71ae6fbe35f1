"""The Parsing-Reading-Predict Network language model (Shen et al., 2018).

Structure of the functional model
=================================

Inputs (a list, in this order):

- `token_ids` `(batch, time)` int32;
- the carried state (`PRPNLanguageModel.state_names`), zeros at the start
  of a text, float32:

  - `embedding_history` `(batch, lookback, embedding_dim)`: the embeddings
    of the last `Q = lookback` tokens of the previous window (zero vectors
    before the text start, the paper's `E x_j = 0` for `j < 1`);
  - `distance_history` `(batch, num_slots)`: the distances `d_i` of the
    last `M = num_slots` positions, oldest first;
  - `distance_mask` `(batch, num_slots)`: 1 where `distance_history` holds
    a real position, 0 before the text start (those distances count as
    `+inf`: they close the memory slots behind them). All-zero state is
    therefore exactly "start of a text";
  - per reading layer `l = 1 .. L`: `memory_h_l` and `memory_c_l`, each
    `(batch, num_slots, hidden_dim)`, the layer's memory tape of its last
    `M` states, oldest first (the last slot is `h_{t-1}` / `c_{t-1}`).

The inputs may also be a dict keyed by `"token_ids"` and the state names.

Outputs (a list): `[logits, distances, *new_states]` with `logits`
`(batch, time, vocabulary)` float32 (next-word logits: position `t`
predicts `x_{t+1}`), `distances` `(batch, time)` float32 (`d_t`, the
syntactic distance between `x_{t-1}` and `x_t`) and the new carried state
in the input order. `model.initial_state(batch_size)` gives the zero state
as numpy arrays; `split_outputs(outputs)` returns `(logits, new_states)`
(the convention of `keras_ordered.models.carried_state.CarriedStateMixin`).

The official PRPN, and the options that depart from it
======================================================

The defaults follow the official code (Shen et al., commit 42212fb);
`keras_ordered.models.prpn.from_official_state_dict` loads its weights and
reproduces its inference forward pass.

- Memory slots and gates: at step `t` the tape holds positions
  `t - M .. t - 1`; slot `m` (position `p = t - M + m`) is gated by
  `g_{p+1}^t = prod_{j=p+1..t} alpha_j^t`, so `h_{t-1}` is always visible
  (hard gates) and `h_p` is visible iff no distance between `p` and `t`
  exceeds `d_t`. This is the official `cumprod` over its newest-first
  slots. Positions before the text start have distance `+inf`.
- The predict network attends over the same tape (positions
  `t - M .. t - 1`; `h_t` enters through the concatenation `[h_t ; h~_t]`)
  with gates from the estimated next distance `d^_{t+1}`: the official
  predictor keeps its own copy of the top layer's tape and pushes `h_t`
  after attending.
- One parsing network: a trunk (dropout, convolution, batch norm, ReLU,
  dropout) and a grouped width-1 convolution whose first half of the
  channels gives `d`, the second half `d^` (`ParsingConv`).
- Attention: `exp(l - max over all slots) * gate / (sum + 1e-8)`, keys
  `[layer input ; h_{t-1}]` (`GatedAttention`).
- Dropout (the official regime): element-wise and fresh at every step on
  the reading network's inputs (`dropout` for layer 1, `input_dropout`
  after) and on the attention keys (`input_dropout`, the official
  `idropout`); one mask per window and layer, shared by the batch, on the
  attended hidden state (`recurrent_dropout`, the official `rdropout`); the
  attended cell state is not dropped. Parsing and predict networks:
  element-wise, `input_dropout`; `dropout` on the predict network's output.
- Initialisation: embedding (tied output) uniform +-0.01, output bias 0,
  every linear / convolution weight and bias PyTorch's default
  `uniform(+-1/sqrt(fan_in))` (`keras_ordered.layers.FanInUniform`), layer
  and batch norms at scale 1, offset 0.
- Layer norm: `gamma * (x - mean) / (unbiased std + 1e-6) + beta`
  (`keras_ordered.layers.StdLayerNormalization`); batch norms with epsilon
  1e-5 and momentum 0.1 (Keras 0.9).

Options (documented departures): `parser_units` (parser channels other
than `hidden_dim`), `hard_gates=False` (the official soft gates, without
`--hard`), `synchronized_batch_norm` (batch statistics over the global
batch across replicas; by default on exactly when the model is built under
a strategy with several replicas, so that N replicas train the model one
device trains on the same global batch).
"""


import os

import keras
import numpy as np
from keras import ops

from keras_ordered.layers._checks import check_positive_int
from keras_ordered import backend
from keras_ordered import saving
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.gated_attention import MemoryGates
from keras_ordered.layers.parsing_conv import ParsingConv
from keras_ordered.layers.prpn_cell import PRPNReadingCell
from keras_ordered.layers.prpn_cell import PRPNReadingNetwork
from keras_ordered.layers.prpn_predict import PRPNPredictNetwork
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import check_direction
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.base import base_model_config
from keras_ordered.models.prpn.presets import PRESETS
from keras_ordered.models.carried_state import CarriedStateMixin
from keras_ordered.layers._checks import check_rate as _check_rate


@keras.saving.register_keras_serializable(package="keras_ordered")
class PRPNLanguageModel(
    PresetMixin, SyntacticDistanceMixin, CarriedStateMixin, keras.Model
):
    """Parsing-Reading-Predict Network language model.

    `embedding -> ParsingConv (distances d_i, next-distance estimates d^) ->
    memory gates -> reading network (L layer-normalised LSTMs, each reading
    its gated memory tape) -> predict network (gated attention over the top
    tape with the next-distance gates) -> tied output embedding`.

    The carried state (memory tapes, the last embeddings and distances) is
    an explicit input and output, see the module docstring for the exact
    structure; `initial_state(batch_size)` builds the zero state.

    The syntactic distances `d_i` (name `"parser/distance"`) give trees
    through `keras_ordered.parsing`: `syntactic_distances(token_ids)`, or
    `sentence_distances(sentences)` for word lists.

    Args:
        vocabulary: list of str (index = token id; must hold `<eos>` and
            `<unk>`), or an int vocabulary size.
        embedding_dim: int, `d'` (the paper's 800).
        hidden_dim: int, LSTM size `d` of every reading layer (1200).
        num_layers: int, `L` reading layers (2).
        num_slots: int, `M` memory slots per layer (15).
        lookback: int, `Q` previous words seen by the parser (5).
        parser_units: int (even) or None, channels of the parser's
            convolution; None means `hidden_dim` (the official code).
        resolution: float, gate temperature `tau = 2 / resolution` (0.1).
        hard_gates: bool, hardtanh gates (the paper) or sigmoid gates.
        dropout: float, on the embeddings entering the reading network and
            before the output embedding (the official `dropout`, 0.7).
        input_dropout: float, between reading layers, on the attention keys,
            in the parser and on the predict network's input (the official
            `idropout`, 0.5).
        recurrent_dropout: float, the per-window mask on the attended hidden
            states (the official `rdropout`, 0.5).
        seed: int or None, seed of the dropouts and the embedding initialiser.
        direction: `"forward"` (the default, as the papers) or
            `"backward"` (see `SyntacticDistanceMixin.direction`).
        synchronized_batch_norm: bool or None, whether the two batch
            normalisations (parser, predict network) take their statistics
            over the global batch across the replicas of a `tf.distribute`
            strategy. None (default) decides when the model is built: True
            under a strategy with several replicas in sync, else False (the
            official single-device behaviour, and no all-reduce). With
            per-replica statistics, 2 replicas train another model than 1
            on the same global batch (a replica normalises half of it: 0.1
            apart in the weights after 3 SGD steps of the `tiny` preset).
        dtype: the dtype policy of every layer of the model (a
            `keras.DTypePolicy` or its name, such as `"mixed_bfloat16"`);
            None: the global policy. Kept in the config.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

    Example:

    ```python
    model = keras_ordered.models.PRPNLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "a", "b"]
    )
    ids = np.array([[0, 2, 3, 0]])
    logits, distances, *states = model([ids, *model.initial_state(1)])
    trees_input = model.sentence_distances([["a", "b"]])  # {"parser/distance": ...}
    ```

    Reference:
        Shen, Lin, Huang, Courville, "Neural Language Modeling by Jointly
        Learning Syntax and Lexicon", ICLR 2018.
    """

    preset_family = "PRPN"
    preset_table = PRESETS

    def __init__(
        self,
        vocabulary,
        embedding_dim=800,
        hidden_dim=1200,
        num_layers=2,
        num_slots=15,
        lookback=5,
        parser_units=None,
        resolution=0.1,
        hard_gates=True,
        dropout=0.7,
        input_dropout=0.5,
        recurrent_dropout=0.5,
        seed=None,
        direction="forward",
        synchronized_batch_norm=None,
        dtype=None,
        **kwargs,
    ):
        with dtype_policy_scope(dtype):
            vocabulary_size, words = check_vocabulary(vocabulary)
            for name, value in (
                ("embedding_dim", embedding_dim),
                ("hidden_dim", hidden_dim),
                ("num_layers", num_layers),
                ("num_slots", num_slots),
                ("lookback", lookback),
            ):
                check_positive_int(name, value)
            if parser_units is None:
                parser_units = hidden_dim
            dropout = _check_rate("dropout", dropout)
            input_dropout = _check_rate("input_dropout", input_dropout)
            recurrent_dropout = _check_rate("recurrent_dropout", recurrent_dropout)

            def seed_for(k):
                return None if seed is None else seed + 100 * k

            synchronized = synchronized_batch_norm
            if synchronized is None:
                synchronized = backend.replicas_in_sync() > 1

            # === Layers ===
            embedding = EmbeddingDropout(
                vocabulary_size,
                embedding_dim,
                rate=0.0,
                use_output_bias=True,
                # The official init_weights: uniform(+-0.01); output bias 0.
                embeddings_initializer=keras.initializers.RandomUniform(
                    -0.01, 0.01, seed=seed_for(1)
                ),
                name="embedding",
            )
            parser = ParsingConv(
                parser_units,
                lookback=lookback,
                dropout=input_dropout,
                seed=seed_for(2),
                synchronized=bool(synchronized),
                name="parsing_network",
            )
            gates = MemoryGates(
                num_slots, resolution=resolution, hard=hard_gates,
                name="memory_gates",
            )
            reading = PRPNReadingNetwork(
                PRPNReadingCell(
                    hidden_dim,
                    num_layers=num_layers,
                    num_slots=num_slots,
                    dropout=dropout,
                    layer_dropout=input_dropout,
                    recurrent_dropout=recurrent_dropout,
                    attention_dropout=input_dropout,
                    seed=seed_for(3),
                    name="reading_cell",
                ),
                return_state=True,
                name="reading_network",
            )
            predictor = PRPNPredictNetwork(
                embedding_dim,
                num_slots,
                dropout=dropout,
                input_dropout=input_dropout,
                attention_dropout=input_dropout,
                seed=seed_for(4),
                synchronized=bool(synchronized),
                name="predict_network",
            )

            # === Functional graph ===
            token_ids = keras.Input((None,), dtype="int32", name="token_ids")
            embedding_history = keras.Input(
                (lookback, embedding_dim), name="embedding_history"
            )
            distance_history = keras.Input((num_slots,), name="distance_history")
            distance_mask = keras.Input((num_slots,), name="distance_mask")
            tapes = []
            for index in range(num_layers):
                for kind in ("h", "c"):
                    tapes.append(
                        keras.Input(
                            (num_slots, hidden_dim), name=f"memory_{kind}_{index + 1}"
                        )
                    )

            embedded = embedding(token_ids)
            distances, next_distances = parser([embedded, embedding_history])
            reading_gates = gates([distances, distance_history, distance_mask])
            predict_gates = gates(
                [distances, distance_history, distance_mask, next_distances]
            )
            step_inputs = ops.concatenate(
                [embedded, ops.cast(reading_gates, embedded.dtype)], axis=-1
            )
            flat = (-1, num_slots * hidden_dim)
            hidden, *new_flat_tapes = reading(
                step_inputs, initial_state=[ops.reshape(t, flat) for t in tapes]
            )
            top_tape = tapes[-2]  # memory_h_L at the start of the window
            features = predictor([hidden, top_tape, predict_gates])
            logits = keras.layers.Activation("linear", dtype="float32", name="logits")(
                embedding(features, reverse=True)
            )
            distance_output = keras.layers.Activation(
                "linear", dtype="float32", name="distances"
            )(distances)
            new_states = [
                ops.concatenate(
                    [ops.cast(embedding_history, embedded.dtype), embedded], axis=1
                )[:, -lookback:],
                ops.concatenate([distance_history, distances], axis=1)[:, -num_slots:],
                ops.concatenate(
                    [distance_mask, ops.ones_like(distances)], axis=1
                )[:, -num_slots:],
            ]
            shape = (-1, num_slots, hidden_dim)
            new_states += [ops.reshape(t, shape) for t in new_flat_tapes]
            super().__init__(
                inputs=[token_ids, embedding_history, distance_history,
                        distance_mask, *tapes],
                outputs=[logits, distance_output, *new_states],
                **kwargs,
            )

            # === Config ===
            self._set_vocabulary(vocabulary_size, words)
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.num_layers = num_layers
            self.num_slots = num_slots
            self.lookback = lookback
            self.parser_units = parser_units
            self.resolution = float(resolution)
            self.hard_gates = bool(hard_gates)
            self.dropout = dropout
            self.input_dropout = input_dropout
            self.recurrent_dropout = recurrent_dropout
            self.seed = seed
            self.direction = check_direction(direction)
            self.synchronized_batch_norm = synchronized_batch_norm
            self.embedding = embedding
            self.parser = parser
            self.distance_names = ["parser/distance"]
            self.default_distance = "parser/distance"
            self.state_names = ["embedding_history", "distance_history",
                                "distance_mask"] + [
                f"memory_{kind}_{index + 1}"
                for index in range(num_layers)
                for kind in ("h", "c")
            ]

    # --- state ------------------------------------------------------------
    def state_shapes(self):
        """Per-example shapes of the carried state, in input order."""
        tape = (self.num_slots, self.hidden_dim)
        return [
            (self.lookback, self.embedding_dim),
            (self.num_slots,),
            (self.num_slots,),
        ] + [tape] * (2 * self.num_layers)

    def split_outputs(self, outputs):
        """`(logits, new_states)` from the model's outputs."""
        return outputs[0], list(outputs[2:])

    # --- distances --------------------------------------------------------
    def syntactic_distances(self, token_ids, states=None):
        """Syntactic distances `d_i`, in inference mode.

        Only the embedding and the parsing network run (the distances do
        not depend on the reading network).

        Args:
            token_ids: int array `(batch, time)`.
            states: optional carried state (as `initial_state`); only its
                `embedding_history` is used. Default: zero state.

        Returns:
            dict `"parser/distance"` -> float32 array `(batch, time)`.
        """
        token_ids = ops.convert_to_tensor(np.asarray(token_ids, "int32"))
        embedded = self.embedding(token_ids, training=False)
        if states is None:
            distances, _ = self.parser(embedded, training=False)
        else:
            distances, _ = self.parser([embedded, states[0]], training=False)
        return {"parser/distance":
                ops.convert_to_numpy(distances).astype("float32")}

    def serving_outputs(self, token_ids):
        """Logits and distances of one inference pass from a zero state.

        The tensor-level path of an exported model (`keras_ordered.export`):
        it runs inside a `tf.function`, with a batch size known only at run
        time.

        Args:
            token_ids: int tensor `(batch, time)`.

        Returns:
            `(logits, distances)`: float32 logits `(batch, time, vocabulary)`
            and `{"parser/distance": float32 (batch, time)}`.
        """
        states = self._zero_states(ops.shape(token_ids)[0])
        outputs = self([token_ids, *states], training=False)
        return (
            ops.cast(outputs[0], "float32"),
            {"parser/distance": ops.cast(outputs[1], "float32")},
        )

    # --- saving -----------------------------------------------------------
    def load_weights(self, filepath, *args, **kwargs):
        """`keras.Model.load_weights`, reading also the `.weights.h5` files
        of keras-ordered 0.1, where the reading network was a
        `keras.layers.RNN` (`keras_ordered.saving.current_layout`)."""
        with saving.current_layout(os.fspath(filepath),
                                   type(self).__name__) as path:
            return super().load_weights(path, *args, **kwargs)

    # --- training ---------------------------------------------------------
    @property
    def jit_compile(self):
        """`keras.Model.jit_compile`. Set to True (by `compile` or later),
        the reading network runs its cell step by step, the loop XLA
        compiles (`PRPNReadingNetwork.layer_loop`)."""
        return keras.Model.jit_compile.fget(self)

    @jit_compile.setter
    def jit_compile(self, value):
        keras.Model.jit_compile.fset(self, value)
        self.get_layer("reading_network").layer_loop = (
            self._jit_compile is not True)

    # --- config ---------------------------------------------------------
    def get_config(self):
        return {
            **base_model_config(self),
            "vocabulary": self._vocabulary_config(),
            "embedding_dim": self.embedding_dim,
            "hidden_dim": self.hidden_dim,
            "num_layers": self.num_layers,
            "num_slots": self.num_slots,
            "lookback": self.lookback,
            "parser_units": self.parser_units,
            "resolution": self.resolution,
            "hard_gates": self.hard_gates,
            "dropout": self.dropout,
            "input_dropout": self.input_dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
            "direction": self.direction,
            "synchronized_batch_norm": self.synchronized_batch_norm,
        }


get_preset = PRPNLanguageModel.get_preset
