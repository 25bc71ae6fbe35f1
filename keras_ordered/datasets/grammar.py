"""A small seeded grammar whose sentences come with their gold trees.

A test bed for structure learning: a language model trained on the
sentences of `generate_records` should induce (through its syntactic
distances) trees close to the gold ones, far closer than the trivial
right-branching trees, which score low on this grammar by design.

The grammar (probabilities are the defaults of `generate_trees`):

```
S     -> CLAUSE (0.7) | CLAUSE ADVP (0.3)          [[clause] today]
CLAUSE-> NP_s VP
NP_s  -> NP (0.4) | NP PP (0.6)                    [[the dog] [near [a cat]]]
NP    -> DT NN | DT NOM (0.5)                       [the [big dog]]
NOM   -> JJ NN
PP    -> IN NP
VP    -> VBZ_i (0.2) | VBZ_t NP_o (0.5) | VBZ_i PP (0.3)
NP_o  -> NP (0.7) | NP PP (0.3)
```

Every word class has its own words (determiners, adjectives, nouns,
prepositions, intransitive and transitive verbs, adverbs), so the
constituents' insides are predictable (a determiner is followed by an
adjective or a noun) while their boundaries are where the next word is
uncertain. The subject's head noun and the verb agree in number (singular
`dog ... sees`, plural `dogs ... see`) across the subject's
prepositional phrase, and determiners agree with their noun (`a` singular,
`some` plural, `the` either): predicting the verb needs the subject's head,
not the nearest noun.

The gold trees are binary, and every right child starts with a word of its
own (`[saw [a cat]]`, `[near [the house]]`), so the top-down parser of
`keras_ordered.parsing.distances_to_tree` can produce each of them exactly;
the subjects with a prepositional phrase and the sentence-final adverbs are
left-branching, which is what puts the right-branching baseline low
(sentence-level F1 on 1,000 sentences of seed 0: right-branching 26.7,
left-branching 32.8, random trees 29.4, balanced trees 35.4).

Trees are `nltk.Tree` with POS preterminals, as a treebank's; the records
of `generate_records` are the `TreebankSentence` objects that
`keras_ordered.parsing.evaluate_parsing` and the parsing callback score.
"""

from keras_ordered._nltk import nltk
import numpy as np

from keras_ordered.datasets import treebank
from keras_ordered._tokens import EOS
from keras_ordered._tokens import UNK


DETERMINERS = {"sg": ("a", "the", "every"), "pl": ("some", "the", "many")}
ADJECTIVES = ("big", "small", "old", "red", "happy")
NOUNS = {
    "sg": ("dog", "cat", "bird", "horse", "fox", "man"),
    "pl": ("dogs", "cats", "birds", "horses", "foxes", "men"),
}
PREPOSITIONS = ("near", "with", "behind", "under")
INTRANSITIVE = {"sg": ("sleeps", "runs", "waits"), "pl": ("sleep", "run", "wait")}
TRANSITIVE = {"sg": ("sees", "chases", "likes"), "pl": ("see", "chase", "like")}
ADVERBS = ("today", "again", "quietly")

DEFAULT_PROBABILITIES = {
    "adverb": 0.3,
    "subject_pp": 0.6,
    "adjective": 0.5,
    "intransitive": 0.2,
    "transitive": 0.5,
    "object_pp": 0.3,
}
"""The grammar's default choice probabilities (see the module docstring)."""


def vocabulary():
    """The grammar's words, `<eos>` and `<unk>` first (index = token id).

    Returns:
        A list of str, the same on every call.

    Example:

    ```python
    words = keras_ordered.datasets.grammar.vocabulary()
    assert words[:2] == ["<eos>", "<unk>"] and "dogs" in words
    ```
    """
    words = [EOS, UNK]
    groups = [
        DETERMINERS["sg"], DETERMINERS["pl"], ADJECTIVES, NOUNS["sg"],
        NOUNS["pl"], PREPOSITIONS, INTRANSITIVE["sg"], INTRANSITIVE["pl"],
        TRANSITIVE["sg"], TRANSITIVE["pl"], ADVERBS,
    ]
    for group in groups:
        for word in group:
            if word not in words:
                words.append(word)
    return words


