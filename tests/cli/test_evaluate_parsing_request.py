"""`EvaluateParsingRequest`: `evaluate-parsing`'s options read once into a
frozen request, and the combinations it refuses, each in one line."""

import dataclasses

import pytest

from keras_ordered_cli import build_parser
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError
from keras_ordered_cli.evaluate_parsing import PROTOCOL_NAMES
from keras_ordered_cli.evaluate_parsing import EvaluateParsingRequest


def _request(*argv):
    args = build_parser().parse_args(
        ["evaluate-parsing", "--treebank", "trees", *argv])
    return EvaluateParsingRequest.from_args(args)


def test_the_request_holds_the_options_once_each_and_is_frozen():
    request = _request("--model", "a.keras", "b.keras", "--baseline",
                       "random", "right-branching", "random", "--protocol",
                       "all", "--shift", "1", "--decoder", "both",
                       "--seed", "7", "--limit", "20", "--json")
    assert request.treebank == "trees"
    assert request.models == ("a.keras", "b.keras")
    assert request.baselines == ("random", "right-branching")
    assert request.protocols == PROTOCOL_NAMES
    assert (request.shift, request.decoder, request.seed, request.limit,
            request.json) == (1, "both", 7, 20, True)
    # Several plain models are seeds side by side, not an ensemble.
    assert request.ensemble is False
    assert request.batch_size == 64 and request.random_seeds == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.shift = 2


def test_a_member_with_its_distance_makes_an_ensemble():
    request = _request("--model", "a.keras:layer1/forget", "b.keras",
                       "--tie", "left", "--weights", "2,1")
    assert request.ensemble is True
    assert request.tie == "left"
    assert request.weights == (2.0, 1.0)


@pytest.mark.parametrize("argv, error, message", [
    ((), UsageError, "give --model PATH, --baseline NAME, or both."),
    (("--baseline", "random", "--shift", "1"), CommandError,
     "--shift needs --model."),
    (("--baseline", "random", "--decoder", "left"), CommandError,
     "--decoder needs --model: the baselines are trees, not distances."),
    (("--baseline", "random", "--layer", "1"), CommandError,
     "--layer and --distance need --model."),
    (("--model", "a.keras", "--tie", "left"), CommandError,
     "--tie applies to --ensemble."),
    (("--ensemble", "--baseline", "random"), CommandError,
     "--ensemble needs --model members."),
    (("--model", "a.keras", "b.keras", "--ensemble", "--shift", "1"),
     CommandError, "--shift does not apply to an ensemble (name each "
     "member's distance as MODEL:DISTANCE)."),
])
def test_bad_combinations_are_refused_in_one_line(argv, error, message):
    with pytest.raises(error) as raised:
        _request(*argv)
    assert str(raised.value) == message
    assert "\n" not in str(raised.value)
