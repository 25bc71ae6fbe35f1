"""The built wheel: backend-neutral requirements, one extra per backend,
the shipped models inside, and a non-editable install that parses from
outside the clone."""

import email
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO
from keras_ordered import shipped

pytestmark = pytest.mark.slow

SOURCES = ("setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in",
           "README.md", "keras_ordered", "keras_ordered_cli",
           "keras_ordered_options", "saved_models")
BACKENDS = ("tensorflow", "jax", "torch")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the clone (so that the build leaves
    nothing in the clone itself)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    source.mkdir()
    for name in SOURCES:
        path = os.path.join(REPO, name)
        if not os.path.exists(path):
            continue  # setup.py, MANIFEST.in: a project without them
        if os.path.isdir(path):
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc"))
        else:
            shutil.copy(path, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "--no-build-isolation", "-q", "-w", str(root / "dist"),
         str(source)], check=True, capture_output=True, timeout=600)
    (path,) = (root / "dist").glob("keras_ordered-*.whl")
    return path


def _metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist()
                   if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


def _requirements(metadata):
    """{extra or None: [project names]} of the wheel's Requires-Dist."""
    found = {}
    for line in metadata.get_all("Requires-Dist"):
        requirement, _, marker = line.partition(";")
        extra = re.search(r'extra == "([^"]+)"', marker)
        project = re.match(r"[A-Za-z0-9_.\-]+", requirement.strip()).group(0)
        found.setdefault(extra and extra.group(1), []).append(project.lower())
    return found


def test_the_base_install_needs_no_backend_and_each_has_an_extra(wheel):
    metadata = _metadata(wheel)
    requirements = _requirements(metadata)
    base = requirements[None]
    assert {"keras", "numpy", "scipy", "nltk", "conllu", "h5py"} <= set(base)
    assert not set(base) & {"tensorflow", "tensorflow-text", "tensorboard",
                            "jax", "torch", "keras-tuner"}, base
    assert set(metadata.get_all("Provides-Extra")) == {
        "tensorflow", "jax", "torch", "draw", "serve", "dev"}
    assert {"tensorflow", "tensorflow-text", "tensorboard",
            "keras-tuner"} <= set(requirements["tensorflow"])
    assert requirements["jax"] == ["jax"]
    assert requirements["torch"] == ["torch"]
    assert {"svgling", "cairosvg", "matplotlib"} == set(requirements["draw"])
    # Drawing never brings a backend back, nor does serving.
    assert not set(requirements["draw"]) & set(BACKENDS)
    assert {"aiohttp", "svgling"} == set(requirements["serve"])
    assert not set(requirements["serve"]) & set(BACKENDS)
    assert "selenium" in requirements["dev"]


def test_the_wheel_holds_the_shipped_models_and_their_cards(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for model in shipped.shipped_names():
            for file_name in ("model.keras", "card.json", "README.md"):
                inside = f"keras_ordered/saved_models/{model}/{file_name}"
                assert inside in names, inside
                with open(os.path.join(REPO, "saved_models", model,
                                       file_name), "rb") as f:
                    assert archive.read(inside) == f.read(), inside
        for ensemble in shipped.ensemble_names():
            for file_name in ("ensemble.json", "README.md"):
                inside = f"keras_ordered/saved_models/{ensemble}/{file_name}"
                assert inside in names, inside
        assert not [n for n in names if n.endswith("make_card.py")]
        # The parse page of `serve` loads only the files the wheel holds.
        for asset in ("index.html", "page.js", "page.css"):
            assert f"keras_ordered_cli/_serving/assets/{asset}" in names, asset


def test_an_installed_wheel_parses_from_outside_the_clone(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q",
         "--target", str(target), str(wheel)],
        check=True, capture_output=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop(shipped.SAVED_MODELS_ENV, None)
    where = subprocess.run(
        [sys.executable, "-c", "import keras_ordered; from keras_ordered "
         "import shipped, _environment; print(keras_ordered.__file__); "
         "print(shipped.saved_models_dir()); "
         "print(_environment.install_hint('draw'))"],
        capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300,
        check=True).stdout.splitlines()
    assert where[0].startswith(str(target)), where
    assert where[1] == str(target / "keras_ordered" / "saved_models")
    assert where[2] == 'pip install "keras-ordered[draw]"'
    parsed = subprocess.run(
        [sys.executable, "-m", "keras_ordered_cli", "parse",
         "The cat sat on the mat."],
        capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300,
        check=False)
    assert parsed.returncode == 0, parsed.stderr
    assert parsed.stdout == "(((The cat) sat) (on ((the mat) .)))\n"
