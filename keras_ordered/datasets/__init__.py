"""Data loaders: the PTB language-modelling text and Treebank readers."""

from keras_ordered.datasets import ptb  # noqa: F401
from keras_ordered.datasets import treebank  # noqa: F401
from keras_ordered.datasets import dependency  # noqa: F401
