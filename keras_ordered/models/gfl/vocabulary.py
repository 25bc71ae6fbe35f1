"""Vocabularies of the GFL parser: source words and target symbols.

The parser (`GFLParser`) reads and writes integer ids; these helpers map
the words of a sentence (already reversed, see
`keras_ordered.parsing.linearize.source_tokens`) and the symbols of a
linearized tree (`(S`, `XX`, `)NP`, ...) to ids and back, and pad batches.

Fixed ids, which the model relies on:

- source: `<pad>` = 0 (masked by the encoder), `<unk>` = 1 (every word the
  vocabulary lacks: the paper's `<UNK>` for out-of-vocabulary words);
- target: `<pad>` = 0 (ignored by the loss), `<go>` = 1 (the decoder's
  first input), `<eos>` = 2 (ends a decoded sequence).

`load_word_vectors` reads pretrained embeddings (the paper initialises the
512-dimensional source embeddings from word2vec and keeps training them).
"""

import numpy as np

from keras_ordered.layers._checks import check_positive_int
from keras_ordered._tokens import EOS
from keras_ordered._tokens import GFL_SOURCE_SPECIALS as SOURCE_SPECIALS
from keras_ordered._tokens import GFL_TARGET_SPECIALS as TARGET_SPECIALS
from keras_ordered._tokens import GO
from keras_ordered._tokens import PAD
from keras_ordered._tokens import TokenVocabulary
from keras_ordered._tokens import UNK

PAD_ID = SOURCE_SPECIALS.index(PAD)  # and TARGET_SPECIALS.index(PAD)
UNK_ID = SOURCE_SPECIALS.index(UNK)
GO_ID = TARGET_SPECIALS.index(GO)
EOS_ID = TARGET_SPECIALS.index(EOS)


def _pad(rows, width=None):
    width = max([len(r) for r in rows] + [1]) if width is None else width
    array = np.full((len(rows), width), PAD_ID, dtype="int32")
    for i, row in enumerate(rows):
        array[i, : len(row)] = row[:width]
    return array


class SourceVocabulary(TokenVocabulary):
    """The source side's words: `<pad>` = 0, `<unk>` = 1, then the words.

    Args:
        words: iterable of str, in id order (`<pad>` and `<unk>` are put
            first whether or not `words` holds them, so the token list of a
            vocabulary rebuilds it).
        lowercase: bool, lower-case words when building and looking up.

    Example:

    ```python
    from keras_ordered.models.gfl import SourceVocabulary
    vocabulary = SourceVocabulary.from_sentences([["John", "has", "a", "dog"]])
    ids = vocabulary.encode_batch([["dog", "a", "has", "Mary"]])  # [[w, w, w, 1]]
    ```
    """

    specials = SOURCE_SPECIALS
    unknown = UNK

    @classmethod
    def from_sentences(cls, sentences, min_count=1, max_size=None, lowercase=False):
        """The words of `sentences`, most frequent first (ties alphabetical).

        Args:
            sentences: iterable of lists of words.
            min_count: int, keep words seen at least this often (rarer ones
                become `<unk>`).
            max_size: int or None, at most this many tokens in all
                (specials included).
            lowercase: bool, see the class.
        """
        words = cls.most_frequent(sentences, min_count=min_count,
                                  lowercase=lowercase)
        if max_size is not None:
            if max_size <= len(cls.specials):
                raise ValueError(
                    f"`max_size` must exceed {len(cls.specials)} (the special "
                    f"tokens). Received: {max_size}"
                )
            words = words[: max_size - len(cls.specials)]
        return cls(words, lowercase=lowercase)

    def encode(self, words):
        """Ids of `words`, `<unk>` (1) for those the vocabulary lacks."""
        return super().encode(words)

    def encode_batch(self, sentences, width=None):
        """`(batch, width)` int32 ids, right-padded with `<pad>` (0)."""
        return _pad([self.encode(s) for s in sentences], width)

    def decode(self, ids):
        """The tokens of ids, padding dropped."""
        return [self.tokens[int(i)] for i in ids if int(i) != PAD_ID]


