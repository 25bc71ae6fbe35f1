"""The AWD-style ON-LSTM language model of Shen et al. (2019)."""

import keras

from keras_ordered.layers.gated_attention import FanInUniform
from keras_ordered.layers.on_lstm import ONLSTM
from keras_ordered.models.awd import AWDLanguageModelMixin
from keras_ordered.models.awd import awd_graph
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import check_direction
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.base import dtype_policy_scope
from keras_ordered.models.base import base_model_config
from keras_ordered.models.onlstm.presets import PRESETS
from keras_ordered.models.carried_state import CarriedStateMixin


INITIALIZATIONS = ("keras", "official")
"""The values of `ONLSTMLanguageModel(initialization=...)`."""


@keras.saving.register_keras_serializable(package="keras_ordered")
class ONLSTMLanguageModel(
    AWDLanguageModelMixin, PresetMixin, SyntacticDistanceMixin,
    CarriedStateMixin, keras.Model
):
    """Multi-layer ON-LSTM language model with AWD-LSTM regularisation.

    `embedding -> LockedDropout(dropout_input) -> ONLSTM x L (LockedDropout
    (dropout_hidden) between layers) -> LockedDropout(dropout_output) ->
    tied softmax`, with embedding dropout, DropConnect on every recurrent
    kernel, weight tying and AR / TAR on the last layer.

    Inputs: `[token_ids (batch, time) int, h_1, c_1, ..., h_L, c_L]`, the
    states `(batch, hidden_l)` carried from the previous window (zeros at
    the start of a text). Outputs: `[logits (batch, time, vocab), h_1', c_1',
    ..., h_L', c_L']`. Training with truncated BPTT carries the states
    (`configure_bptt`, `keras_ordered.training.BPTTBatches`).

    Syntactic distances (per layer, forget and input, `(batch, time)`) come
    from `syntactic_distances(token_ids)` and, for whole sentences,
    `sentence_distances(...)`; training does not compute them.

    Args:
        vocabulary: list of str (index = token id; must hold `<eos>` and
            `<unk>`), or an int vocabulary size.
        embedding_dim: int, the paper's 400.
        hidden_dims: list of int, one per layer (paper: 1150, 1150, 400);
            with `tie_weights` the last must equal `embedding_dim`.
        chunk_size: int, the paper's C = 10.
        extra_master_level: bool, see `keras_ordered.layers.ONLSTMCell`.
        dropout_output: float, locked dropout on the last layer's output.
        dropout_hidden: float, locked dropout between layers.
        dropout_input: float, locked dropout on the embeddings.
        dropout_embedding: float, embedding (word-type) dropout.
        weight_drop: float, DropConnect on the recurrent kernels.
        weight_drop_scaling: str, `"official"` (default: the official
            code's unscaled mask, kernels times `1 - weight_drop` at
            inference) or `"inverted"` (kept entries scaled by
            `1 / (1 - weight_drop)` in training); see
            `benchmarks/learning_parity.py`.
        ar_alpha: float, activation regularisation weight.
        tar_beta: float, temporal activation regularisation weight.
        ar_input: str, the last layer's output AR penalises: `"raw"` (the
            official ON-LSTM code; default) or `"dropped"` (AWD-LSTM, which
            penalises the output after its dropout).
        tie_weights: bool, share the embedding and softmax matrices.
        initialization: str, how the ON-LSTM layers' weights start:
            `"keras"` (default: the Keras recurrent layers' habit, the
            input kernel `glorot_uniform`, the recurrent kernel
            `orthogonal`, the bias zeros) or `"official"` (the official
            code's, PyTorch's `nn.Linear` default: every kernel uniform in
            +-1/sqrt(fan-in), the bias the sum of the input and recurrent
            projections' biases, each uniform in +-1/sqrt(its fan-in);
            `keras_ordered.layers.FanInUniform`). The embedding starts
            uniform in +-0.1 either way, as in the official code.
        seed: int or None.
        direction: `"forward"` (the default, as the papers) or
            `"backward"` (see `SyntacticDistanceMixin.direction`).
        dtype: the dtype policy of every layer of the model (a
            `keras.DTypePolicy` or its name, such as `"mixed_bfloat16"`);
            None: the global policy. Kept in the config.
        **kwargs: `keras.Model` keyword arguments (`name`, `trainable`).

    Example:

    ```python
    model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=["<eos>", "<unk>", "a", "b"]
    )
    ids = np.array([[0, 2, 3, 0]])
    logits, *states = model([ids, *model.initial_state(1)])
    distances = model.syntactic_distances(ids)  # {"layer1/forget": ...}
    ```

    Reference:
        Shen et al., "Ordered Neurons", ICLR 2019; Merity et al.,
        "Regularizing and Optimizing LSTM Language Models", ICLR 2018.
    """

    # The token loss as two XLA-compiled passes (`keras_ordered.models.
    # losses`): faster, equal to float32 rounding; the learning-parity
    # runs with it are in benchmarks/README.md.
    fused_token_loss = True

    preset_family = "ON-LSTM"
    preset_table = PRESETS

    def __init__(
        self,
        vocabulary,
        embedding_dim=400,
        hidden_dims=(1150, 1150, 400),
        chunk_size=10,
        extra_master_level=False,
        dropout_output=0.45,
        dropout_hidden=0.3,
        dropout_input=0.5,
        dropout_embedding=0.1,
        weight_drop=0.45,
        weight_drop_scaling="official",
        ar_alpha=2.0,
        tar_beta=1.0,
        ar_input="raw",
        tie_weights=True,
        initialization="keras",
        seed=None,
        direction="forward",
        dtype=None,
        **kwargs,
    ):
        if initialization not in INITIALIZATIONS:
            raise ValueError(
                f"`initialization` must be one of {INITIALIZATIONS}. "
                f"Received: initialization={initialization!r}"
            )
        with dtype_policy_scope(dtype):
            vocabulary_size, words = check_vocabulary(vocabulary)
            hidden_dims = [int(h) for h in hidden_dims]

            # === Layers and functional graph ===
            def onlstm_layer(index, units, layer_seed):
                initializers = {}
                if initialization == "official":
                    input_dim = (embedding_dim if index == 0
                                 else hidden_dims[index - 1])
                    initializers = {
                        "kernel_initializer": FanInUniform(),
                        "recurrent_initializer": FanInUniform(),
                        "bias_initializer": FanInUniform(
                            fan_in=[input_dim, units]),
                    }
                return ONLSTM(
                    units,
                    chunk_size=chunk_size,
                    extra_master_level=extra_master_level,
                    weight_drop=weight_drop,
                    weight_drop_scaling=weight_drop_scaling,
                    return_sequences=True,
                    return_state=True,
                    seed=layer_seed,
                    name=f"onlstm_{index + 1}",
                    **initializers,
                )

            inputs, outputs, layers = awd_graph(
                vocabulary_size, embedding_dim, hidden_dims, onlstm_layer,
                dropout_output, dropout_hidden, dropout_input, dropout_embedding,
                ar_alpha, tar_beta, ar_input=ar_input, tie_weights=tie_weights,
                seed=seed,
            )
            super().__init__(inputs=inputs, outputs=outputs, **kwargs)

            # === Config ===
            self._set_vocabulary(vocabulary_size, words)
            self.embedding_dim = embedding_dim
            self.hidden_dims = hidden_dims
            self.chunk_size = chunk_size
            self.extra_master_level = extra_master_level
            self.dropout_output = dropout_output
            self.dropout_hidden = dropout_hidden
            self.dropout_input = dropout_input
            self.dropout_embedding = dropout_embedding
            self.weight_drop = weight_drop
            self.weight_drop_scaling = weight_drop_scaling
            self.ar_alpha = ar_alpha
            self.tar_beta = tar_beta
            self.ar_input = ar_input
            self.tie_weights = tie_weights
            self.initialization = initialization
            self.seed = seed
            self.direction = check_direction(direction)
            self.embedding = layers["embedding"]
            self.rnn_layers = layers["rnn_layers"]
            self.output_layer = layers["output_layer"]
            self._set_distance_names()

    def _layer_distances(self, layer, x, h0, c0):
        sequences, _, _, d_forget, d_input = layer(
            x, initial_state=[h0, c0], training=False, return_distances=True
        )
        return sequences, d_forget, d_input

    # --- config ---------------------------------------------------------
    def get_config(self):
        return {
            **base_model_config(self),
            "vocabulary": self._vocabulary_config(),
            "embedding_dim": self.embedding_dim,
            "hidden_dims": list(self.hidden_dims),
            "chunk_size": self.chunk_size,
            "extra_master_level": self.extra_master_level,
            "dropout_output": self.dropout_output,
            "dropout_hidden": self.dropout_hidden,
            "dropout_input": self.dropout_input,
            "dropout_embedding": self.dropout_embedding,
            "weight_drop": self.weight_drop,
            "weight_drop_scaling": self.weight_drop_scaling,
            "ar_alpha": self.ar_alpha,
            "tar_beta": self.tar_beta,
            "ar_input": self.ar_input,
            "tie_weights": self.tie_weights,
            "initialization": self.initialization,
            "seed": self.seed,
            "direction": self.direction,
        }


get_preset = ONLSTMLanguageModel.get_preset
