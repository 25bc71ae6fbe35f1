"""The models `keras-ordered serve` serves, each behind its signatures.

A served model (`ServedModel`) has a name (the `<name>` of TF Serving's
URLs), a version, and signatures that take a batch of raw sentences and
return named NumPy arrays whose first dimension is the batch, as TF
Serving's signatures do:

- an exported SavedModel (`keras-ordered export`'s folder, or one of its
  version folders) runs its own signatures (`tf.saved_model.load`), as TF
  Serving does;
- a `.keras` file or a shipped model of syntactic distances (ON-LSTM,
  PRPN) runs the signature functions `keras-ordered export` writes into a
  SavedModel (`keras_ordered.export.language_model`), traced once here
  with the same input signature, so that no export is needed to try it;
  a GFL parser or a TD-TreeLSTM is exported to a temporary folder and
  loaded from there;
- without TensorFlow (the JAX or PyTorch install), a model of syntactic
  distances answers the `parse` signature with the Python path of
  `keras-ordered parse` (the same tokens, distances and trees); `score`
  and SavedModels need TensorFlow.
"""

import os
import re
import shutil
import sys

import numpy as np

from keras_ordered_cli._common import CommandError

VERSION = 1
"""The version a `.keras` file or a shipped model is served as."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")

LANGUAGE_MODEL_OUTPUTS = re.compile(
    r"^(tokens|length|valid|error|tree|distance(_\w+)?|token_log_probs|"
    r"sentence_log_prob|perplexity)$")
"""The outputs of the language models' signatures, whose per-token columns
are padded to the batch's longest sentence (`length`): requests of such a
signature can share one forward pass and be cut apart after."""

_DTYPES = {
    "string": "DT_STRING", "float32": "DT_FLOAT", "float64": "DT_DOUBLE",
    "int32": "DT_INT32", "int64": "DT_INT64", "bool": "DT_BOOL",
    "float16": "DT_HALF", "bfloat16": "DT_BFLOAT16", "uint8": "DT_UINT8",
}


def datatype_name(dtype_name):
    """TensorFlow's `DataType` name of a dtype name (`"float32"` ->
    `"DT_FLOAT"`), as the metadata of TF Serving writes it."""
    return _DTYPES.get(dtype_name, "DT_" + dtype_name.upper())


class Signature:
    """One signature: its input, its outputs and the function that runs it.

    Attributes:
        name: the signature's name (`parse`, `score`).
        input_name: the name of its one input (`sentences`).
        outputs: dict output name -> `(dtype name, shape)`, shape a list
            with -1 for an unknown size.
        run: function from a list of `str` sentences to a dict of NumPy
            arrays (first dimension: the sentences).
        batchable: whether requests may share one call (see
            `LANGUAGE_MODEL_OUTPUTS`).
    """

    def __init__(self, name, input_name, outputs, run, batchable):
        self.name = name
        self.input_name = input_name
        self.outputs = dict(outputs)
        self.run = run
        self.batchable = batchable

    def signature_def(self):
        """The signature as TF Serving's metadata writes a `SignatureDef`."""
        def tensor(name, dtype, shape, what):
            return {
                "dtype": datatype_name(dtype),
                "tensor_shape": {
                    "dim": [{"size": str(size), "name": ""} for size in shape],
                    "unknown_rank": False,
                },
                "name": f"{what}_{name}:0",
            }

        return {
            "inputs": {self.input_name: tensor(self.input_name, "string",
                                               [-1], self.name)},
            "outputs": {name: tensor(name, dtype, shape, "StatefulPartitionedCall")
                        for name, (dtype, shape) in sorted(self.outputs.items())},
            "method_name": "tensorflow/serving/predict",
        }


class ServedModel:
    """A model as `serve` serves it.

    Attributes:
        name: the name in the URLs (`/v1/models/<name>`).
        version: the version number TF Serving would report.
        signatures: dict signature name -> `Signature`; `serving_default`
            is one of them under a second name.
        source: what `--model` named, for messages.
        distance_names: the model's distances (the page parses with
            `distance`; empty for a model without distances).
        own_decoder: None, or the decoder only this model's trees are
            built with (a distance parser's `"gap"`): the page then draws
            the signature's `tree`, whatever decoder it was asked for.
    """

    def __init__(self, name, version, signatures, source, distance_names=()):
        self.name = name
        self.version = version
        self.signatures = dict(signatures)
        self.source = source
        self.distance_names = list(distance_names)
        self.own_decoder = None  # a model whose trees only its decoder builds

    @property
    def parses_distances(self):
        """Whether the page can draw this model's trees (a `parse`
        signature with `tokens` and `distance` outputs)."""
        parse = self.signatures.get("parse")
        return parse is not None and {"tokens", "distance", "length"} <= set(
            parse.outputs)


