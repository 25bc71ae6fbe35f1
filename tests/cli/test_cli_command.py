"""The installed `keras-ordered` console script, in subprocesses.

`--help` and `--version` answer without importing TensorFlow; a subcommand
that loads a model keeps TensorFlow's start-up log off stderr. The
subprocesses get an environment without `TF_CPP_MIN_LOG_LEVEL` (conftest
sets it for this process) or `KERAS_ORDERED_TF_LOGS`, so that nothing
but the command itself silences TensorFlow.
"""

import os
import pkgutil
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
import keras_ordered
import keras_ordered_cli as cli

pytestmark = pytest.mark.slow  # the console script, in subprocesses

SCRIPT = os.path.join(os.path.dirname(sys.executable), "keras-ordered")
if not os.path.exists(SCRIPT):
    SCRIPT = shutil.which("keras-ordered")

needs_script = pytest.mark.skipif(
    SCRIPT is None, reason="the keras-ordered console script is not installed"
)

# Lines of TensorFlow's C++ start-up log (CPU and GPU machines).
TF_LOG = re.compile(
    r"absl::InitializeLog|oneDNN|cuda|cuInit|cpu_feature_guard|"
    r"^[IWEF]\d{4} ",
    re.I | re.M,
)


def clean_env():
    env = dict(os.environ)
    for name in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_ORDERED_TF_LOGS",
                 "KERAS_ORDERED_QUIET"):
        env.pop(name, None)
    return env


def run_script(*args, python_options=(), timeout=300):
    return subprocess.run(
        [sys.executable, *python_options, SCRIPT, *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=timeout,
    )


def imported_modules(importtime_stderr):
    """Top-level package names from `python -X importtime` output."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name.split(".")[0])
    return names


@needs_script
def test_help_and_version_do_not_import_tensorflow():
    result = run_script("--help", python_options=("-X", "importtime"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "parse" in result.stdout and "evaluate-parsing" in result.stdout
    assert "--version" in result.stdout and "--verbose" in result.stdout
    modules = imported_modules(result.stderr)
    assert "keras_ordered_cli" in modules  # the check sees the command's imports
    assert not modules & {"keras_ordered", "tensorflow", "keras", "numpy", "nltk"}

    result = run_script("--version", python_options=("-X", "importtime"))
    assert result.returncode == 0
    assert result.stdout == f"keras-ordered {keras_ordered.__version__}\n"
    # The version is the one the release notes prepare.
    with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as f:
        (unreleased,) = re.findall(r"^## Unreleased \(([\d.]+)\)", f.read(),
                                   re.M)
    assert keras_ordered.__version__ in (unreleased, f"{unreleased}.dev0")
    assert "tensorflow" not in imported_modules(result.stderr)

    # A subcommand's --help loads no model either.
    result = run_script("parse", "--help", python_options=("-X", "importtime"))
    assert result.returncode == 0 and "--no-tokenize" in result.stdout
    assert "tensorflow" not in imported_modules(result.stderr)


@needs_script
def test_parse_with_a_saved_model_is_quiet(tmp_path):
    from keras_ordered.models.onlstm import ONLSTMLanguageModel

    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "N"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=vocabulary, seed=1)
    path = str(tmp_path / "tiny.keras")
    model.save(path)

    result = run_script("parse", "--model", path, "The cat sat on the mat.")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not TF_LOG.search(result.stderr), result.stderr[-3000:]
    # stderr holds only the distance line, stdout only the tree (whose
    # leaves are the tokens, the final period split off).
    assert result.stderr.splitlines() == [
        "parsed with layer2/forget (the model's default; --layer/--distance "
        "pick another)"
    ]
    leaves = result.stdout.replace("(", " ").replace(")", " ").split()
    assert leaves == ["The", "cat", "sat", "on", "the", "mat", "."]

    # A baseline needs no model; the command still imports keras_ordered
    # (and TensorFlow), quietly.
    result = run_script("parse", "--baseline", "right-branching", "a b c")
    assert result.returncode == 0 and result.stdout == "(a (b c))\n"
    assert result.stderr == "", result.stderr[-3000:]


@needs_script
def test_verbose_shows_tensorflow_log():
    # Without --verbose the baseline test above finds stderr empty.
    for argv in (
        ("--verbose", "parse", "--baseline", "right-branching", "a b"),
        ("parse", "--verbose", "--baseline", "right-branching", "a b"),
    ):
        result = run_script(*argv)
        assert result.returncode == 0 and result.stdout == "(a b)\n", argv
        assert TF_LOG.search(result.stderr), (argv, result.stderr[-3000:])


def test_every_subcommand_module_is_registered():
    modules = {
        info.name
        for info in pkgutil.iter_modules(cli.__path__)
        if not info.name.startswith("_")
    }
    assert modules == set(cli.SUBCOMMANDS)
    parser = cli.build_parser()
    names = []
    for name in cli.SUBCOMMANDS:
        module = getattr(cli, name)
        assert callable(module.add_parser) and callable(module.run)
        names.append(module.NAME)
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([module.NAME, "--help"])
        assert exit_info.value.code == 0
    assert names[:4] == ["parse", "evaluate-parsing", "evalb", "evaluate"]
    assert len(set(names)) == len(names)  # no two modules add one name
