"""The LSTM+A parser of "Grammar as a Foreign Language" (models/gfl, the
attention decoder layers).

The tests marked `backends` run on TensorFlow, JAX and PyTorch
(`KERAS_BACKEND=jax|torch` keeps only them); the others are TensorFlow's
(its XLA train step, its fast paths against the `keras.ops` fallbacks)."""

import keras
import numpy as np
import pytest

import keras_ordered
from harness import GFL_SYMBOLS as SYMBOLS
from harness import GFL_WORDS as WORDS
from harness import gradients
from harness import tiny_gfl_parser
from harness import to_numpy
from keras_ordered.layers import AttentionDecoder
from keras_ordered.layers import BahdanauAttention
from keras_ordered.models.gfl import GFLParser
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary
from keras_ordered.models.gfl import decoding
from keras_ordered.models.gfl import get_preset
from keras_ordered.models.gfl import load_word_vectors
from keras_ordered.models.gfl.vocabulary import EOS_ID
from keras_ordered.models.gfl.vocabulary import GO_ID

backends = pytest.mark.backends
tensorflow_only = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="compares TensorFlow's fast paths with the keras.ops ones",
)

SOURCE = SourceVocabulary(WORDS)
TARGET = TargetVocabulary(SYMBOLS)


def tiny_parser(**overrides):
    return tiny_gfl_parser(SOURCE, TARGET, **overrides)


def random_batch(seed=0, lengths=(5, 3, 1), target_length=7):
    rng = np.random.default_rng(seed)
    source = np.zeros((len(lengths), max(lengths)), "int32")
    for row, n in enumerate(lengths):
        source[row, :n] = rng.integers(1, len(SOURCE), n)
    target_in = rng.integers(3, len(TARGET), (len(lengths), target_length))
    target_in[:, 0] = GO_ID
    return source, target_in.astype("int32")


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


# --- the attention -----------------------------------------------------------
@backends
def test_attention_matches_numpy_and_ignores_padding():
    rng = np.random.default_rng(1)
    attention = BahdanauAttention(6)
    query = rng.normal(size=(3, 5)).astype("float32")
    memory = rng.normal(size=(3, 7, 4)).astype("float32")
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3, [1] + [0] * 6], bool)
    attention.build([query.shape, memory.shape])
    for variable in attention.weights:
        variable.assign(rng.normal(size=variable.shape).astype("float32"))
    context, weights = attention([query, memory], mask=mask)
    context, weights = to_numpy(context), to_numpy(weights)

    w1 = to_numpy(attention.memory_kernel)
    w2 = to_numpy(attention.query_kernel)
    v = to_numpy(attention.score_vector)[:, 0]
    # u_i = v^T tanh(W1' h_i + W2' d), a = softmax over the real positions.
    u = np.tanh(memory @ w1 + (query @ w2)[:, None, :]) @ v
    expected = np.zeros_like(u)
    for b in range(3):
        real = mask[b]
        e = np.exp(u[b, real] - u[b, real].max())
        expected[b, real] = e / e.sum()
    expected_context = (expected[:, :, None] * memory).sum(1)
    np.testing.assert_allclose(weights, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(context, expected_context, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-6)
    assert np.all(weights[~mask] == 0.0)


@backends
def test_greedy_attention_sums_to_one_over_words_and_is_zero_on_padding():
    parser = tiny_parser()
    # An untrained parser that prefers <pad> or <go> must not emit them.
    bias = parser.output_layer.bias
    bias.assign(to_numpy(bias) + 50.0 * np.isin(np.arange(len(TARGET)), [0, 1]))
    source, _ = random_batch(lengths=(5, 2))
    result = parser.greedy_decode(source)
    assert not np.isin(result["tokens"][:, 0], [0, GO_ID]).any()
    attention, tokens = result["attention"], result["tokens"]
    assert attention.shape == (2, tokens.shape[1], 5)
    emitted = (tokens != 0)[:, :, None] & np.ones_like(attention, bool)
    sums = attention.sum(-1)
    np.testing.assert_allclose(sums[tokens != 0], 1.0, rtol=1e-5)
    assert np.all(sums[tokens == 0] == 0.0)  # after the end
    assert np.all(attention[1, :, 2:] == 0.0)  # the second sentence's padding
    assert emitted.any()


# --- teacher forcing and step-by-step decoding --------------------------------
@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"input_feeding": "bottom"},
        {"input_feeding": None, "num_layers": 1},
        {"attention": False, "num_layers": 3},
    ],
    ids=["top", "bottom", "no-feeding-1-layer", "no-attention"],
)
@backends
def test_teacher_forced_logits_equal_step_by_step_decoding(overrides):
    parser = tiny_parser(**overrides)
    source, target_in = random_batch(seed=2)
    logits = to_numpy(parser([source, target_in]))
    assert logits.shape == (3, target_in.shape[1], len(TARGET))

    encoded = parser.encode(source)
    states = encoded["states"]
    for t in range(target_in.shape[1]):
        step_logits, states, _ = parser.decode_step(target_in[:, t], states, encoded)
        np.testing.assert_allclose(
            to_numpy(step_logits), logits[:, t], rtol=1e-5, atol=1e-5
        )


