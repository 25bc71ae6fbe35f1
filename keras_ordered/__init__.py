"""keras-ordered: a Keras 3 model zoo for syntax-aware recurrent networks.

ON-LSTM (Shen et al., 2019), PRPN (Shen et al., 2018) and the top-down
parsing of their syntactic distances, as Keras layers, models and recipes.
"""

__version__ = "0.1.0"

from keras_ordered import layers  # noqa: F401  (registers serializables)
