"""A conventional LSTM language model, read for syntactic distances.

The control of Dyer, Melis and Blunsom (2019): the top-down parser that
PRPN and ON-LSTM parse with, fed with a proxy for syntactic depth taken
from a language model that has no mechanism for structure. If its trees
score like the specialised models', their F1 measures the parser and
the language more than the architecture.
"""

import keras
import numpy as np
from keras import ops

from keras_ordered.layers.dropout import ActivationRegularization
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.dropout import LockedDropout
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.carried_state import CarriedStateMixin
from keras_ordered.models.lstm.presets import get_preset


def lstm_gate_distances(layer, inputs, outputs, h0):
    """The forget- and input-gate distances of a Keras `LSTM` layer.

    A conventional LSTM has no master gates; the analogue of ON-LSTM's
    distances (`keras_ordered.layers.ONLSTMCell.syntactic_distances`) is
    read from its ordinary gates, recomputed from the layer's inputs and
    outputs (`h_{t-1}` is the previous output), as Keras' `LSTMCell`
    computes them (gates in the order input, forget, cell, output):

    ```
    i_t = sigmoid(x_t W_i + h_{t-1} U_i + b_i)
    f_t = sigmoid(x_t W_f + h_{t-1} U_f + b_f)
    d_forget_t = 1 - mean(f_t)      # much forgotten: a constituent closes
    d_input_t = mean(i_t)
    ```

    Args:
        layer: a built `keras.layers.LSTM` (recurrent activation sigmoid).
        inputs: its input sequences `(batch, time, features)`.
        outputs: its output sequences `(batch, time, units)`.
        h0: its initial hidden state `(batch, units)`.

    Returns:
        `(d_forget, d_input)`, each `(batch, time)` in the layer's compute
        dtype.
    """
    cell = layer.cell
    dtype = cell.compute_dtype
    units = cell.units
    h_prev = ops.concatenate(
        [ops.cast(h0, dtype)[:, None, :], ops.cast(outputs, dtype)[:, :-1]],
        axis=1,
    )
    gates = slice(0, 2 * units)  # input and forget
    logits = (
        ops.matmul(ops.cast(inputs, dtype), ops.cast(cell.kernel, dtype)[:, gates])
        + ops.matmul(h_prev, ops.cast(cell.recurrent_kernel, dtype)[:, gates])
        + ops.cast(cell.bias, dtype)[gates]
    )
    input_gate = ops.sigmoid(logits[..., :units])
    forget_gate = ops.sigmoid(logits[..., units:])
    return 1.0 - ops.mean(forget_gate, axis=-1), ops.mean(input_gate, axis=-1)


