"""The one direction of imports (issue 26), checked by import-linter with
the contracts of `.importlinter`: layers of the package import only the
layers below them, and no package's modules import each other in a
circle."""

import os
import shutil
import subprocess

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow  # lint-imports in subprocesses

LINT_IMPORTS = shutil.which("lint-imports")


def lint(root, package_parent):
    env = dict(os.environ, PYTHONPATH=package_parent)
    return subprocess.run(
        [LINT_IMPORTS, "--config", os.path.join(root, ".importlinter")],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )


@pytest.fixture(scope="module")
def linter():
    if LINT_IMPORTS is None:
        if os.environ.get("CI"):
            pytest.fail("lint-imports is missing: pip install -e '.[dev]'")
        pytest.skip("lint-imports is not installed (pip install -e '.[dev]')")
    return LINT_IMPORTS


def test_imports_run_one_way(linter):
    result = lint(REPO, REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


@pytest.mark.parametrize("module, planted", [
    # an upward import: a layer importing the training code
    ("layers/dropout.py", "import keras_ordered.training.batching\n"),
    # a circle inside one package: parsing.trees <-> parsing.evaluate
    ("parsing/trees.py", "import keras_ordered.parsing.evaluate\n"),
])
def test_a_planted_violation_is_caught(linter, tmp_path, module, planted):
    copy = tmp_path / "repo"
    shutil.copytree(os.path.join(REPO, "keras_ordered"), copy / "keras_ordered",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(REPO, ".importlinter"), copy / ".importlinter")
    path = copy / "keras_ordered" / module
    path.write_text(path.read_text() + "\n" + planted)
    result = lint(str(copy), str(copy))
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout
