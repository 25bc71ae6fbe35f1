"""The trained models shipped in saved_models/: load, match the code, and
are worth what their cards say."""

import json
import os
import re
import zipfile

import pytest

from conftest import REPO
from conftest import require_data
from keras_ordered import saving
from keras_ordered import shipped
from keras_ordered_cli import main
from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS as SPLITS
from keras_ordered.models import DistanceParser
from keras_ordered.models import ONLSTMLanguageModel
from keras_ordered.models import PRPNLanguageModel

CLASSES = {
    "DistanceParser": DistanceParser,
    "ONLSTMLanguageModel": ONLSTMLanguageModel,
    "PRPNLanguageModel": PRPNLanguageModel,
}
NAMES = shipped.shipped_names()


def test_the_shipped_models_are_there():
    assert shipped.saved_models_dir() == os.path.join(REPO, "saved_models")
    assert {"prpn_ptb_quick", "onlstm_ptb_small"} <= set(NAMES)
    assert shipped.DEFAULT_PARSER in NAMES
    for name in NAMES:
        path = shipped.shipped_model_path(name)
        assert os.path.getsize(path) < 25e6, f"{name} is over 25 MB"
        card = shipped.shipped_card(name)
        assert card["name"] == name
        # The card's size is the file's.
        assert card["megabytes"] == round(os.path.getsize(path) / 1e6, 1), name
        assert os.path.isfile(os.path.join(os.path.dirname(path), "README.md"))
        # Stored compressed, as make_card.py writes them
        # (keras_ordered.saving.compressed_copy).
        with zipfile.ZipFile(path) as archive:
            assert {i.compress_type for i in archive.infolist()} == {
                zipfile.ZIP_DEFLATED}, f"{name} is stored uncompressed"
    total = sum(os.path.getsize(os.path.join(folder, f))
                for folder, _, files in os.walk(shipped.saved_models_dir())
                for f in files if "__pycache__" not in folder)
    assert total < 100e6, f"saved_models/ holds {total / 1e6:.1f} MB"


@pytest.mark.parametrize("name", NAMES)
def test_shipped_model_matches_the_current_code_and_its_preset(name):
    card = shipped.shipped_card(name)
    cls = CLASSES[card["class"]]
    model = cls.from_preset(name)
    assert type(model) is cls
    assert model.count_params() == card["parameters"]
    assert len(model.vocabulary) == card["vocabulary_size"] == 10000
    config = model.get_config()
    # A fresh model of the preset has the same configuration (every model
    # argument of the preset, as the model resolves it: PRPN's parser
    # width None is the hidden size) and the same weights' shapes: the
    # file is not from an older architecture.
    fresh = cls.from_preset(card["preset"], vocabulary=list(model.vocabulary))
    expected = fresh.get_config()
    for key in cls.get_preset(card["preset"])["model"]:
        if key == "seed":
            continue
        if key == "direction":
            # A backward model is its preset read backward: its card says so.
            assert config[key] == card.get("direction", "forward"), name
            continue
        got, value = config[key], expected[key]
        if isinstance(value, (list, tuple)):
            got, value = list(got), list(value)
        assert got == value, f"{name}: {key} is {got!r}, the preset says {value!r}"
    assert [tuple(w.shape) for w in fresh.weights] == [
        tuple(w.shape) for w in model.weights
    ]


@pytest.mark.backends
@pytest.mark.parametrize("name", NAMES)
def test_plain_keras_loads_the_shipped_file(name):
    # `keras.saving.load_model` (the classes registered by importing
    # keras_ordered), as a Keras user loads any .keras file: the file is in
    # the current weights layout, and holds the weights `from_preset` gives.
    import keras
    import numpy as np

    card = shipped.shipped_card(name)
    loaded = keras.saving.load_model(shipped.shipped_model_path(name),
                                     compile=False)
    assert type(loaded) is CLASSES[card["class"]]
    preset = CLASSES[card["class"]].from_preset(name)
    assert len(loaded.weights) == len(preset.weights)
    for got, want in zip(loaded.weights, preset.weights):
        assert got.path == want.path
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(got),
                                      keras.ops.convert_to_numpy(want))


