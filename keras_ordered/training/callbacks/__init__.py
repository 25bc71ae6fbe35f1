"""Every Keras callback of the recipes, in one place.

- `schedules`: `NTASGD` (ON-LSTM), `ResumableReduceLROnPlateau` and
  `make_plateau` (PRPN), `HalveLearningRateOnPlateau` (TD-TreeLSTM);
- `backup`: `TrainingBackup` (crash-safe backups a run resumes from),
  `ResumableModelCheckpoint` (the best model);
- `logs`: `LearningRateLogger`, `StepLogger` (TensorBoard every few steps),
  `RunProgbar` (Keras' progress bar, counting the run's epochs),
  `EpochHistory` and `read_epoch_history` (every epoch's logs in a CSV
  file that survives resumption);
- `parsing`: `ParsingEvaluation` (parsing F1 of the distances while a
  language model trains);
- `evalb`: `EVALBValidation` (EVALB F1 of a GFL parser while it trains);
- `stopping`: `StopOnCtrlC` (Ctrl-C at the next batch), `TimeLimit`.
"""

from keras_ordered.training.callbacks.backup import ResumableModelCheckpoint
from keras_ordered.training.callbacks.backup import TrainingBackup
from keras_ordered.training.callbacks.evalb import EVALBValidation
from keras_ordered.training.callbacks.logs import EpochHistory
from keras_ordered.training.callbacks.logs import LearningRateLogger
from keras_ordered.training.callbacks.logs import RunProgbar
from keras_ordered.training.callbacks.logs import StepLogger
from keras_ordered.training.callbacks.logs import read_epoch_history
from keras_ordered.training.callbacks.parsing import ParsingEvaluation
from keras_ordered.training.callbacks.schedules import NTASGD
from keras_ordered.training.callbacks.schedules import HalveLearningRateOnPlateau
from keras_ordered.training.callbacks.schedules import ResumableReduceLROnPlateau
from keras_ordered.training.callbacks.schedules import make_plateau
from keras_ordered.training.callbacks.stopping import StopOnCtrlC
from keras_ordered.training.callbacks.stopping import TimeLimit
