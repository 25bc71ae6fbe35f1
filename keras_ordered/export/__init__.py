"""SavedModel export: string-in signatures and the in-graph pieces they share.

`keras_ordered.export.text` holds the text path (Treebank tokenization,
normalisation, vocabulary lookup with a file asset, per-sentence checks),
`keras_ordered.export.trees` the in-graph top-down parser,
`keras_ordered.export.linearized` the in-graph repair of linearized trees
(the GFL parser's outputs, exported by `keras_ordered.export.gfl`),
`keras_ordered.export.tdtreelstm` the top-down TreeLSTM's path (dependency
blocks, tree checks, generation steps, log-probabilities), and
`keras_ordered.export.ops` the op-type listing and allowlist that check an
exported graph runs in TF Serving's standard model server.
"""

from keras_ordered import backend as _backend

# SavedModels are TensorFlow's: without it, one line says what to install.
_backend.require_tensorflow("SavedModel export (keras_ordered.export)")

from keras_ordered.export.ops import DENIED_OPS  # noqa: E402
from keras_ordered.export.ops import check_serving_ops  # noqa: E402
from keras_ordered.export.ops import graph_op_types  # noqa: E402
from keras_ordered.export.ops import saved_model_op_types  # noqa: E402
from keras_ordered.export.ops import serving_op_allowlist  # noqa: E402
from keras_ordered.export.text import TextPreprocessor  # noqa: E402
from keras_ordered.export.text import VocabularyTable  # noqa: E402
from keras_ordered.export.text import check_sentences  # noqa: E402
from keras_ordered.export.text import normalize  # noqa: E402
from keras_ordered.export.text import repair_utf8  # noqa: E402
from keras_ordered.export.text import tokenize  # noqa: E402
from keras_ordered.export.text import tokenize_python  # noqa: E402
from keras_ordered.export.text import write_vocabulary  # noqa: E402
from keras_ordered.export.trees import distances_to_brackets  # noqa: E402
from keras_ordered.export.language_model import export_language_model  # noqa: E402
from keras_ordered.export.linearized import delinearize  # noqa: E402
from keras_ordered.export.gfl import export_gfl_parser  # noqa: E402
from keras_ordered.export.tdtreelstm import export_tdtreelstm  # noqa: E402
from keras_ordered.export.saved_model import export_model  # noqa: E402
