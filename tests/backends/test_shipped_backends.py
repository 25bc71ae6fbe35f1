"""The shipped models on every backend: loaded with `from_preset` on JAX and
PyTorch (in fresh processes), they give TensorFlow's distances to 1e-5 and
the same trees on 256 WSJ-sample sentences (the first 256 of the sample,
development sentences of wsj_0001-0099, 3 to 49 words long)."""

import numpy as np
import pytest

from conftest import require_data
from parity import run_here
from parity import run_on_backend

pytestmark = pytest.mark.slow

SENTENCES = 256
BATCH_SIZE = 256
"""Sentences per forward pass: one pass, so that JAX, which compiles a
program per batch shape, compiles one program per model (the span
student's CKY takes seconds to compile)."""

READ = '''
from keras_ordered.datasets.treebank import load_treebank_files
from keras_ordered.parsing.evaluate import model_distances
from keras_ordered.parsing.trees import distances_to_tree
from keras_ordered.parsing.trees import model_decoder
import glob
files = sorted(glob.glob(ARGS["treebank"] + "/*.mrg"))
records = load_treebank_files(files)[:ARGS["count"]]
cls = {"PRPNLanguageModel": keras_ordered.models.PRPNLanguageModel,
       "ONLSTMLanguageModel": keras_ordered.models.ONLSTMLanguageModel,
       "DistanceParser": keras_ordered.models.DistanceParser}
for shipped_name, class_name in ARGS["models"]:
    model = cls[class_name].from_preset(shipped_name)
    # One forward pass; the trees are built from its distances, as
    # `model_trees` builds them.
    distances = model_distances(records, model,
                                batch_size=ARGS["batch_size"])
    for name in distances:
        flat = np.concatenate([np.asarray(d, "float32")
                               for d in distances[name]])
        save(**{f"{shipped_name}:distances:{name}": flat})
        brackets = [str(distances_to_tree(list(r.words), d,
                                          decoder=model_decoder(model)))
                    for r, d in zip(records, distances[name])]
        save(**{f"{shipped_name}:trees:{name}": np.array(brackets)})
'''


def _shipped():
    from keras_ordered import shipped

    return [(name, shipped.shipped_card(name)["class"])
            for name in shipped.shipped_names()]


_TENSORFLOW = {}


def _on(backend):
    """`{shipped model: {key: array}}`, every shipped model read in one
    process of `backend`."""
    models = _shipped()
    args = dict(treebank=require_data("wsj_sample", "mrg"), count=SENTENCES,
                models=models, batch_size=BATCH_SIZE)
    if backend == "tensorflow":
        # Computed once for both backends' tests, in this process (the
        # tests' own backend): no process start.
        if _TENSORFLOW:
            return _TENSORFLOW
        arrays = run_here(READ, **args)
    else:
        arrays = run_on_backend(backend, READ, **args)
    result = {name: {key.split(":", 1)[1]: value
                     for key, value in arrays.items()
                     if key.split(":", 1)[0] == name}
              for name, _ in models}
    if backend == "tensorflow":
        _TENSORFLOW.update(result)
    return result


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_shipped_models_give_tensorflows_distances_and_trees(backend):
    expected_all, got_all = _on("tensorflow"), _on(backend)
    assert sorted(expected_all) == sorted(name for name, _ in _shipped())
    for name in expected_all:
        expected, got = expected_all[name], got_all[name]
        assert expected, name
        assert sorted(got) == sorted(expected), name
        for key in expected:
            if key.startswith("distances:"):
                assert expected[key].size > 5000, (name, key)
                np.testing.assert_allclose(
                    got[key], expected[key], atol=1e-5, rtol=0,
                    err_msg=f"{name} {key} on {backend}")
            else:
                assert len(expected[key]) == SENTENCES
                differ = [i for i, (a, b) in enumerate(
                    zip(expected[key], got[key])) if a != b]
                assert not differ, (
                    f"{name} {key} on {backend}: {len(differ)} trees differ, "
                    f"the first: {expected[key][differ[0]]} / "
                    f"{got[key][differ[0]]}")
