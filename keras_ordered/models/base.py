"""What every language model of the package that induces syntax shares.

A *distance model* is a `keras.Model` that, besides next-word log-probabilities,
yields one syntactic distance per position (Shen et al., 2018; 2019): the
top-down parser of `keras_ordered.parsing` turns those into trees. The
parsing evaluation, the `keras-ordered parse` command and the parsing callback
only rely on the small protocol defined here, never on a concrete model.
"""

import collections.abc
import contextlib
import copy
import inspect
import json
import os

import keras
import numpy as np

from keras_ordered._tokens import check_token_list
from keras_ordered._tokens import check_token_lists
from keras_ordered.datasets.treebank import normalize_word
from keras_ordered import backend
from keras_ordered import saving
from keras_ordered import shipped
from keras_ordered._tokens import BOS
from keras_ordered._tokens import EOS
from keras_ordered._tokens import UNK

VOCABULARY_ASSET = "vocabulary.json"
"""The file of a `.keras` archive's assets that holds a model's words."""
WORD_NUMBERS = "digit-runs"
"""How `token_ids` writes the numbers of a word its vocabulary does not hold
(`keras_ordered.datasets.treebank.normalize_word`): as the command line
and the exported SavedModels do by default."""

DIRECTIONS = ("forward", "backward")
"""The directions a language model reads its text in (its `direction`)."""


def backward_to_forward(distances):
    """A backward-reading model's distances of one sentence, in the forward
    convention of `SyntacticDistanceMixin.sentence_distances`.

    Read backward (`w_{n-1} .. w_0`), the distance computed at a word
    measures the gap between it and the word read before it: the gap
    *after* it in the sentence's own order. So value `k > 0` of the result,
    the gap between `w_{k-1}` and `w_k`, is the distance computed at
    `w_{k-1}`; value 0, the gap before the first word, is the other
    sentence boundary: the distance computed at the first word read.

    Args:
        distances: 1-D array, the distances in reading order.

    Returns:
        1-D array of the same length.

    Example:

    >>> backward_to_forward(np.array([9.0, 1.0, 2.0, 3.0]))
    array([9., 3., 2., 1.])
    """
    distances = np.asarray(distances)
    return np.concatenate([distances[:1], distances[:0:-1]])


def check_direction(direction):
    """Returns `direction` if it is one of `DIRECTIONS`; raises otherwise."""
    if direction not in DIRECTIONS:
        raise ValueError(
            f"`direction` must be one of {DIRECTIONS}. Received: "
            f"direction={direction!r}")
    return direction


@keras.saving.register_keras_serializable(package="keras_ordered")
class Vocabulary(collections.abc.Sequence):
    """A language model's word list, as the model's config holds it.

    In memory, a read-only sequence of the words (index = token id) that
    compares equal to the list of them, so that
    `Model.from_config(model.get_config())` rebuilds the same model.
    Serialized (the `config.json` of a `.keras` file, `model.to_json()`),
    only its size: the words are saved beside the weights, as the model's
    asset `vocabulary.json` (see `SyntacticDistanceMixin.save_assets`).
    A config file then stays a few hundred characters long, and so does
    the message of Keras when it meets the model's class unregistered
    (it prints the whole config).

    Args:
        words: list of str, or None when only the size is known (a config
            read from a file, before the model's assets are loaded).
        size: int, the number of words; with `words`, it must match.

    Example:

    ```python
    vocabulary = keras_ordered.models.base.Vocabulary(["<eos>", "<unk>", "a"])
    assert vocabulary == ["<eos>", "<unk>", "a"]
    assert keras.saving.serialize_keras_object(vocabulary)["config"] == {"size": 3}
    ```
    """

    def __init__(self, words=None, size=None):
        if words is None and size is None:
            raise ValueError("Pass the words of the vocabulary, or its size.")
        if words is not None:
            words = tuple(str(w) for w in words)
            if size is not None and size != len(words):
                raise ValueError(
                    f"The vocabulary has {len(words)} words but size={size}."
                )
            size = len(words)
        self.words = words
        self.size = int(size)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.words is None:
            raise ValueError(
                f"This vocabulary knows only its size ({self.size}), not its "
                "words (they are the .keras file's asset vocabulary.json)."
            )
        return self.words[index]

    def __eq__(self, other):
        if isinstance(other, Vocabulary):
            return (self.size, self.words) == (other.size, other.words)
        if isinstance(other, collections.abc.Sequence) and not isinstance(
            other, str
        ):
            return self.words is not None and list(self.words) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        if self.words is None:
            return f"Vocabulary(size={self.size})"
        return f"Vocabulary({self.size} words: {', '.join(self.words[:5])}, ...)"

    def get_config(self):
        return {"size": self.size}

    @classmethod
    def from_config(cls, config):
        return cls(size=config["size"])


