"""Which Keras backend runs, and TensorFlow where only TensorFlow will do.

keras-ordered runs on every Keras 3 backend (TensorFlow, the default and
the serving path; JAX; PyTorch). A few things are TensorFlow's alone:
SavedModel export for TF Serving, `tf.distribute`, the TF-tuned CPU
recurrences and the `tf.data` pipelines. Those modules import TensorFlow
through `require_tensorflow`, when they are used, so that the package
imports and runs without TensorFlow installed; without it, they stop with
one line that names what to install.

Example:

    from keras_ordered import backend

    if backend.is_tensorflow():
        tf = backend.require_tensorflow("the TF-tuned ON-LSTM loop")
"""

import contextlib
import importlib
import importlib.util
import sys

import keras

from keras_ordered import _environment
from keras_ordered import _quiet



class TensorFlowMissingError(ImportError):
    """Raised when a TensorFlow-only feature is used without TensorFlow.
    Its message is one line; the command prints it as it is."""

    one_line = True


class WrongBackendError(ValueError):
    """Raised when a TensorFlow-only feature runs on another backend."""


def check_tensorflow_backend(feature):
    """Raises `WrongBackendError` (one line) unless Keras runs on TensorFlow.

    Args:
        feature: str, what needs the TensorFlow backend, for the message.
    """
    if not is_tensorflow():
        raise WrongBackendError(
            f"{feature} runs on the TensorFlow backend, and this process "
            f"runs {name()}: run it with KERAS_BACKEND=tensorflow (a .keras "
            "model saved on any backend loads there)."
        )


def name():
    """The running Keras backend's name: "tensorflow", "jax" or "torch"."""
    return keras.backend.backend()


def is_tensorflow():
    """Whether Keras runs on TensorFlow."""
    return keras.backend.backend() == "tensorflow"


def require_tensorflow(feature):
    """Imports and returns the `tensorflow` module for `feature`.

    Args:
        feature: str, what needs TensorFlow, for the message
            (e.g. "SavedModel export").

    Returns:
        The `tensorflow` module.

    Raises:
        TensorFlowMissingError: TensorFlow is not installed. Its message is
            one line: the feature, and the command that installs it.
    """
    try:
        if "tensorflow" not in sys.modules and _quiet.quiet_requested():
            # A recipe or command on another backend: TensorFlow's start-up
            # log silenced, as on TensorFlow (keras_ordered._quiet).
            return _quiet.import_tensorflow()
        return importlib.import_module("tensorflow")
    except ImportError as error:
        if getattr(error, "name", None) not in (None, "tensorflow"):
            raise
        raise TensorFlowMissingError(
            f"{feature} needs TensorFlow, which is not installed "
            f"(Keras backend: {name()}); install it with: "
            f"{_environment.install_hint('tensorflow')}"
        ) from None


class _TensorFlowOnUse:
    """Stands for the `tensorflow` module; imports it on first use."""

    def __init__(self, feature):
        self._feature = feature

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(require_tensorflow(self._feature), attribute)

    def __repr__(self):
        return f"<tensorflow, imported on use for {self._feature}>"


def tensorflow_on_use(feature):
    """A stand-in for the `tensorflow` module, for a module that is
    TensorFlow's alone (a TF training step, `tf.distribute`, `tf.data`):
    the module imports without TensorFlow, and TensorFlow is imported when
    an attribute is first read (`tf.GradientTape`), or
    `TensorFlowMissingError` names `feature` and what to install.

    Args:
        feature: str, what needs TensorFlow, for the message.

    Example:

        tf = backend.tensorflow_on_use("the carried-state training step")

        def step():
            with tf.GradientTape() as tape:  # TensorFlow imported here
                ...
    """
    return _TensorFlowOnUse(feature)


def replicas_in_sync():
    """The replicas of the current `tf.distribute` strategy on TensorFlow
    (1 outside a strategy); 1 on JAX and PyTorch, where a batch sharded
    over devices (`keras.distribution.DataParallel`) is one array."""
    if not is_tensorflow():
        return 1
    tf = require_tensorflow("tf.distribute")
    return tf.distribute.get_strategy().num_replicas_in_sync


def has_float64():
    """Whether the backend computes in float64: not JAX unless
    `jax_enable_x64` is on (JAX then truncates float64 to float32)."""
    if name() != "jax":
        return True
    import jax

    return bool(jax.config.read("jax_enable_x64"))


def gpu_visible():
    """Whether the backend sees a GPU (TensorFlow's physical GPUs, JAX's
    devices, `torch.cuda`)."""
    if is_tensorflow():
        tf = require_tensorflow("listing GPUs")
        return bool(tf.config.list_physical_devices("GPU"))
    if name() == "jax":
        import jax

        return any(device.platform == "gpu" for device in jax.devices())
    if name() == "torch":
        import torch

        return bool(torch.cuda.is_available())
    return False


