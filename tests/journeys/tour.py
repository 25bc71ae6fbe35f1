"""Runs the commands of docs/tour.md as printed, each in a fresh process.

A journey is the ```bash block under one `## ` heading of the tour: a
recipe, then the commands a user runs on what it saved. Each command runs
as `subprocess.run(shlex.split(line))` (no shell), in a folder laid out as
a checkout beside the shared data: `checkout/recipes` links the
repository's recipes and `shared/data` the test data, so the page's
relative paths (`recipes/...`, `../shared/data/...`, `runs/...`) mean what
they mean for a user at the repository root. `python` is the interpreter
running the tests and `keras-ordered` the installed console script;
`KERAS_ORDERED_DATA` is unset, so that only what the command says is used.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import command_server
from conftest import DATA
from conftest import REPO
from conftest import require_data

PAGE = "docs/tour.md"
COMMAND_TIMEOUT = 600
_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def journeys():
    """The page's journeys: `{heading: [command words, ...]}`."""
    with open(os.path.join(REPO, PAGE), encoding="utf-8") as f:
        text = f.read()
    found = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = section.partition("\n")
        commands = []
        for block in _BLOCK.findall(body):
            for line in block.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words:
                    commands.append(words)
        if commands:
            found[heading.strip()] = commands
    return found


def journey(prefix):
    """The commands of the one heading that starts with `prefix`."""
    matches = [h for h in journeys() if h.startswith(prefix)]
    assert len(matches) == 1, (prefix, list(journeys()))
    return journeys()[matches[0]]


def sandbox(tmp_path):
    """A folder laid out like a checkout beside `../shared/data`."""
    require_data("ptb")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    os.symlink(os.path.join(REPO, "recipes"), checkout / "recipes")
    (tmp_path / "shared").mkdir()
    os.symlink(os.path.abspath(DATA), tmp_path / "shared" / "data")
    return checkout


def executable(words):
    """The command line with `python` / `keras-ordered` resolved."""
    if words[0] == "python":
        return [sys.executable] + words[1:]
    if words[0] == "keras-ordered":
        script = shutil.which("keras-ordered") or os.path.join(
            os.path.dirname(sys.executable), "keras-ordered"
        )
        assert os.path.exists(script), "the keras-ordered script is not installed"
        return [script] + words[1:]
    raise AssertionError(f"the tour runs python and keras-ordered only: {words}")


def run(words, checkout):
    """Runs one printed command in a fresh process; returns stdout, stderr.

    Fails the test (with the command's output) unless it exits with 0.
    """
    env = dict(os.environ)
    env.pop("KERAS_ORDERED_DATA", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    result = subprocess.run(
        command_server.argv(executable(words)), cwd=checkout, env=env,
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, (
        f"`{shlex.join(words)}` exited with {result.returncode}:\n"
        f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout, result.stderr


def run_journey(prefix, tmp_path):
    """Runs a journey's commands in order; returns `[(words, stdout,
    stderr), ...]`."""
    checkout = sandbox(tmp_path)
    return [(words,) + run(words, checkout) for words in journey(prefix)]
