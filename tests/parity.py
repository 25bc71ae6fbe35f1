"""Runs a piece of Python on another Keras backend, in a fresh process, and
hands back the arrays it saved: the way the tests compare one model's
outputs on TensorFlow, JAX and PyTorch.

    from parity import run_on_backend

    arrays = run_on_backend("jax", '''
        model = keras_ordered.load_model(ARGS["model"])
        save(distances=model.sentence_distances(["a b c"])[0])
    ''', model=path)

The code sees `keras`, `np`, `keras_ordered`, `ARGS` (the keyword
arguments) and `save(**arrays)`. A backend whose package (jax, torch) is not
installed skips the test, except in CI (`CI` set), where it fails.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
BACKEND_MODULES = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}

PRELUDE = '''
import json, os, sys
import numpy as np
import keras
import keras_ordered
ARGS = json.loads(os.environ["PARITY_ARGS"])
_saved = {}
def save(**arrays):
    for key, value in arrays.items():
        _saved[key] = keras.ops.convert_to_numpy(value)
'''

EPILOGUE = '''
np.savez(os.environ["PARITY_OUT"], **_saved)
'''


def require_backend(backend):
    """Skips (fails in CI) when `backend`'s package is not installed."""
    if importlib.util.find_spec(BACKEND_MODULES[backend]) is None:
        message = f"the {backend} backend is not installed"
        if os.environ.get("CI"):
            pytest.fail(f"CI needs {message}")
        pytest.skip(message)


def run_here(code, **args):
    """Runs `code` in this process (its backend, which it must not change),
    as `run_on_backend` runs it in a fresh one: the same names (`keras`,
    `np`, `keras_ordered`, `ARGS`, `save`); returns the arrays it saved.
    The tests of the default backend (TensorFlow) compute its reference
    here, without a process start."""
    import keras

    import keras_ordered

    saved = {}

    def save(**arrays):
        for key, value in arrays.items():
            saved[key] = keras.ops.convert_to_numpy(value)

    exec(textwrap.dedent(code),
         {"keras": keras, "np": np, "keras_ordered": keras_ordered,
          "ARGS": json.loads(json.dumps(args)), "save": save})
    return saved


def run_on_backend(backend, code, timeout=900, env=None, **args):
    """Runs `code` with `KERAS_BACKEND=backend` in a new Python process
    (the repository and tests/ on its path, `env` added to its
    environment) and returns the arrays it passed to `save`, as a dict of
    NumPy arrays."""
    require_backend(backend)
    with tempfile.TemporaryDirectory(prefix="parity_") as folder:
        out = os.path.join(folder, "out.npz")
        env = dict(os.environ, **(env or {}), KERAS_BACKEND=backend,
                   PARITY_OUT=out, PARITY_ARGS=json.dumps(args),
                   TF_CPP_MIN_LOG_LEVEL="3")
        env["PYTHONPATH"] = os.pathsep.join(
            [REPO, TESTS] + [p for p in [env.get("PYTHONPATH")] if p])
        script = PRELUDE + textwrap.dedent(code) + EPILOGUE
        result = subprocess.run([sys.executable, "-c", script], env=env,
                                capture_output=True, text=True,
                                timeout=timeout)
        assert result.returncode == 0, (
            f"on {backend}:\n{result.stderr[-4000:]}")
        with np.load(out) as arrays:
            return {key: arrays[key] for key in arrays.files}
