"""The tests' command server (tests/command_server.py): a command through
it behaves as the command run on its own, in less CPU.

Each test compares what a process started the plain way does with what
the same command does through the server: exit status, standard
streams, arguments, folder, environment, signals. Whether the server ran
a command shows in the child: a forked one has TensorFlow imported before
its first line.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

import command_server

pytestmark = pytest.mark.skipif(
    not command_server.enabled(), reason="no command server on this backend")

SHOW = ("import os, sys\n"
        "print(sys.argv, os.getcwd(), os.environ.get('PROBE'),"
        " 'tensorflow' in sys.modules, sys.path[0])\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(int(os.environ.get('CODE', '0')))\n")


def both(words, **options):
    """(plain, served) `subprocess.run` results of `words`."""
    options = dict(capture_output=True, text=True, timeout=300, **options)
    return (subprocess.run(words, **options),
            subprocess.run(command_server.argv(words), **options))


def test_code_runs_as_the_interpreter_runs_it(tmp_path):
    env = dict(os.environ, PROBE="here", CODE="3")
    plain, served = both([sys.executable, "-c", SHOW, "a", "b"],
                         cwd=tmp_path, env=env)
    assert plain.returncode == served.returncode == 3
    assert plain.stderr == served.stderr == "to stderr\n"
    # Only the server's child has TensorFlow before its first line.
    assert plain.stdout.replace("False", "True") == served.stdout
    assert "['-c', 'a', 'b']" in served.stdout and str(tmp_path) in served.stdout


def test_a_script_and_a_module_and_their_input(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint(sys.argv[1:], sys.stdin.read(),"
                      " __name__, sys.path[0])\n")
    plain, served = both([sys.executable, str(script), "x"], input="words")
    assert plain.returncode == served.returncode == 0
    assert plain.stdout == served.stdout
    assert served.stdout.startswith("['x'] words __main__ " + str(tmp_path))
    (tmp_path / "probe_module.py").write_text(
        "import sys\nprint(__name__, sys.argv)\nraise SystemExit('bad')\n")
    plain, served = both([sys.executable, "-m", "probe_module", "y"],
                         cwd=tmp_path)
    assert plain.returncode == served.returncode == 1
    assert plain.stdout == served.stdout
    assert plain.stderr == served.stderr == "bad\n"


def test_an_exception_prints_its_traceback_and_exits_with_1():
    plain, served = both([sys.executable, "-c", "raise ValueError('no')"])
    assert plain.returncode == served.returncode == 1
    assert plain.stderr == served.stderr
    assert served.stderr.endswith("ValueError: no\n")


def test_the_console_script_runs_through_the_server():
    import shutil

    script = shutil.which("keras-ordered")
    if script is None:
        pytest.skip("the keras-ordered console script is not installed")
    plain, served = both([script, "list-models"])
    assert plain.returncode == served.returncode == 0
    assert plain.stdout == served.stdout and "prpn_ptb_quick" in plain.stdout


@pytest.mark.parametrize("words, env", [
    (["-u", "-c", SHOW], {}),  # an interpreter option
    (["-c", SHOW], {"KERAS_BACKEND": "jax"}),  # read at import
    (["-c", SHOW], {"TF_CPP_MIN_LOG_LEVEL": "0"}),
])
def test_what_a_fork_could_change_runs_fresh(words, env):
    served = subprocess.run(
        command_server.argv([sys.executable, *words]), capture_output=True,
        text=True, timeout=300, env=dict(os.environ, **env))
    assert served.returncode == 0, served.stderr
    assert " False " in served.stdout  # no TensorFlow before: fresh


def test_a_pythonpath_of_other_modules_is_served(tmp_path):
    (tmp_path / "extra_module.py").write_text("WHERE = 'extra'\n")
    code = "import extra_module, sys; print(extra_module.WHERE, sys.path[1])"
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    plain, served = both([sys.executable, "-c", code], env=env)
    assert plain.stdout == served.stdout == f"extra {tmp_path}\n"
    # A folder that holds another copy of an imported module: fresh.
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text("SHADOW = True\n")
    code = "import numpy, sys; print(hasattr(numpy, 'SHADOW'))"
    plain, served = both([sys.executable, "-c", code], env=env)
    assert plain.stdout == served.stdout == "True\n"


WAIT_FOR_CTRL_C = (
    "import sys, time\n"
    "try:\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(60)\n"
    "except KeyboardInterrupt:\n"
    "    print('interrupted', flush=True)\n"
    "    sys.exit(130)\n"
    "print('not interrupted', flush=True)\n")


def _started(words, **options):
    process = subprocess.Popen(words, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, **options)
    assert process.stdout.readline() == "ready\n"
    return process


def test_ctrl_c_reaches_the_command_and_its_status_comes_back():
    results = []
    for words in ([sys.executable, "-c", WAIT_FOR_CTRL_C],
                  command_server.argv([sys.executable, "-c",
                                       WAIT_FOR_CTRL_C])):
        process = _started(words, preexec_fn=lambda: signal.signal(
            signal.SIGINT, signal.SIG_DFL))
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
        results.append((process.returncode, out))
    assert results[0] == results[1] == (130, "interrupted\n")


def test_a_command_started_with_ctrl_c_ignored_keeps_ignoring_it():
    code = WAIT_FOR_CTRL_C.replace("time.sleep(60)", "time.sleep(2)")
    for words in ([sys.executable, "-c", code],
                  command_server.argv([sys.executable, "-c", code])):
        process = _started(words, preexec_fn=lambda: signal.signal(
            signal.SIGINT, signal.SIG_IGN))
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
        assert (process.returncode, out) == (0, "not interrupted\n")


def test_a_command_killed_by_a_signal_reports_it():
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    plain, served = both([sys.executable, "-c", code])
    assert plain.returncode == served.returncode == -signal.SIGTERM


def _ends(pid, seconds=30):
    """Whether process `pid` is gone within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_killing_the_shim_kills_the_command(tmp_path):
    marker = tmp_path / "pid"
    code = (f"import os, time\nopen({str(marker)!r}, 'w').write("
            "str(os.getpid()))\nprint('ready', flush=True)\ntime.sleep(60)\n")
    process = _started(command_server.argv([sys.executable, "-c", code]))
    child = int(marker.read_text())
    assert child != process.pid  # the command is the server's child
    process.kill()
    process.wait(timeout=30)
    assert _ends(child), "the command outlived its killed shim"