def device_name():
    """The device the backend computes on, in words, for the benchmarks'
    records: its GPU (`"gpu: NVIDIA H100 80GB HBM3"`) or the CPU
    (`"cpu: " + keras_ordered._cpu.describe_cpu()`)."""
    if is_tensorflow():
        tf = require_tensorflow("naming the device")
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            details = tf.config.experimental.get_device_details(gpus[0])
            return f"gpu: {details.get('device_name', gpus[0].name)}"
    elif name() == "jax":
        import jax

        device = jax.devices()[0]
        if device.platform != "cpu":
            return f"{device.platform}: {device.device_kind}"
    elif name() == "torch":
        import torch

        if torch.cuda.is_available():
            return f"gpu: {torch.cuda.get_device_name(0)}"
    from keras_ordered._cpu import describe_cpu

    return f"cpu: {describe_cpu()}"


@contextlib.contextmanager
def float32_matmuls(tf32=False):
    """Matrix products and convolutions of float32 inputs in float32
    arithmetic, on the backend that runs, while the context is open.

    On NVIDIA GPUs since Ampere (A100, H100, H200) the backends compute
    float32 products in TensorFloat-32 by default (a 10-bit mantissa):
    JAX (`jax_default_matmul_precision`), TensorFlow
    (`tf.config.experimental.enable_tensor_float_32_execution`) and
    PyTorch's cuDNN convolutions (`torch.backends.cudnn.allow_tf32`;
    `torch.backends.cuda.matmul.allow_tf32` is off by default). The
    papers' code ran in true float32, and PRPN's hard gates turn rounding
    differences into other trees, so a float32 run asks for float32
    products. On a CPU the setting changes nothing (its products are
    float32 either way). The previous settings come back on exit.

    Args:
        tf32: bool, leave the backend's defaults (TensorFloat-32 where the
            GPU has it): the recipes' `--tf32`, faster, not the official
            arithmetic.

    Example:

    ```python
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with keras_ordered.backend.float32_matmuls():
        # float32 products, whatever the backend and the GPU
        model.fit(np.zeros((4, 8)), np.zeros((4, 1)), verbose=0)
    ```
    """
    switch = None if tf32 else _matmul_precision_switch()
    if switch is None:
        yield
        return
    read, write, float32 = switch
    previous = read()
    write(float32)
    try:
        yield
    finally:
        write(previous)


def _matmul_precision_switch():
    """`(read, write, float32)` of the running backend's product-precision
    setting (its getter, its setter, and the value meaning true float32
    products), or None on a backend without one."""
    backend_name = name()
    if backend_name == "jax":
        import jax

        return (lambda: jax.config.jax_default_matmul_precision,
                lambda value: jax.config.update(
                    "jax_default_matmul_precision", value),
                "float32")
    if backend_name == "torch":
        import torch

        flags = (torch.backends.cuda.matmul, torch.backends.cudnn)

        def write(values):
            for flag, value in zip(flags, values):
                flag.allow_tf32 = value

        return (lambda: [flag.allow_tf32 for flag in flags], write,
                [False] * len(flags))
    if backend_name == "tensorflow":
        tf = require_tensorflow("float32 matrix products")
        experimental = tf.config.experimental
        return (experimental.tensor_float_32_execution_enabled,
                experimental.enable_tensor_float_32_execution, False)
    return None


def compiled_inference(owner, key, function, relaxed_shapes=False):
    """`function` (an inference pass of the Keras layer or model `owner`
    that writes no variable), compiled for the backend.

    - TensorFlow: a `tf.function` (shapes relaxed after the first
      retrace, so batches of other widths reuse one graph; with
      `owner.jit_compile = True`, an XLA program per input shape, see
      `uses_xla`), traced
      without AutoGraph: `function` runs under `jax.jit` too, so it holds
      no Python control flow on tensor values for AutoGraph to convert,
      and converting the model's code took about half of the first call
      (0.9 s against 0.4 s for a `tiny` ON-LSTM's distances on the AMX
      Xeon).
    - JAX: a pure function of the values of `owner.variables` and of the
      arguments, compiled with `jax.jit` once per input shape.
    - PyTorch: `function` as it is.

    Run eagerly instead, each recurrent loop is dispatched op by op on
    TensorFlow and traced and compiled again on every call on JAX. The
    compiled function is kept on `owner` under `key`.

    Args:
        owner: the layer or model whose variables `function` reads.
        key: str, names this function among the owner's.
        function: callable of tensors or lists of tensors, returning them.
        relaxed_shapes: bool; on TensorFlow, trace once, at the first call,
            with the first dimension of every argument and every dimension
            of integer arguments (token ids) unknown, so that batches of
            other sizes and widths reuse that graph without the retrace
            that relaxes them (0.3 s for a `tiny` ON-LSTM's distances, more
            for larger models). For functions whose arguments vary only so.

    Returns:
        A callable with `function`'s arguments and results.

    Example:

        forward = backend.compiled_inference(
            model, "forward", lambda x: model(x, training=False))
        outputs = forward(keras.ops.convert_to_tensor(inputs))
    """
    if name() == "torch":
        return function
    # On the owner, out of Keras' attribute tracking: the compiled function
    # refers to the owner, and goes with it.
    compiled = owner.__dict__.get("_compiled_inference")
    if compiled is None:
        compiled = {}
        object.__setattr__(owner, "_compiled_inference", compiled)
    xla = uses_xla(owner)
    if (key, xla) not in compiled:
        compiled[key, xla] = (
            _jax_compiled(owner, function) if name() == "jax"
            else _tf_compiled(function, relaxed_shapes, xla))
    return compiled[key, xla]


