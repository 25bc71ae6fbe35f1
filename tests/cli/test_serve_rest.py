"""TF Serving's REST contract of `keras-ordered serve`, without a server:
the request and response examples of TF Serving's REST API documentation
(https://www.tensorflow.org/tfx/serving/api_rest), written here as data,
read and written by `keras_ordered_cli._serving.rest`; and the batching's
cutting of a shared forward pass back into requests."""

import base64
import json

import numpy as np
import pytest

pytest.importorskip("aiohttp")

from keras_ordered_cli._serving import rest  # noqa: E402
from keras_ordered_cli._serving.batching import split_outputs  # noqa: E402
from keras_ordered_cli._serving.models import ServedModel  # noqa: E402
from keras_ordered_cli._serving.models import Signature  # noqa: E402
from keras_ordered_cli._serving.models import as_list  # noqa: E402

# --- TF Serving's documentation, as data ------------------------------------

# "Model status API": the example's answer for a model of version 1.
DOC_STATUS = json.loads("""
{
 "model_version_status": [
  {
   "version": "1",
   "state": "AVAILABLE",
   "status": {
    "error_code": "OK",
    "error_message": ""
   }
  }
 ]
}
""")

# "Example": the half_plus_three model's predict request and response (one
# named output: the name is left out of the answer).
DOC_PREDICT_REQUEST = '{"instances": [1.0,2.0,5.0]}'
DOC_PREDICT_RESPONSE = json.loads('{"predictions": [3.5, 4.0, 5.5]}')

# "Specifying input tensors in row format": a list of 3 scalar tensors of
# the one named input.
DOC_ROW_SCALARS = '{"instances": [ "foo", "bar", "baz" ]}'
# The same inputs named, one object per instance, as the doc's example of
# named inputs writes them (its inputs renamed to this signature's one).
DOC_ROW_OBJECTS = '{"instances": [{"sentences": "foo"}, {"sentences": "bar"}]}'
# "Specifying input tensors in column format": an object of named inputs,
# or, for one named input, its values alone.
DOC_COLUMNS_NAMED = '{"inputs": {"sentences": ["foo", "bar"]}}'
DOC_COLUMNS_VALUES = '{"inputs": ["foo", "bar"]}'
# "Encoding binary values": a string as base64.
DOC_B64 = '{"instances": [{"b64": "%s"}]}' % base64.b64encode(
    b"The cat sat.").decode()
# "In case of error, all APIs will return a JSON object in the response
# body with error as key and the error message as the value".
DOC_ERROR_KEYS = {"error"}


def _served():
    """A served model whose `parse` echoes its sentences' lengths."""
    def run(sentences):
        lengths = np.array([len(s.split()) for s in sentences], "int32")
        width = int(lengths.max()) if len(sentences) else 0
        tokens = np.full((len(sentences), width), b"", dtype=object)
        for i, s in enumerate(sentences):
            tokens[i, :len(s.split())] = [w.encode() for w in s.split()]
        return {"tokens": tokens, "length": lengths,
                "valid": lengths > 0}

    parse = Signature("parse", "sentences",
                      {"tokens": ("string", [-1, -1]),
                       "length": ("int32", [-1]), "valid": ("bool", [-1])},
                      run, batchable=True)
    return ServedModel("prpn", 1, {"parse": parse, "serving_default": parse},
                       "prpn")


def _predict(body, served=None):
    served = served or _served()
    signature, sentences, columnar = rest.read_predict(
        rest.read_json(body.encode()), served, 64, 1000)
    return rest.write_predict(signature.run(sentences), columnar), sentences


def test_status_is_the_documented_one():
    assert rest.model_status(_served()) == DOC_STATUS


def test_one_output_answers_as_the_documented_example():
    # The doc's half_plus_three answer, from its outputs: the name left out.
    outputs = {"y": np.array([3.5, 4.0, 5.5], "float32")}
    assert json.loads(DOC_PREDICT_REQUEST)["instances"] == [1.0, 2.0, 5.0]
    assert rest.write_predict(outputs, columnar=False) == DOC_PREDICT_RESPONSE
    assert rest.write_predict(outputs, columnar=True) == {
        "outputs": [3.5, 4.0, 5.5]}