def test_the_commands_cpu_is_counted():
    before = command_server.cpu_seconds()
    burn = "import time\nt = time.process_time()\n" \
           "while time.process_time() - t < 0.5: pass\n"
    done = subprocess.run(command_server.argv([sys.executable, "-c", burn]),
                          timeout=300)
    assert done.returncode == 0
    assert command_server.cpu_seconds() - before >= 0.5


def test_the_servers_own_folder_is_not_on_the_commands_path(tmp_path):
    # The server runs tests/command_server.py: tests/ is its sys.path[0],
    # not a command's, unless PYTHONPATH names it.
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = "import sys; print(sys.path[:2])"
    plain, served = both([sys.executable, "-c", code], cwd=tmp_path)
    assert plain.stdout == served.stdout and tests not in served.stdout
    env = dict(os.environ, PYTHONPATH=tests)
    plain, served = both([sys.executable, "-c", code], cwd=tmp_path, env=env)
    assert plain.stdout == served.stdout == str(["", tests]) + "\n"


def test_a_command_without_tensorflows_log_level_is_served(tmp_path):
    # A recipe or `keras-ordered` sets TF_CPP_MIN_LOG_LEVEL=3 itself
    # before its imports: unset, it is served; code run as a library is
    # not (TensorFlow's start-up log would show).
    script = tmp_path / "command.py"
    script.write_text(
        "import os\nos.environ.setdefault('KERAS_ORDERED_QUIET', '1')\n"
        "import sys\nprint(os.environ.get('TF_CPP_MIN_LOG_LEVEL'),"
        " 'tensorflow' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_ORDERED_QUIET")}
    served = subprocess.run(command_server.argv([sys.executable, str(script)]),
                            capture_output=True, text=True, env=env,
                            timeout=300)
    assert served.stdout == "3 True\n", served.stderr
    code = "import sys; print('tensorflow' in sys.modules)"
    served = subprocess.run(command_server.argv([sys.executable, "-c", code]),
                            capture_output=True, text=True, env=env,
                            timeout=300)
    assert served.stdout == "False\n"
    # Asked for TensorFlow's log: fresh.
    served = subprocess.run(
        command_server.argv([sys.executable, str(script), "--tf-logs"]),
        capture_output=True, text=True, env=env, timeout=300)
    assert served.stdout.split()[-1] == "False"


def test_the_server_ends_with_its_test_process(tmp_path):
    # Its test process gone without a word (os._exit: no atexit), the
    # server notices its parent changed and ends, with its children.
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import os, subprocess, sys\n"
            "import command_server\n"
            "subprocess.run(command_server.argv([sys.executable, '-c', '1']),"
            " check=True)\n"
            "print(command_server._state['process'].pid, flush=True)\n"
            "os._exit(0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=tests))
    assert done.returncode == 0, done.stderr
    server = int(done.stdout.split()[-1])
    if not _ends(server):
        os.kill(server, signal.SIGKILL)
        pytest.fail("the server outlived its test process")
