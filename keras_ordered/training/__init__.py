"""Truncated-BPTT batching with carried state, NT-ASGD, callbacks."""

from keras_ordered.training.bptt import BPTTBatches
from keras_ordered.models.carried_state import CarriedStateMixin
from keras_ordered.training.bptt import SentenceBatches
from keras_ordered.training.bptt import batchify
from keras_ordered.training.callbacks import NTASGD
from keras_ordered.training.callbacks import ResumableModelCheckpoint
from keras_ordered.training.callbacks import ResumableReduceLROnPlateau
from keras_ordered.training.callbacks import TrainingBackup
from keras_ordered.training.parsing_callback import ParsingEvaluation
