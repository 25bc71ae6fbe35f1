"""Fresh command processes without a fresh TensorFlow import each.

Many tests run the package's commands as a user does, in a process of
their own (`keras-ordered ...`, `python recipes/...`, `python -c ...`).
Each such process spends five to seven seconds of CPU importing
TensorFlow and Keras before it does its work; a full run of the suite
started about 150 of them. This module keeps, for each process that
runs tests, one *command server*: a Python process that has imported
TensorFlow, Keras and the package once, and forks a child for each
command. The child takes the command's standard streams, environment,
working folder and arguments, runs the script, module or code as the
interpreter would (`runpy`), and exits with its status. Nothing the
server runs is shared: it never builds a model or a tensor, so each
child starts with no model, no weights and no TensorFlow runtime, as a
fresh process does.

A test asks for it per command: `subprocess.run(command_server.argv(words),
...)`. The command line becomes that of a *shim*, a small Python
process without site packages that hands its standard streams to the
server, forwards the signals it gets (Ctrl-C, SIGTERM) to the child, and
exits as the child did (with its code, or killed by the same signal).
A shim killed outright (SIGKILL) closes its connection, and the server
kills the child. So `subprocess.run`, `Popen`, pipes, timeouts and
signals behave as with the command itself.

The server imports as a library does; a child that is one of the
package's commands (`_is_command`) then does what the command's own
import would have done besides (TensorFlow's pooled allocator, the
collector's tuning). The shim runs the command itself (`os.execv`)
wherever a fork could differ from a fresh process: another interpreter
or option (`python -u`, `-X`, ...), a program that is not Python, an
environment that differs from the server's in a variable read at import
(`KERAS_BACKEND`, `PYTHONPATH` where it holds other copies of imported
modules, `TF_*`, ...: `READ_AT_IMPORT`), or a command asked for
TensorFlow's start-up log (`--tf-logs`, `keras-ordered --verbose`).
`KERAS_ORDERED_COMMAND_SERVER=0` turns the server off: `argv` then
returns the command as it is. Tests of what a fresh process imports,
prints at import or how it starts keep plain `subprocess` calls.

Only the TensorFlow backend has a server (on JAX or PyTorch every
command is a fresh process).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

SERVER_ENV = "KERAS_ORDERED_COMMAND_SERVER"
"""`0` turns the server off (every command a fresh process)."""

READ_AT_IMPORT = ("TF_", "KERAS_", "XLA_", "JAX_", "CUDA", "PYTHON", "OMP_",
                  "MKL_", "OPENBLAS", "LD_", "NLTK", "HOME")
"""Prefixes of the environment variables that TensorFlow, Keras, the
interpreter or the package may read while they are imported: a command
whose environment differs from the server's in one of them is a fresh
process (`TF_CPP_MIN_LOG_LEVEL` unset, as a test of the commands' own
quiet start has it; `KERAS_BACKEND`; `KERAS_ORDERED_TF_LOGS`, which asks
for TensorFlow's start-up log; ...), except for `PER_COMMAND`. Other
variables (a test's own, `KERAS_ORDERED_DATA`) reach the command as
they are."""

PER_COMMAND = frozenset({
    "TF_CONFIG",  # read when a strategy is made
    "PYTHONUNBUFFERED",  # the child's streams follow it
    "PYTHONPATH",  # the child's sys.path follows it (`_shadows`)
})
"""Variables with a prefix of `READ_AT_IMPORT` that may still differ."""

_SHIM_FLAGS = ["-S", "-E", "-s"]  # no site packages, no PYTHON* variables
_HERE = os.path.abspath(__file__)
_state = {}  # "process", "socket": the server of this test process


def enabled():
    """Whether commands here may go through a server."""
    return (os.environ.get(SERVER_ENV, "") != "0"
            and os.environ.get("KERAS_BACKEND", "tensorflow") == "tensorflow"
            and sys.platform.startswith("linux"))


def argv(words):
    """The command line that runs `words` (a command line) through this
    process's command server, starting the server on first use; `words`
    itself where no server may be used."""
    words = [str(w) for w in words]
    if not enabled():
        return words
    path = _server()
    return [sys.executable, *_SHIM_FLAGS, _HERE, "--shim", path, "--", *words]


def _server():
    """The socket of this process's server, started if need be."""
    process = _state.get("process")
    if process is not None:
        if process.poll() is None:
            return _state["socket"]
        with open(_state["log"], encoding="utf-8") as f:
            log = f.read()
        raise RuntimeError(f"the command server stopped "
                           f"({process.returncode}):\n{log[-3000:]}")
    folder = tempfile.mkdtemp(prefix="keras-ordered-commands-")
    path = os.path.join(folder, "server")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop(SERVER_ENV, None)
    _state["process"] = subprocess.Popen(
        [sys.executable, _HERE, "--serve", path], env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(folder, "server.log"), "w"),
        start_new_session=True)
    _state["socket"] = path
    _state["log"] = os.path.join(folder, "server.log")
    import atexit
    import time

    atexit.register(stop)
    # It listens before it imports: the first commands wait in its queue.
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if _state["process"].poll() is not None or time.monotonic() > deadline:
            return _server()  # says why it stopped
        time.sleep(0.01)
    return path


def stop():
    """Stops this process's server (and its running children)."""
    process = _state.pop("process", None)
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    if process is not None:  # its CPU stays counted
        _state["ended"] = cpu_seconds()
        _state.pop("socket", None)


# --- the wire: one JSON line each way, the streams passed as descriptors --

def _send(connection, message, fds=()):
    data = (json.dumps(message) + "\n").encode("utf-8")
    if fds:
        socket.send_fds(connection, [data], list(fds))
    else:
        connection.sendall(data)


def _receive_line(connection, buffer):
    """One JSON message (or None at end of stream)."""
    while b"\n" not in buffer[0]:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        buffer[0] += chunk
    line, buffer[0] = buffer[0].split(b"\n", 1)
    return json.loads(line)


# --- the shim -------------------------------------------------------------

def _shim(path, words):
    """Runs `words` in a child of the server at `path`; exits as it did.
    Runs `words` itself when the server refuses or is gone."""
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(path)
        sigint_ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        _send(connection, {"argv": words, "env": dict(os.environ),
                           "cwd": os.getcwd(),
                           "sigint_ignored": sigint_ignored},
              fds=(0, 1, 2))
        buffer = [b""]
        answer = _receive_line(connection, buffer)
    except OSError:
        answer = None
    if not answer or "pid" not in answer:
        _exec(words)
    pid = answer["pid"]

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    # Every signal the command could get goes to it, even one this shim
    # started with ignored: the command decides (a command started with
    # Ctrl-C ignored starts so, and may set its own handler).
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                   signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    while True:
        try:
            answer = _receive_line(connection, buffer)
            break
        except InterruptedError:
            continue
    if answer is None:  # the server went away: the child with it
        os._exit(255)
    status = answer["status"]
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status))


