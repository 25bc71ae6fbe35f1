"""The command line's manners, in fresh processes: progress on a terminal,
silence in a pipe, Ctrl-C, an export that is all or nothing, list-models
without TensorFlow."""

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest

from conftest import require_data
from test_cli_command import SCRIPT
from test_cli_command import clean_env
from test_cli_command import imported_modules
from test_cli_command import needs_script
from test_cli_command import run_script

pytestmark = [pytest.mark.slow, needs_script]  # subprocesses

INTERRUPTED = "keras-ordered {}: interrupted"


class TerminalStderr:
    """Runs the command with stderr on a pseudo-terminal, stdout piped.

    `text()` is what the terminal has shown so far (read in a thread, so
    that the child never blocks on a full terminal buffer).
    """

    def __init__(self, *args):
        master, slave = pty.openpty()
        # 30 rows of 100 columns, as a terminal window has.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, SCRIPT, *args], stdout=subprocess.PIPE,
            stderr=slave, stdin=subprocess.DEVNULL, env=clean_env(), text=True,
        )
        os.close(slave)
        self._master, self._chunks = master, []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            self._chunks.append(data.decode("utf-8", "replace"))

    def text(self):
        return "".join(self._chunks)

    def wait_for(self, needle, timeout=240):
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            assert self.process.poll() is None, (
                f"ended before showing {needle!r}: {self.text()}")
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.05)

    def finish(self, timeout=240):
        stdout, _ = self.process.communicate(timeout=timeout)
        self._reader.join(timeout=10)
        os.close(self._master)
        return self.process.returncode, stdout, self.text()


def sentences_file(tmp_path, count):
    path = tmp_path / "sentences.txt"
    path.write_text("".join(
        f"the cat number {i} sat on the mat .\n" for i in range(count)))
    return str(path)


def test_progress_shows_on_a_terminal_and_not_in_a_pipe(tmp_path):
    path = sentences_file(tmp_path, 300)
    terminal = TerminalStderr("parse", "--file", path, "--batch-size", "8")
    status, stdout, shown = terminal.finish()
    assert status == 0, shown
    assert len(stdout.splitlines()) == 300
    assert "parsing:" in shown and " sentences" in shown and "%|" in shown

    piped = run_script("parse", "--file", path, "--batch-size", "8")
    assert piped.returncode == 0
    assert piped.stdout == stdout
    assert "%|" not in piped.stderr
    assert piped.stderr.splitlines() == [
        "model: the shipped prpn_ptb_quick (--model picks another)",
        "parsed with parser/distance (the model's only distance)",
    ]


def test_ctrl_c_during_evaluate_parsing_is_one_line_and_status_130():
    treebank = require_data("wsj_sample", "mrg")
    terminal = TerminalStderr(
        "evaluate-parsing", "--model", "prpn_ptb_quick", "--treebank",
        treebank, "--batch-size", "4")
    terminal.wait_for("parsing with prpn_ptb_quick")
    terminal.process.send_signal(signal.SIGINT)
    status, stdout, shown = terminal.finish()
    assert status == 130
    assert stdout == ""
    assert "Traceback" not in shown and "never used" not in shown
    shown = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", shown)  # terminal controls
    lines = [line for line in shown.replace("\r", "\n").splitlines()
             if line.strip() and "parsing with" not in line]
    assert lines == [INTERRUPTED.format("evaluate-parsing")], shown


def _interrupt_when_staging(output, process, timeout=240):
    """Sends Ctrl-C once the export's hidden version folder appears."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if os.path.isdir(output) and any(
                name.startswith(".1.partial-") for name in os.listdir(output)):
            process.send_signal(signal.SIGINT)
            return True
        time.sleep(0.005)
    return False


def test_ctrl_c_during_export_leaves_no_folder(tmp_path):
    output = str(tmp_path / "exported")
    process = subprocess.Popen(
        [sys.executable, SCRIPT, "export", "--model", "prpn_ptb_quick",
         "--output", output], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=clean_env(), text=True)
    assert _interrupt_when_staging(output, process), process.communicate()
    stdout, stderr = process.communicate(timeout=240)
    assert process.returncode == 130, stderr
    assert stdout == ""
    assert stderr == INTERRUPTED.format("export") + "\n"
    assert not os.path.exists(output)


def test_export_onto_a_file_or_a_folder_of_other_things_is_one_line(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("mine")
    for output, why in ((a_file, "is a file"),
                        (folder, "is not empty and is not a model folder")):
        result = run_script("export", "--model", "prpn_ptb_quick",
                            "--output", str(output))
        assert result.returncode == 2
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith("keras-ordered export: error: ") and why in line
    assert a_file.read_text() == "mine"
    assert sorted(os.listdir(folder)) == ["README.md"]


def test_list_models_answers_without_tensorflow():
    result = run_script("list-models", python_options=("-X", "importtime"))
    assert result.returncode == 0, result.stderr[-2000:]
    for name in ("prpn_ptb_quick", "prpn_ptb_small", "onlstm_ptb_small"):
        assert name in result.stdout
    modules = imported_modules(result.stderr)
    assert "keras_ordered_cli" in modules
    assert not modules & {"keras_ordered", "tensorflow", "keras", "numpy"}
    result = run_script("list-models", "--json")
    assert result.returncode == 0 and result.stdout.startswith("[")
