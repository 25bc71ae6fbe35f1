"""The TD-TreeLSTM layers and model against a per-tree NumPy loop over the
seed's equations; gradients, NCE, round trips, overfitting.

The tests marked `backends` run on TensorFlow, JAX and PyTorch
(`KERAS_BACKEND`); the others (training with `fit`, the TensorFlow loops'
compilation and hand-written gradients) on TensorFlow only.
"""

import math
import os

import keras
import numpy as np
import pytest
from keras import ops

from keras_ordered.datasets.dependency import DependencyVocabulary
from keras_ordered.datasets.dependency import generation_steps
from keras_ordered.models import TDTreeLSTMLanguageModel
from keras_ordered.models.tdtreelstm import nce
from keras_ordered.models.tdtreelstm.inputs import SCHEDULE_ROWS
from keras_ordered.models.tdtreelstm.inputs import batch_arrays
from harness import TREE_WORDS as WORDS
from harness import gradients
from harness import to_numpy
from harness import tiny_tdtreelstm_lm
from harness import tree_vocabulary as vocabulary

TREES = [
    (["the", "cat", "sat", "on", "the", "mat"], [2, 3, 0, 3, 6, 4]),
    (["dog"], [0]),
    (["a", "dog", "ran", "home", "."], [2, 3, 0, 3, 3]),
    (["the", "the", "cat", "sat", "on", "a", "mat", "home", "."],
     [3, 3, 4, 0, 4, 7, 5, 4, 4]),  # two left dependents, NX actions both ways
    (["ran", "ran", "ran"], [0, 1, 2]),  # a right chain
]
ACTION_IDS = {"GEN-L": 0, "GEN-R": 1, "GEN-NX-L": 2, "GEN-NX-R": 3}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_step(x, h, c, W, U, b, extra=0.0):
    z = x @ W + h @ U + b + extra
    u = len(h)
    i, f, o, g = (sigmoid(z[:u]), sigmoid(z[u:2 * u]), sigmoid(z[2 * u:3 * u]),
                  np.tanh(z[3 * u:]))
    c = f * c + i * g
    return o * np.tanh(c), c


def numpy_scores(model, words, heads):
    """log P(w | D(w)) per word (sentence order), one tree at a time, from the
    seed's equations: x_t = E e(w_t'), h_t = LSTM^{z_t}(x_t, H[t']),
    P(w_t | D(w_t)) = softmax(W_ho h_t)."""
    f64 = lambda v: to_numpy(v).astype("float64")  # noqa: E731
    E = f64(model.embedding.embeddings)
    Wo = f64(model.output_embedding)
    bo = f64(model.output_bias) if model.output_bias is not None else 0.0
    layer = model.tree_lstm
    L, u = model.num_layers, model.units
    ids = [2] + model.vocabulary.encode(words)
    H = {0: [(np.full(u, 0.01), np.full(u, 0.01)) for _ in range(L)]}
    scores = np.zeros(len(words))
    for word, action, source, context in generation_steps(heads):
        a = ACTION_IDS[action]
        below = E[ids[source]]
        extra = 0.0
        if model.ld and action == "GEN-R":
            ld = model.left_dependent_lstm
            q = [(np.full(ld.units, 0.01), np.full(ld.units, 0.01))
                 for _ in range(ld.num_layers)]
            for w in context:  # farthest-to-nearest
                inp = E[ids[w]]
                for l in range(ld.num_layers):
                    q[l] = lstm_step(inp, *q[l], f64(ld.kernels[l]),
                                     f64(ld.recurrent_kernels[l]), f64(ld.biases[l]))
                    inp = q[l][0]
            extra = q[-1][0] @ f64(layer.context_kernel)
        new = []
        for l in range(L):
            W, U, b = (f64(w) for w in layer.action_weights(a, l))
            h, c = lstm_step(below, *H[source][l], W, U, b,
                             extra if l == 0 else 0.0)
            new.append((h, c))
            below = h
        H[word] = new
        logits = Wo @ below + bo
        log_probs = logits - logits.max() - math.log(np.exp(logits - logits.max()).sum())
        scores[word - 1] = log_probs[ids[word]]
    return scores


@pytest.mark.backends
@pytest.mark.parametrize("ld, schedule_rows", [
    (False, 32), (True, 32), (False, None), (True, 2)])
