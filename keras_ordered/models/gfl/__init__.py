"""The LSTM+A parser of "Grammar as a Foreign Language" (Vinyals et al., 2015)."""

from keras_ordered.models.gfl.decoding import beam_search
from keras_ordered.models.gfl.decoding import greedy_search
from keras_ordered.models.gfl.gfl_parser import GFLParser
from keras_ordered.models.gfl.presets import PRESETS
from keras_ordered.models.gfl.gfl_parser import get_preset
from keras_ordered.models.gfl.vocabulary import SourceVocabulary
from keras_ordered.models.gfl.vocabulary import TargetVocabulary
from keras_ordered.models.gfl.vocabulary import load_word_vectors
