"""The TD-TreeLSTM family's layers pass the harness's standard checks on
every Keras backend (`KERAS_BACKEND=tensorflow|jax|torch`): TopDownTreeLSTM
(both selections, with and without an action schedule) and
LeftDependentLSTM with a gapped mask (the layer-normalised LSTM pieces are
in test_layer_contracts.py, which runs on every backend); the TD-TreeLSTM modules import TensorFlow only where
they use it; off TensorFlow, `fit` stops with one line.

(tests/layers/test_layer_contracts.py checks every public layer, on
every backend; tests/backends/test_tdtreelstm_backends.py compares the
numbers across backends.)
"""

import ast
import os

import keras
import numpy as np
import pytest

from keras_ordered.layers import LeftDependentLSTM
from keras_ordered.layers import TopDownTreeLSTM
from keras_ordered.models.tdtreelstm.inputs import action_schedule

pytestmark = pytest.mark.backends

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.normal(size=shape).astype("float32")


ACTIONS = np.array([[1, 0, 3, 2, 1], [1, 1, 0, 2, 3], [1, 0, 1, 3, 2]])
SOURCES = np.array([[0, 1, 1, 2, 0], [0, 0, 2, 3, 1], [0, 1, 2, 3, 4]])
# The third tree has 3 steps: the schedule leaves its padding out.
SCHEDULE = action_schedule(ACTIONS, SOURCES, np.array([5, 4, 3]), rows=2)

CASES = [
    ("top_down_gates", TopDownTreeLSTM,
     dict(units=4, num_layers=2, context_dim=3),
     [normal(3, 5, 6), ACTIONS, SOURCES, normal(3, 5, 3)],
     dict(build=False, expected_output_shape=(3, 5, 4),
          expected_num_trainable_weights=7)),
    ("top_down_states", TopDownTreeLSTM,
     dict(units=4, num_layers=2, selection="states"),
     [normal(3, 5, 6), ACTIONS, SOURCES],
     dict(build=False, expected_output_shape=(3, 5, 4),
          expected_num_trainable_weights=6)),
    ("top_down_schedule", TopDownTreeLSTM,
     dict(units=3, num_layers=2, context_dim=2),
     [normal(3, 5, 6), ACTIONS, SOURCES, normal(3, 5, 2)],
     dict(build=False, expected_output_shape=[(3, 5, 3)] * 4,
          call_kwargs={"schedule": SCHEDULE, "return_states": True})),
    ("left_dependent", LeftDependentLSTM, dict(units=3, num_layers=2),
     [normal(2, 4, 3, 5), np.array([[[1, 1, 0]] * 4, [[0, 1, 1]] * 4], bool)],
     dict(build=False, expected_output_shape=(2, 4, 3),
          expected_num_trainable_weights=6)),
    # StdLayerNormalization and LayerNormLSTMCell: test_layer_contracts.py,
    # which runs on every backend too.
]


@pytest.mark.parametrize("cls, init_kwargs, input_data, checks",
                         [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_layer_passes_the_standard_checks(harness, cls, init_kwargs,
                                          input_data, checks):
    harness.run_layer_test(cls, init_kwargs, input_data, **checks)


def test_schedule_gives_the_generation_order_states_and_the_root_at_padding():
    layer = TopDownTreeLSTM(4, num_layers=2, context_dim=3, initial_value=0.3)
    inputs = [normal(3, 5, 6), ACTIONS, SOURCES, normal(3, 5, 3)]
    ordered = layer(inputs, return_states=True)
    scheduled = layer(inputs, return_states=True, schedule=SCHEDULE)
    real = (np.arange(5)[None] < np.array([5, 4, 3])[:, None])[..., None]
    for a, b in zip(ordered, scheduled):
        a, b = keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b)
        np.testing.assert_allclose(b * real, a * real, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b[~real[..., 0]], 0.3, rtol=1e-6)


def test_tdtreelstm_modules_import_tensorflow_only_inside_functions():
    # A module-level `import tensorflow` would make them unimportable
    # without TensorFlow (JAX or PyTorch installs).
    paths = [os.path.join(REPO, "keras_ordered", "layers", "tree_lstm.py")]
    folder = os.path.join(REPO, "keras_ordered", "models", "tdtreelstm")
    paths += [os.path.join(folder, name) for name in sorted(os.listdir(folder))
              if name.endswith(".py")]
    for path in paths:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "tensorflow" for n in names), (
                f"{os.path.relpath(path, REPO)} imports TensorFlow at line "
                f"{node.lineno}")


@pytest.mark.skipif(keras.backend.backend() == "tensorflow",
                    reason="fit and evaluate run on TensorFlow")
@pytest.mark.trains
def test_fit_and_evaluate_off_tensorflow_stop_with_one_line():
    from harness import tiny_tdtreelstm_lm
    from keras_ordered.models.tdtreelstm.inputs import batch_arrays

    model = tiny_tdtreelstm_lm()
    arrays, _ = batch_arrays(model.encode([(["the", "cat"], [2, 0])]),
                             left_context=False, schedule_rows=32)
    model.compile("sgd")
    for run, what in [
            (lambda: model.evaluate(((a,) for a in [arrays]), steps=1,
                                    verbose=0), "evaluate()"),
            (lambda: model.fit(((a,) for a in [arrays]), steps_per_epoch=1,
                               verbose=0), "training with fit()")]:
        with pytest.raises(NotImplementedError) as error:
            run()
        message = str(error.value)
        assert "\n" not in message
        assert f"{what} needs the TensorFlow backend" in message
        assert keras.backend.backend() in message