def test_batched_model_equals_a_numpy_loop_per_tree(ld, schedule_rows):
    # schedule_rows: the action-homogeneous schedule (default, and 2 rows:
    # many iterations), or None: the generation order.
    model = tiny_tdtreelstm_lm(embedding_dim=6, units=5, num_layers=2,
                               dropout=0.3, ld=ld, ld_units=4, seed=3,
                               init_range=0.5)
    batched = model.score(TREES, batch_size=3,  # mixed sizes in one batch
                          schedule_rows=schedule_rows)
    for (words, heads), result in zip(TREES, batched):
        expected = numpy_scores(model, words, heads)
        np.testing.assert_allclose(result["word_log_probs"], expected,
                                   rtol=1e-4, atol=1e-5)
        assert result["log_prob"] == pytest.approx(expected.sum(), rel=1e-4)
        assert result["perplexity"] == pytest.approx(
            math.exp(-expected.sum() / len(words)), rel=1e-3)
    alone = model.score(TREES[3:4])[0]["word_log_probs"]
    np.testing.assert_allclose(alone, batched[3]["word_log_probs"], rtol=1e-5)


def _batch(model, trees=TREES):
    """The trees as one batch, sorted by length as an evaluation
    `TreeBatches` gives them (with the schedule), as backend tensors."""
    encoded = sorted(model.encode(trees), key=lambda e: len(e["targets"]))
    arrays, _ = batch_arrays(encoded, left_context=model.ld,
                             schedule_rows=SCHEDULE_ROWS)
    return {k: ops.convert_to_tensor(v) for k, v in arrays.items()}


@pytest.mark.backends
@pytest.mark.parametrize("ld, loss", [(False, "softmax"), (True, "nce")])
def test_gradients_reach_every_weight_of_every_lstm(ld, loss):
    model = tiny_tdtreelstm_lm(
        embedding_dim=6, units=5, num_layers=2, ld=ld, loss=loss,
        unigram_counts=np.arange(len(WORDS) + 3) % 4, seed=1)
    inputs = _batch(model)
    grads = gradients(lambda: model.objective(inputs, training=True)[0],
                      model.trainable_weights)
    names = []
    for weight, grad in zip(model.trainable_weights, grads):
        assert grad is not None, weight.path
        names.append(weight.path)
        if "generation_lstms" in weight.path and "context" not in weight.path:
            # Each of the four LSTMs' block of the kernel gets a gradient.
            blocks = grad.reshape(grad.shape[:-1] + (4, -1))
            for action in range(4):
                assert np.abs(blocks[..., action, :]).sum() > 0, (weight.path, action)
        else:
            assert np.abs(grad).sum() > 0, weight.path
    expected = 1 + 6 + 1 + (1 if loss == "softmax" else 1)
    if ld:
        expected += 3 + 1  # the fifth LSTM, GEN-R's context kernel
    assert len(names) == expected, names


@pytest.mark.backends
def test_only_gen_r_reads_the_left_context():
    model = tiny_tdtreelstm_lm(ld=True, init_range=1.0)
    inputs = _batch(model)
    base = to_numpy(model(inputs))
    noisy = dict(inputs)
    # Changing a GEN-R step's left context changes that step only...
    actions = to_numpy(inputs["actions"])
    context = to_numpy(inputs["left_context"]).copy()
    rows, cols = np.nonzero((actions == 1) & (context.max(-1) > 0))
    context[rows[0], cols[0], -1] = 5
    noisy["left_context"] = ops.convert_to_tensor(context)
    changed = np.abs(to_numpy(model(noisy)) - base) > 1e-5
    assert changed[rows[0], cols[0]]
    # ... and its descendants; a non-GEN-R step's context is never read.
    context = to_numpy(inputs["left_context"]).copy()
    rows, cols = np.nonzero(actions != 1)
    context[rows, cols, -1] = 7
    noisy["left_context"] = ops.convert_to_tensor(context)
    np.testing.assert_array_equal(to_numpy(model(noisy)), base)


