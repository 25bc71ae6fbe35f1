"""`export_model`: the SavedModel of any model family of keras_ordered."""

import sys

from keras_ordered import backend as _backend

from keras_ordered.export.gfl import export_gfl_parser
from keras_ordered.export.language_model import export_language_model
from keras_ordered.export.tdtreelstm import export_tdtreelstm


def export_model(model, output, version=None, overwrite=False, **options):
    """Writes a SavedModel for TF Serving whose signatures take raw text.

    Dispatches on the model's family: the tree-inducing language models
    (ON-LSTM, PRPN) go to `export_language_model` (signatures `parse` and
    `score`), the GFL parser to `export_gfl_parser` (signature `parse`:
    labelled trees, greedy or beam decoding in the graph), the top-down
    TreeLSTM / LdTreeLSTM to `export_tdtreelstm` (signature `score`:
    dependency blocks in, log P(S | T) per word and sentence out).

    Args:
        model: a model of keras_ordered.
        output: the folder TF Serving watches (`output/<version>/`).
        version: int or None (next free version).
        overwrite: replace an existing version folder.
        **options: the family's export options (see
            `export_language_model`, `export_gfl_parser`,
            `export_tdtreelstm`).

    Returns:
        The path of the SavedModel.

    Example:

    ```python
    model = keras_ordered.models.PRPNLanguageModel.from_preset("prpn_ptb_quick")
    keras_ordered.export.export_model(model, "exported/prpn")  # exported/prpn/1
    ```
    """
    _backend.check_tensorflow_backend("SavedModel export")
    if callable(getattr(model, "serving_outputs", None)) and getattr(
        model, "distance_names", None
    ):
        return export_language_model(
            model, output, version=version, overwrite=overwrite, **options
        )
    gfl = sys.modules.get("keras_ordered.models.gfl.gfl_parser")
    if gfl is not None and isinstance(model, gfl.GFLParser):
        return export_gfl_parser(
            model, output, version=version, overwrite=overwrite, **options
        )
    td = sys.modules.get(
        "keras_ordered.models.tdtreelstm.tdtreelstm_language_model")
    if td is not None and isinstance(model, td.TDTreeLSTMLanguageModel):
        return export_tdtreelstm(
            model, output, version=version, overwrite=overwrite, **options
        )
    raise ValueError(
        f"No SavedModel export for {type(model).__name__} yet: export "
        "supports the tree-inducing language models (ONLSTMLanguageModel, "
        "PRPNLanguageModel), the GFLParser and the TDTreeLSTMLanguageModel."
    )

