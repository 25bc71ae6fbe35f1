"""Files written whole: `write_json_atomically`."""

import json
import os

import pytest

from keras_ordered.training.crash_safety import write_json_atomically


def test_json_written_into_a_missing_folder(tmp_path):
    path = tmp_path / "records" / "new" / "figure.json"
    write_json_atomically(str(path), {"f1": 56.7}, indent=1)
    assert json.loads(path.read_text()) == {"f1": 56.7}
    assert os.listdir(path.parent) == ["figure.json"]


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "figure.json"
    write_json_atomically(str(path), {"f1": 1})
    with pytest.raises(TypeError):
        write_json_atomically(str(path), {"f1": object()})
    assert json.loads(path.read_text()) == {"f1": 1}
    assert os.listdir(tmp_path) == ["figure.json"]
