"""The TD-TreeLSTM gives TensorFlow's numbers on JAX and PyTorch.

A TD-TreeLSTM (LdTreeLSTM, softmax) and an NCE model are built on
TensorFlow and saved as `.keras` files; loaded on JAX and on PyTorch (each
in a fresh process, `parity.run_on_backend`), they must give the same
per-step log-probabilities (generation order and action schedules), hidden
states, objective and its gradients, NCE loss, `score` and the numbers of
`models/tdtreelstm/evaluation.py` (perplexity, tree preference, completion
accuracy), to 1e-5 in float32. `TopDownTreeLSTM` (both selections, with a
schedule) and `LeftDependentLSTM` given TensorFlow's weights must give the
same outputs and weight gradients.

Runs on TensorFlow (the reference); slow (fresh processes, JAX compiling).
"""


import keras
import numpy as np
import pytest

from harness import TREE_WORDS
from harness import tiny_tdtreelstm_lm
from parity import run_here
from parity import run_on_backend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                       reason="TensorFlow is the reference"),
]

# (words, heads, tags); the tags serve the completion questions.
TREES = [
    (["the", "cat", "sat", "on", "the", "mat"], [2, 3, 0, 3, 6, 4],
     ["DT", "NN", "VBD", "IN", "DT", "NN"]),
    (["dog"], [0], ["NN"]),
    (["a", "dog", "ran", "home", "."], [2, 3, 0, 3, 3],
     ["DT", "NN", "VBD", "NN", "."]),
    (["the", "the", "cat", "sat", "on", "a", "mat", "home", "."],
     [3, 3, 4, 0, 4, 7, 5, 4, 4],
     ["DT", "DT", "NN", "VBD", "IN", "DT", "NN", "NN", "."]),
    (["ran", "ran", "ran"], [0, 1, 2], ["VBD", "VBD", "VBD"]),
]
BACKENDS = ["jax", "torch"]
TOLERANCE = dict(rtol=1e-5, atol=1e-5)