@keras.saving.register_keras_serializable(package="keras_ordered")
class LSTMLanguageModel(
    PresetMixin, SyntacticDistanceMixin, CarriedStateMixin, keras.Model
):
    """Multi-layer LSTM language model with AWD-LSTM regularisation.

    `embedding -> LockedDropout(dropout_input) -> keras.layers.LSTM x L
    (LockedDropout(dropout_hidden) between layers) -> LockedDropout
    (dropout_output) -> tied softmax`, with embedding dropout, weight tying
    and AR / TAR on the last layer: `ONLSTMLanguageModel` with Keras' own
    `LSTM` in place of the ON-LSTM, and so without master gates and without
    DropConnect on the recurrent kernels. It trains with the ON-LSTM
    recipes' machinery (`recipes/ptb_lstm.py`: truncated BPTT with carried
    states, SGD and NT-ASGD) and parses as they do.

    Syntactic distances, per layer (`"layer{l}/forget"`, `"layer{l}/input"`):
    `1 - mean(f_t)` and `mean(i_t)` of the layer's forget and input gates
    (`lstm_gate_distances`), the ordinary gates standing for ON-LSTM's
    master gates.

    Inputs: `[token_ids (batch, time) int, h_1, c_1, ..., h_L, c_L]`.
    Outputs: `[logits (batch, time, vocab), h_1', c_1', ..., h_L', c_L']`.

    Args:
        vocabulary: list of str (index = token id; must hold `<eos>` and
            `<unk>`), or an int vocabulary size.
        embedding_dim: int.
        hidden_dims: list of int, one per layer; with `tie_weights` the
            last must equal `embedding_dim`.
        dropout_output: float, locked dropout on the last layer's output.
        dropout_hidden: float, locked dropout between layers.
        dropout_input: float, locked dropout on the embeddings.
        dropout_embedding: float, embedding (word-type) dropout.
        ar_alpha: float, activation regularisation weight.
        tar_beta: float, temporal activation regularisation weight.
        tie_weights: bool, share the embedding and softmax matrices.
        seed: int or None.
        **kwargs: `keras.Model` keyword arguments (`name`, `dtype`).

    Example:

    ```python
    model = keras_ordered.models.LSTMLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "a", "b"]
    )
    ids = np.array([[0, 2, 3, 0]])
    logits, *states = model([ids, *model.initial_state(1)])
    distances = model.syntactic_distances(ids)  # {"layer1/forget": ...}
    ```

    Reference:
        Dyer, Melis and Blunsom, "A Critical Analysis of Biased Parsers in
        Unsupervised Parsing", arXiv:1909.09428, 2019; Merity et al.,
        "Regularizing and Optimizing LSTM Language Models", ICLR 2018.
    """

    get_preset = staticmethod(get_preset)

    def __init__(
        self,
        vocabulary,
        embedding_dim=400,
        hidden_dims=(1150, 1150, 400),
        dropout_output=0.4,
        dropout_hidden=0.25,
        dropout_input=0.4,
        dropout_embedding=0.1,
        ar_alpha=2.0,
        tar_beta=1.0,
        tie_weights=True,
        seed=None,
        **kwargs,
    ):
        vocabulary_size, words = check_vocabulary(vocabulary)
        hidden_dims = [int(h) for h in hidden_dims]
        if not hidden_dims:
            raise ValueError("`hidden_dims` must name at least one layer.")
        if tie_weights and hidden_dims[-1] != embedding_dim:
            raise ValueError(
                "With `tie_weights=True` the last layer's size "
                f"({hidden_dims[-1]}) must equal `embedding_dim` "
                f"({embedding_dim}): the softmax reuses the embedding matrix."
            )

        # === Layers ===
        def layer_seed(offset):
            return None if seed is None else seed + offset

        output_dtype = gradient_dtype = None
        compute_dtype = keras.mixed_precision.global_policy().compute_dtype
        if compute_dtype != "float32":
            output_dtype, gradient_dtype = "float32", compute_dtype
        embedding = EmbeddingDropout(
            vocabulary_size,
            embedding_dim,
            rate=dropout_embedding,
            embeddings_initializer=keras.initializers.RandomUniform(-0.1, 0.1),
            seed=layer_seed(0),
            dtype=output_dtype,
            reverse_gradient_dtype=gradient_dtype,
            name="embedding",
        )
        input_dropout = LockedDropout(
            dropout_input, seed=layer_seed(1), name="dropout_input"
        )
        rnn_layers, between_dropouts = [], []
        for index, units in enumerate(hidden_dims):
            rnn_layers.append(
                keras.layers.LSTM(
                    units,
                    return_sequences=True,
                    return_state=True,
                    seed=layer_seed(10 + index),
                    name=f"lstm_{index + 1}",
                )
            )
            if index < len(hidden_dims) - 1:
                between_dropouts.append(
                    LockedDropout(
                        dropout_hidden,
                        seed=layer_seed(20 + index),
                        name=f"dropout_hidden_{index + 1}",
                    )
                )
        output_dropout = LockedDropout(
            dropout_output, seed=layer_seed(2), name="dropout_output"
        )
        activation_regularization = ActivationRegularization(
            ar_alpha, tar_beta, name="activation_regularization"
        )
        output_layer = None
        if not tie_weights:
            output_layer = keras.layers.Dense(
                vocabulary_size, dtype=output_dtype, name="softmax"
            )

        # === Functional graph ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        state_inputs = []
        for index, units in enumerate(hidden_dims):
            state_inputs.append(keras.Input((units,), name=f"h_{index + 1}"))
            state_inputs.append(keras.Input((units,), name=f"c_{index + 1}"))
        x = input_dropout(embedding(token_ids))
        new_states = []
        for index, layer in enumerate(rnn_layers):
            raw, h, c = layer(
                x, initial_state=state_inputs[2 * index : 2 * index + 2]
            )
            new_states += [h, c]
            x = between_dropouts[index](raw) if index < len(between_dropouts) else raw
        dropped = activation_regularization([raw, output_dropout(raw)])
        if tie_weights:
            logits = embedding(dropped, reverse=True)
        else:
            logits = output_layer(dropped)
        logits = keras.layers.Activation("linear", dtype="float32", name="logits")(
            logits
        )
        super().__init__(
            inputs=[token_ids, *state_inputs],
            outputs=[logits, *new_states],
            **kwargs,
        )

        # === Config ===
        self._set_vocabulary(vocabulary_size, words)
        self.embedding_dim = embedding_dim
        self.hidden_dims = hidden_dims
        self.dropout_output = dropout_output
        self.dropout_hidden = dropout_hidden
        self.dropout_input = dropout_input
        self.dropout_embedding = dropout_embedding
        self.ar_alpha = ar_alpha
        self.tar_beta = tar_beta
        self.tie_weights = tie_weights
        self.seed = seed
        self.embedding = embedding
        self.rnn_layers = rnn_layers
        self.output_layer = output_layer
        self.distance_names = [
            f"layer{i + 1}/{kind}"
            for i in range(len(hidden_dims))
            for kind in ("forget", "input")
        ]
        # As ON-LSTM's: the second layer (or the only one), forget gate.
        self.default_distance = f"layer{min(2, len(hidden_dims))}/forget"

    # --- state ------------------------------------------------------------
    def state_shapes(self):
        return [(h,) for h in self.hidden_dims for _ in range(2)]

    def initial_state(self, batch_size):
        """Zero states `[h_1, c_1, ..., h_L, c_L]` as float32 arrays."""
        return [np.zeros((batch_size, *s), "float32") for s in self.state_shapes()]

    # --- distances --------------------------------------------------------
    def syntactic_distances(self, token_ids, states=None):
        """Per-layer gate distances, in inference mode.

        Args:
            token_ids: int array `(batch, time)`.
            states: optional initial states (default zeros).

        Returns:
            dict `"layer{l}/forget"` / `"layer{l}/input"` -> float32 array
            `(batch, time)`.
        """
        token_ids = ops.convert_to_tensor(np.asarray(token_ids, "int32"))
        if states is None:
            states = self.initial_state(int(token_ids.shape[0]))
        _, distances = self._inference_pass(token_ids, states, logits=False)
        return {
            name: ops.convert_to_numpy(d) for name, d in distances.items()
        }

    def serving_outputs(self, token_ids):
        """Logits and distances of one inference pass from a zero state
        (the tensor-level path of an exported model; see
        `ONLSTMLanguageModel.serving_outputs`)."""
        states = self._zero_states(ops.shape(token_ids)[0])
        return self._inference_pass(token_ids, states, logits=True)

    def _inference_pass(self, token_ids, states, logits):
        x = self.embedding(token_ids, training=False)
        distances = {}
        for index, layer in enumerate(self.rnn_layers):
            h0, c0 = states[2 * index : 2 * index + 2]
            outputs, _, _ = layer(x, initial_state=[h0, c0], training=False)
            d_forget, d_input = lstm_gate_distances(layer, x, outputs, h0)
            distances[f"layer{index + 1}/forget"] = ops.cast(d_forget, "float32")
            distances[f"layer{index + 1}/input"] = ops.cast(d_input, "float32")
            x = outputs
        if not logits:
            return None, distances
        if self.tie_weights:
            scores = self.embedding(x, reverse=True)
        else:
            scores = self.output_layer(x)
        return ops.cast(scores, "float32"), distances

    # --- config ---------------------------------------------------------
    def get_config(self):
        return {
            "name": self.name,
            "vocabulary": self._vocabulary_config(),
            "embedding_dim": self.embedding_dim,
            "hidden_dims": list(self.hidden_dims),
            "dropout_output": self.dropout_output,
            "dropout_hidden": self.dropout_hidden,
            "dropout_input": self.dropout_input,
            "dropout_embedding": self.dropout_embedding,
            "ar_alpha": self.ar_alpha,
            "tar_beta": self.tar_beta,
            "tie_weights": self.tie_weights,
            "seed": self.seed,
        }
