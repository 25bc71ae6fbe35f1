"""The AWD-style ON-LSTM language model of Shen et al. (2019)."""

import keras
import numpy as np
from keras import ops

from keras_ordered.layers.dropout import ActivationRegularization
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.dropout import LockedDropout
from keras_ordered.layers.on_lstm import ONLSTM
from keras_ordered.models.base import PresetMixin
from keras_ordered.models.base import SyntacticDistanceMixin
from keras_ordered.models.base import check_vocabulary
from keras_ordered.models.onlstm.presets import get_preset
from keras_ordered.models.carried_state import CarriedStateMixin


@keras.saving.register_keras_serializable(package="keras_ordered")
class ONLSTMLanguageModel(
    PresetMixin, SyntacticDistanceMixin, CarriedStateMixin, keras.Model
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
        seed: int or None.
        **kwargs: `keras.Model` keyword arguments (`name`, `dtype`).

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

    # The token loss as two XLA-compiled passes (`keras_ordered.training.
    # losses`): faster, equal to float32 rounding; the learning-parity
    # runs with it are in benchmarks/README.md.
    fused_token_loss = True

    get_preset = staticmethod(get_preset)

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
            # Each random layer gets its own stream: equal seeds would give
            # equal-shaped dropouts (input and output) the same masks.
            return None if seed is None else seed + offset

        # Under a mixed policy the vocabulary projection (the tied embedding
        # in reverse, or the softmax layer) runs in float32: logits rounded
        # to bfloat16 (3 significant digits) train measurably worse. The
        # tied projection's two gradient products run in the policy's
        # compute dtype, as the rest of the matrix work does.
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
                ONLSTM(
                    units,
                    chunk_size=chunk_size,
                    extra_master_level=extra_master_level,
                    weight_drop=weight_drop,
                    weight_drop_scaling=weight_drop_scaling,
                    return_sequences=True,
                    return_state=True,
                    seed=layer_seed(10 + index),
                    name=f"onlstm_{index + 1}",
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
            ar_alpha, tar_beta, ar_input=ar_input,
            name="activation_regularization",
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
        self.seed = seed
        self.embedding = embedding
        self.rnn_layers = rnn_layers
        self.output_layer = output_layer
        self.distance_names = [
            f"layer{i + 1}/{kind}"
            for i in range(len(hidden_dims))
            for kind in ("forget", "input")
        ]
        # The paper's best parses: 2nd layer (or the only one), forget gate.
        self.default_distance = f"layer{min(2, len(hidden_dims))}/forget"

    # --- state ------------------------------------------------------------
    def state_shapes(self):
        return [(h,) for h in self.hidden_dims for _ in range(2)]

    def initial_state(self, batch_size):
        """Zero states `[h_1, c_1, ..., h_L, c_L]` as float32 arrays."""
        return [np.zeros((batch_size, *s), "float32") for s in self.state_shapes()]

    # --- distances --------------------------------------------------------
    def syntactic_distances(self, token_ids, states=None):
        """Per-layer syntactic distances, in inference mode.

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
        return {name: np.asarray(d) for name, d in distances.items()}

    def serving_outputs(self, token_ids):
        """Logits and distances of one inference pass from a zero state.

        The tensor-level path of an exported model (`keras_ordered.export`):
        it runs inside a `tf.function`, with a batch size known only at run
        time.

        Args:
            token_ids: int tensor `(batch, time)`.

        Returns:
            `(logits, distances)`: float32 logits `(batch, time, vocabulary)`
            equal to the model's own inference-mode logits, and the dict of
            `syntactic_distances` as float32 tensors.
        """
        states = self._zero_states(ops.shape(token_ids)[0])
        return self._inference_pass(token_ids, states, logits=True)

    def _inference_pass(self, token_ids, states, logits):
        x = self.embedding(token_ids, training=False)
        distances = {}
        for index, layer in enumerate(self.rnn_layers):
            x, _, _, d_forget, d_input = layer(
                x,
                initial_state=list(states[2 * index : 2 * index + 2]),
                training=False,
                return_distances=True,
            )
            distances[f"layer{index + 1}/forget"] = ops.cast(d_forget, "float32")
            distances[f"layer{index + 1}/input"] = ops.cast(d_input, "float32")
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
            "seed": self.seed,
        }
