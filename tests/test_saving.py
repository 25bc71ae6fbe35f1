"""`keras_ordered.load_model`: round trips and one-line errors."""

import json
import shutil
import zipfile

import numpy as np
import pytest

import keras_ordered
from keras_ordered import saving
from keras_ordered.models.onlstm import ONLSTMLanguageModel

# Words no Keras message should ever print.
VOCABULARY = ["<eos>", "<unk>", "the", "cat", "sat", "quokka", "zygote", "N"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=VOCABULARY, seed=2)
    path = tmp_path_factory.mktemp("saved") / "tiny.keras"
    model.save(str(path))
    return model, path


def check_one_line(error, path):
    message = str(error)
    assert "\n" not in message
    assert repr(str(path)) in message
    assert "Full object config" not in message
    assert not {"quokka", "zygote"} & set(message.replace("'", " ").split())
    assert len(message) < 600
    return message


def test_load_model_round_trip(saved):
    model, path = saved
    assert keras_ordered.load_model is saving.load_model
    restored = keras_ordered.load_model(path)  # a path-like works too
    assert type(restored) is ONLSTMLanguageModel
    assert restored.vocabulary == VOCABULARY
    sentences = [["the", "cat", "sat"], ["quokka"]]
    expected = model.sentence_distances(sentences)
    for name, values in restored.sentence_distances(sentences).items():
        for a, b in zip(values, expected[name]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_missing_file_and_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="No model at") as info:
        saving.load_model(tmp_path / "missing.keras")
    check_one_line(info.value, tmp_path / "missing.keras")

    with pytest.raises(ValueError, match="is a folder, not a Keras model file"):
        saving.load_model(tmp_path)
    exported = tmp_path / "exported"
    exported.mkdir()
    (exported / "saved_model.pb").write_bytes(b"")
    with pytest.raises(ValueError, match="TensorFlow SavedModel folder"):
        saving.load_model(exported)


