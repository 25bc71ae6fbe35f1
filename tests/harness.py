"""The shared test harness (after keras-hub's `TestCase`): standard checks
of a layer or a model, and the tiny models the tests build.

    from harness import TestCase

    def test_my_layer(harness):          # the `harness` fixture (conftest.py)
        harness.run_layer_test(MyLayer, {"units": 4}, np.ones((2, 3, 5)),
                               expected_output_shape=(2, 3, 4))

or subclass `TestCase` (pytest collects `Test*` classes; `self.tmp_path`
is set for each test). The checks:

- `run_layer_test`: builds the layer on the input's shape (the weight count
  when given), calls it (the output shapes), checks that a loss of every
  float output sends a non-zero gradient to every trainable weight, then
  `run_serialization_test` and a revived copy with the same weights giving
  the same outputs.
- `run_serialization_test`: `get_config` -> `from_config` -> `get_config`
  is the same, and so is the round trip through
  `keras.saving.serialize_keras_object` / `deserialize_keras_object` (as
  JSON text, as a `.keras` file stores it).
- `run_model_saving_test`: `model.save(... .keras)` ->
  `keras.saving.load_model` gives an instance of the same class with the
  same outputs.

The tiny models (`tiny_onlstm_lm`, `tiny_prpn_lm`, `tiny_gfl_parser`,
`tiny_tdtreelstm_lm`) are each family's `tiny` preset (or the smallest
useful sizes) over small fixed vocabularies, with seeded dropouts; their
initial weights come from Keras' global generator
(`keras.utils.set_random_seed` for the same ones twice).
"""

import json
import os
import tempfile

import keras
import numpy as np
import pytest

# --- the tiny models ---------------------------------------------------------
# A language-model vocabulary: `<eos>`, `<unk>` and 14 words.
LM_VOCAB = ["<eos>", "<unk>"] + [f"w{i}" for i in range(14)]
# The GFL parser's words and bracket symbols.
GFL_WORDS = ["john", "has", "a", "dog", "mary", "runs", "the", "cat", "sleeps"]
GFL_SYMBOLS = ["(S", ")S", "(NP", ")NP", "(VP", ")VP", "XX"]
# The TD-TreeLSTM's words.
TREE_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "home", "."]


def tiny_onlstm_lm(vocabulary=None, seed=1, **overrides):
    """The ON-LSTM language model of the `tiny` preset over `LM_VOCAB`."""
    from keras_ordered.models import ONLSTMLanguageModel

    return ONLSTMLanguageModel.from_preset(
        "tiny", LM_VOCAB if vocabulary is None else vocabulary, seed=seed,
        **overrides)


def tiny_prpn_lm(vocabulary=None, seed=1, **overrides):
    """The PRPN language model of the `tiny` preset over `LM_VOCAB`."""
    from keras_ordered.models import PRPNLanguageModel

    return PRPNLanguageModel.from_preset(
        "tiny", LM_VOCAB if vocabulary is None else vocabulary, seed=seed,
        **overrides)


def gfl_vocabularies():
    """(source, target) vocabularies of `GFL_WORDS` and `GFL_SYMBOLS`."""
    from keras_ordered.models.gfl import SourceVocabulary
    from keras_ordered.models.gfl import TargetVocabulary

    return SourceVocabulary(GFL_WORDS), TargetVocabulary(GFL_SYMBOLS)


def tiny_gfl_parser(source=None, target=None, seed=3, **overrides):
    """The GFL parser of the `tiny` preset over `gfl_vocabularies()`."""
    from keras_ordered.models.gfl import GFLParser

    default_source, default_target = gfl_vocabularies()
    return GFLParser.from_preset(
        "tiny", default_source if source is None else source,
        default_target if target is None else target, seed=seed, **overrides)


def tree_vocabulary():
    """The dependency vocabulary of `TREE_WORDS`."""
    from keras_ordered.datasets.dependency import DependencyVocabulary

    return DependencyVocabulary(TREE_WORDS)