@backends
def test_padding_does_not_change_a_sentence():
    parser = tiny_parser()
    source, target_in = random_batch(seed=4, lengths=(3,))
    padded = np.concatenate([source, np.zeros((1, 4), "int32")], axis=1)
    np.testing.assert_allclose(
        to_numpy(parser([source, target_in])),
        to_numpy(parser([padded, target_in])),
        atol=1e-5,
    )


@backends
def test_no_attention_decoder_starts_from_the_encoder_states():
    parser = tiny_parser(attention=False)
    source, _ = random_batch(seed=5)
    encoded = parser.encode(source)
    assert len(encoded["states"]) == 2 * parser.num_layers  # no context
    memory = to_numpy(encoded["memory"])
    top_h = to_numpy(encoded["states"][-2])
    # The top layer's final h is its output at each sentence's last word.
    for row, n in enumerate((5, 3, 1)):
        np.testing.assert_allclose(top_h[row], memory[row, n - 1], atol=1e-6)
    assert parser.decoder.feature_size() == parser.units


# --- searches -------------------------------------------------------------------
@backends
def test_beam_of_one_equals_greedy():
    for seed in (0, 1):
        parser = tiny_parser(seed=seed)
        source, _ = random_batch(seed=seed + 10, lengths=(6, 4, 2, 1))
        greedy = parser.greedy_decode(source)
        beam = parser.beam_decode(source, beam_size=1)
        np.testing.assert_array_equal(beam["tokens"], greedy["tokens"])
        np.testing.assert_array_equal(beam["lengths"], greedy["lengths"])
        np.testing.assert_allclose(beam["scores"], greedy["scores"], rtol=1e-6)


@backends
def test_beam_scores_are_the_teacher_forced_log_probabilities():
    parser = tiny_parser()
    source, _ = random_batch(seed=6, lengths=(4, 2))
    beam = parser.beam_decode(source, beam_size=3)
    scores = beam["beam_scores"]
    assert np.all(np.diff(scores, axis=1) <= 1e-6)  # best first
    for k in range(3):
        tokens = beam["beam_tokens"][:, k]
        target_in = np.concatenate(
            [np.full((2, 1), GO_ID, "int32"), tokens[:, :-1]], axis=1
        )
        logits = to_numpy(parser([source, target_in])).astype("float64")
        logits[..., [0, GO_ID]] = -np.inf  # never decoded
        log_probs = log_softmax(logits)
        expected = []
        for row in range(2):
            # The symbols up to and including <eos> (or the cut).
            n = beam["beam_lengths"][row, k]
            n += int(n < tokens.shape[1] and tokens[row, n] == EOS_ID)
            expected.append(
                sum(log_probs[row, t, tokens[row, t]] for t in range(n))
            )
        np.testing.assert_allclose(scores[:, k], expected, rtol=1e-4, atol=1e-4)


@backends
def test_output_length_is_bounded_by_the_input_length():
    parser = tiny_parser()
    source, _ = random_batch(seed=7, lengths=(3, 1))
    for decode in (parser.greedy_decode, parser.beam_decode):
        result = decode(source, max_length_factor=1, max_length_offset=1)
        tokens = result["tokens"]
        assert tokens.shape[1] <= 4
        assert np.all((tokens[1, 2:] == 0))  # 1 * 1 + 1 symbols at most
        assert np.all(result["lengths"] <= np.array([4, 2]))


