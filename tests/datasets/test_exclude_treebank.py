"""`--exclude-treebank`: the PTB training text without a treebank's
sentences, matched after the text's own normalisation."""

import pytest

from conftest import require_data
from keras_ordered.datasets import ptb
from keras_ordered.datasets.treebank import lm_text_sentences

pytestmark = pytest.mark.backends

PIERRE = "pierre <unk> N years old will join the board as a nonexecutive " \
    "director nov. N".split()


@pytest.fixture(scope="module")
def sample_sentences():
    """The WSJ sample's sentences as the text writes them (read once: the
    whole sample's trees take seconds to parse)."""
    return lm_text_sentences(require_data("wsj_sample", "mrg"))


def test_a_treebank_sentence_is_written_as_the_text_writes_it(sample_sentences):
    sentences = sample_sentences
    assert len(sentences) == 3253
    # Lower-cased, numbers as N, punctuation gone; the name is still
    # there until the vocabulary maps it to <unk>.
    assert sentences[0] == ["pierre", "vinken", "N", "years", "old", "will",
                            "join", "the", "board", "as", "a",
                            "nonexecutive", "director", "nov.", "N"]
    # The currency symbols stay, as in the text ("$ N billion").
    assert any("$" in s for s in sentences)


def test_a_known_sentence_is_dropped_and_a_near_duplicate_kept():
    files = ptb.locate_files(require_data("ptb"), download=False)
    train = ptb.read_words(files["train"])
    vocabulary = ptb.build_vocabulary(train, max_words=10000)
    assert PIERRE in train
    near = PIERRE[:-1] + ["N", "N"]  # one word more
    kept, dropped, matched = ptb.drop_sentences(
        train[:5] + [near], [["pierre", "vinken", "N", "years", "old",
                              "will", "join", "the", "board", "as", "a",
                              "nonexecutive", "director", "nov.", "N"]],
        vocabulary)
    assert PIERRE not in kept and near in kept
    assert (dropped, matched) == (1, 1)
    assert len(kept) == 5


def test_the_sample_is_left_out_of_the_training_text(capsys, sample_sentences):
    data = require_data("ptb")
    excluded = sample_sentences
    (train, valid, test), vocabulary = ptb.load_data(
        data, download=False, exclude=excluded)
    (full, valid_full, _), vocabulary_full = ptb.load_data(
        data, download=False)
    said = capsys.readouterr().out
    assert said.startswith("Left out ")
    dropped = int(said.split()[2])
    # wsj_0001-0149 are in the training text (3,234 of the 3,253
    # sentences; some lines repeat): thousands of lines go, and only
    # from the training split, with the standard vocabulary.
    assert 3000 < dropped < 4500
    assert "(3234 of them found in the training text)" in said
    assert vocabulary == vocabulary_full
    assert len(valid) == len(valid_full)
    eos = vocabulary.index(ptb.EOS)
    assert (full == eos).sum() - (train == eos).sum() == dropped


def test_the_recipes_take_the_option_into_their_run():
    from keras_ordered.models import PRPNLanguageModel
    from keras_ordered.training.tasks import language_model_options
    from keras_ordered.training.tasks.language_model import build_parser

    args = build_parser("t", PRPNLanguageModel.preset_table, "runs/t").parse_args(
        ["--preset", "tiny", "--exclude-treebank", "trees/"])
    experiment = language_model_options.experiment_from_options(args, PRPNLanguageModel)
    assert experiment.exclude_treebank == "trees/"
    assert experiment.to_dict()["exclude_treebank"] == "trees/"
