"""The language models train alike on TensorFlow, JAX and PyTorch.

The same tiny ON-LSTM and PRPN language models (the same initial weights,
saved here on TensorFlow; every dropout off, so that no random stream
differs) train through `model.fit` and the carried-state step of each
backend (tests/parity.py runs JAX and PyTorch in fresh processes): six
windows of SGD with the global-norm clipping, the AWD window scaling (on
windows of two lengths, 14 and 20 tokens: the scaling differs between
them, and JAX compiles a step once per length, not once per window), the
AR/TAR penalties (ON-LSTM) and the state carried from window to window,
then an evaluation with its own carried state; the ON-LSTM under NT-ASGD
(validation and the evaluation on the averaged weights). The losses, the weights
and both carried states agree with TensorFlow's to float32 rounding (PRPN,
whose hard gates amplify rounding, to a tolerance scaled by each array's
size).
"""

import keras
import numpy as np
import pytest

from parity import run_here
from parity import run_on_backend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                       reason="compares the other backends with TensorFlow"),
]

CODE = '''
import contextlib
from keras_ordered.models import ONLSTMLanguageModel, PRPNLanguageModel
from keras_ordered.models.carried_state import carried_state
from keras_ordered.training import BPTTBatches


class TwoLengths(BPTTBatches):
    """Windows of 14 and 20 tokens in turn."""

    def window_lengths(self, epoch):
        count = (self.streams.shape[1] - 1) // 17
        return [14 + 6 * ((i + epoch) % 2) for i in range(count)]

if ARGS.get("devices"):
    # keras.distribution.DataParallel over a CPU split by XLA_FLAGS,
    # through the recipes' device holder.
    from keras_ordered.training.distributed import make_strategy
    devices = make_strategy("auto")
    assert len(devices.extended.worker_devices) == ARGS["devices"], (
        devices.extended.worker_devices)


def train(family, weights, learning_rate):
    vocabulary = ["<eos>", "<unk>"] + [f"w{i}" for i in range(30)]
    ids = np.random.default_rng(0).integers(0, 32, 3000).astype("int32")
    keras.utils.set_random_seed(1)
    if family == "onlstm":
        model = ONLSTMLanguageModel.from_preset(
            "tiny", vocabulary, dropout_output=0.0, dropout_hidden=0.0,
            dropout_input=0.0, weight_drop=0.0)
    else:
        model = PRPNLanguageModel.from_preset(
            "tiny", vocabulary, dropout=0.0, input_dropout=0.0,
            recurrent_dropout=0.0)
    if ARGS.get("make_weights"):
        # The first process (TensorFlow's) saves the initial weights that
        # every backend's training starts from.
        np.savez(weights, *model.get_weights())
    with np.load(weights) as initial:
        model.set_weights([initial[f"arr_{i}"]
                           for i in range(len(initial.files))])
    model.configure_bptt(batch_size=4, eval_batch_size=4, clip_norm=0.25)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate))
    batches = TwoLengths(ids, 4, 20, seed=3)
    callbacks = []
    if family == "onlstm":
        # NT-ASGD, averaging from the second epoch (validation and the final
        # evaluation on the averaged weights).
        from keras_ordered.training.callbacks import NTASGD
        callbacks.append(NTASGD(verbose=0, average_from_epoch=2))
    history = model.fit(batches.stream(), steps_per_epoch=3, epochs=2,
                        shuffle=False, verbose=0, callbacks=callbacks,
                        validation_data=batches.dataset(0, steps_per_epoch=2))
    with (callbacks[0].validated_weights() if callbacks
          else contextlib.nullcontext()):
        evaluation = model.evaluate(batches.dataset(0, steps_per_epoch=3),
                                    steps=3, verbose=0, return_dict=True)
    return dict(
        losses=np.array(history.history["loss"] + history.history["val_loss"]
                        + [evaluation["loss"]]),
        **{f"weight_{i}": w for i, w in enumerate(model.weights)},
        **{f"train_state_{i}": s
           for i, s in enumerate(carried_state(model, "train"))},
        **{f"eval_state_{i}": s
           for i, s in enumerate(carried_state(model, "eval"))})


for family in ARGS["families"]:
    arrays = train(family, ARGS["weights"][family],
                   ARGS["learning_rate"][family])
    save(**{f"{family}:{key}": value for key, value in arrays.items()})
'''


# PRPN's hard gates turn rounding differences into jumps: a smaller step
# keeps its six steps in float32 rounding's reach.
LEARNING_RATE = {"onlstm": 1.0, "prpn": 0.1}


FAMILIES = ("onlstm", "prpn")


@pytest.fixture(scope="module")
def initial_weights(tmp_path_factory):
    """Where each family's initial weights go: `trained` draws them in its
    TensorFlow process, before training on them there."""
    return {family: str(tmp_path_factory.mktemp(family) / "initial.npz")
            for family in FAMILIES}


def _train(backend, initial_weights, families=FAMILIES, env=None, **args):
    """`{family: {array name: array}}` of CODE run on `backend`, both
    families in one process: TensorFlow's in this one (the reference; no
    process start), the others' in a fresh process each."""
    args = dict(families=list(families), weights=initial_weights,
                learning_rate=LEARNING_RATE, **args)
    if backend == "tensorflow" and env is None:
        arrays = run_here(CODE, **args)
    else:
        arrays = run_on_backend(backend, CODE, env=env, **args)
    return {family: {key.split(":", 1)[1]: value
                     for key, value in arrays.items()
                     if key.startswith(family + ":")}
            for family in families}


@pytest.fixture(scope="module")
def trained(initial_weights):
    """Each family's arrays after training, on each backend."""
    trained = {"tensorflow": _train("tensorflow", initial_weights,
                                    make_weights=True)}
    for backend in ("jax", "torch"):
        trained[backend] = _train(backend, initial_weights)
    return trained


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("family, tolerance", [("onlstm", 1e-6),
                                                ("prpn", 1e-4)])
def test_training_matches_tensorflow(trained, initial_weights, family,
                                     tolerance, backend):
    want = trained["tensorflow"][family]
    got = trained[backend][family]
    assert sorted(got) == sorted(want)
    # Training moved the weights (the comparison is not of initial values).
    with np.load(initial_weights[family]) as initial:
        moved = max(np.max(np.abs(want[f"weight_{i}"] - initial[f"arr_{i}"]))
                    for i in range(len(initial.files)))
    assert moved > 1e-3
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    states = [key for key in want if "state" in key]
    assert any(key.startswith("train_") for key in states)
    assert any(key.startswith("eval_") for key in states)
    for key in want:
        scale = max(1.0, float(np.max(np.abs(want[key]))))
        np.testing.assert_allclose(got[key], want[key], rtol=0,
                                   atol=tolerance * scale, err_msg=key)


# ON-LSTM on one JAX device (the run above) and on two
# (keras.distribution.DataParallel over a CPU split in two by XLA_FLAGS,
# through the recipes' device holder): each batch's rows are sharded over
# the devices, the weights replicated; the arithmetic is that of one
# device.
def test_data_parallel_on_jax_gives_the_weights_of_one_device(
        trained, initial_weights):
    one = trained["jax"]["onlstm"]
    two = _train("jax", initial_weights, families=["onlstm"], devices=2,
                 env={"XLA_FLAGS":
                      "--xla_force_host_platform_device_count=2"})["onlstm"]
    assert sorted(two) == sorted(one)
    for key in one:
        np.testing.assert_allclose(two[key], one[key], rtol=0,
                                   atol=1e-6, err_msg=key)
