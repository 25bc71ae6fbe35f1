"""The shared harness (tests/harness.py) catches what it claims to: each
check fails on a layer or model with that defect, and the tiny models are
the same every time."""

import keras
import numpy as np
import pytest

from harness import tiny_gfl_parser
from harness import tiny_onlstm_lm
from harness import tiny_prpn_lm
from harness import tiny_tdtreelstm_lm


@keras.saving.register_keras_serializable(package="keras_ordered_tests")
class Scale(keras.layers.Layer):
    """Multiplies by a kernel and by `factor`; the defects are switches."""

    def __init__(self, factor=2.0, forget_factor=False, dead_weight=False,
                 drift=False, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.forget_factor = forget_factor
        self.dead_weight = dead_weight
        self.drift = drift

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1],), name="kernel")
        if self.dead_weight:
            self.unused = self.add_weight(shape=(1,), name="unused")

    def call(self, inputs):
        return inputs * self.kernel * self.factor

    def get_config(self):
        config = super().get_config()
        config.update(dead_weight=self.dead_weight,
                      forget_factor=self.forget_factor, drift=self.drift)
        if not self.forget_factor:
            # With `drift`, each round trip adds one to the factor.
            config["factor"] = self.factor + (1 if self.drift else 0)
        return config


class Unregistered(keras.layers.Layer):
    def call(self, inputs):
        return inputs


X = np.ones((2, 3), "float32")


def test_a_sound_layer_passes(harness):
    harness.run_layer_test(Scale, {"factor": 3.0}, X, expected_output_shape=(2, 3),
                           expected_num_trainable_weights=1)


def test_a_wrong_output_shape_or_weight_count_fails(harness):
    with pytest.raises(AssertionError, match="shape"):
        harness.run_layer_test(Scale, {}, X, expected_output_shape=(2, 4))
    with pytest.raises(AssertionError):
        harness.run_layer_test(Scale, {}, X, expected_num_trainable_weights=2)


def test_a_weight_without_gradient_fails(harness):
    with pytest.raises(AssertionError, match="unused"):
        harness.run_layer_test(Scale, {"dead_weight": True}, X)
    # ...unless it is named as one without gradient.
    harness.run_layer_test(Scale, {"dead_weight": True}, X,
                           no_gradient=("unused",))


def test_a_config_that_changes_in_a_round_trip_fails(harness):
    with pytest.raises(AssertionError, match="changed the config"):
        harness.run_serialization_test(Scale(factor=3.0, drift=True))
    harness.run_serialization_test(Scale(factor=3.0))


def test_a_config_that_loses_an_argument_fails(harness):
    # The config round trips (the argument is missing both times), but the
    # revived layer, given the same weights, computes something else.
    harness.run_serialization_test(Scale(factor=3.0, forget_factor=True))
    with pytest.raises(AssertionError, match="Not equal"):
        harness.run_layer_test(Scale, {"factor": 3.0, "forget_factor": True}, X)


def test_an_unregistered_layer_fails_keras_saving(harness):
    with pytest.raises((AssertionError, TypeError, ValueError)):
        harness.run_serialization_test(Unregistered())


def test_a_model_that_loads_different_fails(harness):
    inputs = keras.Input((3,))
    # The factor is lost in saving: the loaded model multiplies by 2.
    model = keras.Model(inputs, Scale(factor=3.0, forget_factor=True)(inputs))
    with pytest.raises(AssertionError):
        harness.run_model_saving_test(model, X)
    sound = keras.Model(inputs, Scale(factor=3.0)(inputs))
    assert isinstance(harness.run_model_saving_test(sound, X), keras.Model)


@pytest.mark.parametrize("factory", [tiny_onlstm_lm, tiny_prpn_lm,
                                     tiny_gfl_parser, tiny_tdtreelstm_lm])
