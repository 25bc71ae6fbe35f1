"""`ParseRequest`: `parse`'s options read once into a frozen request, and
the combinations it refuses, each in one line."""

import dataclasses

import pytest

from keras_ordered_cli import build_parser
from keras_ordered_cli._common import CommandError
from keras_ordered_cli._common import UsageError
from keras_ordered_cli.parse import ParseRequest

SENTENCE = "The cat sat ."


def _request(*argv):
    args = build_parser().parse_args(["parse", *argv])
    return ParseRequest.from_args(args)


def test_the_request_holds_the_options_and_is_frozen():
    request = _request("--model", "a.keras", "--layer", "2", "--format",
                       "text", "--distances", "--no-tokenize",
                       "--on-error", "skip", SENTENCE, "A dog .")
    assert request.sentences == (SENTENCE, "A dog .")
    assert request.models == ("a.keras",) and request.model == "a.keras"
    assert request.ensemble is False
    assert (request.layer, request.format, request.distances,
            request.tokenize, request.on_error) == (2, "text", True, False,
                                                    "skip")
    assert request.baseline is None and request.file is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.layer = 1


def test_several_models_or_a_member_make_an_ensemble():
    request = _request("--model", "a.keras", "--model", "b.keras:layer1/forget",
                       "--votes", "--weights", "1,3", SENTENCE)
    assert request.ensemble is True
    assert request.model is None  # no single model: the members parse
    assert request.models == ("a.keras", "b.keras:layer1/forget")
    assert request.weights == (1.0, 3.0) and request.votes is True


def test_no_model_leaves_the_choice_to_the_shipped_default():
    request = _request(SENTENCE)
    assert request.model is None and request.models == ()
    assert request.ensemble is False


@pytest.mark.parametrize("argv, error, message", [
    (("--format", "svg", SENTENCE), UsageError,
     "--format svg writes files: give --output FILE (or a folder, for "
     "several sentences)."),
    (("--distances", SENTENCE), UsageError,
     "--distances draws bars under the words: use it with --format text, "
     "svg or png."),
    (("--model", "a.keras", "--votes", SENTENCE), CommandError,
     "--votes applies to ensembles: give several --model (or "
     "MODEL:DISTANCE members, or a shipped ensemble)."),
    (("--model", "a.keras", "--model", "b.keras", "--beam-size", "3",
      SENTENCE), CommandError, "--beam-size applies to GFL parsers only."),
    (("--baseline", "random", "--layer", "1", SENTENCE), CommandError,
     "--layer and --distance need --model."),
    (("--baseline", "random", "--decoder", "left", SENTENCE), CommandError,
     "--decoder needs --model: a baseline's trees are not made from "
     "distances."),
])
def test_bad_combinations_are_refused_in_one_line(argv, error, message):
    with pytest.raises(error) as raised:
        _request(*argv)
    assert str(raised.value) == message
    assert "\n" not in str(raised.value)
