"""Weights of the official PyTorch PRPN -> `PRPNLanguageModel`.

The official implementation (Shen et al., 2018; commit 42212fb, the
language model of `main_LM.py --tied --hard`) saves a PyTorch model; this
module reads its state dict as a plain mapping of names to NumPy arrays
(what `{k: v.numpy() for k, v in model.state_dict().items()}` gives), so no
PyTorch is needed here.

Official names and shapes (`V` vocabulary, `E` embedding size, `H` hidden
size, `P` parser channels (`H` in the official code), `K` look-back,
`in_0 = E`, `in_j = H` for reading layer `j > 0`), and where each goes:

=========================================  ===================  ==========================================
official name                              shape                Keras weight (layout)
=========================================  ===================  ==========================================
`encoder.weight`                           `[V, E]`             `embedding.embeddings`
`decoder.weight`                           `[V, E]`             tied: must equal `encoder.weight`
`decoder.bias`                             `[V]`                `embedding.output_bias`
`parser.gate.1.weight`                     `[P, E, K+1]`        `ParsingConv.window_kernel` `(K+1, E, P)`
`parser.gate.1.bias`                       `[P]`                `ParsingConv.window_bias`
`parser.gate.2.weight` / `.bias`           `[P]`                parser batch norm `gamma` / `beta`
`parser.gate.2.running_mean` / `_var`      `[P]`                parser batch norm moving mean / variance
`parser.gate.2.num_batches_tracked`        `[]`                 (not used)
`parser.gate.5.weight`                     `[2, P/2, 1]`        `ParsingConv.output_kernel` `(P/2, 2)`
`parser.gate.5.bias`                       `[2]`                `ParsingConv.output_bias`
`reader.{j}.memory_rnn.ih.0.weight`        `[4H, in_j]`         `lstm_{j+1}.kernel` `(in_j, 4H)`
`reader.{j}.memory_rnn.ih.0.bias`          `[4H]`               `lstm_{j+1}.input_bias`
`reader.{j}.memory_rnn.hh.0.weight`        `[4H, H]`            `lstm_{j+1}.recurrent_kernel` `(H, 4H)`
`reader.{j}.memory_rnn.hh.0.bias`          `[4H]`               `lstm_{j+1}.recurrent_bias`
`reader.{j}.memory_rnn.ih.1.gamma/beta`    `[4H]`               `lstm_{j+1}.input_norm`
`reader.{j}.memory_rnn.hh.1.gamma/beta`    `[4H]`               `lstm_{j+1}.recurrent_norm`
`reader.{j}.memory_rnn.c_norm.gamma/beta`  `[H]`                `lstm_{j+1}.cell_norm`
`reader.{j}.projector_summ.1.weight`       `[H, in_j + H]`      `attention_{j+1}.kernel` `(in_j + H, H)`
`reader.{j}.projector_summ.1.bias`         `[H]`                `attention_{j+1}.bias`
`predictor.projector_pred.1.weight`        `[H, H]`             predict `attention.kernel` (transposed)
`predictor.projector_pred.1.bias`          `[H]`                predict `attention.bias`
`predictor.ffd.1.weight`                   `[E, 2H]`            predict `projection.kernel` `(2H, E)`
`predictor.ffd.1.bias`                     `[E]`                predict `projection.bias`
`predictor.ffd.2.{weight,bias,running_*}`  `[E]`                predict batch norm
=========================================  ===================  ==========================================

PyTorch conventions: a Linear weight is `[out, in]` (`y = x W^T + b`), a
Conv1d weight `[out, in / groups, width]` (cross-correlation, as Keras'),
so the Keras kernels are the transposes. The LSTM gate order is `i, f, g,
o` in both. The key of reading layer `j` is computed from
`[layer input ; previous hidden state]`, in that order.

The state dict carries neither the number of memory slots (the official
`--nslots`, 15), nor the gate resolution (`--resolution`, 0.1), nor
whether the gates are hard (`--hard`, used by the official commands): give
them to `from_official_state_dict` when they differ from these.
"""

import re

import numpy as np

from keras_ordered.models.official_weights import get_array
from keras_ordered.models.official_weights import model_vocabulary

_READER = re.compile(r"^reader\.(\d+)\.memory_rnn\.ih\.0\.weight$")


def _get(state_dict, name):
    return get_array(state_dict, name, "PRPN")


