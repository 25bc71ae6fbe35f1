"""The command on another backend, without TensorFlow: `parse` tokenizes
with nltk (the tokenizer the in-graph ops port) and parses as on
TensorFlow."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from keras_ordered.export.text import tokenize_python
from keras_ordered_cli.parse import _nltk_tokenize
from parity import require_backend

LINES = [
    "The cat sat on the mat.",
    "\ufeffDon't sit on the cat's mat, \"she\" said (twice)...",
    "Stocks fell 3.5% to $1,000 -- in early trading; gonna cannot 'tis.",
    "He said: 'I won't!' [really?] <no> {yes}",
]

# Runs the command with every import of TensorFlow refused, as in an
# environment where it is not installed; prints the modules loaded.
WITHOUT_TENSORFLOW = '''
import importlib.abc, importlib.machinery, json, sys
class Refuse(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # Found (torch looks TensorFlow up with find_spec), never loaded.
    def find_spec(self, name, path=None, target=None):
        if name == "tensorflow" or name.startswith("tensorflow."):
            return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        raise ModuleNotFoundError("No module named 'tensorflow'",
                                  name="tensorflow")
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, Refuse())
from keras_ordered_cli import main
status = main(sys.argv[1:])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("tensorflow"))))
sys.exit(status)
'''


def test_nltk_tokens_are_the_in_graph_ones():
    assert _nltk_tokenize(LINES) == tokenize_python(LINES)
    assert _nltk_tokenize(LINES, treebank=False) == tokenize_python(
        LINES, treebank=False)
    with pytest.raises(ValueError, match="control character"):
        _nltk_tokenize(["a\x07b"])


@pytest.fixture(scope="module")
def tensorflows_trees():
    """What `keras-ordered parse LINES` prints on TensorFlow, run once for
    both backends' comparisons: in this process when it runs TensorFlow
    (the command's entry point, its stdout captured), else in a TensorFlow
    process."""
    import keras

    command = ["parse", *LINES]
    if keras.backend.backend() == "tensorflow":
        import contextlib
        import io

        from keras_ordered_cli import main

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert main(command) == 0
        return printed.getvalue()
    expected = subprocess.run(
        [sys.executable, "-m", "keras_ordered_cli", *command],
        capture_output=True, text=True, cwd=REPO, timeout=600,
        env=dict(os.environ, KERAS_BACKEND="tensorflow"))
    assert expected.returncode == 0, expected.stderr
    return expected.stdout


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_parse_without_tensorflow_gives_tensorflows_trees(backend,
                                                          tensorflows_trees):
    require_backend(backend)
    command = ["parse", *LINES]
    got = subprocess.run(
        [sys.executable, "-c", WITHOUT_TENSORFLOW, *command],
        capture_output=True, text=True, cwd=REPO, timeout=600,
        env=dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=REPO))
    assert got.returncode == 0, got.stderr
    *trees, modules = got.stdout.strip().split("\n")
    assert json.loads(modules) == []
    assert trees == tensorflows_trees.strip().split("\n")
    assert len(trees) == len(LINES)


@pytest.mark.slow
@pytest.mark.parametrize("without_tensorflow", [False, True])
def test_export_on_another_backend_is_one_line(tmp_path, without_tensorflow):
    require_backend("jax")
    output = tmp_path / "exported"
    command = ["export", "--model", "prpn_ptb_quick", "--output", str(output)]
    if without_tensorflow:
        argv = [sys.executable, "-c", WITHOUT_TENSORFLOW, *command]
        expected = "needs TensorFlow, which is not installed"
    else:
        argv = [sys.executable, "-m", "keras_ordered_cli", *command]
        expected = "runs on the TensorFlow backend, and this process runs jax"
    result = subprocess.run(argv, capture_output=True, text=True, cwd=REPO,
                            timeout=600,
                            env=dict(os.environ, KERAS_BACKEND="jax",
                                     PYTHONPATH=REPO))
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"keras-ordered export: error: {lines[0].split(': error: ')[1]}"]
    assert expected in lines[0] and "Traceback" not in result.stderr
    assert not output.exists()