def _exec(words):
    program = words[0]
    if os.sep not in program:
        import shutil

        program = shutil.which(program) or program
    try:
        os.execv(program, words)
    except OSError as error:
        sys.stderr.write(f"{words[0]}: {error}\n")
        os._exit(127)


# --- the server -----------------------------------------------------------

def _target(words):
    """What a command runs: ("path" | "module" | "code", what, argv), or
    None where it must be a process of its own."""
    program = os.path.realpath(words[0]) if os.sep in words[0] else None
    if program is None:
        import shutil

        found = shutil.which(words[0])
        program = os.path.realpath(found) if found else None
    if program is None:
        return None
    python = os.path.realpath(sys.executable)
    if program == python:
        rest = words[1:]
        if not rest:
            return None
        if rest[0] == "-m" and len(rest) > 1:
            return ("module", rest[1], [rest[1]] + rest[2:])
        if rest[0] == "-c" and len(rest) > 1:
            return ("code", rest[1], ["-c"] + rest[2:])
        if rest[0].startswith("-"):
            return None  # an interpreter option: its own process
        return ("path", rest[0], rest)
    # A console script of this environment (`keras-ordered`): a Python
    # file whose first line names this interpreter.
    try:
        with open(program, "rb") as f:
            first = f.readline(1000).decode("utf-8", "replace")
    except OSError:
        return None
    shebang = first[2:].strip().split()
    if (first.startswith("#!") and shebang
            and os.path.realpath(shebang[0]) == python and len(shebang) == 1):
        return ("path", program, [words[0]] + words[1:])
    return None


def _differs(env, server_env, command=False):
    """The variables read at import in which `env` differs from the
    server's (`PYTHONPATH` only where it would change an imported
    module). `KERAS_BACKEND` unset means the server's backend; for a
    `command` (`_is_command`), `TF_CPP_MIN_LOG_LEVEL` unset means `3`, as
    the command sets it before it imports TensorFlow."""
    import keras

    settled = dict(server_env)
    settled.setdefault("KERAS_BACKEND", keras.backend.backend())
    env = dict(env)
    env.setdefault("KERAS_BACKEND", settled["KERAS_BACKEND"])
    if command:
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    keys = set(env) | set(settled)
    differ = sorted(
        k for k in keys - PER_COMMAND
        if k.startswith(READ_AT_IMPORT) and env.get(k) != settled.get(k)
        and (not k.startswith("KERAS_ORDERED_")
             or k == "KERAS_ORDERED_TF_LOGS"))
    if _shadows(_folders(env), _folders(server_env)):
        differ.append("PYTHONPATH")
    return differ