@pytest.mark.backends
def test_nce_loss_against_numpy():
    rng = np.random.default_rng(0)
    V, H, N, k = 12, 5, 7, 20
    hidden = rng.normal(size=(N, H))
    weights = rng.normal(size=(V, H)) * 0.5
    counts = rng.integers(0, 50, V)
    counts[:3] = 0
    probs = nce.noise_distribution(counts)
    targets = rng.integers(3, V, N)
    noise = rng.choice(V, size=(N, k), p=probs)
    tensor = ops.convert_to_tensor
    got = nce.nce_loss(tensor(hidden, "float32"), tensor(targets),
                       tensor(noise), tensor(weights, "float32"),
                       tensor(1.5), tensor(np.log(np.maximum(probs, 1e-30)),
                                           "float32"))
    expected = nce.nce_loss_numpy(hidden, targets, noise, weights, 1.5, probs)
    np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-4)
    # unigram^0.75, renormalised
    np.testing.assert_allclose(probs, counts ** 0.75 / (counts ** 0.75).sum())


@pytest.mark.backends
def test_noise_samples_follow_unigram_to_the_075():
    counts = np.array([0, 10, 0, 100, 1000, 5])
    probs = nce.noise_distribution(counts, 0.75)
    cdf = ops.convert_to_tensor(np.cumsum(probs), "float32")
    ids = to_numpy(nce.sample_noise(cdf, (4000, 20), seed=1))
    frequencies = np.bincount(ids.ravel(), minlength=6) / ids.size
    np.testing.assert_allclose(frequencies, probs, atol=0.005)
    assert frequencies[0] == frequencies[2] == 0


@pytest.mark.backends
def test_nce_model_starts_at_ln_z_9_without_output_bias_and_scores_exactly():
    model = TDTreeLSTMLanguageModel.from_preset(
        "tiny", vocabulary(), loss="nce", unigram_counts=np.ones(13), seed=0)
    assert model.output_bias is None
    assert float(to_numpy(model.log_z)) == 9.0
    assert model.log_z.trainable and not model.noise_cdf.trainable
    # Scores are normalised over the vocabulary whatever Z is.
    inputs = _batch(model)
    hidden = model.hidden_states(inputs)
    probs = to_numpy(ops.softmax(model.logits(hidden), axis=-1))
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    before = to_numpy(model(inputs))
    model.log_z.assign(0.0)
    np.testing.assert_allclose(to_numpy(model(inputs)), before)
    assert model.score(TREES[:1])[0]["log_prob"] < 0


@pytest.mark.backends
def test_keras_round_trip_keeps_scores_vocabulary_and_config(harness):
    model = TDTreeLSTMLanguageModel.from_preset(
        "tiny", DependencyVocabulary(WORDS, lowercase=True), ld=True,
        loss="nce", unigram_counts=np.arange(13), seed=4)
    # The batched log-probabilities, exactly.
    loaded = harness.run_model_saving_test(model, _batch(model))
    assert isinstance(loaded, TDTreeLSTMLanguageModel)
    assert list(loaded.vocabulary) == list(model.vocabulary)
    assert loaded.ld and loaded.loss_name == "nce" and loaded.lowercase
    a = model.score(TREES)
    b = loaded.score(TREES)
    for x, y in zip(a, b):
        assert x["word_log_probs"] == pytest.approx(y["word_log_probs"], abs=1e-6)
    np.testing.assert_array_equal(to_numpy(loaded.noise_cdf),
                                  to_numpy(model.noise_cdf))
    config = model.get_config()
    rebuilt = TDTreeLSTMLanguageModel.from_config(config)
    assert rebuilt.count_params() == model.count_params()
    assert len(str(keras.saving.serialize_keras_object(model))) < 3000


@pytest.mark.trains
@pytest.mark.slow
def test_overfits_a_handful_of_trees():
    from keras_ordered.training.batching import TreeBatches

    keras.utils.set_random_seed(0)
    model = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary(), ld=True,
                                                units=32, seed=0)
    batches = TreeBatches(model.encode(TREES), 5, left_context=True)
    model.compile(keras.optimizers.Adam(0.05), clip_norm=5.0, jit_compile=True)
    before = model.evaluate(batches.dataset(lambda: batches.epoch(0), 1),
                            verbose=0, return_dict=True)
    model.fit(batches.dataset(lambda: batches.stream(0, 1)), steps_per_epoch=1,
              epochs=150, verbose=0)
    after = model.evaluate(batches.dataset(lambda: batches.epoch(0), 1),
                           verbose=0, return_dict=True)
    assert before["perplexity"] > 8
    # The first word of every tree is generated from the root alone: sat,
    # dog, ran, sat, ran. That step cannot do better than the counts; all
    # other words are determined by their dependency paths.
    floor = -(4 * math.log(2 / 5) + math.log(1 / 5)) / 24
    assert after["loss"] < floor + 0.1, after


