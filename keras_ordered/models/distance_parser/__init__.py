"""A supervised syntactic-distance parser (Shen et al., 2018), or span
scorer (Stern et al., 2017): the student that tree averaging distils into
one model."""

from keras_ordered.models.distance_parser.distance_parser import DistanceParser
from keras_ordered.models.distance_parser.distance_parser import cky_heights
from keras_ordered.models.distance_parser.distance_parser import ranking_loss
from keras_ordered.models.distance_parser.distance_parser import span_loss
from keras_ordered.models.distance_parser.presets import PRESETS