def test_row_format_values_and_objects():
    answer, sentences = _predict(DOC_ROW_SCALARS)
    assert sentences == ["foo", "bar", "baz"]
    assert answer == {"predictions": [
        {"length": 1, "tokens": [w], "valid": True} for w in sentences]}
    named, sentences = _predict(DOC_ROW_OBJECTS)
    assert sentences == ["foo", "bar"]
    assert named == {"predictions": answer["predictions"][:2]}


def test_columnar_format_answers_in_columns():
    answer, sentences = _predict(DOC_COLUMNS_NAMED)
    assert sentences == ["foo", "bar"]
    assert answer == {"outputs": {"length": [1, 1],
                                  "tokens": [["foo"], ["bar"]],
                                  "valid": [True, True]}}
    assert _predict(DOC_COLUMNS_VALUES)[0] == answer


def test_b64_strings_and_signature_name():
    answer, sentences = _predict(DOC_B64)
    assert sentences == ["The cat sat."]
    assert answer["predictions"][0]["length"] == 3
    named = '{"signature_name": "parse", "instances": ["a b"]}'
    assert _predict(named)[0]["predictions"][0]["length"] == 2


def test_metadata_is_a_signature_def_map():
    metadata = rest.model_metadata(_served())
    assert metadata["model_spec"] == {"name": "prpn", "signature_name": "",
                                      "version": "1"}
    signature = metadata["metadata"]["signature_def"]["signature_def"]["parse"]
    assert signature["method_name"] == "tensorflow/serving/predict"
    assert signature["inputs"]["sentences"]["dtype"] == "DT_STRING"
    assert signature["inputs"]["sentences"]["tensor_shape"]["dim"] == [
        {"size": "-1", "name": ""}]
    assert signature["outputs"]["length"]["dtype"] == "DT_INT32"
    assert signature["outputs"]["tokens"]["tensor_shape"]["dim"][1][
        "size"] == "-1"


@pytest.mark.parametrize("body, status, words", [
    ('{"instances": [', 400, "not valid JSON"),
    ('["The cat sat."]', 400, "JSON object"),
    ('{"instances": ["a"], "inputs": ["a"]}', 400, "not both"),
    ('{"signature_name": "parse"}', 400, "neither"),
    ('{"signature_name": "nope", "instances": ["a"]}', 400, "nope"),
    ('{"instance": ["a"]}', 400, "Unknown field 'instance'"),
    ('{"instances": [3]}', 400, "instances[0] must be a string"),
    ('{"instances": [{"words": "a"}]}', 400, "has one input, 'sentences'"),
    ('{"instances": [{"sentences": "a"}, "b"]}', 400, "mixes"),
    ('{"inputs": {"sentences": "a"}}', 400, "list of sentences"),
    ('{"instances": [{"b64": "***"}]}', 400, "base64"),
    ('{"instances": ["%s"]}' % ("x" * 1001), 400, "1001 characters"),
    ('{"instances": [%s]}' % ", ".join(['"a"'] * 65), 400, "65 sentences"),
])
def test_bad_requests_get_one_line_errors(body, status, words):
    with pytest.raises(rest.RequestError) as caught:
        _predict(body)
    assert caught.value.status == status
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert set(rest.error_body(caught.value.message)) == DOC_ERROR_KEYS


def test_floats_are_written_with_float32s_shortest_decimals():
    assert as_list(np.array([0.0335, 1e-7], "float32")) == [0.0335, 1e-7]
    assert as_list(np.array([[b"a", b""]], object)) == [["a", ""]]


def test_a_shared_forward_pass_is_cut_back_into_its_requests():
    served = _served()
    run = served.signatures["parse"].run
    alone = [run(["a b c"]), run(["d"])]
    together = run(["a b c", "d"])
    for request, (start, stop) in zip(alone, [(0, 1), (1, 2)]):
        part = split_outputs(together, start, stop, trim=True)
        assert set(part) == set(request)
        for key in part:
            np.testing.assert_array_equal(part[key], request[key])
    # Untrimmed, the short request keeps the long one's padding: the
    # trimming is what makes a batched answer equal the lone one.
    assert split_outputs(together, 1, 2, trim=False)["tokens"].shape == (1, 3)
