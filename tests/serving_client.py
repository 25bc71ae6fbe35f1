"""A deployment's client, for the export tests: a fresh Python process that
imports only TensorFlow (and TF-Text, whose ops TF Serving's model server
has), with `keras_ordered` made unimportable, loads SavedModels and calls
their signatures.

`serve_in_fresh_process` returns, for each SavedModel path, each
signature's outputs as lists, and under `"modules"` the Keras or
keras_ordered modules that loading and serving imported beyond those
`import tensorflow` itself loads (TF 2.21 imports `keras`): a client that
needs none of the package gets `[]`.

`ServeProcess` runs `keras-ordered serve` in a process of its own, for the
tests that send it HTTP requests.
"""

import json
import os
import subprocess
import sys
import textwrap

CLIENT = textwrap.dedent(
    """
    import importlib.abc, json, sys

    class NoKerasOrdered(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "keras_ordered":
                raise ImportError("the client must not import keras_ordered")

    sys.meta_path.insert(0, NoKerasOrdered())
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (TF Serving's model server has its ops)
    before = {m for m in sys.modules if m.split(".")[0] in ("keras", "tf_keras")}
    request = json.loads(sys.stdin.read())
    inputs = tf.constant(request["inputs"])
    result = {}
    for path in request["paths"]:
        served = tf.saved_model.load(path)
        result[path] = {
            name: {k: v.numpy().tolist()
                   for k, v in served.signatures[name](inputs).items()}
            for name in request["signatures"] if name in served.signatures
        }
    result["modules"] = sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("keras", "keras_ordered", "tf_keras")
        and m not in before
    )
    print(json.dumps(result, default=lambda b: b.decode("utf-8")))
    """
)


def _through_server(words):
    """`words` through the tests' command server (`command_server`), or
    as they are where tests/ is not importable (a page's screenshot
    script loads this file by its path)."""
    try:
        import command_server
    except ImportError:
        return words
    return command_server.argv(words)


def serve_in_fresh_process(paths, inputs, signatures, timeout=300):
    """Calls `signatures` of each SavedModel in `paths` on `inputs` (a list
    of str) in a new process, each SavedModel the ones it has; returns the
    decoded JSON result."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    request = {"paths": list(paths), "inputs": list(inputs),
               "signatures": list(signatures)}
    done = subprocess.run(
        [sys.executable, "-c", CLIENT], input=json.dumps(request),
        capture_output=True, text=True, timeout=timeout, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


class ServeProcess:
    """`keras-ordered serve ARGS --port 0` in a process of its own.

    A context manager: on entry it waits for the line that gives the URL
    (`self.url`, ending in `/`), on exit it sends Ctrl-C (SIGINT) and
    keeps the exit status and stderr (`self.returncode`, `self.stderr`).
    `get(path)` and `post(path, body)` return `(status, JSON answer)`.
    """

    def __init__(self, args, timeout=300, env=None):
        self.args = list(args)
        self.timeout = timeout
        self.env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
        self.url = None
        self.returncode = None
        self.stderr = ""

    def __enter__(self):
        import shutil

        command = shutil.which("keras-ordered") or "keras-ordered"
        self.process = subprocess.Popen(
            _through_server([command, "serve", *self.args, "--port", "0"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=self.env)
        line = self.process.stdout.readline()
        if not line.startswith("serving "):
            self.process.kill()
            _, err = self.process.communicate(timeout=30)
            raise AssertionError(f"serve did not start: {line}{err[-3000:]}")
        self.url = line.split(" at ", 1)[1].split(" ", 1)[0]
        self.first_line = line
        return self

    def stop(self):
        """Ctrl-C, then waits; returns the exit status."""
        import signal

        if self.returncode is None:
            self.process.send_signal(signal.SIGINT)
            _, self.stderr = self.process.communicate(timeout=60)
            self.returncode = self.process.returncode
        return self.returncode

    def __exit__(self, *exc):
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def request(self, path, body=None, method=None):
        import urllib.error
        import urllib.request

        data = body if body is None or isinstance(body, bytes) else (
            body.encode("utf-8") if isinstance(body, str)
            else json.dumps(body).encode("utf-8"))
        request = urllib.request.Request(self.url + path.lstrip("/"), data=data,
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def get(self, path):
        return self.request(path)

    def post(self, path, body):
        return self.request(path, body, method="POST")

    def raw(self, path):
        """`(status, headers, bytes)` of a GET."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(self.url + path.lstrip("/"),
                                        timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()
