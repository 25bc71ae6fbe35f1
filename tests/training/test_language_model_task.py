"""`keras_ordered.training.tasks.language_model.run_experiment`: a worker's
TensorFlow error under the multi-worker strategy is one line and status 1;
any other error, or under another strategy, propagates."""

import pytest

from keras_ordered.models import PRPNLanguageModel
from keras_ordered.training.config import LanguageModelExperiment
from keras_ordered.training.tasks import language_model

tf = pytest.importorskip("tensorflow")


class _FailingRunner:
    error = None

    def __init__(self, task):
        self.task = task

    def run(self):
        raise self.error


def _run(monkeypatch, tmp_path, strategy, error):
    _FailingRunner.error = error
    monkeypatch.setattr(language_model, "Runner", _FailingRunner)
    experiment = LanguageModelExperiment.from_preset(
        PRPNLanguageModel, "tiny", output=str(tmp_path / "run"),
        strategy=strategy, verbose=0)
    return language_model.run_experiment(experiment)


def test_a_lost_worker_is_one_line_and_status_1(monkeypatch, tmp_path,
                                                 capsys):
    lost = tf.errors.UnavailableError(
        None, None, "Collective ops is aborted by: task /job:worker/task:1")
    assert _run(monkeypatch, tmp_path, "multi-worker", lost) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "a worker of the multi-worker run failed" in err
    assert "/job:worker/task:1" in err


def test_other_errors_and_other_strategies_propagate(monkeypatch, tmp_path):
    lost = tf.errors.UnavailableError(None, None, "gone")
    with pytest.raises(tf.errors.UnavailableError):
        _run(monkeypatch, tmp_path, "auto", lost)
    with pytest.raises(ValueError, match="bad data"):
        _run(monkeypatch, tmp_path, "multi-worker", ValueError("bad data"))