class TargetVocabulary(TokenVocabulary):
    """The target side's symbols: `<pad>` = 0, `<go>` = 1, `<eos>` = 2.

    Args:
        symbols: iterable of str, in id order (specials put first).

    Example:

    ```python
    from keras_ordered.models.gfl import TargetVocabulary
    vocabulary = TargetVocabulary.from_sequences([["(S", "XX", ")S"]])
    target_in, target_out = vocabulary.teacher_forcing_batch([["(S", "XX", ")S"]])
    # target_in: [[1, a, b, c]] (<go> first), target_out: [[a, b, c, 2]] (<eos> last)
    ```
    """

    specials = TARGET_SPECIALS

    @classmethod
    def from_sequences(cls, sequences):
        """The symbols of `sequences`, most frequent first (ties alphabetical)."""
        return cls(cls.most_frequent(sequences))

    def encode(self, symbols):
        """Ids of `symbols`; a ValueError names a symbol the vocabulary lacks."""
        try:
            return [self.ids[s] for s in symbols]
        except KeyError as error:
            raise ValueError(
                f"The target vocabulary has no symbol {error.args[0]!r}: build "
                "it from the training trees (TargetVocabulary.from_sequences) "
                "or add the symbol."
            ) from None

    def teacher_forcing_batch(self, sequences, width=None):
        """`(target_in, target_out)` int32 arrays `(batch, width)`.

        `target_in` is `<go> y_1 .. y_n`, `target_out` is `y_1 .. y_n <eos>`
        (what the model must predict at each position), both right-padded
        with `<pad>` (0); `width` defaults to the longest `n + 1`.
        """
        encoded = [self.encode(s) for s in sequences]
        target_in = _pad([[GO_ID] + e for e in encoded], width)
        target_out = _pad([e + [EOS_ID] for e in encoded], width)
        return target_in, target_out

    def decode(self, ids):
        """The symbols of decoded ids, up to (without) the first `<eos>`.

        `<pad>` and `<go>` are dropped.
        """
        symbols = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i not in (PAD_ID, GO_ID):
                symbols.append(self.tokens[i])
        return symbols


def load_word_vectors(path, vocabulary, dim, scale=0.05, seed=0):
    """An embedding matrix for `vocabulary` from a word-vector text file.

    The file has one word per line followed by its `dim` numbers, separated
    by spaces (the text format of word2vec and GloVe); a first line of two
    integers (word2vec's `count dim` header) is skipped. Words of the
    vocabulary the file lacks, `<unk>` included unless the file has a
    `<unk>` line, get uniform random vectors in `[-scale, scale]`; `<pad>`
    gets zeros. With a lower-casing `SourceVocabulary`, the file's words are
    lower-cased too (the first vector of a word wins).

    Args:
        path: str, the file.
        vocabulary: `SourceVocabulary` or list of str (index = id).
        dim: int, the vectors' size (the paper's 512).
        scale: float, range of the random vectors.
        seed: int, seed of the random vectors.

    Returns:
        `(matrix, found)`: a float32 array `(len(vocabulary), dim)` and the
        number of vocabulary words the file had. Load it into a model with
        `GFLParser.set_source_embeddings(matrix)`.
    """
    check_positive_int("dim", dim)
    lowercase = getattr(vocabulary, "lowercase", False)
    index = {w: i for i, w in enumerate(vocabulary)}
    rng = np.random.default_rng(seed)
    matrix = rng.uniform(-scale, scale, (len(index), dim)).astype("float32")
    if PAD in index:
        matrix[index[PAD]] = 0.0
    filled = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec's header
            if len(parts) < 2:
                continue
            word, values = parts[0], parts[1:]
            if len(values) != dim:
                raise ValueError(
                    f"{path}, line {number}: the vector of {word!r} has "
                    f"{len(values)} numbers, expected dim={dim}. Pass the "
                    "file's dimension as `dim` (and as the model's "
                    "`embedding_dim`)."
                )
            if lowercase and word not in SOURCE_SPECIALS:
                word = word.lower()
            row = index.get(word)
            if row is None or row in filled or word == PAD:
                continue
            matrix[row] = np.asarray(values, dtype="float32")
            filled.add(row)
    return matrix, len(filled)
