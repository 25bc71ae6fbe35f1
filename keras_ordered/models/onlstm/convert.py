"""Weights of the official PyTorch ON-LSTM -> `ONLSTMLanguageModel`.

The official implementation (Shen et al., 2019) saves a PyTorch state dict;
this module reads it as a plain mapping of names to NumPy arrays (what
`{k: v.numpy() for k, v in state_dict.items()}` gives), so no PyTorch is
needed here. The official names and layout:

- `encoder.weight` `[V, emb]`; `decoder.weight` (tied to the encoder) and
  `decoder.bias` `[V]`;
- per layer `l`: `rnn.cells.{l}.ih.0.weight` `[4H + 2n, in]`,
  `rnn.cells.{l}.ih.0.bias`, `rnn.cells.{l}.hh.weight` `[4H + 2n, H]`,
  `rnn.cells.{l}.hh.bias`, with `n = H / chunk_size`;
- the `4H + 2n` rows: master input (n), master forget (n), output gate,
  cell candidate, input gate, forget gate (H each), feature
  `k = chunk * chunk_size + offset` inside each H block — the column layout
  of `ONLSTMCell`, so the kernels are the transposed matrices;
- gates = ih(x) + hh(h): the two biases add up to `ONLSTMCell.bias`;
- at inference the official code multiplies the recurrent weights by
  `1 - weight_drop` (its DropConnect does not rescale in training). So does
  an `ONLSTMCell` with `weight_drop_scaling="official"` (the default): the
  kernels load as they are. A model with `weight_drop_scaling="inverted"`
  uses its kernel as is at inference: it gets `hh.weight.T * (1 -
  weight_drop)`. Either way the inference forward pass is the official one.
"""

import re

import numpy as np

from keras_ordered.models.official_weights import get_array
from keras_ordered.models.official_weights import model_vocabulary

_LAYER = re.compile(r"^rnn\.cells\.(\d+)\.ih\.0\.weight$")


def _get(state_dict, name):
    return get_array(state_dict, name, "ON-LSTM")


