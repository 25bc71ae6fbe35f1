"""What the package's commands (the recipes, `keras-ordered`) set up in
their process when they import the package: TensorFlow's pooled CPU
allocator (`keras_ordered._cpu_memory`) and an import of Keras and
TensorFlow without the optional integrations they never use
(`keras_ordered._quiet`). A plain library import changes neither."""

import importlib
import json
import os
import subprocess
import sys

import pytest

from keras_ordered import _cpu_memory
from keras_ordered import _quiet

PROBE = """
import gc, json, os, sys
import keras_ordered
collector = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
             "youngest": gc.get_threshold()[0]}
loaded = sorted(name for name in ("jax", "sklearn", "matplotlib")
                if name in sys.modules)
# nltk, loaded on the first tree (keras_ordered._nltk).
from keras_ordered.parsing import brackets_to_tree
brackets_to_tree("((The cat) sat)")
loaded_with_nltk = sorted(name for name in ("scipy.stats", "sklearn")
                          if name in sys.modules)
import tensorflow as tf
tf.ones((256, 256))
try:
    tf.config.experimental.get_memory_info("CPU:0")
    pooled = True
except ValueError:  # "Allocator stats not available": malloc's allocator
    pooled = False
# Left out of the start-up only: they import afterwards.
import jax, sklearn, matplotlib.pyplot, scipy.stats
import nltk.metrics.association
assert nltk.Tree.fromstring("(S (NP a) b)").leaves() == ["a", "b"]
print(json.dumps({"env": os.environ.get("TF_CPU_ALLOCATOR_USE_BFC"),
                  "pooled": pooled, "loaded_at_import": loaded,
                  "loaded_with_nltk": loaded_with_nltk,
                  "collector": collector}))
"""


