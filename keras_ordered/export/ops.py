"""Which ops an exported graph uses, and whether TF Serving has them.

TF Serving's standard model server links the kernels of core TensorFlow
and of TensorFlow Text, nothing else: a graph holding a Python op
(`tf.py_function`), an op of another custom library, or a cuDNN-only
kernel (a GPU export of a cuDNN LSTM) loads in Python but fails to load,
or to run on CPU, in the server. `graph_op_types` lists the op types of a
traced function, its while-loop bodies and branches included (they live
in the function library), or of a whole SavedModel; `check_serving_ops`
checks them against `serving_op_allowlist()`.
"""

import inspect
import os

import tensorflow as tf

DENIED_OPS = frozenset({
    # Python callbacks: not in a C++ server.
    "PyFunc",
    "PyFuncStateless",
    "EagerPyFunc",
    # cuDNN-only recurrent kernels (no CPU kernel).
    "CudnnRNN",
    "CudnnRNNV2",
    "CudnnRNNV3",
    "CudnnRNNBackprop",
    "CudnnRNNBackpropV2",
    "CudnnRNNBackpropV3",
    "CudnnRNNCanonicalToParams",
    "CudnnRNNCanonicalToParamsV2",
    "CudnnRNNParamsSize",
    "CudnnRNNParamsToCanonical",
    "CudnnRNNParamsToCanonicalV2",
    # Debugging and host I/O that a served graph has no business running.
    "Print",
    "PrintV2",
    "WriteFile",
    "DebugIdentity",
    "DebugIdentityV2",
    "DebugIdentityV3",
})
"""Core op types refused in a served graph even though TensorFlow has them."""


def _core_ops():
    return {
        name for name in dir(tf.raw_ops) if not name.startswith("_")
    }


def tf_text_op_types():
    """The op types TensorFlow Text registers (empty if it is not installed).

    Returns:
        A frozenset of op type names, read from TF-Text's op libraries.
    """
    try:
        import tensorflow_text
    except ImportError:
        return frozenset()
    folder = os.path.join(
        os.path.dirname(tensorflow_text.__file__), "python", "ops"
    )
    from tensorflow.python.framework import op_def_registry

    names = set()
    for filename in sorted(os.listdir(folder)):
        if filename.endswith(".so"):
            # Already loaded by `import tensorflow_text`: this returns the
            # library's generated module, one attribute per op type, named
            # as the op (a namespaced op `TFText>Name` as `TFText_Name`).
            library = tf.load_op_library(os.path.join(folder, filename))
            for name in dir(library):
                if not (name[:1].isupper()
                        and inspect.isfunction(getattr(library, name))):
                    continue
                for op_type in (name, name.replace("_", ">", 1)):
                    if op_def_registry.get(op_type) is not None:
                        names.add(op_type)
    return frozenset(names)


def serving_op_allowlist(tf_text=True):
    """The op types TF Serving's standard model server runs.

    Every op of core TensorFlow (`tf.raw_ops`) except `DENIED_OPS`, plus
    TensorFlow Text's ops when `tf_text` is set. The function-call ops
    (`StatefulPartitionedCall`, `PartitionedCall`) and the control-flow
    ops of `tf.while_loop` / `tf.cond` are core ops, so they are allowed.

    Args:
        tf_text: whether to allow TensorFlow Text's ops.

    Returns:
        A frozenset of op type names.
    """
    allowed = _core_ops() - DENIED_OPS
    if tf_text:
        allowed |= tf_text_op_types()
    return frozenset(allowed)


def _graph_def_op_types(graph_def):
    names = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        names.update(node.op for node in function.node_def)
    return names