def official_architecture(state_dict):
    """Reads sizes from an official state dict.

    Returns:
        dict with `vocabulary_size`, `embedding_dim`, `hidden_dims`,
        `chunk_size`.
    """
    encoder = _get(state_dict, "encoder.weight")
    layers = sorted(
        int(m.group(1)) for m in map(_LAYER.match, state_dict) if m is not None
    )
    if not layers or layers != list(range(len(layers))):
        raise ValueError(
            "The state dict has no consecutive `rnn.cells.{l}.ih.0.weight` "
            f"entries (found layers {layers})."
        )
    hidden_dims, chunk_sizes = [], set()
    for l in layers:
        rows = _get(state_dict, f"rnn.cells.{l}.ih.0.weight").shape[0]
        hidden = _get(state_dict, f"rnn.cells.{l}.hh.weight").shape[1]
        levels2 = rows - 4 * hidden
        if levels2 <= 0 or levels2 % 2 or hidden % (levels2 // 2):
            raise ValueError(
                f"Layer {l}: {rows} gate rows do not fit 4H + 2n with H = "
                f"{hidden} and n dividing H."
            )
        hidden_dims.append(hidden)
        chunk_sizes.add(hidden // (levels2 // 2))
    if len(chunk_sizes) != 1:
        raise ValueError(f"Layers disagree on the chunk size: {chunk_sizes}.")
    return {
        "vocabulary_size": encoder.shape[0],
        "embedding_dim": encoder.shape[1],
        "hidden_dims": hidden_dims,
        "chunk_size": chunk_sizes.pop(),
    }


def convert_weights(state_dict, weight_drop=0.45, fold_weight_drop=True):
    """Official state dict -> per-layer Keras weights.

    Args:
        state_dict: mapping name -> array (NumPy or anything `np.asarray`
            reads).
        weight_drop: float, the DropConnect rate the checkpoint was trained
            with (the paper: 0.45); folds the official inference-time
            scaling `1 - weight_drop` into the recurrent kernels.
        fold_weight_drop: bool, fold that scaling in (a model with
            `weight_drop_scaling="inverted"`), or keep the kernels as they
            are (`"official"`: the model scales them at inference).

    Returns:
        dict with `embedding` `[V, emb]`, `output_bias` `[V]` and `cells`, a
        list of `[kernel, recurrent_kernel, bias]` per layer.
    """
    architecture = official_architecture(state_dict)
    encoder = _get(state_dict, "encoder.weight")
    if "decoder.weight" in state_dict:
        decoder = _get(state_dict, "decoder.weight")
        if decoder.shape != encoder.shape or not np.allclose(decoder, encoder):
            raise ValueError(
                "`decoder.weight` differs from `encoder.weight`: only "
                "checkpoints with tied weights (the paper's) are supported."
            )
    cells = []
    for l in range(len(architecture["hidden_dims"])):
        ih_w = _get(state_dict, f"rnn.cells.{l}.ih.0.weight")
        ih_b = _get(state_dict, f"rnn.cells.{l}.ih.0.bias")
        hh_w = _get(state_dict, f"rnn.cells.{l}.hh.weight")
        hh_b = _get(state_dict, f"rnn.cells.{l}.hh.bias")
        cells.append([
            ih_w.T.copy(),
            (hh_w.T * ((1.0 - weight_drop) if fold_weight_drop else 1.0))
            .astype("float32"),
            ih_b + hh_b,
        ])
    return {
        "embedding": encoder,
        "output_bias": _get(state_dict, "decoder.bias"),
        "cells": cells,
    }


def from_official_state_dict(state_dict, vocabulary=None, weight_drop=0.45,
                             model=None, **model_kwargs):
    """Builds (or fills) an `ONLSTMLanguageModel` from official weights.

    Args:
        state_dict: mapping name -> NumPy array of the official model.
        vocabulary: list of words in the checkpoint's id order (its
            `corpus.dictionary.idx2word`), or None for placeholder words
            (then `sentence_distances` cannot map words).
        weight_drop: float, the checkpoint's `--wdrop` (paper: 0.45).
        model: an existing `ONLSTMLanguageModel` of the same shape to load
            into; when None a new one is built.
        **model_kwargs: further `ONLSTMLanguageModel` arguments (dropouts,
            used only if the model is trained further).

    Returns:
        The `ONLSTMLanguageModel`, whose inference outputs and distances
        equal the official forward pass.

    Example:

    ```python
    # needs: torch (and the official checkpoint)
    import torch
    state = torch.load("PTB.pt", map_location="cpu").state_dict()
    model = keras_ordered.models.onlstm.from_official_state_dict(
        {k: v.numpy() for k, v in state.items()}, vocabulary=idx2word
    )
    ```
    """
    from keras_ordered.models.onlstm.onlstm_language_model import (
        ONLSTMLanguageModel,
    )

    architecture = official_architecture(state_dict)
    if model is not None:
        scaling = model.weight_drop_scaling
    else:
        scaling = model_kwargs.get("weight_drop_scaling", "official")
    weights = convert_weights(state_dict, weight_drop=weight_drop,
                              fold_weight_drop=scaling == "inverted")
    words = model_vocabulary(vocabulary, architecture["vocabulary_size"])
    if model is None:
        model = ONLSTMLanguageModel(
            vocabulary=words,
            embedding_dim=architecture["embedding_dim"],
            hidden_dims=architecture["hidden_dims"],
            chunk_size=architecture["chunk_size"],
            weight_drop=weight_drop,
            **model_kwargs,
        )
    if [layer.units for layer in model.rnn_layers] != architecture["hidden_dims"]:
        raise ValueError(
            f"The model's layers {[l.units for l in model.rnn_layers]} differ "
            f"from the checkpoint's {architecture['hidden_dims']}."
        )
    model.embedding.embeddings.assign(weights["embedding"])
    model.embedding.output_bias.assign(weights["output_bias"])
    for layer, cell_weights in zip(model.rnn_layers, weights["cells"]):
        layer.cell.set_weights(cell_weights)
    return model
