"""Multi-worker training on TensorFlow's own engine.

Two worker processes on 127.0.0.1 (ports free at run time, `TF_CONFIG` as
TensorFlow documents it) train with `CustomTrainingLoop` around
`strategy.run`; a third process trains the same model with `model.fit` on
one device. Every process is bounded in time and ended by the test, also
when it fails.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import command_server
from conftest import require_data

pytestmark = pytest.mark.slow  # worker subprocesses that train

# The repository (this file is tests/training/...); not conftest's REPO,
# since the file also runs as a script, without tests/ on sys.path.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TIMEOUT = 300


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _tf_config(ports, index):
    return json.dumps({
        "cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
        "task": {"type": "worker", "index": index},
    })


def _environment(tf_config=None):
    # tests/ too: the child (this file as a script) imports conftest.
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                       PYTHONPATH=os.pathsep.join(
                           [REPO, os.path.join(REPO, "tests")]))
    environment.pop("TF_CONFIG", None)
    if tf_config:
        environment["TF_CONFIG"] = tf_config
    return environment


def _start(command, tf_config=None):
    return subprocess.Popen(
        command_server.argv(command), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env=_environment(tf_config), cwd=REPO, start_new_session=True,
    )


def _end(processes):
    """Kills what still runs (its whole process group) and reaps it."""
    for process in processes:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            process.communicate(timeout=30)
        except (subprocess.TimeoutExpired, ValueError):
            pass


def _wait(process, deadline):
    out, err = process.communicate(timeout=max(1, deadline - time.time()))
    return process.returncode, out, err


def test_two_workers_end_with_identical_weights_and_the_one_process_loss(
        tmp_path):
    ports = _free_ports(2)
    child = [sys.executable, os.path.abspath(__file__)]
    processes = [
        _start(child + [str(tmp_path / f"worker{i}")], _tf_config(ports, i))
        for i in range(2)
    ]
    processes.append(_start(child + [str(tmp_path / "single")]))
    deadline = time.time() + TIMEOUT
    try:
        for process in processes:
            code, _, err = _wait(process, deadline)
            assert code == 0, err[-3000:]
    finally:
        _end(processes)
    workers = [np.load(tmp_path / f"worker{i}" / "result.npz")
               for i in range(2)]
    single = np.load(tmp_path / "single" / "result.npz")
    assert int(workers[0]["replicas"]) == 2 and int(single["replicas"]) == 1
    names = [k for k in single.files if k.startswith("weight_")]
    for name in names:
        # Both workers hold the same weights, bit for bit...
        np.testing.assert_array_equal(workers[0][name], workers[1][name])
        # ...those of one process training on the same global batches.
        np.testing.assert_allclose(workers[0][name], single[name], atol=1e-5)
    np.testing.assert_allclose(workers[0]["losses"], single["losses"],
                               atol=1e-5)
    np.testing.assert_allclose(workers[1]["losses"], single["losses"],
                               atol=1e-5)
    # Every replica's carried state, gathered: the one process's state.
    for i in range(int(single["states"])):
        np.testing.assert_allclose(workers[0][f"state_{i}"],
                                   single[f"state_{i}"], atol=1e-5)
    # The chief wrote its backup; the other worker wrote nowhere.
    assert (tmp_path / "worker0" / "backup" / "backup.json").exists()
    assert not (tmp_path / "worker1" / "backup").exists()


@pytest.mark.slow
def test_killed_worker_then_the_run_resumes_from_the_chiefs_backup(tmp_path):
    data = os.path.dirname(require_data("ptb", "train.txt"))
    output = tmp_path / "run"
    command = [
        sys.executable, os.path.join(REPO, "recipes", "ptb_onlstm.py"),
        "--preset", "tiny", "--data", data, "--max-lines", "200",
        "--steps-per-epoch", "16", "--eval-steps", "1", "--epochs", "1",
        "--skip-test", "--save-freq", "1", "--strategy", "multi-worker",
        "--verbose", "2", "--output", str(output),
    ]
    meta_path = output / "backup" / "backup.json"
    ports = _free_ports(2)
    processes = [_start(command, _tf_config(ports, i)) for i in range(2)]
    try:
        deadline = time.time() + TIMEOUT
        killed_after = None
        while time.time() < deadline and killed_after is None:
            time.sleep(0.5)
            assert all(p.poll() is None for p in processes), (
                processes[0].communicate()[1][-2000:])
            try:
                meta = json.loads(meta_path.read_text())
            except (OSError, ValueError):
                continue
            if meta["next_batch"] >= 2:
                os.killpg(processes[1].pid, signal.SIGKILL)
                killed_after = meta["next_batch"]
        assert killed_after is not None, "no backup in time"
        # The chief is left waiting for its peer in a collective: it fails
        # with an error naming the lost worker, or the test ends it.
        try:
            code, _, err = _wait(processes[0], time.time() + 60)
            assert code != 0
        except subprocess.TimeoutExpired:
            pass
    finally:
        _end(processes)
    stopped_at = json.loads(meta_path.read_text())["next_batch"]
    assert stopped_at < 16  # the epoch was not finished
    assert not (output / "results.json").exists()

    # Start both again, as a user would (here on new free ports).
    ports = _free_ports(2)
    processes = [_start(command, _tf_config(ports, i)) for i in range(2)]
    deadline = time.time() + TIMEOUT
    try:
        outputs = []
        for process in processes:
            code, out, err = _wait(process, deadline)
            assert code == 0, err[-3000:]
            outputs.append(out)
    finally:
        _end(processes)
    for out in outputs:
        assert f"Resuming from epoch 1, window {stopped_at} of 16" in out
    results = json.loads((output / "results.json").read_text())
    assert np.isfinite(results["valid_loss"])
    assert json.loads(meta_path.read_text())["epoch"] == 1


# --- the worker process ---------------------------------------------------------
def _child(output):
    """Trains the tiny ON-LSTM 3 steps; saves what the test compares."""
    from keras_ordered.training import distributed

    multi_worker = bool(os.environ.get("TF_CONFIG"))
    strategy = distributed.make_strategy(
        "multi-worker" if multi_worker else "auto"
    )

    import keras

    import keras_ordered
    from keras_ordered.training import BPTTBatches
    from keras_ordered.training import TrainingBackup
    from keras_ordered.models.carried_state import carried_state

    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    ids = np.random.default_rng(0).integers(1, 32, 2000).astype("int32")
    keras.utils.set_random_seed(1)
    with strategy.scope():
        model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
            "tiny", vocabulary, seed=3, dropout_output=0.0,
            dropout_hidden=0.0, dropout_input=0.0, dropout_embedding=0.0,
            weight_drop=0.0,
        )
        model.compile(optimizer=keras.optimizers.SGD(1.0))
        model.configure_bptt(4, 2, clip_norm=0.05)
    batches = BPTTBatches(ids, 4, 8, variable_length=False)
    losses = []
    logger = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: losses.append(logs["loss"])
    )
    backup = TrainingBackup(os.path.join(output, "backup"), save_freq=2,
                            write=distributed.is_chief(strategy))
    callbacks = [logger, backup]
    if multi_worker:
        loop = distributed.CustomTrainingLoop(model, strategy)
        loop.fit(batches.dataset(0, steps_per_epoch=3), 3, 1,
                 callbacks=callbacks)
    else:
        model.fit(batches.dataset(0, steps_per_epoch=3), epochs=1, verbose=0,
                  shuffle=False, callbacks=callbacks)
    states = carried_state(model)
    arrays = {f"weight_{i}": w.numpy() for i, w in enumerate(model.weights)}
    arrays.update({f"state_{i}": s for i, s in enumerate(states)})
    # The test's own record of this process (not a file of the run).
    os.makedirs(output, exist_ok=True)
    np.savez(os.path.join(output, "result.npz"), losses=np.array(losses),
             replicas=strategy.num_replicas_in_sync, states=len(states),
             **arrays)


if __name__ == "__main__":
    _child(sys.argv[1])