# --- training -------------------------------------------------------------------
@backends
def test_gradients_reach_every_weight():
    parser = tiny_parser(dropout=0.2)
    source, target_in = random_batch(seed=8)
    target_out = np.concatenate([target_in[:, 1:], np.full((3, 1), EOS_ID)], 1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=0
    )

    def loss():
        return loss_fn(target_out, parser([source, target_in], training=True))

    grads = gradients(loss, parser.trainable_weights)
    names = [w.path for w in parser.trainable_weights]
    layers = parser.num_layers  # 2 embeddings, 3 per LSTM, attention, dense
    assert len(names) == 2 + 3 * layers + 3 * layers + 3 + 2
    for name, grad in zip(names, grads):
        assert grad is not None, name
        assert np.all(np.isfinite(grad)), name
        assert np.abs(grad).sum() > 0, name


@backends
@pytest.mark.trains
def test_fit_takes_a_few_steps():
    # Keras' own train step, on every backend.
    source, target_in = random_batch(seed=14)
    target_out = np.concatenate([target_in[:, 1:], np.full((3, 1), EOS_ID)], 1)
    keras.utils.set_random_seed(2)
    parser = tiny_parser(dropout=0.1)
    before = [to_numpy(w) for w in parser.trainable_weights]
    parser.compile(optimizer=keras.optimizers.Adam(0.01))
    history = parser.fit(
        [source, target_in], target_out, epochs=3, batch_size=3, verbose=0
    )
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    for weight, old in zip(parser.trainable_weights, before):
        assert not np.array_equal(to_numpy(weight), old), weight.path


@backends
def test_default_loss_averages_over_non_padding_targets():
    parser = tiny_parser()
    parser.compile()
    source, target_in = random_batch(seed=9)
    target_out = np.concatenate([target_in[:, 1:], np.full((3, 1), EOS_ID)], 1)
    target_out[1, 4:] = 0
    target_out[2, 2:] = 0
    logits = to_numpy(parser([source, target_in])).astype("float64")
    log_probs = log_softmax(logits)
    real = target_out != 0
    picked = np.take_along_axis(log_probs, target_out[..., None], -1)[..., 0]
    expected = -picked[real].mean()
    loss = parser.compute_loss(y=target_out, y_pred=parser([source, target_in]))
    np.testing.assert_allclose(float(to_numpy(loss)), expected, rtol=1e-5)


@pytest.mark.trains
@pytest.mark.slow
def test_xla_train_step_matches_the_plain_one():
    source, target_in = random_batch(seed=13)
    target_out = np.concatenate([target_in[:, 1:], np.full((3, 1), EOS_ID)], 1)
    losses = []
    for jit_compile in (False, True):
        keras.utils.set_random_seed(1)  # the same initial weights
        parser = tiny_parser(dropout=0.0)
        parser.compile(optimizer=keras.optimizers.SGD(0.1), jit_compile=jit_compile)
        history = parser.fit(
            [source, target_in], target_out, epochs=2, batch_size=3, verbose=0
        )
        losses.append(history.history["loss"])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4)
    assert losses[0][1] < losses[0][0]


@pytest.mark.trains
@pytest.mark.slow
def test_overfits_four_pairs_to_exact_greedy_match():
    sentences = [
        ["john", "has", "a", "dog"],
        ["mary", "runs"],
        ["the", "cat", "sleeps"],
        ["john", "runs"],
    ]
    trees = [
        ["(S", "(NP", "XX", ")NP", "(VP", "XX", "(NP", "XX", "XX", ")NP", ")VP", ")S"],
        ["(S", "(NP", "XX", ")NP", "(VP", "XX", ")VP", ")S"],
        ["(S", "(NP", "XX", "XX", ")NP", "(VP", "XX", ")VP", ")S"],
        ["(S", "XX", "(VP", "XX", ")VP", ")S"],
    ]
    source = SOURCE.encode_batch([s[::-1] for s in sentences])
    target_in, target_out = TARGET.teacher_forcing_batch(trees)
    keras.utils.set_random_seed(0)
    parser = tiny_parser(units=32, attention_units=16, dropout=0.0)
    parser.compile(optimizer=keras.optimizers.Adam(0.02))
    repeats = 250
    parser.fit(
        [np.tile(source, (repeats, 1)), np.tile(target_in, (repeats, 1))],
        np.tile(target_out, (repeats, 1)),
        batch_size=4,
        epochs=1,
        shuffle=False,
        verbose=0,
    )
    assert parser.symbols(parser.greedy_decode(source)["tokens"]) == trees
    assert parser.symbols(parser.beam_decode(source, beam_size=3)["tokens"]) == trees