def check_vocabulary(vocabulary):
    """`(vocabulary_size, words)` of a word list, a `Vocabulary` or a size.

    `words` is None when only a size is given (an int, or a `Vocabulary`
    read from a config file, whose words come with the model's assets). A
    word list must hold `<eos>` and `<unk>` (a ValueError says so
    otherwise).
    """
    if isinstance(vocabulary, Vocabulary):
        if vocabulary.words is None:
            return len(vocabulary), None
        vocabulary = vocabulary.words
    if isinstance(vocabulary, int):
        return vocabulary, None
    words = [str(w) for w in vocabulary]
    missing = {EOS, UNK} - set(words)
    if missing:
        raise ValueError(
            f"The vocabulary lacks {sorted(missing)}: the language "
            "model needs `<eos>` (sentence ends) and `<unk>`."
        )
    return len(words), words


@contextlib.contextmanager
def dtype_policy_scope(dtype):
    """Layers made inside take the dtype policy `dtype`.

    A model builds its layers in its constructor; run inside this scope,
    every layer, its sublayers included, takes the model's `dtype` (a
    policy, its name or its serialized config) instead of the global policy,
    which is restored on leaving. `None` leaves the global policy.
    """
    if dtype is None:
        yield
        return
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(keras.dtype_policies.get(dtype))
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def base_model_config(model):
    """The keyword arguments every model's config starts with: its name,
    whether it is trainable and its dtype policy (as keras-hub's
    `Backbone.get_config` gives them)."""
    return {
        "name": model.name,
        "trainable": model.trainable,
        "dtype": keras.dtype_policies.serialize(model.dtype_policy),
    }


def constructor_defaults(model_class):
    """The default of each model argument of `model_class` (not the
    vocabularies, the seed, the dtype policy or the name), as a preset
    writes it: a tuple as a list."""
    skipped = {"self", "vocabulary", "source_vocabulary",
               "target_vocabulary", "seed", "dtype", "name", "trainable"}
    parameters = inspect.signature(model_class.__init__).parameters.values()
    return {p.name: list(p.default) if isinstance(p.default, tuple)
            else p.default for p in parameters
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in skipped
            and p.default is not p.empty}


def lookup_preset(presets, name, family, model_class=None):
    """A deep copy of `presets[name]`; a ValueError lists the valid names.

    A preset's `model` holds its departures from the constructor's
    defaults (as keras-hub's presets); with `model_class`, the copy's
    `model` holds every model argument: the constructor's defaults, with
    the preset's departures.
    """
    if name not in presets:
        trained = shipped.shipped_names()
        raise ValueError(
            f"Unknown {family} preset {name!r}. Valid presets: "
            f"{', '.join(sorted(presets))}"
            + (f"; shipped trained models: {', '.join(trained)}."
               if trained else ".")
        )
    preset = copy.deepcopy(presets[name])
    if model_class is not None:
        preset["model"] = {**constructor_defaults(model_class),
                           **preset.get("model", {})}
    return preset


class classproperty:
    """A read-only property of a class, as keras-hub's `classproperty`."""

    def __init__(self, getter):
        self.getter = getter
        self.__doc__ = getter.__doc__

    def __get__(self, instance, owner):
        return self.getter(owner)


