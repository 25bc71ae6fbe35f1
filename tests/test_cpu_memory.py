"""TensorFlow's pooled CPU allocator in the package's commands
(`keras_ordered._cpu_memory`)."""

import json
import os
import subprocess
import sys

import pytest

from keras_ordered import _cpu_memory

PROBE = """
import json, os
import keras_ordered
import tensorflow as tf
tf.ones((256, 256))
try:
    tf.config.experimental.get_memory_info("CPU:0")
    pooled = True
except ValueError:  # "Allocator stats not available": malloc's allocator
    pooled = False
print(json.dumps({"env": os.environ.get("TF_CPU_ALLOCATOR_USE_BFC"),
                  "pooled": pooled}))
"""


def _probe(**env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("KERAS_ORDERED_QUIET", _cpu_memory.POOLED_ALLOCATOR_ENV)}
    # With oneDNN on, TensorFlow's CPU allocator is oneDNN's, which pools by
    # itself whatever the variable says (TensorFlow turns oneDNN on by
    # default on CPUs with AVX512_VNNI, AVX512_BF16 or AMX, off on AVX2
    # ones); with it off the variable alone decides, on every CPU.
    clean.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3",
                 TF_ENABLE_ONEDNN_OPTS="0", **env)
    result = subprocess.run([sys.executable, "-c", PROBE], env=clean,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_request_keeps_a_value_the_user_set():
    environ = {}
    assert _cpu_memory.request_pooled_allocator(environ) == "true"
    assert environ == {"TF_CPU_ALLOCATOR_USE_BFC": "true"}
    environ = {"TF_CPU_ALLOCATOR_USE_BFC": "false"}
    assert _cpu_memory.request_pooled_allocator(environ) == "false"


@pytest.mark.slow
@pytest.mark.tensorflow_only
def test_a_command_process_runs_on_the_pooled_allocator_and_a_library_import_does_not():
    # The recipes and `keras-ordered` set KERAS_ORDERED_QUIET before importing
    # the package: TensorFlow's CPU allocator is then the pooled (BFC) one,
    # whose statistics TensorFlow reports.
    assert _probe(KERAS_ORDERED_QUIET="1") == {"env": "true", "pooled": True}
    # The user's choice is kept.
    assert _probe(KERAS_ORDERED_QUIET="1", TF_CPU_ALLOCATOR_USE_BFC="false") == {
        "env": "false", "pooled": False}
    # A plain library import leaves TensorFlow's process settings alone.
    assert _probe() == {"env": None, "pooled": False}
