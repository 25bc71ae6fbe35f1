"""The one direction of imports, checked by import-linter with
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
    assert "Contracts: 3 kept, 0 broken." in result.stdout


@pytest.mark.parametrize("module, planted", [
    # an upward import: a layer importing the training code
    ("layers/dropout.py", "import keras_ordered.training.batching\n"),
    # a circle inside one package: parsing.trees <-> parsing.evaluate
    ("parsing/trees.py", "import keras_ordered.parsing.evaluate\n"),
    # the library importing the command
    ("training/options.py", "import keras_ordered_cli._common\n"),
    # the option types importing the library, or the command
    ("../keras_ordered_options/__init__.py", "import keras_ordered.parsing\n"),
    ("../keras_ordered_options/__init__.py", "import keras_ordered_cli\n"),
])
def test_a_planted_violation_is_caught(linter, tmp_path, module, planted):
    copy = tmp_path / "repo"
    for package in ("keras_ordered", "keras_ordered_cli",
                    "keras_ordered_options"):
        shutil.copytree(os.path.join(REPO, package), copy / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(REPO, ".importlinter"), copy / ".importlinter")
    path = copy / "keras_ordered" / module
    path.write_text(path.read_text() + "\n" + planted)
    result = lint(str(copy), str(copy))
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout


def _training_imports():
    """Edges (importer, imported) among the modules of keras_ordered/training
    (callbacks/ as one node, each task module as `tasks_<name>`)."""
    import ast

    root = os.path.join(REPO, "keras_ordered", "training")

    def node(module):
        parts = module.split(".")[2:]
        if not parts or parts == ["tasks"]:
            return None
        if parts[0] == "tasks":
            return "tasks_" + parts[1]
        return parts[0]

    edges = set()
    for directory, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            module = os.path.relpath(path[:-3], REPO).replace(os.sep, ".")
            source = node(module.removesuffix(".__init__"))
            if source is None:
                continue
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for item in ast.walk(tree):
                if isinstance(item, ast.ImportFrom) and item.module:
                    imported = ([f"{item.module}.{a.name}" for a in item.names]
                                if item.module == "keras_ordered.training"
                                else [item.module])
                elif isinstance(item, ast.Import):
                    imported = [a.name for a in item.names]
                else:
                    continue
                for target in imported:
                    if target.startswith("keras_ordered.training."):
                        target = node(target)
                        if target and target != source:
                            edges.add((source, target))
    return edges


def test_training_import_picture_matches_the_code():
    import re

    with open(os.path.join(REPO, "docs", "architecture.md"),
              encoding="utf-8") as f:
        page = f.read()
    block = page.split("<!-- training-imports -->", 1)[1].split("```", 2)[1]
    drawn = set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", block, re.M))
    assert drawn == _training_imports()


def test_preset_descriptions_hold_no_measurements():
    """Measurements belong to the benchmark records (CONTRIBUTING.md), not
    to the presets' descriptions, which `--help` and `presets` show."""
    import re

    from keras_ordered.models import gfl
    from keras_ordered.models import lstm
    from keras_ordered.models import onlstm
    from keras_ordered.models import prpn
    from keras_ordered.models import tdtreelstm

    measurement = re.compile(
        r"over \d+ seeds|\bF1\b|perplexity \d|\d+(\.\d+)? ?%|parses better")
    found = [
        f"{family.__name__}:{name}: {entry['description']}"
        for family in (gfl, lstm, onlstm, prpn, tdtreelstm)
        for name, entry in family.PRESETS.items()
        if measurement.search(entry.get("description", ""))
    ]
    assert not found, found