@pytest.mark.backends
def test_mixed_precision_scores_stay_finite_and_close():
    model = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary(), ld=True, seed=2)
    reference = model.score(TREES)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mixed = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary(), ld=True,
                                                    seed=2)
        mixed.set_weights(model.get_weights())
        assert mixed.tree_lstm.compute_dtype == "bfloat16"
        scores = mixed.score(TREES)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for x, y in zip(reference, scores):
        assert np.isfinite(y["log_prob"])
        assert y["log_prob"] == pytest.approx(x["log_prob"], rel=0.05)


@pytest.mark.backends
def test_clear_errors():
    model = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary())
    with pytest.raises(ValueError, match="sentence 2: .*2 roots"):
        model.score([(["a"], [0]), (["a", "dog"], [0, 0])])
    with pytest.raises(ValueError, match="2 words but 1 heads"):
        model.score([(["a", "dog"], [0])])
    with pytest.raises(ValueError, match="`loss` must be 'softmax'"):
        TDTreeLSTMLanguageModel(vocabulary(), loss="hinge")
    with pytest.raises(ValueError, match="Unknown TD-TreeLSTM preset 'huge'"):
        TDTreeLSTMLanguageModel.from_preset("huge", vocabulary())
    with pytest.raises(ValueError, match="unigram_counts"):
        TDTreeLSTMLanguageModel(vocabulary(), loss="nce", unigram_counts=[1, 2])


@pytest.mark.backends
@pytest.mark.parametrize("context", [False, True])
def test_naive_four_lstm_selection_gives_the_same_states(context):
    from keras_ordered.layers import TopDownTreeLSTM

    rng = np.random.default_rng(0)
    fused = TopDownTreeLSTM(4, num_layers=2, context_dim=3 if context else None)
    naive = TopDownTreeLSTM(4, num_layers=2, context_dim=3 if context else None,
                            selection="states")
    inputs = [rng.normal(size=(3, 5, 6)).astype("float32"),
              rng.integers(0, 4, (3, 5)),
              np.array([[0, 1, 1, 2, 0], [0, 0, 2, 3, 1], [0, 1, 2, 3, 4]])]
    if context:
        inputs.append(rng.normal(size=(3, 5, 3)).astype("float32"))
    fused(inputs)
    naive(inputs)
    naive.set_weights(fused.get_weights())
    np.testing.assert_allclose(to_numpy(naive(inputs)), to_numpy(fused(inputs)),
                               rtol=1e-5, atol=1e-6)
    assert naive.get_config()["selection"] == "states"
    with pytest.raises(ValueError, match="`selection` must be"):
        TopDownTreeLSTM(4, selection="both")


@pytest.mark.backends
def test_a_lower_casing_vocabulary_stays_one_after_a_round_trip(tmp_path):
    # The vocabulary's setting decides the model's: a model built with a
    # lower-casing DependencyVocabulary and the default lowercase=False is
    # saved as lower-casing, and keeps lower-casing once reloaded.
    model = TDTreeLSTMLanguageModel.from_preset(
        "tiny", DependencyVocabulary(WORDS, lowercase=True), seed=2)
    assert model.lowercase
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.lowercase
    cased = [(["The", "Cat", "sat"], [2, 3, 0])]
    assert loaded.score(cased)[0]["word_log_probs"] == pytest.approx(
        model.score(cased)[0]["word_log_probs"], abs=1e-6)
    assert loaded.score(cased)[0]["word_log_probs"] == pytest.approx(
        model.score([(["the", "cat", "sat"], [2, 3, 0])])[0]["word_log_probs"],
        abs=1e-6)
    with pytest.raises(ValueError, match="contradicts the DependencyVocabulary"):
        TDTreeLSTMLanguageModel.from_preset(
            "tiny", DependencyVocabulary(WORDS), lowercase=True)