def tiny_tdtreelstm_lm(vocabulary=None, embedding_dim=4, units=3,
                       num_layers=1, seed=0, **overrides):
    """A TD-TreeLSTM language model of a few units over `tree_vocabulary()`."""
    from keras_ordered.models import TDTreeLSTMLanguageModel

    return TDTreeLSTMLanguageModel(
        tree_vocabulary() if vocabulary is None else vocabulary,
        embedding_dim=embedding_dim, units=units, num_layers=num_layers,
        seed=seed, **overrides)


def random_ids(batch, time, vocabulary_size=len(LM_VOCAB), seed=0):
    """int32 word ids, shape (batch, time), below `vocabulary_size`."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocabulary_size, (batch, time)).astype("int32")


# --- the checks --------------------------------------------------------------
def _flat(structure):
    return [x for x in keras.tree.flatten(structure) if x is not None]


def to_numpy(x, dtype=None):
    """A tensor of any backend (or an array, or a list of them) as a NumPy
    array (of `dtype` when given); `np.asarray` refuses a PyTorch tensor
    that requires grad."""
    if isinstance(x, (list, tuple)):
        array = np.asarray([to_numpy(item) for item in x])
    else:
        array = np.asarray(keras.ops.convert_to_numpy(x))
    return array if dtype is None else array.astype(dtype)


def gradients(function, weights):
    """The gradients of the scalar `function()` with respect to the Keras
    `weights`, as NumPy arrays (None where none reaches), on the running
    backend: `tf.GradientTape`, `jax.grad` over the weights' values (with
    Keras' `StatelessScope`), or PyTorch's `backward`."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = function()
        return [None if g is None else to_numpy(tf.convert_to_tensor(g))
                for g in tape.gradient(loss, weights)]
    if backend == "jax":
        import jax

        def loss_of(values):
            mapping = list(zip(weights, values))
            with keras.StatelessScope(state_mapping=mapping):
                return function()

        grads = jax.grad(loss_of)([w.value for w in weights])
        return [to_numpy(g) for g in grads]
    if backend == "torch":
        import torch

        for weight in weights:
            weight.value.grad = None
        with torch.enable_grad():
            function().backward()
        return [None if w.value.grad is None else to_numpy(w.value.grad)
                for w in weights]
    raise NotImplementedError(f"gradients on the {backend} backend")


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _call(layer, input_data, call_kwargs):
    if isinstance(input_data, dict):
        return layer(**input_data, **call_kwargs)
    return layer(input_data, **call_kwargs)


def _assert_shapes(outputs, expected):
    """`expected`: a shape or a structure of shapes like the outputs; None
    in a shape matches any size."""
    outputs = _flat(outputs)
    if expected and not isinstance(expected[0], (tuple, list)):
        expected = [expected]
    expected = list(expected)
    assert len(outputs) == len(expected), (
        f"{len(outputs)} outputs, expected {len(expected)}")
    for index, (output, shape) in enumerate(zip(outputs, expected)):
        got = _shape(output)
        assert len(got) == len(shape) and all(
            want is None or want == have for have, want in zip(got, shape)
        ), f"output {index}: shape {got}, expected {tuple(shape)}"


