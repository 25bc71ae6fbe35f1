"""Where the package meets the user's machine: every fault is one line.

A missing or unknown Keras backend (for `import keras_ordered`, the
command and the recipes), an output folder a run cannot write (recipes,
searches, the Runner, export), one sentence-length limit, empty and
unknown sentences, install hints that fit the installation, TensorFlow's
start-up log on a library import. The processes started here run with a
backend blocked (`sys.modules[name] = None`), so they need no second
environment.
"""

import os
import subprocess
import sys

import pytest

from conftest import REPO
from keras_ordered import _environment
from keras_ordered_options import MAX_SENTENCE_LENGTH

pytestmark = pytest.mark.backends



def _start_python(code, env=None, blocked=(), cwd=None):
    """Starts `code` in a fresh Python with `blocked` modules unimportable
    (`env`: variables to set, or to remove where None); the process."""
    prelude = "import sys\n" + "".join(
        f"sys.modules[{name!r}] = None\n" for name in blocked)
    environment = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.Popen(
        [sys.executable, "-c", prelude + code], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=environment, cwd=cwd or REPO)


def _finished(process, timeout=120):
    """Waits for a process of `_start_python`; its CompletedProcess."""
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode,
                                       out, err)


def _python(code, env=None, blocked=(), cwd=None, timeout=120):
    """Runs `code` in a fresh Python with `blocked` modules unimportable."""
    return _finished(_start_python(code, env, blocked, cwd), timeout)


def _lines(text):
    return [line for line in text.splitlines() if line.strip()]


# The Keras backend.

def test_an_unknown_backend_lists_the_valid_names(monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "nonsense")
    with pytest.raises(_environment.BackendError) as error:
        _environment.check_backend()
    message = str(error.value)
    assert "\n" not in message and error.value.one_line
    assert "'nonsense'" in message
    assert "tensorflow, jax, torch" in message