def test_corrupt_files(tmp_path, saved):
    _, path = saved
    noise = tmp_path / "noise.keras"
    noise.write_bytes(np.random.default_rng(0).bytes(4096))
    truncated = tmp_path / "truncated.keras"
    data = path.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    for bad in (noise, truncated):
        with pytest.raises(ValueError) as info:
            saving.load_model(bad)
        message = check_one_line(info.value, bad)
        assert "is not a readable Keras model file" in message
        assert "not found" not in message.lower()

    no_config = tmp_path / "no_config.keras"
    with zipfile.ZipFile(no_config, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(ValueError, match="holds no config.json"):
        saving.load_model(no_config)

    renamed = tmp_path / "model.zip"
    shutil.copy(path, renamed)
    with pytest.raises(ValueError, match="rename it"):
        saving.load_model(renamed)


def test_keras_errors_are_cut_before_the_config(tmp_path, saved):
    _, path = saved
    # The same archive, its model class renamed to one nobody registered.
    broken = tmp_path / "unknown_class.keras"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["class_name"] = "NoSuchModel"
                config["registered_name"] = "keras_ordered>NoSuchModel"
                config["config"]["vocabulary"] = VOCABULARY * 500
                data = json.dumps(config).encode()
            target.writestr(item, data)
    with pytest.raises(ValueError) as info:
        saving.load_model(broken)
    message = check_one_line(info.value, broken)
    assert message.startswith(f"Could not load the model {str(broken)!r}: ")
    assert "NoSuchModel" in message
    # Keras' own message stays reachable for debugging.
    assert "Full object config" in str(info.value.__context__)


# --- the vocabulary is an asset of the file, not part of its config ----------


def test_vocabulary_is_saved_as_an_asset(saved):
    model, path = saved
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
        words = json.loads(archive.read("assets/vocabulary.json"))
    assert words == VOCABULARY
    assert config["config"]["vocabulary"]["config"] == {"size": len(VOCABULARY)}
    assert "quokka" not in json.dumps(config)
    # In memory, the config keeps the words: from_config rebuilds the model.
    config = model.get_config()
    assert config["vocabulary"] == VOCABULARY
    clone = ONLSTMLanguageModel.from_config(config)
    assert clone.vocabulary == VOCABULARY and clone.get_config() == config
    # A config that went through JSON holds only the size, and says so on use.
    import keras

    rebuilt = keras.models.model_from_json(model.to_json())
    assert rebuilt.vocabulary_size == len(VOCABULARY)
    with pytest.raises(ValueError, match="knows only its vocabulary size"):
        rebuilt.sentence_distances([["the", "cat"]])


def test_files_with_the_vocabulary_in_their_config_still_load(tmp_path, saved):
    model, path = saved
    # The layout of the files saved before: the words in config.json, and
    # no assets.
    old = tmp_path / "old.keras"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(old, "w") as target:
        for item in source.infolist():
            if item.filename.startswith("assets/"):
                continue
            data = source.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["vocabulary"] = VOCABULARY
                data = json.dumps(config).encode()
            target.writestr(item, data)
    restored = saving.load_model(old)
    assert restored.vocabulary == VOCABULARY
    np.testing.assert_allclose(
        restored.sentence_distances([["the", "quokka"]])["layer2/forget"][0],
        model.sentence_distances([["the", "quokka"]])["layer2/forget"][0],
        rtol=1e-6,
    )


@pytest.mark.slow
def test_keras_without_keras_ordered_gives_a_short_error(tmp_path):
    import subprocess
    import sys

    vocabulary = ["<eos>", "<unk>"] + [f"vocabword{i}" for i in range(9998)]
    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=vocabulary)
    path = str(tmp_path / "ptb_sized.keras")
    model.save(path)
    result = subprocess.run(
        [sys.executable, "-c",
         f"import keras; keras.saving.load_model({path!r})"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    error = result.stderr.strip().splitlines()[-1]  # the exception's line
    assert "Could not locate class 'ONLSTMLanguageModel'" in error
    assert len(error) < 2000
    assert "vocabword" not in result.stderr  # (it held all 10,000 words)
    assert len(result.stderr) < 10_000


def test_a_string_where_tokens_belong_is_a_type_error(saved):
    # A plain string would be read one character per token (11 distances
    # for "the cat sat"): it is refused, saying to pass a list of tokens.
    model, _ = saved
    with pytest.raises(TypeError) as info:
        model.sentence_distances(["the cat sat"])
    message = str(info.value)
    assert message.startswith(
        "`sentences[0]` is the string 'the cat sat', not a list of tokens: "
        "pass a list of token strings, e.g. ['the', 'cat', 'sat']"
    )
    with pytest.raises(TypeError, match="`sentences` is a string"):
        model.sentence_distances("the cat sat")
    with pytest.raises(TypeError, match="`words` is the string 'cat'"):
        model.token_ids("cat")
    assert len(model.sentence_distances([("the", "cat")])["layer1/forget"][0]) == 2


def test_missing_model_suggests_the_closest_shipped_name(tmp_path, monkeypatch):
    # A misspelt shipped name (`--model prpn_ptb_quik`) gets the closest
    # shipped name and a pointer to list-models.
    shipped_dir = tmp_path / "saved_models"
    for name in ("prpn_ptb_quick", "onlstm_ptb_small"):
        (shipped_dir / name).mkdir(parents=True)
        (shipped_dir / name / "card.json").write_text("{}")
    monkeypatch.setenv("KERAS_ORDERED_SAVED_MODELS", str(shipped_dir))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as info:
        saving.load_model("prpn_ptb_quik")
    message = check_one_line(info.value, "prpn_ptb_quik")
    assert message.endswith(
        "Did you mean the shipped model 'prpn_ptb_quick'? (`keras-ordered "
        "list-models` lists them.)"
    )
    # A shipped name given to the file loader points to load_shipped
    # rather than suggesting the very name it was given.
    with pytest.raises(FileNotFoundError) as info:
        saving.load_model("prpn_ptb_quick")
    assert check_one_line(info.value, "prpn_ptb_quick").endswith(
        "'prpn_ptb_quick' is a shipped model, not a file: load it with "
        "`keras_ordered.saving.load_shipped('prpn_ptb_quick')`."
    )
    with pytest.raises(FileNotFoundError) as info:
        saving.load_model("nothing_like_it")
    assert str(info.value).endswith(
        "Shipped models: onlstm_ptb_small, prpn_ptb_quick "
        "(`keras-ordered list-models`)."
    )
    with pytest.raises(ValueError, match="Did you mean the shipped model "
                       "'onlstm_ptb_small'"):
        keras_ordered.shipped.shipped_card("onlstm_ptb_smal")


def test_weights_file_given_as_a_model_names_the_keras_file(tmp_path, saved):
    # A weights file given as a model (`--model best.weights.h5`) is
    # answered with the .keras file to pass instead.
    model, _ = saved
    run = tmp_path / "run"
    run.mkdir()
    weights = run / "best.weights.h5"
    model.save_weights(str(weights))
    model.save(str(run / "model.keras"))
    with pytest.raises(ValueError) as info:
        saving.load_model(weights)
    message = check_one_line(info.value, weights)
    assert "holds weights only" in message
    assert f"pass the `.keras` model file beside it: {str(run / 'model.keras')!r}" in message


def _as_version_0_1(weights_file):
    """Files a PRPN weights file's reading network as keras-ordered 0.1 did
    (under its class then, `keras.layers.RNN`)."""
    import h5py

    with h5py.File(weights_file, "r+") as store:
        store.move("layers/prpn_reading_network", "layers/rnn")


def test_prpn_files_of_version_0_1_still_load(tmp_path):
    import keras

    from harness import tiny_prpn_lm

    model = tiny_prpn_lm(seed=4)
    # A .keras archive of 0.1: its weights member with the old group.
    model.save(tmp_path / "new.keras")
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(tmp_path / "new.keras") as archive:
        archive.extractall(folder)
        names = archive.namelist()
    _as_version_0_1(folder / "model.weights.h5")
    old = tmp_path / "old.keras"
    with zipfile.ZipFile(old, "w") as archive:
        for name in names:
            archive.write(folder / name, name)
    with pytest.raises(ValueError):  # Keras alone misses the reading network
        keras.saving.load_model(old)
    restored = saving.load_model(str(old), compile=False)
    for a, b in zip(restored.weights, model.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))
    assert not any(p.name.startswith("keras_ordered_")
                   for p in tmp_path.iterdir())
    # A .weights.h5 file of 0.1, through the model's load_weights.
    model.save_weights(tmp_path / "old.weights.h5")
    _as_version_0_1(tmp_path / "old.weights.h5")
    fresh = tiny_prpn_lm(seed=5)
    fresh.load_weights(tmp_path / "old.weights.h5")
    for a, b in zip(fresh.weights, model.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))


