"""keras_ordered.backend: TensorFlow where only it will do, one line when
it is missing or not the backend."""

import importlib

import numpy as np
import pytest

from keras_ordered import _environment
from keras_ordered import backend

pytestmark = pytest.mark.backends


def _without_tensorflow(monkeypatch):
    real = importlib.import_module

    def refuse(name, *args, **kwargs):
        if name == "tensorflow":
            raise ModuleNotFoundError("No module named 'tensorflow'",
                                      name="tensorflow")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", refuse)


def test_missing_tensorflow_is_one_line_naming_the_feature(monkeypatch):
    _without_tensorflow(monkeypatch)
    with pytest.raises(backend.TensorFlowMissingError) as error:
        backend.require_tensorflow("SavedModel export")
    message = str(error.value)
    assert "\n" not in message and error.value.one_line
    assert message.startswith("SavedModel export needs TensorFlow")
    assert _environment.install_hint("tensorflow") in message
    assert isinstance(error.value, ImportError)


def test_tensorflow_on_use_imports_only_when_used(monkeypatch):
    _without_tensorflow(monkeypatch)
    tf = backend.tensorflow_on_use("the tf.data batch pipelines")
    assert "tf.data batch pipelines" in repr(tf)  # nothing imported yet
    with pytest.raises(backend.TensorFlowMissingError,
                       match="the tf.data batch pipelines needs TensorFlow"):
        tf.data


def test_another_missing_module_is_not_hidden(monkeypatch):
    real = importlib.import_module

    def broken(name, *args, **kwargs):
        if name == "tensorflow":
            raise ModuleNotFoundError("No module named 'six'", name="six")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="six"):
        backend.require_tensorflow("export")


def test_backend_check_and_replicas():
    assert backend.name() in ("tensorflow", "jax", "torch")
    assert backend.replicas_in_sync() == 1
    if backend.is_tensorflow():
        backend.check_tensorflow_backend("SavedModel export")
    else:
        with pytest.raises(backend.WrongBackendError,
                           match="runs on the TensorFlow backend"):
            backend.check_tensorflow_backend("SavedModel export")


@pytest.mark.skipif(backend.name() == "torch", reason="runs eagerly")
def test_distances_are_compiled_not_retraced_per_call():
    import keras

    from keras_ordered.models import ONLSTMLanguageModel

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary)
    traced = []
    inner = model._distance_pass

    def counting(token_ids, states):
        traced.append(tuple(token_ids.shape))
        return inner(token_ids, states)

    model._distance_pass = counting
    ids = np.random.default_rng(0).integers(0, 31, (5, 11))
    first = model.syntactic_distances(ids[:2, :7])
    model.syntactic_distances(ids[:2, :7] + 1)
    for rows, width in ((3, 7), (4, 9), (5, 11)):
        model.syntactic_distances(ids[:rows, :width])
    if backend.name() == "jax":
        # Once per shape: a second call of a shape reuses its program.
        assert traced == [(2, 7), (3, 7), (4, 9), (5, 11)]
    else:
        # Traced once, with the batch and the width unknown: every batch
        # reuses that graph.
        assert traced == [(None, None)]
    # The compiled pass gives the eager one's distances.
    eager = inner(keras.ops.convert_to_tensor(ids[:2, :7]),
                  [keras.ops.convert_to_tensor(s)
                   for s in model.initial_state(2)])
    assert sorted(first) == sorted(eager)
    for name in first:
        np.testing.assert_allclose(first[name], np.asarray(eager[name]),
                                   atol=1e-6)
    assert backend.compiled_inference(model, "distances", None) is (
        backend.compiled_inference(model, "distances", None))


@pytest.mark.skipif(backend.name() != "tensorflow",
                    reason="XLA on request is TensorFlow's (JAX always)")
def test_xla_on_request_compiles_the_distances_apart():
    # `model.jit_compile = True`: the distances become an XLA program,
    # kept beside the graph without XLA, and give its values.
    from keras_ordered.models import ONLSTMLanguageModel

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary)
    ids = np.random.default_rng(0).integers(0, 31, (3, 9))
    plain = model.syntactic_distances(ids)
    assert not backend.uses_xla(model) and not backend.compiles_per_shape(
        model)
    model.jit_compile = True
    assert backend.uses_xla(model) and backend.compiles_per_shape(model)
    assert backend.compiled_width(9, 16, model) == 16
    assert backend.compiled_width(9, 16) == 9
    compiled = model.syntactic_distances(ids)
    functions = model.__dict__["_compiled_inference"]
    assert functions["distances", True]._xla
    assert not functions["distances", False]._xla
    for name in plain:
        np.testing.assert_allclose(compiled[name], plain[name], atol=1e-5)


def test_compiled_inference_is_the_function_on_torch():
    if backend.name() != "torch":
        pytest.skip("compiled on TensorFlow and JAX")

    def function(x):
        return x

    assert backend.compiled_inference(object, "f", function) is function


def _tf32_settings():
    """The backend's TensorFloat-32 switches, as plain values."""
    if backend.name() == "jax":
        import jax

        return jax.config.jax_default_matmul_precision
    if backend.name() == "torch":
        import torch

        return (torch.backends.cuda.matmul.allow_tf32,
                torch.backends.cudnn.allow_tf32)
    tf = backend.require_tensorflow("the test")
    return tf.config.experimental.tensor_float_32_execution_enabled()


def test_float32_matmuls_asks_for_float32_products_and_puts_back():
    # What a float32 product asks of the backend inside and outside.
    float32 = {"jax": "float32", "torch": (False, False),
               "tensorflow": False}[backend.name()]
    before = _tf32_settings()
    assert before != float32  # the backends' defaults allow TF32
    with backend.float32_matmuls():
        assert _tf32_settings() == float32
    assert _tf32_settings() == before
    with backend.float32_matmuls(tf32=True):
        assert _tf32_settings() == before
    # Put back after an error too.
    with pytest.raises(RuntimeError, match="inside"):
        with backend.float32_matmuls():
            raise RuntimeError("inside")
    assert _tf32_settings() == before


def test_float32_matmuls_reaches_the_compiled_products_on_jax():
    if backend.name() != "jax":
        pytest.skip("JAX's compiled program names the product's precision")
    import jax
    import keras

    x = np.ones((4, 4), "float32")

    def program():
        return jax.jit(lambda a: keras.ops.matmul(a, a)).lower(x).as_text()

    assert "HIGHEST" not in program()
    with backend.float32_matmuls():
        assert "precision = [HIGHEST, HIGHEST]" in program()