@backends
def test_mixed_bfloat16_forward_and_decoding_are_finite():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        parser = tiny_parser()
        source, target_in = random_batch(seed=11)
        logits = parser([source, target_in], training=True)
        result = parser.greedy_decode(source)
        beam = parser.beam_decode(source, beam_size=2)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert parser.decoder.compute_dtype == "bfloat16"
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.isfinite(to_numpy(logits)).all()
    assert np.isfinite(result["scores"]).all() and np.isfinite(result["attention"]).all()
    np.testing.assert_allclose(result["attention"].sum(-1)[result["tokens"] != 0], 1.0, atol=1e-5)
    assert np.isfinite(beam["scores"]).all()


# --- saving ---------------------------------------------------------------------
@pytest.mark.trains
@backends
def test_keras_file_round_trip(harness):
    parser = tiny_parser(input_feeding="bottom")
    parser.compile()
    source, target_in = random_batch(seed=12)
    target_out = np.concatenate([target_in[:, 1:], np.full((3, 1), EOS_ID)], 1)
    parser.fit([source, target_in], target_out, epochs=1, verbose=0)
    # The teacher-forced logits, to 1e-6.
    loaded = harness.run_model_saving_test(
        parser, [source, target_in], atol=1e-6, filename="gfl.keras")
    assert isinstance(loaded, GFLParser)
    assert loaded.compiled and isinstance(
        loaded.loss, keras.losses.SparseCategoricalCrossentropy
    )
    assert loaded.source_vocabulary == SOURCE and loaded.target_vocabulary == TARGET
    assert loaded.input_feeding == "bottom"
    for name in ("greedy_decode", "beam_decode"):
        expected, got = getattr(parser, name)(source), getattr(loaded, name)(source)
        np.testing.assert_array_equal(got["tokens"], expected["tokens"])

    config = parser.get_config()
    assert keras.saving.serialize_keras_object(config["source_vocabulary"])[
        "config"
    ] == {"size": len(SOURCE)}
    rebuilt = GFLParser.from_config(config)
    assert rebuilt.get_config() == config


@backends
def test_config_of_sizes_only_and_layers_round_trip(harness):
    parser = GFLParser(30, 12, embedding_dim=4, units=6, num_layers=1, dropout=0.0)
    config = keras.saving.serialize_keras_object(parser)
    rebuilt = keras.saving.deserialize_keras_object(config)
    assert rebuilt.source_vocabulary is None and rebuilt.source_vocabulary_size == 30
    with pytest.raises(ValueError, match="only its target vocabulary's size"):
        rebuilt.symbols([[3, 2]])
    harness.run_serialization_test(
        AttentionDecoder(8, num_layers=2, input_feeding=None, dropout=0.1))


# --- vocabularies, word vectors, presets -----------------------------------------
@backends
def test_vocabularies():
    source = SourceVocabulary.from_sentences(
        [["The", "dog"], ["the", "cat"]], lowercase=True
    )
    assert list(source) == ["<pad>", "<unk>", "the", "cat", "dog"]
    assert source.encode(["THE", "bird"]) == [2, 1]
    assert SourceVocabulary(list(source), lowercase=True) == source
    ids = source.encode_batch([["dog", "the"], ["cat"]])
    np.testing.assert_array_equal(ids, [[4, 2], [3, 0]])
    target_in, target_out = TARGET.teacher_forcing_batch([["(S", "XX", ")S"], ["XX"]])
    s, x, e = TARGET.encode(["(S", "XX", ")S"])
    np.testing.assert_array_equal(target_in, [[1, s, x, e], [1, x, 0, 0]])
    np.testing.assert_array_equal(target_out, [[s, x, e, 2], [x, 2, 0, 0]])
    assert TARGET.decode([s, x, e, 2, x]) == ["(S", "XX", ")S"]
    with pytest.raises(ValueError, match="no symbol '\\(FOO'"):
        TARGET.encode(["(FOO"])