def test_the_tiny_models_are_the_same_under_one_global_seed(factory):
    # The models' `seed` seeds their dropouts; the initial weights come from
    # Keras' global generator (all four families).
    models = []
    for _ in range(2):
        keras.utils.set_random_seed(5)
        models.append(factory())
    first, second = models
    configs = [{k: v for k, v in model.get_config().items() if k != "name"}
               for model in models]
    assert configs[0] == configs[1]
    assert first.count_params() == second.count_params() > 0
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_the_longest_files_are_collected_first(monkeypatch, tmp_path):
    """Files run longest first, by their measured time
    (tests/durations.json); one not measured yet counts the median."""
    from types import SimpleNamespace

    import conftest

    measured = tmp_path / "durations.json"
    measured.write_text("{}")
    monkeypatch.setattr(conftest, "DURATIONS_FILE", str(measured))
    monkeypatch.setattr(conftest, "file_durations", lambda: {
        "tests/slow.py": 90.0, "tests/mid.py": 10.0, "tests/fast.py": 1.0})
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in (
        "tests/fast.py::test_1", "tests/new.py::test_1", "tests/mid.py::test_x",
        "tests/slow.py::test_y", "tests/fast.py::test_2",
        "tests/slow.py::test_z")]
    conftest.pytest_collection_modifyitems(None, items)  # TensorFlow: no config
    assert [item.nodeid for item in items] == [
        "tests/slow.py::test_y", "tests/slow.py::test_z",
        "tests/new.py::test_1", "tests/mid.py::test_x",
        "tests/fast.py::test_1", "tests/fast.py::test_2"]


def test_the_measured_durations_name_existing_files():
    import os

    from conftest import REPO
    from conftest import file_durations

    missing = [path for path in file_durations()
               if not os.path.isfile(os.path.join(REPO, path))]
    assert not missing, ("tests/durations.json names files that are gone: "
                         f"{missing}; refresh it (CONTRIBUTING.md)")


def test_a_run_records_each_files_time(monkeypatch, tmp_path):
    import json
    from types import SimpleNamespace

    import conftest

    target = tmp_path / "durations.json"
    monkeypatch.setenv(conftest.RECORD_DURATIONS_ENV, str(target))
    monkeypatch.setattr(conftest, "_MEASURED", {})
    monkeypatch.setattr(conftest, "_MEASURED_TESTS", {})
    monkeypatch.setattr(conftest, "_SLOW_BY_TIME", {"measured": {}})
    monkeypatch.setattr(conftest, "_MEASURED_CPU", {})
    for nodeid, seconds, keywords, cpu in (
            ("tests/a.py::t1", 1.5, {}, [1.25, 0.0]),
            ("tests/a.py::t1", 0.5, {}, [0.5, 0.0]),
            ("tests/b.py::t", 4.0, {}, [0.5, 3.0]),
            ("tests/b.py::u", 1.0, {}, [1.0, 0.0]),
            ("tests/b.py::marked", 9.0, {"slow": 1}, [0.25, 8.5])):
        conftest.pytest_runtest_logreport(SimpleNamespace(
            nodeid=nodeid, duration=seconds, keywords=keywords,
            user_properties=[("other", 1), (conftest.CPU_PROPERTY, cpu)]))
    conftest.pytest_sessionfinish(
        SimpleNamespace(config=SimpleNamespace()), 0)
    record = json.loads(target.read_text())
    assert record["files"] == {"tests/b.py": 14.0, "tests/a.py": 2.0}
    # t1's 2 s and b's 4 s reach the quick loop's limit of 1.5 s; a test
    # marked slow by hand is slow already.
    assert record["quick_limit_seconds"] == conftest.QUICK_LIMIT_SECONDS == 1.5
    assert record["slow_by_time"] == {"tests/b.py::t": 4.0,
                                      "tests/a.py::t1": 2.0}
    assert list(record["files"]) == ["tests/b.py", "tests/a.py"]
    assert record["cpu_seconds"] == {
        "worker": 3.5, "children": 11.5,
        "files": {"tests/b.py": [1.75, 11.5], "tests/a.py": [1.75, 0.0]}}
    assert record["cpu"] and record["command"].startswith(
        conftest.RECORD_DURATIONS_ENV)


