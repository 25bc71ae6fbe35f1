"""What the AWD-style recurrent language models share.

`ONLSTMLanguageModel` and `LSTMLanguageModel` are one architecture with
another recurrent layer: `embedding -> LockedDropout -> recurrent layers
(LockedDropout between them) -> LockedDropout -> tied softmax`, with
embedding dropout, AR / TAR on the last layer and states carried across
BPTT windows (Merity et al., 2018). `awd_graph` builds that graph around a
layer factory, and `AWDLanguageModelMixin` gives both models their
states and their inference pass, which reads each layer's syntactic
distances through the model's `_layer_distances`.
"""

import keras
import numpy as np
from keras import ops

from keras_ordered import backend
from keras_ordered.layers.dropout import ActivationRegularization
from keras_ordered.layers.dropout import EmbeddingDropout
from keras_ordered.layers.dropout import LockedDropout


def awd_graph(
    vocabulary_size,
    embedding_dim,
    hidden_dims,
    make_recurrent_layer,
    dropout_output,
    dropout_hidden,
    dropout_input,
    dropout_embedding,
    ar_alpha,
    tar_beta,
    ar_input="raw",
    tie_weights=True,
    seed=None,
):
    """The layers and functional graph of an AWD-style language model.

    Args:
        vocabulary_size: int.
        embedding_dim: int.
        hidden_dims: list of int, one per recurrent layer.
        make_recurrent_layer: function `(index, units, seed)` returning a
            recurrent layer called as `layer(x, initial_state=[h, c])` that
            returns `(sequences, h, c)`.
        dropout_output, dropout_hidden, dropout_input, dropout_embedding:
            the locked and embedding dropout rates.
        ar_alpha, tar_beta, ar_input: the activation regularisation (see
            `keras_ordered.layers.ActivationRegularization`).
        tie_weights: bool, the softmax reuses the embedding matrix (then
            `hidden_dims[-1]` must equal `embedding_dim`).
        seed: int or None; each random layer gets `seed + offset` (the
            embedding 0, the input dropout 1, the output dropout 2,
            recurrent layer `i` 10 + i, the dropout after it 20 + i).

    Returns:
        `(inputs, outputs, layers)`: the functional inputs `[token_ids, h_1,
        c_1, ...]`, outputs `[logits, h_1', c_1', ...]`, and a dict of the
        layers the models keep (`embedding`, `rnn_layers`, `output_layer`).

    Raises:
        ValueError: no layer, or tied weights of unequal sizes.
    """
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
            make_recurrent_layer(index, units, layer_seed(10 + index))
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
    layers = {
        "embedding": embedding,
        "rnn_layers": rnn_layers,
        "output_layer": output_layer,
    }
    return [token_ids, *state_inputs], [logits, *new_states], layers


def _distance_name(layer, kind):
    """The name of layer `layer`'s (from 1) `kind` distance
    (`"forget"` or `"input"`): `"layer2/forget"`."""
    return f"layer{layer}/{kind}"


class AWDLanguageModelMixin:
    """States, distances and the inference pass of an `awd_graph` model.

    The model sets `hidden_dims`, `tie_weights`, `embedding`, `rnn_layers`,
    `output_layer`, and implements `_layer_distances(layer, x, h0, c0)`
    returning `(sequences, distance_forget, distance_input)` in inference
    mode; the distances are named `"layer{l}/forget"` and
    `"layer{l}/input"`.
    """

    # Left-to-right recurrences: a word's distances do not depend on the
    # words after it.
    reads_past_the_sentence = False

    def _set_distance_names(self):
        # The layer (from 1) of each distance.
        self._distance_layers = {
            _distance_name(layer, kind): layer
            for layer in range(1, len(self.hidden_dims) + 1)
            for kind in ("forget", "input")
        }
        self.distance_names = list(self._distance_layers)
        # The paper's best parses: 2nd layer (or the only one), forget gate.
        self.default_distance = _distance_name(
            min(2, len(self.hidden_dims)), "forget")

    # --- state ------------------------------------------------------------
    def state_shapes(self):
        return [(h,) for h in self.hidden_dims for _ in range(2)]

    # --- distances --------------------------------------------------------
    def syntactic_distances(self, token_ids, states=None, layers=None):
        """Per-layer syntactic distances, in inference mode.

        Args:
            token_ids: int array `(batch, time)`.
            states: optional initial states (default zeros).
            layers: optional int, run only the first `layers` layers and
                give their distances (the layers above do not change
                them); default all.

        Returns:
            dict `"layer{l}/forget"` / `"layer{l}/input"` -> float32 array
            `(batch, time)`.
        """
        token_ids = ops.convert_to_tensor(np.asarray(token_ids, "int32"))
        if states is None:
            states = self.initial_state(int(token_ids.shape[0]))
        states = [ops.convert_to_tensor(s) for s in states]
        count = len(self.rnn_layers)
        if layers is None or layers == count:
            key, function = "distances", self._distance_pass
        elif isinstance(layers, int) and 1 <= layers < count:
            key = f"distances/{layers}"
            states = states[: 2 * layers]

            def function(token_ids, states):
                return self._inference_pass(token_ids, states, logits=False,
                                            layers=layers)[1]
        else:
            raise ValueError(
                f"`layers` is {layers!r}: the model has {count} layers.")
        distances = backend.compiled_inference(
            self, key, function, relaxed_shapes=True)(token_ids, states)
        return {name: ops.convert_to_numpy(d) for name, d in distances.items()}

    def _distances_for_ids(self, token_ids, names=None):
        # Only the layers up to the deepest distance asked for.
        layers = None
        if names is not None:
            layers = max(self._distance_layers[name] for name in names)
        return self.syntactic_distances(token_ids, layers=layers)

    def _distance_pass(self, token_ids, states):
        return self._inference_pass(token_ids, states, logits=False)[1]

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

    def _inference_pass(self, token_ids, states, logits, layers=None):
        x = self.embedding(token_ids, training=False)
        distances = {}
        for index, layer in enumerate(self.rnn_layers[:layers]):
            x, d_forget, d_input = self._layer_distances(
                layer, x, *states[2 * index : 2 * index + 2]
            )
            distances[_distance_name(index + 1, "forget")] = ops.cast(
                d_forget, "float32")
            distances[_distance_name(index + 1, "input")] = ops.cast(
                d_input, "float32")
        if not logits:
            return None, distances
        if self.tie_weights:
            scores = self.embedding(x, reverse=True)
        else:
            scores = self.output_layer(x)
        return ops.cast(scores, "float32"), distances