class RegisteredPresets:
    """The `presets` class property of a model class, as keras-hub's.

    A model class sets `preset_table` to its family's `PRESETS` (name ->
    preset dict with a `description`) and `preset_family` to the family's
    name (for the error listing the presets).
    """

    preset_table = {}
    preset_family = "model"

    @classmethod
    def get_preset(cls, name):
        """A deep copy of preset `name`, its `model` every argument of the
        class (the constructor's defaults with the preset's departures); a
        ValueError lists the valid names."""
        return lookup_preset(cls.preset_table, name, cls.preset_family, cls)

    @classproperty
    def presets(cls):
        """Every name `from_preset` takes: name -> `{"kind", "description",
        "parameters" (when known), "path" (trained models)}`.

        `kind` is `"architecture"` (a new, untrained model of the family's
        `PRESETS`) or `"trained"` (a model shipped in `saved_models/` whose
        card names this class).

        Example:

        ```python
        presets = keras_ordered.models.PRPNLanguageModel.presets
        presets["quick"]["kind"]  # "architecture"
        ```
        """
        table = {}
        for name, preset in cls.preset_table.items():
            entry = {"kind": "architecture",
                     "description": preset.get("description", "")}
            if preset.get("parameters"):
                entry["parameters"] = preset["parameters"]
            table[name] = entry
        for name in shipped.shipped_names():
            card = shipped.shipped_card(name)
            if card.get("class") != cls.__name__:
                continue
            parsing = card.get("parsing") or {}
            description = (f"Preset {card.get('preset')!r} trained on "
                           f"{card.get('data', 'its data')}")
            if parsing.get("sentence_f1") is not None:
                description += (f"; WSJ sentence F1 {parsing['sentence_f1']}"
                                f" (right-branching "
                                f"{parsing.get('right_branching_sentence_f1')})")
            table[name] = {"kind": "trained", "description": description,
                           "parameters": card.get("parameters"),
                           "path": card["path"]}
        return table


