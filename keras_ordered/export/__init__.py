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

from keras_ordered.export.ops import DENIED_OPS
from keras_ordered.export.ops import check_serving_ops
from keras_ordered.export.ops import graph_op_types
from keras_ordered.export.ops import saved_model_op_types
from keras_ordered.export.ops import serving_op_allowlist
from keras_ordered.export.text import TextPreprocessor
from keras_ordered.export.text import VocabularyTable
from keras_ordered.export.text import check_sentences
from keras_ordered.export.text import normalize
from keras_ordered.export.text import repair_utf8
from keras_ordered.export.text import tokenize
from keras_ordered.export.text import tokenize_python
from keras_ordered.export.text import write_vocabulary
from keras_ordered.export.trees import distances_to_brackets
from keras_ordered.export.language_model import export_language_model
from keras_ordered.export.linearized import delinearize
from keras_ordered.export.gfl import export_gfl_parser
from keras_ordered.export.tdtreelstm import export_tdtreelstm
from keras_ordered.export.saved_model import export_model
