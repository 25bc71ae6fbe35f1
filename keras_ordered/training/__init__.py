"""Truncated-BPTT batching with carried state, NT-ASGD, callbacks, TorchAdam.

Importing this package registers `TorchAdam` with Keras, so that a model
saved while training with it (the PRPN recipes' default) loads in any
process that imports `keras_ordered`.
"""

from keras_ordered.training.batching import BPTTBatches
from keras_ordered.models.carried_state import CarriedStateMixin
from keras_ordered.training.batching import SentenceBatches
from keras_ordered.training.batching import batchify
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import ResumableReduceLROnPlateau
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.callbacks import ParsingEvaluation
from keras_ordered.training.optimizers import TorchAdam