class SyntacticDistanceMixin:
    """Protocol of language models that induce trees.

    A model class mixing this in provides:

    - `vocabulary`: the list of words, index = token id (must contain
      `"<eos>"` and `"<unk>"`);
    - `distance_names`: names like `"layer1/forget"`, `"layer1/input"`
      (ON-LSTM) or `"parser/distance"` (PRPN), in a stable order;
    - `default_distance`: the name used when the caller picks none;
    - `syntactic_distances(token_ids)`: given an int array `[batch, time]`
      (batch-padded with `<eos>`), returns a dict name -> float array
      `[batch, time]` computed in inference mode from a zero state
      (`_distances_for_ids` calls it; override that hook for another way).

    `sentence_distances` then implements the reading convention of the
    reference evaluations: the model reads `<eos> w_1 .. w_n <eos>` (with
    `<s>` first when its vocabulary has one) from a zero state and the
    distance of word `w_k` is the one computed at its own
    position (it measures the gap between `w_{k-1}` and `w_k`).
    """

    default_distance = None
    direction = "forward"
    """The direction the model reads (`DIRECTIONS`), a constructor argument
    of the language models: a `"backward"` model was trained on every
    sentence reversed (`--model-arg direction=backward`), reads sentences
    reversed, and `sentence_distances` gives its distances in the forward
    convention (`backward_to_forward`), so that its trees can join an
    ensemble with forward members. Export refuses it."""
    reads_past_the_sentence = True
    """Whether a word's distance may depend on the `<eos>` after the
    sentence; a model whose distances depend only on the words up to
    their own (a left-to-right recurrence) sets False, and reads one step
    less."""

    def _set_vocabulary(self, vocabulary_size, words):
        """Keeps the word list (or `"0" .. "V-1"` when only a size is known)."""
        self.vocabulary = words if words is not None else [
            str(i) for i in range(vocabulary_size)
        ]
        self._vocabulary_given = words is not None
        self.vocabulary_size = vocabulary_size
        self._cached_word_index = None

    def _vocabulary_config(self):
        """What `get_config` stores: the words (a `Vocabulary`), or the size.

        Serialized, a `Vocabulary` is only its size: the words go into the
        `.keras` file as an asset (`save_assets`).
        """
        if not self._vocabulary_given:
            return self.vocabulary_size
        return Vocabulary(list(self.vocabulary))

    def save_assets(self, dir_path):
        """Writes the words to `vocabulary.json` (Keras calls this on save)."""
        if self._vocabulary_given:
            path = os.path.join(dir_path, VOCABULARY_ASSET)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(list(self.vocabulary), f, ensure_ascii=False)

    def load_assets(self, dir_path):
        """Reads the words back from `vocabulary.json` (Keras calls this on load).

        Files saved before the words became an asset hold them in their
        config instead, and have no such file: nothing to do then.
        """
        path = os.path.join(dir_path, VOCABULARY_ASSET)
        if not os.path.exists(path):
            return
        with open(path, encoding="utf-8") as f:
            words = json.load(f)
        size, words = check_vocabulary(words)
        if size != self.vocabulary_size:
            raise ValueError(
                f"The saved vocabulary has {size} words, but the model's "
                f"config says {self.vocabulary_size}: the file is damaged."
            )
        self._set_vocabulary(size, words)

    def token_ids(self, words, normalized=False):
        """Maps words to ids as the model's text writes them.

        The one place where the Python models read words. A word the
        vocabulary holds as written is read as itself; any other is
        normalised as the PTB text and the command line write words
        (`keras_ordered.datasets.treebank.normalize_word`: lower-cased,
        every run of digits `N`), and is `<unk>` when the vocabulary does
        not hold that either. So `The` reads as `the` and `61` as `N`. The
        SavedModels read tokens the same way
        (`keras_ordered.export.text.TextPreprocessor`).

        Words normalised already (the evaluation's treebank words,
        `keras_ordered.datasets.treebank.load_treebank`) are looked up
        exactly with `normalized=True`, as the official evaluations look
        them up: normalising twice is not the same (`1.` is `N.` once,
        `n.` twice).

        Args:
            words: list of word strings (a `str` is refused: TypeError).
            normalized: bool, the words are in the PTB text's form already:
                look them up as they are (`<unk>` when unknown).

        Returns:
            A list of int ids.

        Example:

        ```python
        import keras_ordered
        model = keras_ordered.models.ONLSTMLanguageModel.from_preset(
            "tiny", vocabulary=["<eos>", "<unk>", "the", "cat", "N"])
        assert model.token_ids(["The", "CAT", "61", "dog"]) == [2, 3, 4, 1]
        assert model.token_ids(["The", "cat"], normalized=True) == [1, 3]
        ```
        """
        words = check_token_list(words, "words")
        index = self._word_index()
        unk = index[UNK]
        if normalized:
            return [index.get(w, unk) for w in words]
        return [
            index[w] if w in index
            else index.get(normalize_word(w, WORD_NUMBERS), unk)
            for w in words
        ]

    def _word_index(self):
        if not self._vocabulary_given:
            raise ValueError(
                f"The model knows only its vocabulary size "
                f"({self.vocabulary_size}), not its words, so it cannot read "
                "text: build it with `vocabulary=[...words]`, or load it from "
                "its .keras file (a config or `to_json()` holds only the "
                "size; the .keras file also holds the words)."
            )
        cached = getattr(self, "_cached_word_index", None)
        if cached is None or len(cached) != len(self.vocabulary):
            cached = {w: i for i, w in enumerate(self.vocabulary)}
            self._cached_word_index = cached
        return cached

    def _zero_states(self, batch):
        """The zero state as tensors, for a batch size known in the graph."""
        return [keras.ops.zeros((batch, *shape)) for shape in self.state_shapes()]

    def _distances_for_ids(self, token_ids, names=None):
        return self.syntactic_distances(token_ids)

    def sentence_distances(self, sentences, batch_size=64, progress=None,
                           normalized=False, names=None):
        """Syntactic distances of whole sentences.

        Args:
            sentences: list of sentences, each a list of word strings, as
                written (`["The", "Cat", "sat"]`) or normalised
                (`["the", "cat", "sat"]`): the model reads a word as the
                PTB text writes it, lower-cased and with numbers as `N`,
                whatever its case (see `token_ids`), so both give the same
                distances.
            batch_size: int, sentences per forward pass (sentences of
                similar length are grouped).
            progress: optional function called after each forward pass
                with the number of sentences it read (e.g. a progress
                bar's `update`).
            normalized: bool, the words are normalised already (treebank
                records): looked up exactly, as the official evaluations
                do (see `token_ids`).
            names: optional list of distance names to give (default all):
                a model may then compute less (ON-LSTM and LSTM run only
                the layers up to the deepest one named).

        Returns:
            dict name -> list of 1-D float arrays, one per sentence, of the
            sentence's length, in the order of `sentences`.

        Raises:
            TypeError: a sentence is a string instead of a list of tokens
                (it would be read one character per word).
            ValueError: a sentence is empty (it has no distance to give).
        """
        sentences = check_token_lists(sentences)
        if names is None:
            names = list(self.distance_names)
        else:
            names = list(names)
            for name in names:
                if name not in self.distance_names:
                    raise ValueError(
                        f"The model has no distance {name!r}; available: "
                        f"{', '.join(self.distance_names)}.")
        for position, sentence in enumerate(sentences):
            if not sentence:
                raise ValueError(
                    f"sentences[{position}] is empty: every sentence needs "
                    "at least one word (drop the empty ones first)."
                )
        if not sentences:
            return {name: [] for name in names}
        if self.direction == "backward":
            read = self._read_distances(
                [sentence[::-1] for sentence in sentences], batch_size,
                progress, normalized, names)
            return {name: [backward_to_forward(v) for v in values]
                    for name, values in read.items()}
        return self._read_distances(sentences, batch_size, progress,
                                    normalized, names)

    def _read_distances(self, sentences, batch_size, progress, normalized,
                        names):
        """`sentence_distances` of checked sentences, in reading order."""
        index = self._word_index()
        eos = index[EOS]
        # <bos or eos> w_1 .. w_n, and the closing <eos> if it counts.
        extra = 2 if self.reads_past_the_sentence else 1
        # A model trained on `<s> w_1 .. w_n </s>` (PRPN's unsupervised-
        # parsing setup) reads `<s>` first; otherwise `<eos>` starts.
        bos = index.get(BOS, eos)
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        if backend.compiles_per_shape(self):
            # JAX or XLA: full batches, widths in steps of 16 (few
            # programs).
            chunks = [order[start : start + batch_size]
                      for start in range(0, len(order), batch_size)]
        else:
            chunks = length_batches(
                order, [len(s) + extra for s in sentences], batch_size)
        result = {name: [None] * len(sentences) for name in names}
        for chunk in chunks:
            # On JAX or XLA, a multiple of 16: the distances of a causal
            # model at a position do not depend on the padding after it.
            width = backend.compiled_width(
                max(len(sentences[i]) for i in chunk) + extra, 16, self)
            ids = np.full((len(chunk), width), eos, dtype="int32")
            ids[:, 0] = bos
            for row, i in enumerate(chunk):
                ids[row, 1 : len(sentences[i]) + 1] = self.token_ids(
                    sentences[i], normalized=normalized
                )
            distances = self._distances_for_ids(ids, names)
            for name in names:
                values = np.asarray(distances[name], dtype="float64")
                for row, i in enumerate(chunk):
                    n = len(sentences[i])
                    result[name][i] = values[row, 1 : n + 1]
            if progress is not None:
                progress(len(chunk))
        return result