@backends
def test_load_word_vectors(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("3 2\nDog 1 2\n<unk> 5 6\ncat 3 4\nzebra 7 8\n", encoding="utf-8")
    vocabulary = SourceVocabulary(["dog", "cat", "bird"], lowercase=True)
    matrix, found = load_word_vectors(str(path), vocabulary, 2)
    assert matrix.shape == (5, 2) and found == 3
    np.testing.assert_array_equal(matrix[0], [0, 0])  # <pad>
    np.testing.assert_array_equal(matrix[1], [5, 6])  # <unk>
    np.testing.assert_array_equal(matrix[2:4], [[1, 2], [3, 4]])
    assert np.all(np.abs(matrix[4]) <= 0.05)  # bird: random
    parser = GFLParser(vocabulary, TARGET, embedding_dim=2, units=4, num_layers=1)
    parser.set_source_embeddings(matrix)
    np.testing.assert_array_equal(to_numpy(parser.source_embedding.embeddings), matrix)
    with pytest.raises(ValueError, match="expected dim=3"):
        load_word_vectors(str(path), vocabulary, 3)
    with pytest.raises(ValueError, match="must have shape"):
        parser.set_source_embeddings(matrix[:, :1])


@backends
def test_presets():
    paper = get_preset("paper")
    assert paper["model"]["num_layers"] == 3 and paper["model"]["units"] == 256
    assert paper["model"]["embedding_dim"] == 512
    assert paper["decoding"]["beam_size"] == 10
    parser = GFLParser.from_preset("small", 100, 20)
    assert parser.units == 128 and parser.num_layers == 2
    with pytest.raises(ValueError, match="Valid presets: paper, small, tiny"):
        GFLParser.from_preset("huge", SOURCE, TARGET)
    assert keras_ordered.models.GFLParser is GFLParser


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"num_layers": 0}, "num_layers` must be a positive integer"),
        ({"units": 2.5}, "units` must be a positive integer"),
        ({"dropout": 1.0}, "dropout` must be in"),
        ({"input_feeding": "middle"}, "input_feeding` must be 'top'"),
        ({"target_vocabulary": 3}, "at least 4 tokens"),
        ({"target_vocabulary": SOURCE}, "swap the source and target"),
    ],
)
@backends
def test_bad_arguments_are_clear(overrides, message):
    config = {"source_vocabulary": SOURCE, "target_vocabulary": TARGET}
    config.update(overrides)
    with pytest.raises(ValueError, match=message):
        GFLParser(**{"embedding_dim": 4, "units": 4, **config})


@backends
def test_bad_decoding_arguments_are_clear():
    parser = tiny_parser()
    source, _ = random_batch()
    with pytest.raises(ValueError, match="beam_size` must be a positive integer"):
        parser.beam_decode(source, beam_size=0)
    with pytest.raises(ValueError, match="both 0"):
        parser.greedy_decode(source, max_length_factor=0, max_length_offset=0)
    with pytest.raises(ValueError, match="2-D int array"):
        parser.greedy_decode(source[0])


# --- the TensorFlow fast paths against the keras.ops fallbacks ---------------
@tensorflow_only
@pytest.mark.parametrize(
    "overrides",
    [{}, {"input_feeding": "bottom"}, {"attention": False}],
    ids=["top", "bottom", "no-attention"],
)
def test_keras_ops_loop_equals_the_tensorflow_loop(overrides):
    parser = tiny_parser(dropout=0.3, **overrides)
    source, target_in = random_batch(seed=15)
    decoder = parser.decoder
    encoded = parser.encode(source)
    encoder_states = encoded["states"][: 2 * parser.num_layers]
    inputs = [
        parser.target_embedding(target_in),
        encoded["memory"],
        encoded["mask"],
        *encoder_states,
    ]
    state = to_numpy(decoder.seed_generator.state)
    outputs = {}
    for implementation in ("auto", "ops"):
        decoder._loop_implementation = implementation
        logits = parser([source, target_in])
        # The same dropout masks: the seed generator starts from the same
        # state.
        decoder.seed_generator.state.assign(state)
        features, weights = decoder(inputs, training=True)
        outputs[implementation] = [to_numpy(x) for x in (logits, features, weights)]
    for fast, generic in zip(outputs["auto"], outputs["ops"]):
        np.testing.assert_allclose(generic, fast, rtol=1e-6, atol=1e-6)