def test_from_preset_errors_name_the_problem():
    with pytest.raises(ValueError, match="is a PRPNLanguageModel, not a ONLSTMLanguageModel"):
        ONLSTMLanguageModel.from_preset("prpn_ptb_quick")
    with pytest.raises(ValueError, match="shipped with its own vocabulary"):
        PRPNLanguageModel.from_preset("prpn_ptb_quick", vocabulary=["<eos>", "<unk>"])
    with pytest.raises(ValueError, match="needs its vocabulary.*prpn_ptb_quick"):
        PRPNLanguageModel.from_preset("small")
    with pytest.raises(ValueError, match="shipped trained models: .*prpn_ptb_quick"):
        PRPNLanguageModel.from_preset("prpn_wsj_huge", vocabulary=10)


def test_saved_models_folder_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(shipped.SAVED_MODELS_ENV, str(tmp_path))
    assert shipped.shipped_names() == []
    with pytest.raises(ValueError, match="no shipped models at"):
        shipped.shipped_card("prpn_ptb_quick")


def test_list_models_and_parse_without_a_model(capsys):
    assert main(["list-models"]) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        assert name in out
    assert "prpn_ptb_quick" in out and "(default parser)" in out
    assert main(["list-models", "--json"]) == 0
    cards = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in cards] == NAMES + shipped.ensemble_names()

    assert main(["parse", "The cat sat on the mat."]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "(((The cat) sat) (on ((the mat) .)))"
    assert "the shipped prpn_ptb_quick" in captured.err
    assert main(["parse", "--model", "onlstm_ptb_small", "the cat sat"]) == 0
    assert capsys.readouterr().out.strip().startswith("(")


@pytest.fixture(scope="module")
def sample_and_right_branching():
    """The WSJ sample's records, and the right-branching scores of the
    whole sample and of each split (`SPLITS`): the same for every shipped
    model, so read and scored once. `(records, {None or split: (indices,
    right-branching scores)})`."""
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.parsing.baselines import baseline_predictor
    from keras_ordered.parsing.evaluate import evaluate_parsing

    records = load_treebank(require_data("wsj_sample", "mrg"))
    right = baseline_predictor("right-branching")
    parts = {None: (list(range(len(records))),
                    evaluate_parsing(records, right))}
    for split, pattern in SPLITS.items():
        chosen = [i for i, record in enumerate(records)
                  if re.fullmatch(pattern, record.file_id)]
        parts[split] = (chosen, evaluate_parsing(
            [records[i] for i in chosen], right))
    return records, parts


@pytest.fixture(scope="module")
def shipped_distances(sample_and_right_branching):
    """A function name -> (model, {distance: distances of the whole
    sample}) of a shipped model, every distance from one pass, each model
    read once: the models' tests and the ensembles' share them."""
    from keras_ordered.parsing.evaluate import model_distances

    records, _ = sample_and_right_branching
    cache = {}

    def distances_of(name):
        if name not in cache:
            model = saving.load_shipped(name)
            cache[name] = (model, model_distances(records, model))
        return cache[name]

    return distances_of


@pytest.fixture(scope="module")
def shipped_trees(sample_and_right_branching, shipped_distances):
    """A function name -> {distance: trees of the whole sample} of a
    shipped model, each through the model's own decoder."""
    from keras_ordered.parsing.trees import distances_to_tree
    from keras_ordered.parsing.trees import model_decoder

    records, _ = sample_and_right_branching
    cache = {}

    def trees_of(name):
        if name not in cache:
            model, distances = shipped_distances(name)
            decoder = model_decoder(model)
            cache[name] = {
                distance: [distances_to_tree(list(r.words), d, decoder=decoder)
                           for r, d in zip(records, values)]
                for distance, values in distances.items()}
        return cache[name]

    return trees_of


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_shipped_parsing_f1_is_the_cards(name, sample_and_right_branching,
                                         shipped_trees):
    from keras_ordered.parsing.evaluate import evaluate_trees

    records, parts = sample_and_right_branching
    card = shipped.shipped_card(name)
    parsing = card["parsing"]
    assert len(records) == parsing["sentences"] == 3253
    # The model reads the sample once; the whole sample and each split
    # are scored from those trees.
    trees = shipped_trees(name)[parsing["distance"]]
    got = evaluate_trees(records, trees)
    assert round(got["sentence_f1"], 2) == parsing["sentence_f1"]
    assert round(got["corpus_f1"], 2) == parsing["corpus_f1"]
    assert round(got["wsj10_sentence_f1"], 2) == parsing["wsj10_sentence_f1"]
    right = parts[None][1]
    assert round(right["sentence_f1"], 2) == parsing["right_branching_sentence_f1"]
    # The splits: development wsj_0001-0099, test wsj_0100-0149.
    for split in SPLITS:
        chosen, right = parts[split]
        subset = [records[i] for i in chosen]
        want = parsing["splits"][split]
        assert len(subset) == want["sentences"]
        got = evaluate_trees(subset, [trees[i] for i in chosen])
        assert round(got["sentence_f1"], 2) == want["sentence_f1"], split
        assert round(right["sentence_f1"], 2) == (
            want["right_branching_sentence_f1"])
    # Listed as a parser only if it beats right-branching on the test split.
    test = parsing["splits"]["test"]
    assert card["parser"] == (
        test["sentence_f1"] >= test["right_branching_sentence_f1"] + 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", shipped.ensemble_names())
def test_shipped_ensemble_f1_is_the_cards(name, sample_and_right_branching,
                                          shipped_trees, shipped_distances):
    # The averaged trees, recomputed from the shipped members' trees: the
    # card's development and test figures.
    from keras_ordered.parsing.ensemble import average_tree
    from keras_ordered.parsing.ensemble import split_member
    from keras_ordered.parsing.evaluate import evaluate_trees

    records, parts = sample_and_right_branching
    card = shipped.ensemble_card(name)
    assert card["decoder"] == "right"  # each member through its own
    expanded = [split_member(spec) for spec in card["expanded_members"]]
    members = [shipped_trees(model)[distance] for model, distance in expanded]
    if card.get("smoothing"):
        # Smoothed votes come from the members' distances (noisy
        # decodings), as `parse --model NAME` computes them.
        ensemble = saving.load_ensemble([name])
        assert ensemble.smoothing == card["smoothing"]
        distances = [shipped_distances(model)[1][distance]
                     for model, distance in expanded]
    for split in SPLITS:
        chosen, _ = parts[split]
        if card.get("smoothing"):
            averaged = ensemble.rows(
                [records[i] for i in chosen],
                distances=[[d[i] for i in chosen] for d in distances])[0][3]
        else:
            averaged = [average_tree(records[i].words,
                                     [trees[i] for trees in members],
                                     card["weights"], card["tie"]).tree
                        for i in chosen]
        got = evaluate_trees([records[i] for i in chosen], averaged)
        want = card["parsing"]["splits"][split]
        assert len(chosen) == want["sentences"]
        assert round(got["sentence_f1"], 2) == want["sentence_f1"], split


def test_the_default_parser_parses_and_language_models_say_so(capsys):
    assert shipped.shipped_card(shipped.DEFAULT_PARSER)["parser"] is True
    assert main(["list-models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in NAMES:
        (row,) = [line for line in lines if line.startswith(name + " ")]
        if shipped.shipped_card(name)["parser"]:
            assert "language model" not in row
        else:
            assert "language model" in row, row
