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
    # Right-branching's F1 beside the distances', as TensorBoard scalars.
    import tensorflow as tf

    tags = {
        value.tag
        for event in tf.compat.v1.train.summary_iterator(
            os.path.join(tmp_path, "parsing", events[0]))
        for value in event.summary.value
    }
    assert {"sentence_f1/right-branching", "corpus_f1/right-branching",
            f"sentence_f1/{model.default_distance}"} <= tags


def test_callback_scores_right_branching_on_its_sentences(tmp_path):
    records = [make_sentence(nltk.Tree.fromstring(t)) for t in GOLD]
    callback = ParsingEvaluation(records, max_sentences=5)
    # By hand (the protocol drops punctuation; sentence-level F1 leaves
    # out the whole-sentence span, corpus-level counts it):
    # "the cat sat on the mat": gold (0,2) (2,6) (3,6) (4,6), right-branching
    # (1,6) (2,6) (3,6) (4,6): 3 of 4 shared, F1 75; "dogs bark loudly":
    # gold (1,3), right-branching (1,3): F1 100. Corpus: with the two
    # whole-sentence spans, 6 of 7 shared on each side.
    assert callback.right_branching["sentence_f1"] == pytest.approx(87.5)
    assert callback.right_branching["corpus_f1"] == pytest.approx(600 / 7)


def test_recipe_compares_the_final_trees_with_right_branching(capsys):
    from types import SimpleNamespace

    from keras_ordered.training.tasks.language_model import (
        _compare_with_right_branching,
    )

    baseline = {"sentence_f1": 40.0, "corpus_f1": 39.0}
    parsing = SimpleNamespace(right_branching=baseline, records=[None] * 200)
    model = SimpleNamespace(default_distance="parser/distance")
    for f1, beats in ((42.0, True), (41.9, False), (20.5, False)):
        results = {}
        scores = {"parser/distance": {"sentence_f1": f1},
                  "other": {"sentence_f1": 90.0}}
        _compare_with_right_branching(model, parsing, scores, results)
        captured = capsys.readouterr()
        assert results == {"parse_right_branching": baseline,
                           "beats_right_branching": beats}
        assert ("Right-branching on the same trees: sentence-level 40.0, "
                "corpus-level 39.0") in captured.out
        warned = ("Warning: the default distance (parser/distance) parses "
                  "these 200 sentences no better than right-branching "
                  f"trees ({f1:.1f} against 40.0")
        assert (warned in " ".join(captured.err.split())) == (not beats)


def _text_summaries(folder):
    import tensorflow as tf

    (event_file,) = os.listdir(folder)
    found = {}
    for event in tf.compat.v1.train.summary_iterator(
            os.path.join(folder, event_file)):
        for value in event.summary.value:
            if value.metadata.plugin_data.plugin_name == "text":
                text = tf.make_ndarray(value.tensor).item().decode("utf-8")
                found.setdefault(value.tag, []).append((event.step, text))
    return found


def test_callback_writes_the_first_trees_drawn_each_epoch(tmp_path,
                                                          monkeypatch):
    from keras_ordered.parsing import drawing
    from keras_ordered.parsing import model_trees

    records = [make_sentence(nltk.Tree.fromstring(t)) for t in GOLD]
    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "on", "mat", "dogs",
                  "bark"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary, seed=0)
    callback = ParsingEvaluation(records, log_dir=str(tmp_path),
                                 max_sentences=5, num_trees=1)
    callback.set_model(model)
    passes = []
    counted = model.sentence_distances

    def counting(sentences, **kwargs):
        passes.append(len(sentences))
        return counted(sentences, **kwargs)

    monkeypatch.setattr(model, "sentence_distances", counting)
    callback.on_train_begin()
    for epoch in range(2):
        callback.on_epoch_end(epoch, {})
    # The subset's pass, then the drawn trees' own pass (kept so that a
    # seed trains as it did before drawings existed), each epoch.
    assert passes == [2, 1, 2, 1]
    (tree,) = model_trees(records[:1], model)[model.default_distance]
    summaries = _text_summaries(os.path.join(tmp_path, "parsing"))
    assert [step for step, _ in summaries["trees"]] == [0, 1]
    text = summaries["trees"][-1][1]
    # The drawing in a Markdown code block, then the gold tree.
    assert text.startswith(f"induced ({model.default_distance}):\n\n```\n"
                           f"{drawing.draw_text(tree)}\n```\n\ngold: (S (NP")
    assert "dogs" not in text


def test_callback_reads_only_the_files_of_its_sentences(tmp_path,
                                                         monkeypatch):
    # A treebank folder: the first `max_sentences` of two words or more
    # (a one-word sentence skipped), the files after them never read.
    from keras_ordered.datasets import treebank

    texts = ["(S (NN one))\n(S (NP (DT the) (NN cat)) (VBD sat))",
             "(S (NNS dogs) (VBP bark))", "(S (DT a) (NN third))"]
    for number, text in enumerate(texts):
        (tmp_path / f"wsj_{number}.mrg").write_text(text + "\n")
    read = []
    real = treebank.read_trees

    def counting(reader, file_id):
        read.append(file_id)
        return real(reader, file_id)

    monkeypatch.setattr(treebank, "read_trees", counting)
    callback = ParsingEvaluation(str(tmp_path), max_sentences=2)
    callback.on_train_begin()
    assert [r.words for r in callback.records] == [
        ["the", "cat", "sat"], ["dogs", "bark"]]
    assert read == ["wsj_0.mrg", "wsj_1.mrg"]
