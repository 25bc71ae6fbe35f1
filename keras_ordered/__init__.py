"""keras-ordered: a Keras 3 model zoo for syntax-aware recurrent networks.

ON-LSTM (Shen et al., 2019), PRPN (Shen et al., 2018) and the top-down
parsing of their syntactic distances, as Keras layers, models and recipes.
Importing the package registers every layer and model with Keras, so that
`keras.saving.load_model` reads the `.keras` files it writes.
"""

__version__ = "0.1.0"

from keras_ordered import datasets  # noqa: F401,E402
from keras_ordered import layers  # noqa: F401,E402
from keras_ordered import models  # noqa: F401,E402
from keras_ordered import parsing  # noqa: F401,E402
from keras_ordered import training  # noqa: F401,E402
