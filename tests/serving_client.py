"""A deployment's client, for the export tests: a fresh Python process that
imports only TensorFlow (and TF-Text, whose ops TF Serving's model server
has), with `keras_ordered` made unimportable, loads SavedModels and calls
their signatures.

`serve_in_fresh_process` returns, for each SavedModel path, each
signature's outputs as lists, and under `"modules"` the Keras or
keras_ordered modules that loading and serving imported beyond those
`import tensorflow` itself loads (TF 2.21 imports `keras`): a client that
needs none of the package gets `[]`.
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
            for name in request["signatures"]
        }
    result["modules"] = sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("keras", "keras_ordered", "tf_keras")
        and m not in before
    )
    print(json.dumps(result, default=lambda b: b.decode("utf-8")))
    """
)


def serve_in_fresh_process(paths, inputs, signatures, timeout=300):
    """Calls `signatures` of each SavedModel in `paths` on `inputs` (a list
    of str) in a new process; returns the decoded JSON result."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    request = {"paths": list(paths), "inputs": list(inputs),
               "signatures": list(signatures)}
    done = subprocess.run(
        [sys.executable, "-c", CLIENT], input=json.dumps(request),
        capture_output=True, text=True, timeout=timeout, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
