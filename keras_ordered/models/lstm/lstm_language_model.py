"""A conventional LSTM language model, read for syntactic distances.

The control of Dyer, Melis and Blunsom (2019): the top-down parser that
PRPN and ON-LSTM parse with, fed with a proxy for syntactic depth taken
from a language model that has no mechanism for structure. If its trees
score like the specialised models', their F1 measures the parser and
the language more than the architecture.
"""

import keras
from keras import ops

from keras_ordered.models.awd import AWDLanguageModelMixin
from keras_ordered.models.awd import awd_graph
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import check_direction
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.base import base_model_config
from keras_ordered.models.carried_state import CarriedStateMixin
from keras_ordered.models.lstm.presets import PRESETS


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
    AWDLanguageModelMixin, PresetMixin, SyntacticDistanceMixin,
    CarriedStateMixin, keras.Model
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
        direction: `"forward"` (the default, as the papers) or
            `"backward"` (see `SyntacticDistanceMixin.direction`).
        dtype: the dtype policy of every layer of the model (a
            `keras.DTypePolicy` or its name, such as `"mixed_bfloat16"`);
            None: the global policy. Kept in the config.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

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

    preset_family = "LSTM"
    preset_table = PRESETS

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
        direction="forward",
        dtype=None,
        **kwargs,
    ):
        with dtype_policy_scope(dtype):
            vocabulary_size, words = check_vocabulary(vocabulary)
            hidden_dims = [int(h) for h in hidden_dims]

            # === Layers and functional graph ===
            def lstm_layer(index, units, layer_seed):
                return keras.layers.LSTM(
                    units,
                    return_sequences=True,
                    return_state=True,
                    seed=layer_seed,
                    name=f"lstm_{index + 1}",
                )

            inputs, outputs, layers = awd_graph(
                vocabulary_size, embedding_dim, hidden_dims, lstm_layer,
                dropout_output, dropout_hidden, dropout_input, dropout_embedding,
                ar_alpha, tar_beta, tie_weights=tie_weights, seed=seed,
            )
            super().__init__(inputs=inputs, outputs=outputs, **kwargs)

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
            self.direction = check_direction(direction)
            self.embedding = layers["embedding"]
            self.rnn_layers = layers["rnn_layers"]
            self.output_layer = layers["output_layer"]
            self._set_distance_names()

    def _layer_distances(self, layer, x, h0, c0):
        sequences, _, _ = layer(x, initial_state=[h0, c0], training=False)
        d_forget, d_input = lstm_gate_distances(layer, x, sequences, h0)
        return sequences, d_forget, d_input

    # --- config ---------------------------------------------------------
    def get_config(self):
        return {
            **base_model_config(self),
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
            "direction": self.direction,
        }


get_preset = LSTMLanguageModel.get_preset