STEP_ROWS = 16
"""The fixed cost of one step of a forward pass, in rows of a batch: a
recurrent step reads the recurrent kernels whatever the batch holds. On
the AMX Xeon, a step of the paper-size ON-LSTM's two lower layers takes
about 1.85 ms plus 0.12 ms a row (`length_batches`)."""


def length_batches(order, widths, batch_size, step_rows=STEP_ROWS):
    """Splits sentences sorted by width into forward passes, each of at
    most `batch_size` rows, padded to its widest sentence, at the least
    total cost.

    A pass of `rows` sentences padded to `width` steps costs about
    `width * (rows + step_rows)`: every step reads the recurrent weights
    (`step_rows`), and every row computes. Cutting the sorted order into
    equal batches pads a whole batch to its longest sentence (the long
    tail of a treebank); the least-cost cut, found by dynamic
    programming over the cut points, gives that tail a pass of its own.

    Args:
        order: sentence indices sorted by width (ascending).
        widths: sequence, the width of each sentence (indexed by the
            entries of `order`).
        batch_size: int, the most rows of a pass.
        step_rows: float, a step's fixed cost in rows.

    Returns:
        A list of passes, each a list of consecutive entries of `order`.

    Example:

    >>> length_batches([0, 1, 2, 3], [3, 3, 3, 40], batch_size=4)
    [[0, 1, 2], [3]]
    """
    sizes = [widths[i] for i in order]
    count = len(sizes)
    best = [0.0] + [float("inf")] * count
    cut = [0] * (count + 1)
    for end in range(1, count + 1):
        width = sizes[end - 1]
        for start in range(max(0, end - batch_size), end):
            cost = best[start] + width * (end - start + step_rows)
            if cost < best[end]:
                best[end], cut[end] = cost, start
    passes, end = [], count
    while end > 0:
        passes.append(list(order[cut[end]:end]))
        end = cut[end]
    return passes[::-1]


