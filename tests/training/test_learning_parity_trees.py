"""benchmarks/learning_parity.py --treebank: the trees of a parity run,
scored on the development split only."""

import pytest

from conftest import load_benchmark

DEV = ("((S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
       "(NN mat))))))\n((S (NP (DT a) (NN dog)) (VP (VBD ran))))\n")
TEST = "((S (NP (DT the) (NN dog)) (VP (VBD sat))))\n" * 5


def _load_script():
    return load_benchmark("learning_parity")


def _treebank(folder, test_text):
    folder.mkdir()
    (folder / "wsj_0001.mrg").write_text(DEV)
    (folder / "wsj_0100.mrg").write_text(test_text)
    return str(folder)


def test_dev_tree_scores_read_the_development_split_only(tmp_path):
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.models import ONLSTMLanguageModel
    from keras_ordered.parsing import evaluate_model

    script = _load_script()
    vocabulary = ["<eos>", "<unk>", "the", "a", "cat", "dog", "sat", "ran",
                  "on", "mat"]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary)
    one = script.dev_tree_scores(model, _treebank(tmp_path / "one", TEST))
    # Another test split changes nothing: it is never read.
    other = script.dev_tree_scores(
        model, _treebank(tmp_path / "two", "((S (NN x)))\n"))
    assert one == other
    assert one["sentences"] == 2
    assert set(one["sentence_f1"]) == set(model.distance_names)
    dev = load_treebank(str(tmp_path / "one"), fileids=r"wsj_0001\.mrg")
    expected = evaluate_model(dev, model)
    for name, f1 in one["sentence_f1"].items():
        assert f1 == pytest.approx(expected[name]["sentence_f1"], abs=0.01)
    # Right-branching on the two gold trees, counted by hand: "the cat sat
    # on the mat" has gold spans {0-2, 2-6, 3-6, 4-6}, right-branching
    # {1-6, 2-6, 3-6, 4-6}: 3 of 4 each way, F1 75; "a dog ran": gold
    # {0-2}, right-branching {1-3}: 0. The mean over sentences: 37.5.
    assert one["right_branching"] == pytest.approx(37.5)