def _random_heads(rng, n):
    """A random dependency tree of n words (heads, 0 = the root)."""
    order = [int(w) for w in rng.permutation(n) + 1]
    heads = [0] * n
    for k, w in enumerate(order[1:], 1):
        heads[w - 1] = order[int(rng.integers(0, k))]
    return heads


def _random_batch(rng, sizes):
    from keras_ordered.models.tdtreelstm.inputs import batch_arrays
    from keras_ordered.models.tdtreelstm.inputs import encode_tree

    encoded = [encode_tree(list(rng.integers(3, 13, n)), _random_heads(rng, n))
               for n in sizes]
    arrays, _ = batch_arrays(encoded, left_context=True, schedule_rows=None)
    return arrays, np.array(sizes)


@pytest.mark.backends
@pytest.mark.parametrize("rows", [1, 3, 8, 32])
def test_action_schedule_runs_every_step_once_after_its_source(rows):
    from keras_ordered.models.tdtreelstm.inputs import action_schedule

    rng = np.random.default_rng(rows)
    arrays, lengths = _random_batch(rng, [1, 2, 7, 13, 30, 4, 19])
    actions, sources = arrays["actions"], arrays["sources"]
    batch, steps = actions.shape
    schedule = action_schedule(actions, sources, lengths, rows=rows)
    empty = batch * steps
    assert schedule.dtype == np.int32 and schedule.shape[0] % 8 == 0
    assert schedule.shape[1] == min(rows, 8)
    done = set()
    finished = False
    for iteration in schedule:
        slots = iteration[iteration != empty]
        if not len(slots):
            finished = True  # the empty iterations come last
            continue
        assert not finished and iteration[0] != empty
        b, t = slots // steps, slots % steps
        assert len(set(actions[b, t])) == 1, "one action per iteration"
        for bb, tt in zip(b, t):
            source = sources[bb, tt]
            # The source (0 = the root) was computed in an earlier iteration.
            assert source == 0 or (bb, source - 1) in done
        done.update(zip(b, t))
    expected = {(b, t) for b in range(batch) for t in range(lengths[b])}
    assert done == expected
    assert sum(len(it[it != empty]) for it in schedule) == len(expected)
    with pytest.raises(ValueError, match="Step 1 of tree 0 waits on .* step 2"):
        action_schedule([[1, 0, 1]], [[0, 3, 2]], [3])  # steps 1, 2: a cycle


@pytest.mark.parametrize("context, jit", [
    (False, False), (True, False),
    pytest.param(True, True, marks=pytest.mark.slow)])  # XLA compiles
def test_scheduled_states_and_gradients_equal_the_generation_order(context, jit):
    import tensorflow as tf

    from keras_ordered.layers import TopDownTreeLSTM
    from keras_ordered.models.tdtreelstm.inputs import action_schedule

    rng = np.random.default_rng(4)
    arrays, lengths = _random_batch(rng, [3, 9, 1, 14, 6])
    actions, sources = arrays["actions"], arrays["sources"]
    batch, steps = actions.shape
    layer = TopDownTreeLSTM(5, num_layers=2, context_dim=3 if context else None,
                            initial_value=0.3)
    inputs = [tf.constant(rng.normal(size=(batch, steps, 4)), tf.float32),
              actions, sources]
    if context:
        inputs.append(tf.constant(rng.normal(size=(batch, steps, 3)), tf.float32))
    layer(inputs)
    schedule = action_schedule(actions, sources, lengths, rows=4)
    real = (np.arange(steps)[None] < lengths[:, None])[..., None]
    weights = [tf.constant(rng.normal(size=(batch, steps, 5)) * real, tf.float32)
               for _ in range(4)]

    @tf.function(jit_compile=jit)
    def run(schedule, *inputs):
        inputs = list(inputs)
        with tf.GradientTape() as tape:
            tape.watch(inputs[0])
            if context:
                tape.watch(inputs[3])
            states = layer(inputs, return_states=True, schedule=schedule)
            loss = sum(tf.reduce_sum(s * w) for s, w in zip(states, weights))
        sources_of_grad = [inputs[0]] + inputs[3:]
        return states, tape.gradient(loss, layer.trainable_weights + sources_of_grad)

    ordered, ordered_grads = run(None, *inputs)
    scheduled, scheduled_grads = run(tf.constant(schedule), *inputs)
    for a, b in zip(ordered, scheduled):  # h^1, c^1, h^2, c^2 at every real step
        np.testing.assert_allclose(np.asarray(b) * real, np.asarray(a) * real,
                                   rtol=1e-5, atol=1e-6)
    assert len(scheduled_grads) == len(layer.trainable_weights) + 1 + context
    for a, b in zip(ordered_grads, scheduled_grads):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4,
                                   atol=1e-5)


