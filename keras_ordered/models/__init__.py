"""Models of keras-ordered, one sub-package per system."""

from keras_ordered.models.distance_parser import DistanceParser
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.lstm import LSTMLanguageModel
from keras_ordered.models.onlstm import ONLSTMLanguageModel
from keras_ordered.models.prpn import PRPNLanguageModel
from keras_ordered.models.tdtreelstm import TDTreeLSTMLanguageModel