def _weight_bytes(path):
    """`{dtype name: bytes}` of the arrays in a `.keras` file's weights."""
    import io

    import h5py

    sizes = {}

    def count(name, item):
        if isinstance(item, h5py.Dataset):
            sizes[item.dtype.name] = sizes.get(item.dtype.name, 0) + item.nbytes

    with zipfile.ZipFile(path) as archive:
        data = archive.read("model.weights.h5")
    with h5py.File(io.BytesIO(data), "r") as store:
        store.visititems(count)
    return sizes


@pytest.mark.backends
def test_half_precision_copy_loads_float32_weights_rounded_to_float16(
        tmp_path, saved):
    import keras

    model, path = saved
    copy = saving.half_precision_copy(path, tmp_path / "half.keras")
    assert copy == str(tmp_path / "half.keras")
    restored = keras_ordered.load_model(copy, compile=False)
    assert restored.vocabulary == VOCABULARY
    assert [w.path for w in restored.weights] == [w.path for w in model.weights]
    rounded = []
    for got, original in zip(restored.weights, model.weights):
        assert got.dtype == original.dtype == "float32"
        want = keras.ops.convert_to_numpy(original).astype(np.float16)
        rounded.append(want.astype(np.float32))
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(got),
                                      rounded[-1])
    # The weights member holds float16 arrays: half the bytes of weights.
    assert _weight_bytes(copy) == {"float16": _weight_bytes(path)["float32"]
                                   // 2}
    assert _compress_types(copy) == {zipfile.ZIP_DEFLATED}
    # The copy computes what the original computes with rounded weights.
    model_rounded = keras_ordered.load_model(path, compile=False)
    model_rounded.set_weights(rounded)
    sentences = [["the", "cat", "sat"], ["quokka", "zygote"]]
    expected = model_rounded.sentence_distances(sentences)
    for name, values in restored.sentence_distances(sentences).items():
        for a, b in zip(values, expected[name]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.backends
def test_half_precision_copy_errors(tmp_path, saved):
    import h5py

    _, path = saved
    with pytest.raises(ValueError, match="another file") as error:
        saving.half_precision_copy(path, path)
    check_one_line(error.value, path)
    with pytest.raises(FileNotFoundError):
        saving.half_precision_copy(tmp_path / "missing.keras",
                                   tmp_path / "out.keras")
    # A weight float16 cannot hold is refused, not stored as infinity.
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(path) as archive:
        archive.extractall(folder)
        names = archive.namelist()
    with h5py.File(folder / "model.weights.h5", "r+") as store:
        datasets = []
        store.visititems(lambda n, i: datasets.append(n)
                         if isinstance(i, h5py.Dataset) else None)
        store[datasets[0]][...] = 1e6
    big = tmp_path / "big.keras"
    with zipfile.ZipFile(big, "w") as archive:
        for name in names:
            archive.write(folder / name, name)
    with pytest.raises(ValueError, match="float16 cannot hold") as error:
        saving.half_precision_copy(big, tmp_path / "out.keras")
    check_one_line(error.value, big)
    assert not (tmp_path / "out.keras").exists()


def _compress_types(path):
    with zipfile.ZipFile(path) as archive:
        return {info.compress_type for info in archive.infolist()}


@pytest.mark.backends
def test_compressed_copy_is_the_same_model_in_a_smaller_file(tmp_path):
    import keras

    model = ONLSTMLanguageModel.from_preset("tiny", vocabulary=VOCABULARY,
                                            seed=2)
    # Trained weights deflate (a freshly initialised model's zeros deflate
    # much more): give every weight random float32 values.
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape).astype("float32")
                       for w in model.get_weights()])
    path = tmp_path / "model.keras"
    model.save(path)
    assert _compress_types(path) == {zipfile.ZIP_STORED}
    copy = saving.compressed_copy(path, tmp_path / "small.keras")
    assert copy == str(tmp_path / "small.keras")
    assert _compress_types(copy) == {zipfile.ZIP_DEFLATED}
    assert (tmp_path / "small.keras").stat().st_size < path.stat().st_size
    with zipfile.ZipFile(path) as original, zipfile.ZipFile(copy) as small:
        assert original.namelist() == small.namelist()
        for name in original.namelist():
            assert original.read(name) == small.read(name)
    restored = keras_ordered.load_model(copy, compile=False)
    assert restored.vocabulary == VOCABULARY
    assert restored.get_config() == model.get_config()
    for got, want in zip(restored.weights, model.weights):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(got),
                                      keras.ops.convert_to_numpy(want))


def test_compressed_copy_errors(tmp_path, saved):
    _, path = saved
    with pytest.raises(ValueError, match="compressed copy to another file"
                       ) as error:
        saving.compressed_copy(path, path)
    check_one_line(error.value, path)
    with pytest.raises(FileNotFoundError):
        saving.compressed_copy(tmp_path / "missing.keras",
                               tmp_path / "out.keras")
    assert not (tmp_path / "out.keras").exists()
