"""TF Serving's REST contract: reading predict requests, writing answers.

Plain Python (no server, no model), so that the contract is tested on its
own: `read_predict` turns a request body into the signature and the
sentences to run, `write_predict` turns the signature's outputs into the
body TF Serving writes, `model_status` and `model_metadata` the bodies of
the status and metadata URLs. Row format (`instances`) is answered in rows
(`predictions`), columnar format (`inputs`) in columns (`outputs`); with
one named output the name is left out, as TF Serving does. A string may be
sent as `{"b64": "..."}` (TF Serving's encoding of binary strings).
"""

import base64
import binascii
import json

from keras_ordered_cli._serving.models import as_list

DEFAULT_SIGNATURE = "serving_default"


class RequestError(Exception):
    """A request the server refuses: its HTTP status and one-line message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(message):
    """TF Serving's error body: `{"error": message}`."""
    return {"error": message}


def model_status(served):
    """The body of `GET /v1/models/<name>` (`GetModelStatusResponse`)."""
    return {"model_version_status": [{
        "version": str(served.version),
        "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""},
    }]}


def model_metadata(served):
    """The body of `GET /v1/models/<name>/metadata` (`GetModelMetadataResponse`)."""
    return {
        "model_spec": {"name": served.name, "signature_name": "",
                       "version": str(served.version)},
        "metadata": {"signature_def": {
            "signature_def": {key: signature.signature_def()
                              for key, signature in sorted(
                                  served.signatures.items())},
        }},
    }


def read_json(body):
    """The JSON object of a request body; a `RequestError` (400) otherwise."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError(400, "The request body is not UTF-8.") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise RequestError(
            400, f"The request body is not valid JSON: {error}.") from None
    if not isinstance(value, dict):
        raise RequestError(400, "The request body must be a JSON object, "
                                "e.g. {\"instances\": [\"The cat sat.\"]}.")
    return value


def _string(value, where):
    if isinstance(value, dict) and set(value) == {"b64"}:
        try:
            data = base64.b64decode(value["b64"], validate=True)
            return data.decode("utf-8")
        except (binascii.Error, TypeError, ValueError, UnicodeDecodeError):
            raise RequestError(
                400, f"{where}: \"b64\" must hold base64 of UTF-8 text."
            ) from None
    if not isinstance(value, str):
        raise RequestError(
            400, f"{where} must be a string (a sentence), got "
                 f"{type(value).__name__ if value is not None else 'null'}.")
    return value


def read_predict(request, served, max_sentences, max_characters):
    """Reads a `:predict` request.

    Args:
        request: the request's JSON object.
        served: the `ServedModel` the URL names.
        max_sentences: the most sentences one request may hold.
        max_characters: the most characters one sentence may have.

    Returns:
        `(signature, sentences, columnar)`: the `Signature` to run, the
        list of sentences, and whether the request used `inputs`.

    Raises:
        RequestError: what is wrong, with its HTTP status.
    """
    unknown = sorted(set(request) - {"signature_name", "instances", "inputs"})
    if unknown:
        raise RequestError(
            400, f"Unknown field {unknown[0]!r}: a predict request has "
                 "\"signature_name\" and either \"instances\" or \"inputs\".")
    name = request.get("signature_name", DEFAULT_SIGNATURE)
    if not isinstance(name, str):
        raise RequestError(400, "\"signature_name\" must be a string.")
    signature = served.signatures.get(name)
    if signature is None:
        raise RequestError(
            400, f"Serving signature name: \"{name}\" not found in signature "
                 f"def; {served.name} has "
                 f"{', '.join(sorted(served.signatures))}.")
    if ("instances" in request) == ("inputs" in request):
        raise RequestError(
            400, "Give either \"instances\" (row format) or \"inputs\" "
                 "(columnar format), not both and not neither.")
    key = signature.input_name
    columnar = "inputs" in request
    if columnar:
        values = request["inputs"]
        if isinstance(values, dict):
            if set(values) != {key}:
                raise RequestError(
                    400, f"\"inputs\" names the inputs {sorted(values)}; "
                         f"signature {name!r} has one input, {key!r}.")
            values = values[key]
        if not isinstance(values, list):
            raise RequestError(
                400, f"\"inputs\" must be a list of sentences (input {key!r} "
                     "has shape [-1]).")
    else:
        values = request["instances"]
        if not isinstance(values, list):
            raise RequestError(400, "\"instances\" must be a list.")
        objects = [isinstance(v, dict) and "b64" not in v for v in values]
        if any(objects):
            if not all(objects):
                raise RequestError(
                    400, "\"instances\" mixes objects and values: give all "
                         f"as {{\"{key}\": ...}} or all as sentences.")
            for position, value in enumerate(values):
                if set(value) != {key}:
                    raise RequestError(
                        400, f"instances[{position}] names {sorted(value)}; "
                             f"signature {name!r} has one input, {key!r}.")
            values = [value[key] for value in values]
    if len(values) > max_sentences:
        raise RequestError(
            400, f"The request holds {len(values)} sentences, more than the "
                 f"limit of {max_sentences}: send them in several requests.")
    where = "inputs" if columnar else "instances"
    sentences = [_string(value, f"{where}[{i}]") for i, value in enumerate(values)]
    for position, sentence in enumerate(sentences):
        if len(sentence) > max_characters:
            raise RequestError(
                400, f"{where}[{position}] has {len(sentence)} characters, "
                     f"more than the limit of {max_characters}: split it.")
    return signature, sentences, columnar


def write_predict(outputs, columnar):
    """The response body of a `:predict` request.

    Args:
        outputs: dict output name -> NumPy array (first dimension: the
            sentences).
        columnar: whether the request used `inputs`.

    Returns:
        `{"predictions": [...]}` (rows) or `{"outputs": ...}` (columns).
    """
    columns = {key: as_list(value) for key, value in sorted(outputs.items())}
    if columnar:
        if len(columns) == 1:
            return {"outputs": next(iter(columns.values()))}
        return {"outputs": columns}
    if len(columns) == 1:
        return {"predictions": next(iter(columns.values()))}
    rows = len(next(iter(columns.values()))) if columns else 0
    return {"predictions": [{key: values[row] for key, values in columns.items()}
                            for row in range(rows)]}
