"""The parsing callback logs F1 per distance while a language model trains."""

import os

import numpy as np
import nltk
import pytest

from keras_ordered.datasets.treebank import make_sentence
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.training import BPTTBatches
from keras_ordered.training import ParsingEvaluation

GOLD = [
    "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))",
    "(S (NP (NNS dogs)) (VP (VBP bark) (ADVP (RB loudly))))",
]


@pytest.mark.slow
def test_callback_logs_f1_scalars_and_trees(tmp_path):
    records = [make_sentence(nltk.Tree.fromstring(t)) for t in GOLD]
    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "dogs", "bark"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary, seed=0)
    model.configure_bptt(2, 2)
    model.compile(optimizer="sgd")
    callback = ParsingEvaluation(records, log_dir=str(tmp_path), max_sentences=5)
    stream = np.tile(np.arange(9), 20)
    history = model.fit(BPTTBatches(stream, 2, 6).dataset(), epochs=2, verbose=0,
                        callbacks=[callback], shuffle=False)
    for name in model.distance_names:
        values = history.history[f"parse_f1/{name}"]
        assert len(values) == 2 and all(0 <= v <= 100 for v in values)
    # The F1 logged is the F1 of the trees the model's distances give.
    again = callback.evaluate()
    assert again[model.default_distance]["sentence_f1"] == \
        history.history[f"parse_f1/{model.default_distance}"][-1]
    events = os.listdir(os.path.join(tmp_path, "parsing"))
    assert events and os.path.getsize(os.path.join(tmp_path, "parsing", events[0])) > 0