def test_a_recording_run_splits_each_files_cpu(pytester, monkeypatch):
    """Through pytest-xdist, as CI records: the CPU that a file's tests
    use in their worker, and in the child processes they start, reaches
    the controller's record, each under its file."""
    import json

    import conftest

    monkeypatch.delenv(conftest.RECORD_DURATIONS_ENV, raising=False)
    pytester.makeconftest(open(conftest.__file__, encoding="utf-8").read())
    burn = ("import time\n"
            "def burn(seconds):\n"
            "    end = time.process_time() + seconds\n"
            "    while time.process_time() < end:\n"
            "        pass\n")
    pytester.makepyfile(
        test_inside=burn + "def test_inside():\n    burn(0.6)\n",
        test_child=burn + (
            "import subprocess, sys\n"
            "def test_child():\n"
            "    subprocess.run([sys.executable, __file__], check=True)\n"
            "if __name__ == '__main__':\n"
            "    burn(0.6)\n"))
    target = pytester.path / "durations.json"
    monkeypatch.setenv(conftest.RECORD_DURATIONS_ENV, str(target))
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    files = json.loads(target.read_text())["cpu_seconds"]["files"]
    inside, child = files["test_inside.py"], files["test_child.py"]
    assert inside[0] >= 0.55 and inside[1] == 0.0
    assert child[1] >= 0.55 and child[0] < 0.3


def test_the_tests_run_with_the_commands_collector():
    """conftest's `pytest_collection_finish` raised this process's
    youngest-generation threshold, as the commands do."""
    import gc

    from keras_ordered import _quiet

    assert gc.get_threshold()[0] >= _quiet.COMMAND_GC_THRESHOLD > 700


def test_the_tests_slow_by_time_are_marked_slow(monkeypatch):
    """A test of `slow_by_time` is marked `slow` at collection, so the
    quick loop leaves it out; the others are left as they are."""
    from types import SimpleNamespace

    import conftest

    class Item(SimpleNamespace):
        def add_marker(self, marker):
            self.markers.append(marker.name)

    monkeypatch.setattr(conftest, "file_durations", lambda: {})
    monkeypatch.setattr(conftest, "slow_by_time",
                        lambda: {"tests/a.py::t_long": 3.0})
    items = [Item(nodeid=nodeid, markers=[]) for nodeid in (
        "tests/a.py::t_long", "tests/a.py::t_short")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [item.markers for item in items] == [["slow"], []]


def test_a_test_slow_by_time_leaves_the_quick_loop(pytester, monkeypatch):
    """Through pytest itself: `-m "not slow"` deselects a test that the
    measured durations call slow (the marking runs before `-m`)."""
    import json

    import conftest

    # A recording run (CI's) records this run's tests, not the inner run's.
    monkeypatch.delenv(conftest.RECORD_DURATIONS_ENV, raising=False)

    pytester.makeconftest(open(conftest.__file__, encoding="utf-8").read()
                          .replace("DURATIONS_FILE = os.path.join(REPO, "
                                   "\"tests\", \"durations.json\")",
                                   "DURATIONS_FILE = 'durations.json'"))
    pytester.makefile(".json", durations=json.dumps(
        {"files": {}, "backend": "tensorflow",
         "slow_by_time": {"test_a.py::test_long": 2.0}}))
    pytester.makepyfile(test_a="def test_long(): pass\n"
                               "def test_short(): pass\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    result = pytester.runpytest("-m", "not slow", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, deselected=1)
    # Measured on TensorFlow: JAX's quick run (CI's) keeps the test.
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    monkeypatch.setenv("KERAS_ORDERED_ALL_BACKEND_TESTS", "1")
    result = pytester.runpytest("-m", "not slow", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