def _tf_compiled(function, relaxed_shapes, xla=False):
    tf = require_tensorflow("compiled inference")
    if not relaxed_shapes:
        return tf.function(function, reduce_retracing=True, autograph=False,
                           jit_compile=xla)
    return _RelaxedFunction(tf, function, xla)


class _RelaxedFunction:
    """A `tf.function` whose input signature, made from the arguments of
    its first call, leaves unknown the first dimension of every argument
    and every dimension of integer ones."""

    def __init__(self, tf, function, xla=False):
        self._tf = tf
        self._function = function
        self._xla = xla
        self.traced = None

    def _spec(self, value):
        value = self._tf.convert_to_tensor(value)
        shape = value.shape.as_list()
        if value.dtype.is_integer:
            shape = [None] * len(shape)
        elif shape:
            shape = [None] + shape[1:]
        return self._tf.TensorSpec(shape, value.dtype)

    def __call__(self, *args):
        if self.traced is None:
            self.traced = self._tf.function(
                self._function, autograph=False, jit_compile=self._xla,
                input_signature=self._tf.nest.map_structure(self._spec, args))
        return self.traced(*args)


def compiled_width(width, multiple, model=None):
    """The width to pad a batch of `width` steps to before a compiled
    inference pass: where a program is compiled per input shape (JAX, or
    `model` compiled with XLA, see `compiles_per_shape`), `width` rounded
    up to a multiple of `multiple` (a few programs serve every width);
    elsewhere `width` itself.

    Args:
        width: int, the batch's own width.
        multiple: int, the step of the widths compiled per shape.
        model: optional, the model that runs the pass.

    Returns:
        int, at least `width`.

    Example:

        width = backend.compiled_width(13, 16)  # 16 on JAX, else 13
    """
    if compiles_per_shape(model):
        return -(-width // multiple) * multiple
    return width


def compiles_per_shape(model=None):
    """Whether inference compiles a program per input shape: on JAX, and
    on TensorFlow for a `model` compiled with XLA (`uses_xla`). A caller
    then keeps its batches' shapes few (`compiled_width`, full
    batches)."""
    return name() == "jax" or uses_xla(model)


def uses_xla(model):
    """Whether `model`'s inference passes are XLA programs on TensorFlow:
    its Keras `jit_compile` is true (`model.jit_compile = True`, or
    `model.compile(jit_compile=True)`; Keras' `"auto"` is false on a
    machine without an accelerator). On JAX every pass is one; PyTorch
    has none.

    XLA fuses the span head's elementwise work and its CKY's: a small
    span student parses faster on the CPU, with the same trees, after
    compiling one program per batch shape (seconds each: for many
    sentences, not one); a large one or a language model, padded to the
    few shapes, may parse slower.
    """
    if name() != "tensorflow" or not isinstance(model, keras.Model):
        return False
    return model.jit_compile is True


def _jax_compiled(owner, function):
    import jax

    def pure(values, args):
        mapping = list(zip(owner.variables, values))
        with keras.StatelessScope(state_mapping=mapping):
            return function(*args)

    jitted = jax.jit(pure)
    return lambda *args: jitted([v.value for v in owner.variables], args)


def import_installed_tensorflow():
    """On another backend, imports TensorFlow if it is installed, with its
    start-up log silenced when a recipe asked for quiet (Keras imports it
    anyway, loudly, for `keras.utils.set_random_seed` and TensorBoard).
    Nothing happens on TensorFlow or without it."""
    if is_tensorflow() or "tensorflow" in sys.modules:
        return
    if importlib.util.find_spec("tensorflow") is None:
        return
    if _quiet.quiet_requested():
        _quiet.import_tensorflow()


def tensorflow_installed():
    """Whether TensorFlow can be imported (whatever the backend)."""
    return ("tensorflow" in sys.modules
            or importlib.util.find_spec("tensorflow") is not None)