def test_a_named_backend_that_is_missing_names_its_extra(monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    monkeypatch.setitem(sys.modules, "torch", None)
    message = _environment.backend_problem()
    assert message.startswith("KERAS_BACKEND=torch asks for torch, which is "
                              "not installed")
    assert _environment.install_hint("torch") in message
    assert "[torch]" in message and "\n" not in message


def test_no_backend_at_all_names_the_default_extra(monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", "/nonexistent-keras-home")
    for name in _environment.BACKEND_MODULES.values():
        monkeypatch.setitem(sys.modules, name, None)
    message = _environment.backend_problem()
    assert "none is installed" in message
    assert _environment.install_hint("tensorflow") in message
    assert "KERAS_BACKEND=jax|torch" in message


def test_an_installed_backend_has_no_problem():
    assert _environment.backend_problem(os.environ.get(
        "KERAS_BACKEND", "tensorflow")) is None


@pytest.mark.parametrize("entry", ["import", "command", "recipe"])
def test_a_missing_backend_is_one_line_wherever_a_run_starts(entry):
    """`import keras_ordered`, `keras-ordered parse` and a recipe, with
    KERAS_BACKEND naming a backend that cannot be imported: one line (the
    import: the message of its error is that line), before Keras loads."""
    code = {
        "import": "import keras_ordered",
        "command": ("from keras_ordered_cli import main\n"
                    "sys.exit(main(['parse', 'The cat sat.']))"),
        "recipe": ("import runpy; sys.argv = ['ptb_prpn.py', '--preset', "
                   "'tiny']\nrunpy.run_path('recipes/ptb_prpn.py', "
                   "run_name='__main__')"),
    }[entry]
    # A library import asks for no quiet start-up; the command and the
    # recipes set it themselves.
    result = _python(code, env={"KERAS_BACKEND": "torch",
                                "KERAS_ORDERED_QUIET": None},
                     blocked=("torch", "keras"))
    assert result.returncode != 0
    expected = ("KERAS_BACKEND=torch asks for torch, which is not installed: "
                + _environment.install_hint("torch"))
    lines = _lines(result.stderr)
    if entry == "import":
        assert lines[-1].startswith(
            "keras_ordered._environment.BackendError: " + expected)
        return
    assert len(lines) == 1, result.stderr
    prefix = ("keras-ordered parse: error: " if entry == "command"
              else "error: ")
    assert lines[0].startswith(prefix + expected), lines[0]
    assert result.stdout == ""


def test_an_unknown_backend_is_one_line_on_the_command_line():
    result = _python("from keras_ordered_cli import main\n"
                     "sys.exit(main(['parse', 'The cat sat.']))",
                     env={"KERAS_BACKEND": "nonsense"})
    assert result.returncode == 2
    (line,) = _lines(result.stderr)
    assert "set it to one of tensorflow, jax, torch" in line


# Install hints.

def test_install_hints_fit_the_installation(monkeypatch):
    monkeypatch.setattr(_environment, "_editable_clone", lambda: None)
    assert _environment.install_hint("draw") == \
        'pip install "keras-ordered[draw]"'
    monkeypatch.setattr(_environment, "_editable_clone", lambda: "/src/ko")
    # An editable clone: the index's release would replace it.
    assert _environment.install_hint("jax") == 'pip install -e "/src/ko[jax]"'


def test_this_clone_is_named_in_its_own_hints():
    clone = _environment._editable_clone()
    if clone is None:
        pytest.skip("not an editable install")
    assert os.path.samefile(clone, REPO)


# Output folders.

def test_an_output_below_a_file_is_refused_even_as_root(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(_environment.OutputPathError) as error:
        _environment.check_output_dir(str(blocker / "run"))
    message = str(error.value)
    assert "\n" not in message
    assert "is a file, so no folder can be made below it" in message
    with pytest.raises(ValueError, match="is a file, not a folder"):
        _environment.check_output_dir(str(blocker))
    _environment.check_output_dir(str(tmp_path / "new" / "deeper"))
    assert not (tmp_path / "new").exists()  # a check writes nothing


def test_an_output_without_permission_or_space_is_refused(tmp_path,
                                                          monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert "is not writable" in _environment.output_problem(str(tmp_path))
    monkeypatch.undo()

    class Full:
        f_bavail, f_frsize = 10, 4096

    monkeypatch.setattr(os, "statvfs", lambda path: Full())
    assert "no space left" in _environment.output_problem(str(tmp_path / "x"))


def _blocked_output(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    return str(blocker / "out")


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["ptb_prpn.py", "tune_prpn.py",
                                    "wsj_gfl.py", "wsj_tdtreelstm.py"])
def test_recipes_and_searches_refuse_an_unwritable_output_in_one_line(
        recipe, tmp_path):
    output = _blocked_output(tmp_path)
    result = subprocess.run(
        [sys.executable, os.path.join("recipes", recipe), "--preset", "tiny",
         "--output", output], capture_output=True, text=True, cwd=REPO,
        timeout=300, check=False)
    assert result.returncode == 2, result.stderr
    (line,) = _lines(result.stderr)
    assert line == (f"error: Cannot write --output {output}: "
                    f"'{os.path.dirname(output)}' is a file, so no folder "
                    "can be made below it.")


@pytest.mark.tensorflow_only
def test_export_refuses_an_unwritable_output_in_one_line(tmp_path, capsys):
    from keras_ordered_cli import main

    output = _blocked_output(tmp_path)
    status = main(["export", "--model", "prpn_ptb_quick", "--output", output])
    err = capsys.readouterr().err
    assert status == 2
    (line,) = _lines(err)
    assert line.startswith("keras-ordered export: error: Cannot write the "
                           f"export folder {output}: ")


@pytest.mark.tensorflow_only
def test_the_python_export_refuses_an_unwritable_output(tmp_path):
    from keras_ordered.export import export_model
    from keras_ordered.models import PRPNLanguageModel

    model = PRPNLanguageModel.from_preset("prpn_ptb_quick")
    with pytest.raises(_environment.OutputPathError):
        export_model(model, _blocked_output(tmp_path))


def test_the_runner_refuses_an_unwritable_output(tmp_path):
    from keras_ordered.training.config import RunConfig
    from keras_ordered.training.runner import Runner

    class Task:
        config = RunConfig(output=_blocked_output(tmp_path), seed=0,
                           verbose=0)

        def make_strategy(self):
            raise AssertionError("the run started")

    with pytest.raises(_environment.OutputPathError):
        Runner(Task()).run()


# One limit.

def test_parse_and_export_share_one_sentence_limit():
    from keras_ordered_cli import build_parser

    parser = build_parser()
    parse = parser.parse_args(["parse", "x"])
    export = parser.parse_args(["export", "--model", "m", "--output", "o"])
    assert parse.max_length == export.max_length == MAX_SENTENCE_LENGTH


@pytest.mark.tensorflow_only
def test_the_saved_models_read_the_same_limit():
    from keras_ordered.export import language_model

    assert language_model.DEFAULT_MAX_LENGTH == MAX_SENTENCE_LENGTH


# Empty and unknown sentences.

def test_an_empty_sentence_is_an_error():
    from keras_ordered.models import PRPNLanguageModel

    model = PRPNLanguageModel.from_preset("prpn_ptb_quick")
    with pytest.raises(ValueError, match=r"sentences\[1\] is empty"):
        model.sentence_distances([["the", "cat"], []])


def test_a_sentence_of_unknown_words_gets_a_note(capsys):
    from keras_ordered_cli import main

    assert main(["parse", "日本語のテキスト", "The cat sat."]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "(日本語のテキスト)"
    notes = [line for line in captured.err.splitlines() if "<unk>" in line]
    assert notes == [
        "note: Argument 1: 1 of 1 tokens (100 %) are outside the model's "
        "vocabulary and read as <unk>: its tree says nothing about the "
        "words."]


# TensorFlow's start-up log.

@pytest.mark.slow  # two fresh processes that import TensorFlow
@pytest.mark.tensorflow_only
def test_a_library_import_keeps_tensorflows_start_up_log_quiet():
    env = {"KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": None,
           "KERAS_ORDERED_QUIET": None, "KERAS_ORDERED_TF_LOGS": None}
    # The two processes run at once (each a fresh Python, as alone).
    quiet = _start_python("import keras_ordered; import tensorflow as tf; "
                          "tf.constant(1.0)", env=env)
    loud = _start_python("import os, keras_ordered; "
                         "print(os.environ['TF_CPP_MIN_LOG_LEVEL'])",
                         env={**env, "TF_CPP_MIN_LOG_LEVEL": "1"})
    quiet, loud = _finished(quiet), _finished(loud)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    # The user's own setting is kept: TensorFlow logs as it was told.
    assert loud.stdout.strip() == "1"