class PresetMixin(RegisteredPresets):
    """`from_preset`, `presets` and `from_config` of the functional language
    models.

    A model class sets `get_preset` (a function name -> preset dict with a
    `model` entry of constructor arguments) and `preset_table` (its
    family's `PRESETS`), and returns every constructor argument from
    `get_config`.
    """

    @classmethod
    def from_preset(cls, preset, vocabulary=None, **overrides):
        """Builds the model of a named preset, or loads a shipped model.

        Two kinds of names, as in keras-hub:

        - an architecture preset (`"ptb"`, `"small"`, `"tiny"`, ... see the
          model's `PRESETS`): a new, untrained model; `vocabulary` is
          required;
        - a shipped trained model (`"prpn_ptb_quick"`, ... see
          `keras-ordered list-models`): loaded from `saved_models/`, local
          files only; it brings its own vocabulary, so `vocabulary` and
          `overrides` must not be given.

        Args:
            preset: str, a preset or shipped-model name.
            vocabulary: list of str, or the vocabulary size (architecture
                presets only).
            **overrides: model arguments replacing the preset's
                (architecture presets only).

        Example:

        ```python
        model = keras_ordered.models.PRPNLanguageModel.from_preset(
            "prpn_ptb_quick"
        )
        ```
        """
        if shipped.is_shipped(preset):
            if vocabulary is not None or overrides:
                raise ValueError(
                    f"{preset!r} is a trained model shipped with its own "
                    "vocabulary and configuration: call "
                    f"from_preset({preset!r}) with no other argument (or "
                    "use an architecture preset to build a new model)."
                )
            return saving.load_shipped(preset, expected_class=cls)
        if vocabulary is None:
            names = shipped.shipped_names()
            cls.get_preset(preset)  # an unknown name: the list of presets
            raise ValueError(
                f"The architecture preset {preset!r} builds a new model and "
                "needs its vocabulary: from_preset(preset, vocabulary=[...])."
                + (f" Trained models that need none: {', '.join(names)}."
                   if names else "")
            )
        config = dict(cls.get_preset(preset)["model"])
        config.update(overrides)
        return cls(vocabulary=vocabulary, **config)

    def build_from_config(self, config):
        """Builds from a `get_build_config()`; nothing to do once built.

        These functional models create every weight in `__init__`, and
        their build config records no input shape (`{"input_shape":
        None}`), which `keras.Model.build_from_config` cannot rebuild from
        ("Undefined shapes are not supported"). keras-tuner's Hyperband
        calls it unconditionally on the model it continues training, so a
        built model ignores the call.
        """
        if self.built:
            return
        super().build_from_config(config)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("vocabulary"), dict):  # a serialized Vocabulary
            config["vocabulary"] = keras.saving.deserialize_keras_object(
                config["vocabulary"]
            )
        return cls(**config)