def served_name(spec):
    """The URL name of a `--model` value: a shipped name as it is, a file's
    or folder's name without `.keras`, and `_<distance>` for
    `MODEL:DISTANCE` (`onlstm_ptb_small:layer2/forget` ->
    `onlstm_ptb_small_layer2_forget`): TF Serving's URLs use `:` for the
    verb, so a name holds none."""
    from keras_ordered.parsing.ensemble import split_member

    path, distance = split_member(spec)
    path = path.rstrip("/\\")
    base = os.path.basename(path)
    if base.isdigit() and os.path.isdir(path):  # a version folder
        base = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if base.endswith(".keras"):
        base = base[: -len(".keras")]
    if distance:
        base += "_" + re.sub(r"[^A-Za-z0-9_.\-]", "_", distance)
    return base


def _is_saved_model(path):
    return os.path.isfile(os.path.join(path, "saved_model.pb"))


def saved_model_version(path):
    """`(folder of the SavedModel, version)` of an exported folder: the
    folder itself when it holds `saved_model.pb` (its version: its name
    when a number, else 1), else its largest numbered version folder, as
    TF Serving picks; `None` when it holds no SavedModel."""
    if _is_saved_model(path):
        base = os.path.basename(os.path.abspath(path))
        return path, int(base) if base.isdigit() else 1
    try:
        versions = [int(n) for n in os.listdir(path)
                    if n.isdigit() and _is_saved_model(os.path.join(path, n))]
    except OSError:
        return None
    if not versions:
        return None
    return os.path.join(path, str(max(versions))), max(versions)


def _tensorflow():
    """TensorFlow, or None when it is not installed."""
    from keras_ordered import backend

    if not backend.tensorflow_installed():
        return None
    import tensorflow as tf

    return tf


def _as_numpy(value):
    array = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    return array


def _tf_signature(name, function, tf):
    """A `Signature` of a concrete TensorFlow function of one string input."""
    _, kwargs = function.structured_input_signature
    (input_name,) = list(kwargs) or ["sentences"]
    outputs = {
        key: (spec.dtype.name, [-1 if s is None else int(s)
                                for s in spec.shape.as_list()])
        for key, spec in function.structured_outputs.items()
    }

    def run(sentences):
        tensor = tf.constant(list(sentences), dtype=tf.string)
        result = function(**{input_name: tensor})
        return {key: _as_numpy(value) for key, value in result.items()}

    batchable = all(LANGUAGE_MODEL_OUTPUTS.match(k) for k in outputs) and (
        "length" in outputs)
    return Signature(name, input_name, outputs, run, batchable)


def _load_saved_model(path, name, version, spec):
    tf = _tensorflow()
    if tf is None:
        raise CommandError(
            f"{spec!r} is a SavedModel: serving it needs TensorFlow "
            "(pip install \"keras-ordered[tensorflow]\"), or give the .keras "
            "file it was exported from.")
    try:
        import tensorflow_text  # noqa: F401  (its ops, if a graph holds any)
    except ImportError:
        pass
    try:
        loaded = tf.saved_model.load(path)
    except Exception as error:  # TensorFlow raises many kinds here
        message = str(error).strip().splitlines()[0] if str(error) else ""
        raise CommandError(
            f"Cannot load the SavedModel {path!r}: {message}") from None
    signatures = {}
    for key, function in loaded.signatures.items():
        signatures[key] = _tf_signature(key, function, tf)
    if not signatures:
        raise CommandError(f"The SavedModel {path!r} has no signature.")
    served = ServedModel(name, version, signatures, spec)
    served._keep = loaded  # the functions need their object alive
    parse = signatures.get("parse")
    if parse is not None:
        served.distance_names = sorted(
            key[len("distance_"):] for key in parse.outputs
            if key.startswith("distance_"))
    return served