def official_architecture(state_dict):
    """Reads sizes from an official state dict.

    Returns:
        dict with `vocabulary_size`, `embedding_dim`, `hidden_dim`,
        `num_layers`, `parser_units` and `lookback`.
    """
    encoder = _get(state_dict, "encoder.weight")
    vocabulary_size, embedding_dim = encoder.shape
    conv = _get(state_dict, "parser.gate.1.weight")
    if conv.ndim != 3 or conv.shape[1] != embedding_dim or conv.shape[2] < 2:
        raise ValueError(
            f"`parser.gate.1.weight` has shape {conv.shape}; expected "
            f"[channels, {embedding_dim}, lookback + 1]."
        )
    parser_units, lookback = conv.shape[0], conv.shape[2] - 1
    grouped = _get(state_dict, "parser.gate.5.weight")
    if grouped.shape != (2, parser_units // 2, 1) or parser_units % 2:
        raise ValueError(
            f"`parser.gate.5.weight` has shape {grouped.shape}; expected "
            f"[2, {parser_units // 2}, 1] (a width-1 convolution with 2 "
            "groups)."
        )
    layers = sorted(
        int(m.group(1)) for m in map(_READER.match, state_dict) if m is not None
    )
    if not layers or layers != list(range(len(layers))):
        raise ValueError(
            "The state dict has no consecutive "
            "`reader.{j}.memory_rnn.ih.0.weight` entries (found layers "
            f"{layers})."
        )
    hidden_dim = _get(state_dict, "reader.0.memory_rnn.hh.0.weight").shape[1]
    for j in layers:
        in_j = embedding_dim if j == 0 else hidden_dim
        for name, shape in (
            (f"reader.{j}.memory_rnn.ih.0.weight", (4 * hidden_dim, in_j)),
            (f"reader.{j}.memory_rnn.hh.0.weight", (4 * hidden_dim, hidden_dim)),
            (f"reader.{j}.projector_summ.1.weight", (hidden_dim, in_j + hidden_dim)),
        ):
            if _get(state_dict, name).shape != shape:
                raise ValueError(
                    f"`{name}` has shape {_get(state_dict, name).shape}; "
                    f"expected {list(shape)} (every reading layer of size "
                    f"{hidden_dim})."
                )
    ffd = _get(state_dict, "predictor.ffd.1.weight")
    if ffd.shape != (embedding_dim, 2 * hidden_dim):
        raise ValueError(
            f"`predictor.ffd.1.weight` has shape {ffd.shape}; expected "
            f"[{embedding_dim}, {2 * hidden_dim}]."
        )
    return {
        "vocabulary_size": int(vocabulary_size),
        "embedding_dim": int(embedding_dim),
        "hidden_dim": int(hidden_dim),
        "num_layers": len(layers),
        "parser_units": int(parser_units),
        "lookback": int(lookback),
    }


def _batch_norm(state_dict, prefix):
    return [
        _get(state_dict, f"{prefix}.weight"),
        _get(state_dict, f"{prefix}.bias"),
        _get(state_dict, f"{prefix}.running_mean"),
        _get(state_dict, f"{prefix}.running_var"),
    ]


def convert_weights(state_dict):
    """Official state dict -> Keras weights, grouped by layer.

    Args:
        state_dict: mapping name -> array (NumPy or anything `np.asarray`
            reads).

    Returns:
        dict with `embedding` (`[embeddings, output_bias]`), `parser`
        (`[window_kernel, window_bias, output_kernel, output_bias]`),
        `parser_batch_norm` (`[gamma, beta, mean, variance]`), `attentions`
        and `lstm_cells` (per reading layer, `[kernel, bias]` and the
        `LayerNormLSTMCell` weights in its order), `predict_attention`,
        `projection` and `predict_batch_norm`.
    """
    architecture = official_architecture(state_dict)
    encoder = _get(state_dict, "encoder.weight")
    if "decoder.weight" in state_dict:
        decoder = _get(state_dict, "decoder.weight")
        if decoder.shape != encoder.shape or not np.allclose(decoder, encoder):
            raise ValueError(
                "`decoder.weight` differs from `encoder.weight`: only "
                "checkpoints with tied weights (`--tied`, the paper's) are "
                "supported."
            )

    def linear(prefix):
        return [_get(state_dict, f"{prefix}.weight").T.copy(),
                _get(state_dict, f"{prefix}.bias")]

    attentions, lstm_cells = [], []
    for j in range(architecture["num_layers"]):
        rnn = f"reader.{j}.memory_rnn"
        attentions.append(linear(f"reader.{j}.projector_summ.1"))
        lstm_cells.append([
            _get(state_dict, f"{rnn}.ih.0.weight").T.copy(),
            _get(state_dict, f"{rnn}.ih.0.bias"),
            _get(state_dict, f"{rnn}.hh.0.weight").T.copy(),
            _get(state_dict, f"{rnn}.hh.0.bias"),
            _get(state_dict, f"{rnn}.ih.1.gamma"),
            _get(state_dict, f"{rnn}.ih.1.beta"),
            _get(state_dict, f"{rnn}.hh.1.gamma"),
            _get(state_dict, f"{rnn}.hh.1.beta"),
            _get(state_dict, f"{rnn}.c_norm.gamma"),
            _get(state_dict, f"{rnn}.c_norm.beta"),
        ])
    return {
        "embedding": [encoder, _get(state_dict, "decoder.bias")],
        "parser": [
            _get(state_dict, "parser.gate.1.weight").transpose(2, 1, 0).copy(),
            _get(state_dict, "parser.gate.1.bias"),
            _get(state_dict, "parser.gate.5.weight")[:, :, 0].T.copy(),
            _get(state_dict, "parser.gate.5.bias"),
        ],
        "parser_batch_norm": _batch_norm(state_dict, "parser.gate.2"),
        "attentions": attentions,
        "lstm_cells": lstm_cells,
        "predict_attention": linear("predictor.projector_pred.1"),
        "projection": linear("predictor.ffd.1"),
        "predict_batch_norm": _batch_norm(state_dict, "predictor.ffd.2"),
    }


def _assign(variables, arrays, where):
    for variable, array in zip(variables, arrays):
        if tuple(variable.shape) != tuple(array.shape):
            raise ValueError(
                f"{where}: the model's {variable.path} has shape "
                f"{tuple(variable.shape)}, the checkpoint {array.shape}."
            )
        variable.assign(array)


def from_official_state_dict(state_dict, vocabulary=None, num_slots=15,
                             resolution=0.1, hard_gates=True, model=None,
                             **model_kwargs):
    """Builds (or fills) a `PRPNLanguageModel` from official weights.

    Args:
        state_dict: mapping name -> NumPy array of the official model (see
            the module docstring for the names and shapes), batch-norm
            running statistics included.
        vocabulary: list of words in the checkpoint's id order (its
            `corpus.dictionary.idx2word`), or None for placeholder words
            (then `sentence_distances` cannot map words).
        num_slots: int, the checkpoint's `--nslots` (official default 15).
        resolution: float, its `--resolution` (0.1).
        hard_gates: bool, whether it was trained with `--hard` (the
            official commands use it).
        model: an existing `PRPNLanguageModel` of the same shape to load
            into; when None a new one is built.
        **model_kwargs: further `PRPNLanguageModel` arguments (dropouts,
            used only if the model is trained further).

    Returns:
        The `PRPNLanguageModel`, whose inference-mode logits and distances
        equal the official forward pass (window after window, with the
        carried state).

    Example:

    ```python
    # needs: torch (and the official checkpoint)
    import torch
    official = torch.load("model_LM.pt", map_location="cpu")
    model = keras_ordered.models.prpn.from_official_state_dict(
        {k: v.numpy() for k, v in official.state_dict().items()},
        vocabulary=idx2word,
    )
    ```
    """
    from keras_ordered.models.prpn.prpn_language_model import PRPNLanguageModel

    architecture = official_architecture(state_dict)
    weights = convert_weights(state_dict)
    words = model_vocabulary(vocabulary, architecture["vocabulary_size"])
    if model is None:
        model = PRPNLanguageModel(
            vocabulary=words,
            embedding_dim=architecture["embedding_dim"],
            hidden_dim=architecture["hidden_dim"],
            num_layers=architecture["num_layers"],
            num_slots=num_slots,
            lookback=architecture["lookback"],
            parser_units=architecture["parser_units"],
            resolution=resolution,
            hard_gates=hard_gates,
            **model_kwargs,
        )
    mine = {
        key: getattr(model, key)
        for key in ("embedding_dim", "hidden_dim", "num_layers", "lookback",
                    "parser_units")
    }
    theirs = {key: architecture[key] for key in mine}
    if mine != theirs:
        raise ValueError(
            f"The model's sizes {mine} differ from the checkpoint's {theirs}."
        )
    embedding = model.embedding
    _assign([embedding.embeddings, embedding.output_bias], weights["embedding"],
            "embedding")
    parser = model.parser
    _assign([parser.window_kernel, parser.window_bias, parser.output_kernel,
             parser.output_bias], weights["parser"], "parser")
    norm = parser.batch_norm
    _assign([norm.gamma, norm.beta, norm.moving_mean, norm.moving_variance],
            weights["parser_batch_norm"], "parser batch norm")
    cell = model.get_layer("reading_network").cell
    for j in range(model.num_layers):
        attention = cell.attentions[j]
        _assign([attention.kernel, attention.bias], weights["attentions"][j],
                f"reading layer {j}")
        lstm = cell.lstm_cells[j]
        _assign(
            [lstm.kernel, lstm.input_bias, lstm.recurrent_kernel,
             lstm.recurrent_bias, lstm.input_norm.gamma, lstm.input_norm.beta,
             lstm.recurrent_norm.gamma, lstm.recurrent_norm.beta,
             lstm.cell_norm.gamma, lstm.cell_norm.beta],
            weights["lstm_cells"][j], f"reading layer {j}",
        )
    predict = model.get_layer("predict_network")
    _assign([predict.attention.kernel, predict.attention.bias],
            weights["predict_attention"], "predict network")
    _assign([predict.projection.kernel, predict.projection.bias],
            weights["projection"], "predict network")
    norm = predict.batch_norm
    _assign([norm.gamma, norm.beta, norm.moving_mean, norm.moving_variance],
            weights["predict_batch_norm"], "predict batch norm")
    return model