@tensorflow_only
def test_keras_ops_decoding_equals_the_tensorflow_graph():
    parser = tiny_parser()
    source, _ = random_batch(seed=16, lengths=(6, 4, 2, 1))
    results = {}
    for implementation in ("auto", "ops"):
        parser._decoding_implementation = implementation
        results[implementation] = [
            parser.greedy_decode(source),
            parser.beam_decode(source, beam_size=4),
            parser.beam_decode(source, beam_size=2, max_length_factor=1,
                               max_length_offset=1),
        ]
    for fast, generic in zip(results["auto"], results["ops"]):
        assert sorted(fast) == sorted(generic)
        for name in fast:
            assert generic[name].dtype == fast[name].dtype, name
            assert generic[name].shape == fast[name].shape, name
            if generic[name].dtype.kind == "f":
                np.testing.assert_allclose(generic[name], fast[name], atol=1e-6)
            else:
                np.testing.assert_array_equal(generic[name], fast[name])


@backends
def test_jax_decodes_one_program_per_length_bucket_as_the_eager_loop_does():
    if keras.backend.backend() != "jax":
        pytest.skip("JAX compiles the searches (TensorFlow has its graph; "
                    "PyTorch runs them eagerly)")
    parser = tiny_parser(seed=11)
    rng = np.random.default_rng(11)
    # Weights of a trained parser's scale: outputs that end at <eos>.
    for weight in parser.weights:
        weight.assign(rng.normal(scale=0.5, size=weight.shape)
                      .astype("float32"))
    traced = []
    encode = parser.encode

    def counting(source_ids):
        traced.append(tuple(source_ids.shape))
        return encode(source_ids)

    parser.encode = counting
    batches = [random_batch(seed, lengths=lengths)[0] for seed, lengths in
               ((1, (5, 3, 1)), (2, (7, 2, 2)), (3, (9, 4, 1)))]
    results = [(parser.greedy_decode(source),
                parser.beam_decode(source, beam_size=3))
               for source in batches]
    # Widths 5 and 7 share the program of 8 words; 9 takes 16's. One
    # trace each for greedy and for beam search, none per call.
    assert traced == [(3, 8), (3, 8), (3, 16), (3, 16)]
    parser.encode = encode
    for source, (greedy, beam) in zip(batches[1:], results[1:]):
        # The same searches run eagerly on the unpadded batch.
        encoded = parser.encode(source)
        lengths = np.sum(source != 0, axis=1)
        arguments = dict(
            step_fn=parser._step_function(), states=encoded["states"],
            constants=[encoded["memory"], encoded["keys"], encoded["mask"]],
            max_lengths=3 * lengths + 10, go_id=GO_ID, eos_id=EOS_ID,
            implementation="ops")
        for compiled, eager in (
                (greedy, decoding.greedy_search(**arguments)),
                (beam, decoding.beam_search(beam_size=3, **arguments))):
            assert sorted(compiled) == sorted(eager)
            for name in eager:
                eager_value = to_numpy(eager[name])
                assert compiled[name].shape == eager_value.shape, name
                np.testing.assert_allclose(compiled[name], eager_value,
                                           atol=1e-6)



@backends
def test_the_tensorflow_searches_elsewhere_fail_with_one_clear_line():
    if keras.backend.backend() == "tensorflow":
        pytest.skip("the TensorFlow searches run on TensorFlow")
    with pytest.raises(ValueError, match="needs the TensorFlow backend"):
        decoding.greedy_search(None, [], [], np.array([3]), 1, 2,
                               implementation="tensorflow")
    with pytest.raises(ValueError, match="`implementation` must be"):
        decoding.beam_search(None, [], [], np.array([3]), 1, 2,
                             implementation="xla")