def _folders(env):
    return [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p]


def _shadows(folders, server_folders):
    """Whether a folder of `folders` (not the server's) holds another copy
    of a top-level module the server imported."""
    new = [f for f in folders if f not in server_folders]
    if not new:
        return False
    for name, module in list(sys.modules.items()):
        if "." in name or name == "__main__":
            continue
        where = getattr(module, "__file__", None)
        for folder in new:
            for candidate in (os.path.join(folder, name, "__init__.py"),
                              os.path.join(folder, name + ".py")):
                if os.path.exists(candidate) and (
                        where is None or not os.path.samefile(candidate,
                                                              where)):
                    return True
    return False


def _serve(path):
    """Imports what commands import, then serves forks on `path`."""
    # Listening at once: the first shims wait for the imports below.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    # The package as a library imports it (Keras with all its
    # integrations): a superset of what a command imports, and a command
    # child then does what its own import would have done besides
    # (`_start_as_command`).
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    server_env = dict(os.environ)
    import importlib

    import keras_ordered  # noqa: F401
    import keras_ordered.export  # noqa: F401
    import keras_ordered_cli
    import nltk  # noqa: F401

    for name in keras_ordered_cli.SUBCOMMANDS:
        importlib.import_module(f"keras_ordered_cli.{name}")
    os.environ.clear()
    os.environ.update(server_env)

    children = {}  # pid -> connection
    finished = [0.0]  # the CPU seconds of the children that ended
    _write_cpu(path, 0.0)
    stopping = []

    def on_term(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    import select

    parent = os.getppid()
    while not stopping and os.getppid() == parent:  # ends with its tests
        waiting = [listener] + list(children.values())
        try:
            ready, _, _ = select.select(waiting, [], [], 0.05)
        except InterruptedError:
            ready = []
        for item in ready:
            if item is listener:
                connection, _ = listener.accept()
                pid = _start(connection, listener, server_env, children)
                if pid is not None:
                    children[pid] = connection
            else:  # a shim's connection closed: its child goes too
                for pid, connection in list(children.items()):
                    if connection is item:
                        try:
                            item.recv(1)
                        except OSError:
                            pass
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
        while children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            finished[0] += usage.ru_utime + usage.ru_stime
            _write_cpu(path, finished[0])
            connection = children.pop(pid, None)
            if connection is not None:
                try:
                    _send(connection, {"status": status})
                except OSError:
                    pass
                connection.close()
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.unlink(path)


def _write_cpu(path, children):
    """Writes the CPU seconds used so far by the server and its ended
    children, for `cpu_seconds`."""
    clocks = os.times()
    with open(path + ".cpu.tmp", "w") as f:
        f.write(f"{clocks.user + clocks.system + children:.3f}")
    os.replace(path + ".cpu.tmp", path + ".cpu")


def cpu_seconds():
    """The CPU seconds that this process's command server and the
    commands it ran have used so far (0 without a server): the tests'
    own measure of where the CPU goes (tests/conftest.py) adds them to
    the CPU of the processes a test started."""
    ended = _state.get("ended", 0.0)  # of servers stopped before
    path = _state.get("socket")
    if path is None:
        return ended
    try:
        with open(path + ".cpu", encoding="utf-8") as f:
            return ended + float(f.read() or 0.0)
    except (OSError, ValueError):
        return ended


def _start(connection, listener, server_env, children):
    """Reads one request and forks its child; returns the child's pid, or
    None (the shim runs the command itself)."""
    try:
        message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        data = message
        while not data.endswith(b"\n"):
            more = connection.recv(1 << 20)
            if not more:
                break
            data += more
        request = json.loads(data)
    except (OSError, ValueError):
        connection.close()
        return None
    target = _target(request["argv"])
    text = "" if target is None else _script_text(target)
    command = target is not None and _is_command(target, request["env"],
                                                 text)
    differ = _differs(request["env"], server_env, command)
    # A command asked for TensorFlow's start-up log shows it only when it
    # imports TensorFlow itself.
    from keras_ordered import _quiet

    logs = command and (_quiet.tf_logs_wanted(request["argv"]) or (
        _is_cli(target, text) and "--verbose" in request["argv"]))
    if target is None or len(fds) != 3 or differ or logs:
        why = "not a Python command" if target is None else (
            "TensorFlow's log asked for" if logs else
            f"differs in {', '.join(differ)}")
        print(f"fresh process ({why}): {request['argv'][:4]}",
              file=sys.stderr, flush=True)
        for fd in fds:
            os.close(fd)
        _send(connection, {"refused": True})
        connection.close()
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            listener.close()
            for other in children.values():
                other.close()
            connection.close()
            _child(target, fds, dict(request, server_env=server_env,
                                     command=command))
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    _send(connection, {"pid": pid})
    return pid


def _child(target, fds, request):
    """Becomes the command: its streams, environment, folder, arguments;
    runs it; exits as the interpreter would."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
                   signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    # As the interpreter starts: Ctrl-C raises KeyboardInterrupt, unless
    # the command was started with it ignored (`cmd &`).
    signal.signal(signal.SIGINT, signal.SIG_IGN if request["sigint_ignored"]
                  else signal.default_int_handler)
    for target_fd, fd in enumerate(fds):
        os.dup2(fd, target_fd)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    import io
    import random

    random.seed()
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = io.TextIOWrapper(io.open(0, "rb", closefd=False),
                                 encoding="utf-8", errors="strict")
    sys.stdout = io.TextIOWrapper(
        io.open(1, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding="utf-8", errors="strict", write_through=unbuffered,
        line_buffering=os.isatty(1))
    sys.stderr = io.TextIOWrapper(
        io.open(2, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding="utf-8", errors="backslashreplace", line_buffering=True,
        write_through=unbuffered)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = (
        sys.stdin, sys.stdout, sys.stderr)
    kind, what, arguments = target
    if request["command"]:
        _start_as_command()
    sys.argv = list(arguments)
    # sys.path as the interpreter makes it: the script's folder (the
    # working folder for -m, "" for -c), then PYTHONPATH's folders, then
    # the rest (the server's own first entry, tests/, is not the child's).
    added = [f for f in _folders(request["env"])
             if f not in _folders(request["server_env"])]
    sys.path[:] = [{"path": os.path.dirname(os.path.abspath(what)),
                    "module": os.getcwd(), "code": ""}[kind]] + added + [
        p for p in sys.path[1:] if p not in added]
    import runpy

    code = 0
    try:
        if kind == "path":
            runpy.run_path(what, run_name="__main__")
        elif kind == "module":
            runpy.run_module(what, run_name="__main__", alter_sys=True)
        else:
            import types

            main = types.ModuleType("__main__")
            main.__builtins__ = __builtins__
            sys.modules["__main__"] = main
            exec(compile(what, "<string>", "exec"), main.__dict__)
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except KeyboardInterrupt as error:
        _print_traceback(error)
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException as error:
        _print_traceback(error)
        code = 1
    _finish()
    os._exit(code)


def _is_command(target, env, text):
    """Whether a fresh process of `target` (a script's source `text`,
    `_script_text`) would import the package as a command does
    (`KERAS_ORDERED_QUIET`, which the console script, the recipes and the
    benchmarks set before their imports)."""
    from keras_ordered import _quiet

    return (_quiet._truthy(env.get(_quiet.QUIET_ENV))
            or _is_cli(target, text)
            or "keras_ordered_cli" in text or _quiet.QUIET_ENV in text)


def _is_cli(target, text):
    """Whether `target` (a script's source `text`) is the `keras-ordered`
    command line."""
    kind, what, _ = target
    if kind == "module":
        return what.split(".")[0] == "keras_ordered_cli"
    return "from keras_ordered_cli import main" in text


def _script_text(target):
    """The source of a script `target` ("" for a module, code, or a file
    that does not read as text)."""
    kind, what, _ = target
    if kind != "path":
        return ""
    try:
        with open(what, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _start_as_command():
    """What `import keras_ordered` does in a command's fresh process and
    not in the server (which imports as a library would, with Python's
    collector): TensorFlow's pooled CPU allocator asked for before the
    first tensor, and the collector tuned (`keras_ordered._quiet`)."""
    from keras_ordered import _cpu_memory
    from keras_ordered import _quiet

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    _cpu_memory.request_pooled_allocator()
    with _quiet.collector_tuned_for_commands():
        pass


def _print_traceback(error):
    """Prints `error` as the interpreter would: from the command's own
    first frame (not this module's or `runpy`'s)."""
    tb = error.__traceback__
    while tb is not None and (
            tb.tb_frame.f_code.co_filename == _HERE
            or "runpy" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    sys.excepthook(type(error), error.with_traceback(tb), tb)


def _exit_code(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish():
    """What the interpreter does on its way out: waits for the threads
    that are not daemons, runs the `atexit` functions, flushes."""
    import threading

    try:
        threading._shutdown()
    except Exception:
        pass
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


if __name__ == "__main__":
    if sys.argv[1] == "--shim":
        _shim(sys.argv[2], sys.argv[4:])
    elif sys.argv[1] == "--serve":
        _serve(sys.argv[2])