def _run_probes(code, backend, **runs):
    """Runs `code` on `backend` once per entry of `runs` (`name=env`), each
    in a fresh process with `env` added to an environment without the
    package's command settings; `{name: its last line's JSON}`. The
    processes run at once (each is its own process, as alone: most of
    their time is imports in one thread each, which the cores overlap)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("KERAS_ORDERED_QUIET", _cpu_memory.POOLED_ALLOCATOR_ENV)}
    # With oneDNN on, TensorFlow's CPU allocator is oneDNN's, which pools by
    # itself whatever the variable says (TensorFlow turns oneDNN on by
    # default on CPUs with AVX512_VNNI, AVX512_BF16 or AMX, off on AVX2
    # ones); with it off the variable alone decides, on every CPU.
    clean.update(KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
                 TF_ENABLE_ONEDNN_OPTS="0")
    processes = {
        name: subprocess.Popen([sys.executable, "-c", code],
                               env=dict(clean, **env), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        for name, env in runs.items()}
    results = {}
    try:
        for name, process in processes.items():
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, (name, err[-2000:])
            results[name] = json.loads(out.strip().splitlines()[-1])
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
    return results


@pytest.fixture(scope="module")
def probes():
    """A command's process, one whose user chose malloc's allocator, and a
    plain library import."""
    return _run_probes(
        PROBE, "tensorflow", command={"KERAS_ORDERED_QUIET": "1"},
        command_malloc={"KERAS_ORDERED_QUIET": "1",
                        "TF_CPU_ALLOCATOR_USE_BFC": "false"},
        library={})


def test_request_keeps_a_value_the_user_set():
    environ = {}
    assert _cpu_memory.request_pooled_allocator(environ) == "true"
    assert environ == {"TF_CPU_ALLOCATOR_USE_BFC": "true"}
    environ = {"TF_CPU_ALLOCATOR_USE_BFC": "false"}
    assert _cpu_memory.request_pooled_allocator(environ) == "false"


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_a_command_process_runs_on_the_pooled_allocator_and_a_library_import_does_not(probes):
    # The recipes and `keras-ordered` set KERAS_ORDERED_QUIET before importing
    # the package: TensorFlow's CPU allocator is then the pooled (BFC) one,
    # whose statistics TensorFlow reports.
    assert probes["command"]["env"] == "true"
    assert probes["command"]["pooled"] is True
    # The user's choice is kept.
    assert probes["command_malloc"]["env"] == "false"
    assert probes["command_malloc"]["pooled"] is False
    # A plain library import leaves TensorFlow's process settings alone.
    assert probes["library"]["env"] is None
    assert probes["library"]["pooled"] is False


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_a_command_process_starts_without_the_unused_integrations(probes):
    # On TensorFlow: JAX (TF Lite's), scikit-learn (keras.wrappers') and
    # matplotlib (keras.visualization's) are not loaded by a command's import, and
    # import afterwards (the probe imports them); a library import loads
    # what Keras and TensorFlow load, as without the package.
    assert probes["command"]["loaded_at_import"] == []
    assert probes["command_malloc"]["loaded_at_import"] == []
    assert probes["library"]["loaded_at_import"] == [
        "jax", "matplotlib", "sklearn"]


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_a_command_process_loads_nltk_without_scipy_stats_and_sklearn(probes):
    # nltk imports scipy.stats (collocations) and scikit-learn (classify)
    # for modules the package never uses; in a command's process its first
    # tree loads it without them, and they import afterwards (the probe
    # imports them). A library import loads nltk as it is.
    assert probes["command"]["loaded_with_nltk"] == []
    assert probes["library"]["loaded_with_nltk"] == ["scipy.stats", "sklearn"]


def test_a_refused_submodule_leaves_its_package_importable(monkeypatch):
    # As scipy.stats is refused while nltk loads, where scipy itself is
    # imported already.
    name = "email.mime.audio"
    monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("email.mime")
    with _quiet.unused_integrations_refused(names=[name]):
        with pytest.raises(ModuleNotFoundError) as error:
            importlib.import_module(name)
        assert error.value.name == name
        assert importlib.import_module("email.mime.text").__name__ == (
            "email.mime.text")
    assert importlib.import_module(name).__name__ == name
    sys.modules.pop(name, None)


@pytest.fixture
def refused_module(monkeypatch):
    """A module of the standard library no test imports, standing for an
    unused integration."""
    name = "wave"
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(_quiet, "UNUSED_INTEGRATIONS", {name: "a stand-in"})
    yield name
    sys.modules.pop(name, None)


def test_refused_integrations_read_as_not_installed_then_import(refused_module):
    finders = list(sys.meta_path)
    with _quiet.unused_integrations_refused("tensorflow"):
        with pytest.raises(ModuleNotFoundError) as error:
            importlib.import_module(refused_module)
        assert error.value.name == refused_module
    assert sys.meta_path == finders
    assert importlib.import_module(refused_module).__name__ == refused_module


def test_nothing_is_refused_on_pytorch_or_once_imported(refused_module):
    # On PyTorch (whose import asks importlib.util.find_spec about
    # scikit-learn), and for a module imported before, nothing changes.
    with _quiet.unused_integrations_refused("torch"):
        importlib.import_module(refused_module)
    with _quiet.unused_integrations_refused("tensorflow"):
        importlib.import_module(refused_module)


def test_jax_is_refused_on_tensorflow_only():
    assert _quiet.refused_integrations("tensorflow") == [
        "jax", "sklearn", "matplotlib"]
    assert _quiet.refused_integrations("jax") == ["sklearn", "matplotlib"]
    assert _quiet.refused_integrations("torch") == []


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_a_command_process_tunes_the_garbage_collector_and_a_library_import_does_not(probes):
    # A command's import freezes what the imports made (TensorFlow and
    # Keras: several hundred thousand objects) and collects the youngest
    # generation less often; the collector stays on. A library import
    # leaves Python's defaults.
    command = probes["command"]["collector"]
    assert command["enabled"] is True
    assert command["frozen"] > 100_000
    assert command["youngest"] == _quiet.COMMAND_GC_THRESHOLD
    assert probes["library"]["collector"] == {
        "enabled": True, "frozen": 0, "youngest": 700}


def test_the_collector_tuning_keeps_a_higher_threshold_and_a_disabled_collector():
    import gc

    before = gc.get_threshold()
    was_enabled = gc.isenabled()
    try:
        gc.set_threshold(50_000, *before[1:])
        gc.disable()
        with _quiet.collector_tuned_for_commands():
            assert not gc.isenabled()
        assert gc.get_threshold()[0] == 50_000  # never lowered
        assert not gc.isenabled()  # the user's choice
        gc.set_threshold(700, *before[1:])
        with _quiet.collector_tuned_for_commands():
            pass
        assert gc.get_threshold()[0] == _quiet.COMMAND_GC_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        if was_enabled:
            gc.enable()


JAX_PROBE = """
import json, sys
import keras_ordered
import keras_ordered.models
loaded = sorted(name for name in ("sklearn", "matplotlib")
                if name in sys.modules)
import sklearn, matplotlib.pyplot
print(json.dumps(loaded))
"""


@pytest.mark.slow
def test_a_command_process_on_jax_starts_without_sklearn_and_matplotlib():
    pytest.importorskip("jax")
    loaded = _run_probes(JAX_PROBE, "jax",
                         command={"KERAS_ORDERED_QUIET": "1"}, library={})
    assert loaded == {"command": [], "library": ["matplotlib", "sklearn"]}


def test_start_time_benchmark_takes_the_kinds_in_turn_and_summarizes(
        monkeypatch, capsys):
    # benchmarks/start_time.py, its processes stood in for.
    from conftest import load_benchmark

    start_time = load_benchmark("start_time")
    calls = []

    def child(kind, backend):
        calls.append(kind)
        seconds = {"command": [3.0, 4.0, 3.5], "library": [6.0, 5.0, 7.0]}
        return {"seconds": seconds[kind][calls.count(kind) - 1],
                "loaded": [] if kind == "command" else ["jax"]}

    monkeypatch.setattr(start_time, "run_child", child)
    start_time.main(["--rounds", "3"])
    assert calls == ["command", "library"] * 3
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 7 and lines[0]["kind"] == "command"
    summary = lines[-1]
    assert summary["median_seconds"] == {"command": 3.5, "library": 6.0}
    assert summary["range_seconds"]["library"] == [5.0, 7.0]
    assert summary["command_over_library"] == round(3.5 / 6.0, 3)
