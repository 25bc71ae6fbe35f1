"""A supervised syntactic-distance parser (Shen et al., 2018): the student
that tree averaging distils into one model."""

from keras_ordered.models.distance_parser.distance_parser import DistanceParser
from keras_ordered.models.distance_parser.distance_parser import ranking_loss
from keras_ordered.models.distance_parser.presets import PRESETS