def graph_op_types(graph):
    """The op types of a traced graph, function library included.

    While-loop bodies and conditions, `tf.cond` branches and called
    functions are functions of the graph's library; their ops are listed
    too. The names of the library's functions themselves (the `op` of a
    node that calls one) are left out.

    Args:
        graph: a `tf.types.experimental.ConcreteFunction` (e.g.
            `fn.get_concrete_function(spec)` or a signature of a loaded
            SavedModel, `loaded.signatures["serving_default"]`), a loaded
            SavedModel (`tf.saved_model.load(path)`: all its signatures),
            a `tf.Graph`, a `GraphDef`, or the path of a SavedModel folder
            (then every MetaGraph and every function of the SavedModel,
            restore functions included).

    Returns:
        A sorted list of op type names.

    Example:

    ```python
    import tensorflow as tf
    from keras_ordered.export import graph_op_types
    fn = tf.function(lambda x: tf.strings.lower(x)).get_concrete_function(
        tf.TensorSpec([None], tf.string))
    assert "StringLower" in graph_op_types(fn)
    ```
    """
    if isinstance(graph, (str, os.PathLike)):
        return saved_model_op_types(graph)
    signatures = getattr(graph, "signatures", None)
    if signatures is not None and not hasattr(graph, "graph"):
        if not signatures:
            raise ValueError(
                "The loaded SavedModel has no signatures: pass its path "
                "instead, to list the ops of all its functions."
            )
        return sorted(set().union(
            *(graph_op_types(fn) for fn in signatures.values())
        ))
    if hasattr(graph, "graph") and hasattr(graph.graph, "as_graph_def"):
        graph = graph.graph
    if hasattr(graph, "as_graph_def"):
        graph = graph.as_graph_def()
    if not hasattr(graph, "library"):
        raise ValueError(
            "`graph` must be a ConcreteFunction, a tf.Graph, a GraphDef or "
            f"a SavedModel path, got {type(graph).__name__}."
        )
    names = _graph_def_op_types(graph)
    functions = {function.signature.name for function in graph.library.function}
    return sorted(names - functions)


def saved_model_op_types(path):
    """The op types of every graph and function of a SavedModel on disk.

    Reads `saved_model.pb` directly: nothing is loaded or run, and no
    package other than TensorFlow is needed.

    Args:
        path: the SavedModel folder (the one holding `saved_model.pb`).

    Returns:
        A sorted list of op type names.
    """
    from tensorflow.core.protobuf import saved_model_pb2

    filename = os.path.join(os.fspath(path), "saved_model.pb")
    if not os.path.isfile(filename):
        raise ValueError(
            f"No saved_model.pb in {os.fspath(path)!r}: pass the SavedModel "
            "folder (for TF Serving's layout, the numbered version folder)."
        )
    saved_model = saved_model_pb2.SavedModel()
    with open(filename, "rb") as f:
        saved_model.ParseFromString(f.read())
    names = set()
    functions = set()
    for meta_graph in saved_model.meta_graphs:
        names |= _graph_def_op_types(meta_graph.graph_def)
        functions |= {
            function.signature.name
            for function in meta_graph.graph_def.library.function
        }
    return sorted(names - functions)


def check_serving_ops(op_types, allowed=None, extra_allowed=()):
    """Raises if some op types are not in the serving allowlist.

    Args:
        op_types: iterable of op type names (see `graph_op_types`), or
            anything `graph_op_types` accepts.
        allowed: the allowlist; `serving_op_allowlist()` when `None`.
        extra_allowed: more op type names to allow.

    Returns:
        The sorted list of op types checked.

    Raises:
        ValueError: naming the op types TF Serving's model server lacks.
    """
    if not isinstance(op_types, (list, tuple, set, frozenset)):
        op_types = graph_op_types(op_types)
    allowed = set(serving_op_allowlist() if allowed is None else allowed)
    allowed |= set(extra_allowed)
    refused = sorted(set(op_types) - allowed)
    if refused:
        raise ValueError(
            f"The graph uses op types that TF Serving's standard model "
            f"server does not run: {refused}. Replace them with core "
            "TensorFlow or TensorFlow Text ops (no tf.py_function, no "
            "cuDNN-only kernels)."
        )
    return sorted(op_types)


__all__ = [
    "DENIED_OPS",
    "tf_text_op_types",
    "serving_op_allowlist",
    "graph_op_types",
    "saved_model_op_types",
    "check_serving_ops",
]