# Runs on every backend (here in-process on TensorFlow, elsewhere through
# `run_on_backend`): sees keras, np, keras_ordered, ARGS and save(**arrays).
CODE = '''
import types

from harness import gradients
from keras_ordered.layers import LeftDependentLSTM
from keras_ordered.layers import TopDownTreeLSTM
from keras_ordered.models.tdtreelstm import evaluation
from keras_ordered.models.tdtreelstm import nce
from keras_ordered.models.tdtreelstm.inputs import batch_arrays

ops = keras.ops
trees = [types.SimpleNamespace(words=w, heads=tuple(h), tags=t)
         for w, h, t in ARGS["trees"]]
pairs = [(t.words, t.heads) for t in trees]

for name in ("softmax", "nce"):
    model = keras.saving.load_model(ARGS[name])
    encoded = model.encode(pairs)
    for rows in (None, 32, 2):  # generation order, schedules
        arrays, _ = batch_arrays(encoded, left_context=model.ld,
                                 schedule_rows=rows)
        inputs = {k: ops.convert_to_tensor(v) for k, v in arrays.items()}
        save(**{f"{name}_log_probs_{rows}": model(inputs)})
    hidden = model.hidden_states(inputs)
    save(**{f"{name}_hidden": hidden})

    def total():
        return model.objective(inputs, training=False)[0]

    save(**{f"{name}_objective": total()})
    grads = gradients(total, model.trainable_weights)
    # (No gradient reaches ln Z in evaluation: None on TensorFlow.)
    save(**{f"{name}_grad_{i}": np.zeros(w.shape) if g is None else g
            for i, (w, g) in enumerate(zip(model.trainable_weights, grads))})
    scores = model.score(pairs, batch_size=2)
    save(**{f"{name}_score": np.concatenate(
        [s["word_log_probs"] for s in scores])})
    if name == "nce":
        flat = ops.reshape(hidden, (-1, model.units))
        targets = np.reshape(arrays["targets"], (-1,))
        noise = np.random.default_rng(0).integers(
            3, model.vocabulary_size, (len(targets), 5)).astype("int32")
        save(nce_loss=nce.nce_loss(
            flat, ops.convert_to_tensor(targets), ops.convert_to_tensor(noise),
            model.output_embedding, model.log_z, model.noise_log_probs))
    counts, tags = evaluation.training_statistics(trees, model.vocabulary)
    questions = evaluation.completion_questions(
        trees, model.vocabulary, counts, tags, choices=3, min_count=1)
    save(**{
        f"{name}_perplexity": np.array(evaluation.perplexity(model, trees)),
        f"{name}_sequential": np.array(
            evaluation.perplexity(model, trees, sequential=True)),
        f"{name}_preference": np.array(evaluation.tree_preference(model, trees)),
        f"{name}_completion": np.array(
            [len(questions),
             evaluation.completion_accuracy(model, trees, questions)]),
    })

data = dict(np.load(ARGS["layer_data"]))
td_inputs = [data["x"], data["actions"], data["sources"], data["context"]]
for selection in ("gates", "states"):
    config = dict(ARGS["top_down"], selection=selection)
    layer = TopDownTreeLSTM.from_config(config)
    layer(td_inputs)
    layer.set_weights([data[f"top_down_{i}"]
                       for i in range(len(layer.weights))])
    for key, schedule in (("ordered", None), ("scheduled", data["schedule"])):
        states = layer(td_inputs, return_states=True, schedule=schedule)
        save(**{f"top_down_{selection}_{key}_{i}": s
                for i, s in enumerate(states)})
        grads = gradients(
            lambda: ops.sum(layer(td_inputs, schedule=schedule)
                            * ops.convert_to_tensor(data["projection"])),
            layer.trainable_weights)
        save(**{f"top_down_{selection}_{key}_grad_{i}": g
                for i, g in enumerate(grads)})
layer = LeftDependentLSTM.from_config(ARGS["left_dependent"])
ld_inputs = [data["embedded"], data["mask"]]
layer(ld_inputs)
layer.set_weights([data[f"left_dependent_{i}"]
                   for i in range(len(layer.weights))])
save(left_dependent=layer(ld_inputs))
grads = gradients(lambda: ops.sum(layer(ld_inputs) ** 2),
                  layer.trainable_weights)
save(**{f"left_dependent_grad_{i}": g for i, g in enumerate(grads)})
'''