def _language_model_signatures(model, distance, max_length, tf):
    """The export's signature functions of a language model, traced here."""
    from keras_ordered.export import language_model
    from keras_ordered.export import text as text_lib

    preprocessor = text_lib.TextPreprocessor(
        list(model.vocabulary), numbers="digit-runs", lowercase=True,
        treebank=True, max_length=max_length)
    preprocessor(tf.constant(["a"]))
    # A supervised distance parser builds its trees with its own decoder
    # and has no word probabilities: `parse` only, as its export.
    own = _own_decoder(model)
    functions = language_model._LanguageModelSignatures(
        model, preprocessor, distance, **({"decoder": own} if own else {}))
    signatures = {}
    for key in ("parse",) if own else ("parse", "score"):
        traced = tf.function(getattr(functions, key),
                             input_signature=[language_model.SENTENCES_SPEC])
        concrete = traced.get_concrete_function()
        signatures[key] = _tf_signature(key, concrete, tf)
    return signatures


def _own_decoder(model):
    """The decoder a model's trees must be built with when it is not the
    distances' usual ones (a distance parser's `"gap"`), else None."""
    decoder = getattr(model, "default_decoder", None)
    return decoder if decoder not in (None, "right", "left") else None


def _python_parse_signature(model, distance, max_length):
    """`parse` without TensorFlow: `keras-ordered parse`'s Python path,
    with the outputs and the per-sentence errors of the exported
    signature."""
    from keras_ordered.parsing import trees as trees_lib
    from keras_ordered_cli import parse as parse_command
    from keras_ordered_cli._common import with_leaves

    names = list(model.distance_names)
    keys = ["distance_" + n.replace("/", "_") for n in names]
    outputs = {"tokens": ("string", [-1, -1]), "length": ("int32", [-1]),
               "distance": ("float32", [-1, -1]), "tree": ("string", [-1]),
               "valid": ("bool", [-1]), "error": ("string", [-1])}
    outputs.update({key: ("float32", [-1, -1]) for key in keys})

    def run(sentences):
        tokens, errors = [], []
        for text in sentences:
            problem = _python_problem(text)
            words = []
            if problem is None:
                words = parse_command._nltk_tokenize([text])[0]
                if not words:
                    problem = "empty sentence: give at least one word"
                elif len(words) > max_length:
                    problem = (f"sentence has {len(words)} tokens, more than "
                               f"the limit of {max_length}: split it")
            tokens.append(words if problem is None else [])
            errors.append(problem or "")
        width = max([len(t) for t in tokens] + [0])
        rows = len(sentences)
        result = {"tokens": np.full((rows, width), b"", dtype=object),
                  "length": np.array([len(t) for t in tokens], "int32"),
                  "tree": np.full((rows,), b"", dtype=object),
                  "valid": np.array([not e for e in errors], bool),
                  "error": np.array([e.encode() for e in errors], object)}
        for key in keys + ["distance"]:
            result[key] = np.zeros((rows, width), "float32")
        parsed = [i for i, t in enumerate(tokens) if t]
        if parsed:
            distances = model.sentence_distances([tokens[i] for i in parsed])
            for position, i in enumerate(parsed):
                n = len(tokens[i])
                result["tokens"][i, :n] = [w.encode() for w in tokens[i]]
                for name, key in zip(names, keys):
                    result[key][i, :n] = distances[name][position]
                chosen = distances[distance][position]
                result["distance"][i, :n] = chosen
                own = _own_decoder(model)
                tree = with_leaves(trees_lib.distances_to_tree(
                    tokens[i], chosen, **({"decoder": own} if own else {})),
                    tokens[i])
                result["tree"][i] = trees_lib.tree_to_brackets(tree).encode()
        return result

    return {"parse": Signature("parse", "sentences", outputs, run, True)}


def _python_problem(text):
    from keras_ordered import _tokens

    problem = _tokens.control_character_problem(text)
    if problem is not None:
        return ("control character (U+0000-U+001F or U+007F-U+009F, other "
                "than tab, line feed and carriage return): remove it")
    return None


def _exported_then_loaded(model, spec, name, max_length):
    """A GFL parser or a TD-TreeLSTM: exported to a temporary folder, then
    served from its SavedModel."""
    import tempfile

    from keras_ordered.export import export_model

    folder = tempfile.mkdtemp(prefix="keras_ordered_serve_")
    try:
        path = export_model(model, folder, max_length=max_length)
        served = _load_saved_model(path, name, VERSION, spec)
        warm_up(served)  # its tables read their files now, once
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return served