def _executable_regions():
    """The process's anonymous executable memory regions (JIT-compiled code)."""
    with open("/proc/self/maps") as maps:
        fields = [line.split() for line in maps]
    return sum(1 for f in fields if len(f) == 5 and f[1] == "r-xp")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"),
                    reason="counts compiled code through /proc/self/maps")
def test_compiled_schedule_is_not_recompiled_for_other_trees():
    # XLA compiles the scheduled recurrence once per shape. An action read
    # from the batch and used as a slice index (`stacks[action]`) made XLA
    # take the actions and the schedule as compile-time constants: one
    # compilation per batch, whose machine code piled up until the `small`
    # recipe died after 3 epochs ("LLVM ERROR: Unable to allocate section
    # memory", or a segmentation fault).
    import tensorflow as tf

    from keras_ordered.layers import TopDownTreeLSTM
    from keras_ordered.models.tdtreelstm.inputs import action_schedule

    layer = TopDownTreeLSTM(4, num_layers=2, context_dim=3)

    @tf.function(jit_compile=True)
    def step(schedule, *inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(list(inputs), schedule=schedule))
        return tape.gradient(loss, layer.trainable_weights)

    shapes, regions = set(), []
    for seed in (1, 2, 3):  # the same shapes, other trees
        rng = np.random.default_rng(seed)
        arrays, lengths = _random_batch(rng, [5, 9, 2, 7])
        schedule = action_schedule(arrays["actions"], arrays["sources"],
                                   lengths, rows=4)
        args = [tf.constant(schedule),
                tf.constant(rng.normal(size=arrays["actions"].shape + (6,)),
                            tf.float32),
                tf.constant(arrays["actions"]), tf.constant(arrays["sources"]),
                tf.constant(rng.normal(size=arrays["actions"].shape + (3,)),
                            tf.float32)]
        shapes.add(tuple(a.shape for a in args))
        step(*args)
        regions.append(_executable_regions())
    assert len(shapes) == 1
    assert regions[1] == regions[0] and regions[2] == regions[0], regions


@pytest.mark.trains
@pytest.mark.slow
def test_batches_carry_the_schedule_and_train_with_it():
    from keras_ordered.training.batching import TreeBatches

    model = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary(), ld=True,
                                                seed=5)
    batches = TreeBatches(model.encode(TREES), 5, left_context=True)
    inputs = next(batches.epoch(0))
    assert inputs["schedule"].shape[1] == 8
    plain = TreeBatches(model.encode(TREES), 5, left_context=True,
                        schedule_rows=None)
    assert "schedule" not in next(plain.epoch(0))
    dataset = batches.dataset(lambda: batches.stream(0, 1))
    model.compile(keras.optimizers.SGD(0.5), jit_compile=True)
    history = model.fit(dataset, epochs=3, steps_per_epoch=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_mixed_precision_gradients_of_the_schedule_match_the_generation_order():
    import tensorflow as tf

    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = TDTreeLSTMLanguageModel.from_preset("tiny", vocabulary(), ld=True,
                                                    seed=2)
        inputs = _batch(model)
        assert "schedule" in inputs
        grads = []
        for batch in (inputs, {k: v for k, v in inputs.items() if k != "schedule"}):
            with tf.GradientTape() as tape:
                total, _ = model.objective(batch, training=True)
            grads.append(tape.gradient(total, model.trainable_weights))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for scheduled, ordered in zip(*grads):
        scheduled = np.asarray(tf.convert_to_tensor(scheduled), "float32")
        ordered = np.asarray(tf.convert_to_tensor(ordered), "float32")
        assert np.isfinite(scheduled).all()
        assert (np.linalg.norm(scheduled - ordered)
                <= 0.05 * np.linalg.norm(ordered) + 1e-6)
