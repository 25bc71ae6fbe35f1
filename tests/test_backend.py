"""keras_ordered.backend: TensorFlow where only it will do, one line when
it is missing or not the backend."""

import importlib

import pytest

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
    assert backend.INSTALL_HINT in message
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