def _layer_data(folder):
    """TopDownTreeLSTM and LeftDependentLSTM built on TensorFlow: their
    configs, and their weights and inputs in an .npz file."""
    from keras_ordered.layers import LeftDependentLSTM
    from keras_ordered.layers import TopDownTreeLSTM
    from keras_ordered.models.tdtreelstm.inputs import action_schedule

    rng = np.random.default_rng(0)
    actions = np.array([[1, 0, 3, 2, 1, 0], [1, 1, 0, 2, 3, 0],
                        [1, 0, 1, 3, 2, 2]], "int32")
    sources = np.array([[0, 1, 1, 2, 0, 0], [0, 0, 2, 3, 1, 0],
                        [0, 1, 2, 3, 4, 5]], "int32")
    data = {
        "x": rng.normal(size=(3, 6, 5)).astype("float32"),
        "actions": actions, "sources": sources,
        "context": rng.normal(size=(3, 6, 2)).astype("float32"),
        # The second tree has 4 steps, the first 5: padding in both.
        "schedule": action_schedule(actions, sources, [5, 4, 6], rows=2),
        "projection": rng.normal(size=(3, 6, 4)).astype("float32"),
        "embedded": rng.normal(size=(2, 3, 4, 5)).astype("float32"),
        "mask": np.array([[[0, 1, 1, 1]] * 3, [[0, 0, 0, 1]] * 3], bool),
    }
    top_down = TopDownTreeLSTM(4, num_layers=2, context_dim=2,
                               initial_value=0.2,
                               kernel_initializer=keras.initializers.RandomUniform(-0.6, 0.6, seed=1),
                               recurrent_initializer=keras.initializers.RandomUniform(-0.6, 0.6, seed=2),
                               bias_initializer=keras.initializers.RandomUniform(-0.6, 0.6, seed=3))
    top_down([data["x"], actions, sources, data["context"]])
    left = LeftDependentLSTM(3, num_layers=2)
    left([data["embedded"], data["mask"]])
    for name, layer in (("top_down", top_down), ("left_dependent", left)):
        for i, weight in enumerate(layer.get_weights()):
            data[f"{name}_{i}"] = weight
    path = str(folder / "layers.npz")
    np.savez(path, **data)
    return {"layer_data": path,
            "top_down": top_down.get_config(),
            "left_dependent": left.get_config()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """`(args, TensorFlow's arrays)`: the saved models and layers, and the
    numbers CODE gives with them on TensorFlow."""
    folder = tmp_path_factory.mktemp("tdtreelstm_parity")
    args = {"trees": TREES}
    softmax = tiny_tdtreelstm_lm(embedding_dim=6, units=5, num_layers=2,
                                 ld=True, ld_units=4, init_range=0.5, seed=3)
    noise = tiny_tdtreelstm_lm(embedding_dim=5, units=4, ld=True,
                               loss="nce", init_range=0.5, seed=4,
                               unigram_counts=np.arange(len(TREE_WORDS) + 3) % 4)
    for name, model in (("softmax", softmax), ("nce", noise)):
        path = str(folder / f"{name}.keras")
        model.save(path)
        args[name] = path
    args.update(_layer_data(folder))
    return args, run_here(CODE, **args)


@pytest.fixture(scope="module")
def other_backends(reference):
    """The arrays CODE gives on each other backend (one process each, run
    when first asked for)."""
    args = reference[0]
    cache = {}

    def get(backend):
        if backend not in cache:
            cache[backend] = run_on_backend(backend, CODE, **args)
        return cache[backend]

    return get


def _assert_same(expected, got, prefixes, backend):
    keys = [k for k in expected if k.startswith(prefixes)]
    assert keys
    for key in keys:
        assert key in got, f"{backend} did not give {key}"
        np.testing.assert_allclose(
            got[key], expected[key], **TOLERANCE,
            err_msg=f"{key}: {backend} differs from TensorFlow")


@pytest.mark.parametrize("backend", BACKENDS)
def test_saved_model_gives_tensorflows_log_probs_and_gradients(
        reference, other_backends, backend):
    expected, got = reference[1], other_backends(backend)
    _assert_same(expected, got, (
        "softmax_log_probs", "nce_log_probs", "softmax_hidden", "nce_hidden",
        "softmax_objective", "nce_objective", "softmax_grad", "nce_grad",
        "softmax_score", "nce_score", "nce_loss"), backend)
    # The log-probabilities are real ones (0 only at padding).
    assert (expected["softmax_log_probs_32"] < 0).sum() == sum(
        len(t[0]) for t in TREES)


@pytest.mark.parametrize("backend", BACKENDS)
def test_evaluation_gives_tensorflows_scores(reference, other_backends,
                                             backend):
    expected, got = reference[1], other_backends(backend)
    _assert_same(expected, got, ("softmax_perplexity", "nce_perplexity",
                                 "softmax_sequential", "nce_sequential"),
                 backend)
    for key in ("softmax_preference", "nce_preference", "softmax_completion",
                "nce_completion"):
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
    assert expected["softmax_completion"][0] > 0  # some questions were asked


@pytest.mark.parametrize("backend", BACKENDS)
def test_layers_give_tensorflows_states_and_gradients(reference,
                                                      other_backends, backend):
    expected, got = reference[1], other_backends(backend)
    _assert_same(expected, got, ("top_down_", "left_dependent"), backend)
