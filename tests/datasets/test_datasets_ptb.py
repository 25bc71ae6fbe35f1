"""`keras_ordered.datasets.ptb`: where the text is found, vocabulary, ids."""

import os

import numpy as np
import pytest

from conftest import require_data
from keras_ordered.datasets import ptb

pytestmark = pytest.mark.backends

TEXT = {
    "train": "the cat sat\nthe dog sat on the mat\n",
    "valid": "the cat <unk>\n",
    "test": "a dog\n",
}


def write_ptb(directory):
    directory.mkdir(parents=True, exist_ok=True)
    for split, text in TEXT.items():
        (directory / f"{split}.txt").write_text(text)
    return str(directory)


def test_local_directory_vocabulary_and_ids(tmp_path):
    (train, valid, test), vocabulary = ptb.load_data(
        write_ptb(tmp_path / "ptb"), download=False
    )
    # <eos> first, then by decreasing frequency (ties by first occurrence),
    # <unk> added when the training text has none.
    assert vocabulary == ["<eos>", "the", "sat", "cat", "dog", "on", "mat",
                          "<unk>"]
    index = {w: i for i, w in enumerate(vocabulary)}
    expected = [index[w] for w in "the cat sat <eos> the dog sat on the mat "
                "<eos>".split()]
    np.testing.assert_array_equal(train, expected)
    assert train.dtype == np.int32
    np.testing.assert_array_equal(
        valid, [index["the"], index["cat"], index["<unk>"], index["<eos>"]]
    )
    # "a" is not in the training vocabulary: <unk>.
    np.testing.assert_array_equal(
        test, [index["<unk>"], index["dog"], index["<eos>"]]
    )


def test_parent_directory_and_environment(tmp_path, monkeypatch):
    write_ptb(tmp_path / "ptb")
    assert len(ptb.load_data(str(tmp_path), download=False)[1]) == 8
    monkeypatch.setenv("KERAS_ORDERED_DATA", str(tmp_path))
    assert len(ptb.load_data(download=False)[1]) == 8


def test_explicit_missing_path_never_falls_back(tmp_path, monkeypatch):
    # The environment holds a valid copy, but the user named another place:
    # that is an error, not a silent switch of corpus.
    write_ptb(tmp_path / "data" / "ptb")
    monkeypatch.setenv("KERAS_ORDERED_DATA", str(tmp_path / "data"))
    with pytest.raises(FileNotFoundError, match="nowhere") as info:
        ptb.load_data(str(tmp_path / "nowhere"))
    assert "--data" in str(info.value)


def test_nothing_found_names_every_way(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_ORDERED_DATA", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError) as info:
        ptb.load_data(download=False)
    message = str(info.value)
    for way in ("--data", "KERAS_ORDERED_DATA", "download"):
        assert way in message

    def no_network(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr("keras.utils.get_file", no_network)
    with pytest.raises(FileNotFoundError, match="network unreachable"):
        ptb.load_data()


def test_unset_variable_and_failed_download_leave_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("KERAS_ORDERED_DATA", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    # A download that fails without a network: a file URL that is not there.
    monkeypatch.setattr(ptb, "DOWNLOAD_ORIGIN", (tmp_path / "no").as_uri() + "/")
    with pytest.raises(FileNotFoundError) as info:
        ptb.load_data()
    message = str(info.value)
    assert "$KERAS_ORDERED_DATA (not set)" in message
    assert "=None" not in message
    assert "download failed" in message
    # Keras' get_file made the cache folders; none is left behind.
    assert not (tmp_path / "keras_home").exists()
    # A cache folder that existed before is kept.
    (tmp_path / "keras_home" / "datasets").mkdir(parents=True)
    with pytest.raises(FileNotFoundError):
        ptb.load_data()
    assert os.listdir(tmp_path / "keras_home") == ["datasets"]
    assert os.listdir(tmp_path / "keras_home" / "datasets") == []


def test_max_words_and_max_lines(tmp_path):
    directory = write_ptb(tmp_path)
    (train, _, _), vocabulary = ptb.load_data(directory, max_words=4,
                                              max_lines=1, download=False)
    assert vocabulary == ["<eos>", "the", "cat", "<unk>"]
    assert len(train) == 4  # "the cat sat <eos>"
    assert train[2] == vocabulary.index("<unk>")


def test_shared_ptb_is_the_standard_setup():
    path = require_data("ptb")
    (train, valid, test), vocabulary = ptb.load_data(path, download=False)
    assert len(vocabulary) == 10000
    assert vocabulary[0] == "<eos>"
    assert (len(train), len(valid), len(test)) == (929589, 73760, 82430)
