"""Data loaders: the PTB language-modelling text and Treebank readers."""

from keras_ordered.datasets import ptb  # noqa: F401
