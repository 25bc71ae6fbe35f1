"""Documentation that runs: the README's and the docstrings' Python examples.

Every fenced ```python block of README.md and of the docstrings of the
package's public modules is executed (blocks of one docstring share a
namespace, README blocks share one too). A block that needs more names it
in a comment on its first line: `# needs: ptb` blocks run on the shared
PTB text (set as `$KERAS_ORDERED_DATA`); any other need (`# needs: torch`,
a checkpoint, the network) is not here, so those blocks are only compiled.
"""

import importlib
import inspect
import os
import pkgutil
import re

import pytest

import keras_ordered
from conftest import DATA
from conftest import REPO

BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _dedent_blocks(text):
    blocks = []
    for block in BLOCK.findall(text):
        lines = block.split("\n")
        indent = min(
            (len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0
        )
        blocks.append("\n".join(l[indent:] for l in lines))
    return blocks


def _docstring_examples():
    examples = []
    for info in pkgutil.walk_packages(keras_ordered.__path__, "keras_ordered."):
        module = importlib.import_module(info.name)
        objects = [module] + [
            obj for _, obj in inspect.getmembers(module)
            if (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == info.name
        ]
        for obj in objects:
            blocks = _dedent_blocks(inspect.getdoc(obj) or "")
            if blocks:
                name = getattr(obj, "__qualname__", info.name)
                examples.append(pytest.param(blocks, id=f"{info.name}:{name}"))
    return examples


def _run(blocks, tmp_path, monkeypatch):
    import keras
    import numpy as np

    monkeypatch.chdir(tmp_path)
    namespace = {"keras": keras, "np": np, "keras_ordered": keras_ordered}
    for block in blocks:
        first = block.strip().split("\n")[0]
        if "needs:" in first and "needs: ptb" not in first:
            compile(block, "<example>", "exec")
            continue
        if "needs: ptb" in first:
            path = os.path.join(DATA, "ptb")
            if not os.path.isdir(path):
                pytest.skip(f"example needs the PTB text at {path}")
            monkeypatch.setenv("KERAS_ORDERED_DATA", DATA)
        exec(compile(block, "<example>", "exec"), namespace)


@pytest.mark.parametrize("blocks", _docstring_examples())
def test_docstring_example_runs(blocks, tmp_path, monkeypatch):
    _run(blocks, tmp_path, monkeypatch)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        blocks = _dedent_blocks(f.read())
    assert len(blocks) >= 2
    _run(blocks, tmp_path, monkeypatch)


@pytest.mark.slow
def test_readme_serve_client_snippet_runs_as_printed(tmp_path):
    # Issue 25: the Serve client snippet failed as written (NameError:
    # keras_ordered), which the shared namespace above hid. Run it exactly
    # as printed, alone, in a fresh Python process (the SavedModel is
    # loaded with TensorFlow as a client does; TF Serving's model server
    # itself is not available here).
    import subprocess
    import sys

    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        blocks = _dedent_blocks(f.read())
    (snippet,) = [b for b in blocks if "tf.saved_model.load(" in b]
    assert snippet.startswith("import tempfile\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", snippet], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # The last line prints the sentence's log-probability and perplexity.
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("[") and last.count("[") == 2, result.stdout