def load_served_model(spec, max_length):
    """Loads one `--model` value as a `ServedModel`.

    Args:
        spec: a shipped model's name, a `.keras` file, an exported
            SavedModel folder (or one of its version folders), each with an
            optional `:DISTANCE` for a model of syntactic distances.
        max_length: the most tokens a sentence may have.

    Returns:
        The `ServedModel`, its signatures traced and run once.

    Raises:
        CommandError: a missing or unreadable model, or one that needs
            TensorFlow where it is not installed (one line).
    """
    from keras_ordered import backend
    from keras_ordered.parsing.ensemble import split_member
    from keras_ordered_cli import _common
    from keras_ordered_cli import _gfl

    path, distance = split_member(spec)
    name = served_name(spec)
    if not _NAME.match(name):
        raise CommandError(
            f"Cannot serve {spec!r} under the name {name!r}: rename the file "
            "to letters, digits, '_', '-' and '.'.")
    if os.path.isdir(path):
        found = saved_model_version(path)
        if found is None:
            raise CommandError(
                f"{path!r} is a folder without a SavedModel (saved_model.pb, "
                "or numbered version folders holding one): give the folder "
                "keras-ordered export wrote, or a .keras file.")
        if distance is not None:
            raise CommandError(
                f"{spec!r}: a SavedModel parses with the distance it was "
                "exported with (keras-ordered export --distance): drop "
                f":{distance}.")
        return _load_saved_model(found[0], name, found[1], spec)
    model = _common.load_model(path)
    tf = _tensorflow() if backend.is_tensorflow() else None
    distance_model = callable(getattr(model, "sentence_distances", None))
    if not distance_model:
        if distance is not None:
            raise CommandError(f"{spec!r}: only a model of syntactic "
                               "distances takes :DISTANCE.")
        if tf is None:
            raise CommandError(
                f"{spec!r} is served through its SavedModel, which needs "
                "TensorFlow and the TensorFlow backend.")
        if not (_gfl.is_gfl_parser(model)
                or "TDTreeLSTM" in type(model).__name__):
            _common.model_distances(model, path)  # its one-line error
        return _exported_then_loaded(model, spec, name, max_length)
    available = _common.model_distances(model, path)
    distance = distance or getattr(model, "default_distance", None) or available[0]
    if distance not in available:
        raise CommandError(
            f"{path} has no distance {distance!r}; available: "
            f"{', '.join(available)}.")
    if tf is not None:
        signatures = _language_model_signatures(model, distance, max_length, tf)
    else:
        signatures = _python_parse_signature(model, distance, max_length)
    signatures["serving_default"] = signatures["parse"]
    served = ServedModel(name, VERSION, signatures, spec, available)
    served.own_decoder = _own_decoder(model)
    served._keep = model
    return served


def warm_up(served):
    """Runs each signature once, so that the first request does not wait
    for the tracing."""
    for signature in {id(s): s for s in served.signatures.values()}.values():
        signature.run(["The cat sat ."])


def expand_specs(specs):
    """`--model` values with shipped ensembles replaced by their members,
    and `MODEL:all` by `MODEL` (its `parse` signature gives every distance
    of the model, `distance_<name>`)."""
    from keras_ordered import shipped
    from keras_ordered.parsing.ensemble import split_member

    expanded = []
    for spec in specs:
        members = shipped.ensemble_members(split_member(spec)[0])
        for member in [spec] if members is None else members["members"]:
            path, distance = split_member(member)
            expanded.append(path if distance == "all" else member)
    return expanded


def load_all(specs, max_length, note=None):
    """Every `--model` value's `ServedModel`, by name (each loaded once).

    Raises:
        CommandError: two models would share a name.
    """
    served = {}
    for spec in expand_specs(specs):
        name = served_name(spec)
        if name in served:
            if served[name].source == spec:
                continue
            raise CommandError(
                f"Two --model values would both be served as {name!r} "
                f"({served[name].source!r} and {spec!r}): rename one file.")
        if note is not None:
            note(f"loading {spec} as {name} ...")
        model = load_served_model(spec, max_length)
        warm_up(model)
        served[name] = model
    if not served:
        raise CommandError("Give at least one --model.")
    return served


def as_list(array):
    """A NumPy output as JSON values: strings decoded, float32 written with
    its shortest decimals (as TF Serving writes them)."""
    array = np.asarray(array)
    if array.dtype == object or array.dtype.kind in "SU":
        flat = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                for v in array.reshape(-1)]
        return np.array(flat, dtype=object).reshape(array.shape).tolist()
    if array.dtype == np.float32:
        flat = [float(str(v)) if np.isfinite(v) else None
                for v in array.reshape(-1)]
        return np.array(flat, dtype=object).reshape(array.shape).tolist()
    return array.tolist()


def tensorflow_loaded():
    """Whether TensorFlow runs in this process."""
    return "tensorflow" in sys.modules