class _Generator:
    def __init__(self, rng, probabilities):
        self.rng = rng
        self.p = probabilities

    def coin(self, name):
        return bool(self.rng.random() < self.p[name])

    def pick(self, words):
        return str(words[int(self.rng.integers(len(words)))])

    def noun_phrase(self):
        number = "sg" if self.rng.random() < 0.5 else "pl"
        determiner = nltk.Tree("DT", [self.pick(DETERMINERS[number])])
        noun = nltk.Tree("NNS" if number == "pl" else "NN",
                         [self.pick(NOUNS[number])])
        if self.coin("adjective"):
            adjective = nltk.Tree("JJ", [self.pick(ADJECTIVES)])
            noun = nltk.Tree("NOM", [adjective, noun])
        return nltk.Tree("NP", [determiner, noun]), number

    def prepositional_phrase(self):
        preposition = nltk.Tree("IN", [self.pick(PREPOSITIONS)])
        return nltk.Tree("PP", [preposition, self.noun_phrase()[0]])

    def modified(self, name):
        phrase, number = self.noun_phrase()
        if self.coin(name):
            phrase = nltk.Tree("NP", [phrase, self.prepositional_phrase()])
        return phrase, number

    def verb_phrase(self, number):
        tag = "VBZ" if number == "sg" else "VBP"
        draw = self.rng.random()
        if draw < self.p["intransitive"]:
            return nltk.Tree("VP", [nltk.Tree(
                tag, [self.pick(INTRANSITIVE[number])])])
        if draw < self.p["intransitive"] + self.p["transitive"]:
            verb = nltk.Tree(tag, [self.pick(TRANSITIVE[number])])
            return nltk.Tree("VP", [verb, self.modified("object_pp")[0]])
        verb = nltk.Tree(tag, [self.pick(INTRANSITIVE[number])])
        return nltk.Tree("VP", [verb, self.prepositional_phrase()])

    def sentence(self):
        subject, number = self.modified("subject_pp")
        clause = nltk.Tree("S", [subject, self.verb_phrase(number)])
        if self.coin("adverb"):
            adverb = nltk.Tree("ADVP", [nltk.Tree("RB", [self.pick(ADVERBS)])])
            clause = nltk.Tree("S", [clause, adverb])
        return clause


def generate_trees(count, seed=0, probabilities=None):
    """Draws sentences of the grammar with their gold trees.

    Args:
        count: int, the number of sentences.
        seed: int, the sentences depend only on `(count, seed,
            probabilities)`.
        probabilities: dict overriding entries of `DEFAULT_PROBABILITIES`
            (`adverb`, `subject_pp`, `adjective`, `intransitive`,
            `transitive`, `object_pp`); `intransitive + transitive` must be
            at most 1 (the rest is an intransitive verb with a
            prepositional phrase).

    Returns:
        A list of `count` labeled `nltk.Tree` with POS preterminals.

    Example:

    ```python
    trees = keras_ordered.datasets.grammar.generate_trees(3, seed=1)
    assert len(trees) == 3 and all(t.label() == "S" for t in trees)
    ```
    """
    p = dict(DEFAULT_PROBABILITIES)
    unknown = set(probabilities or {}) - set(p)
    if unknown:
        raise ValueError(
            f"Unknown grammar probabilities {sorted(unknown)}; valid: "
            f"{', '.join(sorted(p))}."
        )
    p.update(probabilities or {})
    for name, value in p.items():
        if not 0.0 <= value <= 1.0:
            raise ValueError(
                f"Probability {name!r} must be in [0, 1]. Received: {value}"
            )
    if p["intransitive"] + p["transitive"] > 1.0:
        raise ValueError(
            "`intransitive + transitive` must be at most 1. Received: "
            f"{p['intransitive']} + {p['transitive']}"
        )
    if not isinstance(count, int) or count < 0:
        raise ValueError(
            f"`count` must be a non-negative integer. Received: {count!r}"
        )
    generator = _Generator(np.random.default_rng(seed), p)
    return [generator.sentence() for _ in range(count)]


def generate_records(count, seed=0, probabilities=None):
    """Draws sentences as gold records for the parsing evaluation.

    Args:
        count: int, the number of sentences.
        seed: int.
        probabilities: see `generate_trees`.

    Returns:
        A list of `keras_ordered.datasets.treebank.TreebankSentence`, with
        `file_id` `"grammar-<seed>"`.

    Example:

    ```python
    from keras_ordered.parsing import baseline_predictor, evaluate_parsing

    records = keras_ordered.datasets.grammar.generate_records(500, seed=0)
    scores = evaluate_parsing(records, baseline_predictor("right-branching"))
    assert scores["sentence_f1"] < 35  # the gold trees are not right-branching
    ```
    """
    return [
        treebank.make_sentence(tree, file_id=f"grammar-{seed}", index=i)
        for i, tree in enumerate(generate_trees(count, seed, probabilities))
    ]


def token_ids(records, words=None):
    """The sentences as one stream of token ids, `<eos>` after each.

    Args:
        records: list of records (anything with `words`) or of word lists.
        words: the vocabulary (default: `vocabulary()`); unknown words map
            to `<unk>`.

    Returns:
        A 1-D int32 array, for `keras_ordered.training.BPTTBatches` or
        `keras_ordered.training.SentenceBatches`.

    Example:

    ```python
    grammar = keras_ordered.datasets.grammar
    records = grammar.generate_records(2, seed=0)
    ids = grammar.token_ids(records)
    assert (ids == 0).sum() == 2  # one <eos> per sentence
    ```
    """
    words = vocabulary() if words is None else list(words)
    index = {w: i for i, w in enumerate(words)}
    unk, eos = index[UNK], index[EOS]
    stream = []
    for record in records:
        sentence = getattr(record, "words", record)
        stream.extend(index.get(w, unk) for w in sentence)
        stream.append(eos)
    return np.asarray(stream, dtype="int32")