class TestCase:
    """The standard checks; see the module's docstring. Use it through the
    `harness` fixture or as a base class of a `Test*` class."""

    tmp_path = None

    @pytest.fixture(autouse=True)
    def _harness_tmp_path(self, tmp_path):
        # In a `Test*` subclass, each test's own temporary folder.
        self.tmp_path = tmp_path

    def get_temp_dir(self):
        """`self.tmp_path` (pytest's, per test) or a fresh temporary folder."""
        if self.tmp_path is None:
            self.tmp_path = tempfile.mkdtemp(prefix="keras_ordered_test_")
        return str(self.tmp_path)

    # --- serialisation ---------------------------------------------------
    def run_serialization_test(self, instance):
        """`get_config` round trips through `from_config` and through
        keras.saving's serialize / deserialize as JSON text; the revived
        instance (of the same class) is returned."""
        cls = instance.__class__
        config = instance.get_config()
        config_json = json.dumps(config, sort_keys=True, default=repr)
        revived = cls.from_config(config)
        assert type(revived) is cls
        assert json.dumps(revived.get_config(), sort_keys=True,
                          default=repr) == config_json, (
            f"{cls.__name__}: from_config(get_config()) changed the config")
        serialized = keras.saving.serialize_keras_object(instance)
        text = json.dumps(serialized, sort_keys=True)
        revived = keras.saving.deserialize_keras_object(json.loads(text))
        assert type(revived) is cls, (
            f"keras.saving revives {type(revived).__name__}, not "
            f"{cls.__name__} (is it registered serializable?)")
        assert json.dumps(revived.get_config(), sort_keys=True,
                          default=repr) == config_json, (
            f"{cls.__name__}: keras.saving's round trip changed the config")
        return revived

    # --- models ----------------------------------------------------------
    def run_precision_test(self, make_model, float32_layers=()):
        """A model built with `make_model(dtype=...)` under a float32 global
        policy: under `mixed_float16` and `mixed_bfloat16` every layer but
        those named in `float32_layers` computes in the half dtype with
        float32 variables, and the global policy is left as it was; the
        config keeps the policy, and `from_config` with `dtype="float32"`
        gives a float32 model with the same variables."""
        assert keras.config.dtype_policy().name == "float32"
        for policy, half in (("mixed_float16", "float16"),
                             ("mixed_bfloat16", "bfloat16")):
            model = make_model(dtype=policy)
            assert keras.config.dtype_policy().name == "float32"
            layers = list(model._flatten_layers(include_self=True))
            for layer in layers:
                if layer.name in float32_layers:
                    assert layer.compute_dtype == "float32", layer.name
                    continue
                assert layer.compute_dtype == half, (
                    f"{layer.name} ({type(layer).__name__}) computes in "
                    f"{layer.compute_dtype} under {policy}")
            for variable in model.weights:
                assert variable.dtype == "float32", variable.path
            config = model.get_config()
            revived = type(model).from_config(config)
            assert revived.dtype_policy.name == policy
            copy = type(model).from_config({**config, "dtype": "float32"})
            assert keras.config.dtype_policy().name == "float32"
            assert {layer.compute_dtype for layer in
                    copy._flatten_layers(include_self=True)} == {"float32"}
            assert [(v.path, tuple(v.shape)) for v in copy.weights] == [
                (v.path, tuple(v.shape)) for v in model.weights]

    def run_preset_test(self, make_model, names):
        """`make_model("tiny")` builds, and `make_model` of a misspelt
        name raises a ValueError that lists every name of `names`."""
        assert "tiny" in names
        make_model("tiny")
        with pytest.raises(ValueError) as error:
            make_model("tinyy")
        for name in names:
            assert repr(name) in str(error.value) or name in str(
                error.value), (name, str(error.value))

    # --- layers ----------------------------------------------------------
    def run_layer_test(
        self,
        cls,
        init_kwargs,
        input_data,
        expected_output_shape=None,
        expected_num_trainable_weights=None,
        expected_num_non_trainable_weights=None,
        call_kwargs=None,
        build=True,
        run_gradient_check=True,
        no_gradient=(),
        run_serialization_check=True,
        training=False,
        atol=1e-6,
        seed=0,
    ):
        """Builds `cls(**init_kwargs)` on `input_data`'s shape (`build`;
        False for layers built by their first call), calls it on
        `input_data` (an array, a list of arrays passed as one argument, or
        a dict passed as keyword arguments) with `call_kwargs`, and checks:
        the output shapes, the weight counts (when given), a non-zero
        gradient of a random projection of every float output on every
        trainable weight (but the paths ending as one of `no_gradient`),
        the serialisation round trips, and that a revived layer given the
        same weights gives the same outputs (with `training=False`, or
        `training` itself when the layer is deterministic there). Returns
        the layer."""
        call_kwargs = dict(call_kwargs or {})
        layer = cls(**init_kwargs)
        if build:
            if isinstance(input_data, dict):
                shapes = {f"{k}_shape": _shape(v) for k, v in input_data.items()}
                layer.build(**shapes)
            elif isinstance(input_data, (list, tuple)):
                layer.build([_shape(x) for x in input_data])
            else:
                layer.build(_shape(input_data))
            assert layer.built
        first_call = dict(call_kwargs)
        if "training" in _call_arguments(layer):
            first_call["training"] = training
        outputs = _call(layer, input_data, first_call)
        if expected_output_shape is not None:
            _assert_shapes(outputs, expected_output_shape)
        if expected_num_trainable_weights is not None:
            assert len(layer.trainable_weights) == expected_num_trainable_weights
        if expected_num_non_trainable_weights is not None:
            assert (len(layer.non_trainable_weights)
                    == expected_num_non_trainable_weights)
        if run_gradient_check:
            self.assert_gradients_reach_every_weight(
                layer, input_data, call_kwargs, no_gradient, training, seed)
        if run_serialization_check:
            revived = self.run_serialization_test(layer)
            if not build:
                _call(revived, input_data, call_kwargs)
            elif not revived.built:  # keras.saving may have built it
                if isinstance(input_data, dict):
                    revived.build(**{f"{k}_shape": _shape(v)
                                     for k, v in input_data.items()})
                elif isinstance(input_data, (list, tuple)):
                    revived.build([_shape(x) for x in input_data])
                else:
                    revived.build(_shape(input_data))
            revived.set_weights(layer.get_weights())
            inference = dict(call_kwargs)
            if "training" in _call_arguments(layer):
                inference["training"] = False
            for a, b in zip(_flat(_call(layer, input_data, inference)),
                            _flat(_call(revived, input_data, inference))):
                np.testing.assert_allclose(to_numpy(a).astype("float32"),
                                           to_numpy(b).astype("float32"),
                                           atol=atol)
        return layer

    def assert_gradients_reach_every_weight(self, layer, input_data,
                                            call_kwargs=None, no_gradient=(),
                                            training=False, seed=0):
        """A random projection of every float output has a finite, non-zero
        gradient on each trainable weight (but those whose path ends as one
        of `no_gradient`, which must have none or a zero one)."""
        call_kwargs = dict(call_kwargs or {})
        if "training" in _call_arguments(layer):
            call_kwargs["training"] = training
        weights = layer.trainable_weights
        assert weights, f"{type(layer).__name__} has no trainable weight"
        rng = np.random.default_rng(seed)
        projections = {}

        def loss():
            outputs = _call(layer, input_data, call_kwargs)
            total = 0.0
            for index, output in enumerate(_flat(outputs)):
                output = keras.ops.convert_to_tensor(output)
                if not keras.backend.is_float_dtype(output.dtype):
                    continue
                if index not in projections:
                    projections[index] = rng.normal(size=_shape(output))
                total += keras.ops.sum(
                    keras.ops.cast(output, "float32")
                    * keras.ops.convert_to_tensor(projections[index],
                                                  "float32"))
            return total

        grads = gradients(loss, weights)
        for weight, grad in zip(weights, grads):
            if any(weight.path.endswith(name) for name in no_gradient):
                assert grad is None or not np.any(grad), weight.path
                continue
            assert grad is not None, f"no gradient reaches {weight.path}"
            assert np.all(np.isfinite(grad)), weight.path
            assert float(np.linalg.norm(grad)) > 0, (
                f"zero gradient on {weight.path}")

    # --- models ----------------------------------------------------------
    def run_model_saving_test(self, model, input_data, atol=0.0, rtol=0.0,
                              call_kwargs=None, filename="model.keras"):
        """`model.save` to a `.keras` file, `keras.saving.load_model`: the
        loaded model is of the model's class and gives the same outputs on
        `input_data`, the model's one input (a list or a dict stays one), in
        inference; exactly, unless `atol` / `rtol`. Returns the loaded
        model."""
        call_kwargs = {"training": False, **(call_kwargs or {})}
        expected = _flat(model(input_data, **call_kwargs))
        path = os.path.join(self.get_temp_dir(), filename)
        model.save(path)
        restored = keras.saving.load_model(path)
        assert type(restored) is type(model), (
            f"loaded a {type(restored).__name__}, saved a "
            f"{type(model).__name__}")
        got = _flat(restored(input_data, **call_kwargs))
        assert len(got) == len(expected)
        for a, b in zip(expected, got):
            np.testing.assert_allclose(to_numpy(a), to_numpy(b), atol=atol,
                                       rtol=rtol)
        return restored


def _call_arguments(layer):
    import inspect

    return inspect.signature(layer.call).parameters
