"""The shipped models on every backend: loaded with `from_preset` on JAX and
PyTorch (in fresh processes), they give TensorFlow's distances to 1e-5 and
the same trees on 500 WSJ-sample sentences (the first 500 of the sample,
all development sentences of wsj_0001-0099)."""

import numpy as np
import pytest

from conftest import require_data
from parity import run_on_backend

pytestmark = pytest.mark.slow

SENTENCES = 500

READ = '''
from keras_ordered.datasets.treebank import load_treebank_files
from keras_ordered.parsing.evaluate import model_distances
from keras_ordered.parsing.trees import distances_to_tree
import glob
files = sorted(glob.glob(ARGS["treebank"] + "/*.mrg"))
records = load_treebank_files(files)[:ARGS["count"]]
cls = {"PRPNLanguageModel": keras_ordered.models.PRPNLanguageModel,
       "ONLSTMLanguageModel": keras_ordered.models.ONLSTMLanguageModel}
model = cls[ARGS["class"]].from_preset(ARGS["name"])
# One forward pass; the trees are built from its distances, as
# `model_trees` builds them.
distances = model_distances(records, model)
for name in distances:
    flat = np.concatenate([np.asarray(d, "float32") for d in distances[name]])
    save(**{"distances:" + name: flat})
    brackets = [str(distances_to_tree(list(r.words), d))
                for r, d in zip(records, distances[name])]
    save(**{"trees:" + name: np.array(brackets)})
'''


def _shipped():
    from keras_ordered import shipped

    return [(name, shipped.shipped_card(name)["class"])
            for name in shipped.shipped_names()]


_TENSORFLOW = {}


def _on(backend, name, cls):
    args = dict(treebank=require_data("wsj_sample", "mrg"), count=SENTENCES,
                name=name, **{"class": cls})
    if backend == "tensorflow":
        # Computed once for both backends' tests.
        if name not in _TENSORFLOW:
            _TENSORFLOW[name] = run_on_backend(backend, READ, **args)
        return _TENSORFLOW[name]
    return run_on_backend(backend, READ, **args)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_shipped_models_give_tensorflows_distances_and_trees(backend):
    for name, cls in _shipped():
        expected = _on("tensorflow", name, cls)
        got = _on(backend, name, cls)
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
