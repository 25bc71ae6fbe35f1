"""One vocabulary base (`keras_ordered._tokens.TokenVocabulary`) for the
vocabularies of fixed special ids: GFL's source and target, the
TD-TreeLSTM's dependency words."""

import ast
import os

import pytest

from conftest import REPO
from keras_ordered._tokens import TokenVocabulary
from keras_ordered.datasets.dependency import DependencyVocabulary
from keras_ordered.models.gfl import SourceVocabulary
from keras_ordered.models.gfl import TargetVocabulary

SENTENCES = [["The", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat"]]


@pytest.mark.parametrize("cls, specials, unknown", [
    (SourceVocabulary, ("<pad>", "<unk>"), 1),
    (TargetVocabulary, ("<pad>", "<go>", "<eos>"), None),
    (DependencyVocabulary, ("<pad>", "<unk>", "<root>"), 1),
])
def test_each_vocabulary_is_the_base_with_its_specials(cls, specials,
                                                       unknown):
    assert issubclass(cls, TokenVocabulary) and cls.specials == specials
    vocabulary = cls(["cat", "dog", specials[-1]])
    # Specials first, whether or not listed.
    assert vocabulary == [*specials, "cat", "dog"]
    assert vocabulary.encode(["dog", "cat"]) == [len(specials) + 1,
                                                 len(specials)]
    if unknown is None:
        with pytest.raises(ValueError, match="no symbol 'bird'"):
            vocabulary.encode(["cat", "bird"])
    else:
        assert vocabulary.encode(["bird"]) == [unknown]
    assert "cat" in vocabulary and "bird" not in vocabulary
    assert vocabulary == cls(list(vocabulary)) != cls(["dog"])
    with pytest.raises(TypeError):
        hash(vocabulary)


def test_most_frequent_first_ties_alphabetical_and_lowercasing():
    assert TokenVocabulary.most_frequent(SENTENCES) == [
        "cat", "sat", "The", "a", "dog", "the"]
    assert TokenVocabulary.most_frequent(SENTENCES, min_count=2,
                                         lowercase=True) == [
        "cat", "sat", "the"]
    with pytest.raises(ValueError, match="`min_count` must be >= 1"):
        TokenVocabulary.most_frequent(SENTENCES, min_count=0)
    # The families' builders keep their own size rules on top of it.
    source = SourceVocabulary.from_sentences(SENTENCES, max_size=4,
                                             lowercase=True)
    assert source == ["<pad>", "<unk>", "cat", "sat"]
    assert source.encode(["CAT", "The"]) == [2, 1]
    dependency = DependencyVocabulary.from_sentences(
        SENTENCES, lowercase=True, max_size=2)
    assert dependency == ["<pad>", "<unk>", "<root>", "cat", "sat"]
    assert dependency.words == dependency.tokens
    assert dependency.index == dependency.ids
    # A word listed twice: kept once, but refused by the dependency words.
    assert SourceVocabulary(["a", "b", "a"]) == ["<pad>", "<unk>", "a", "b"]
    with pytest.raises(ValueError, match="lists a word twice"):
        DependencyVocabulary(["<pad>", "<unk>", "<root>", "a", "a"])
    with pytest.raises(ValueError, match="not a single string"):
        SourceVocabulary("the cat")


def test_no_other_vocabulary_class_of_fixed_specials():
    # A class that declares `specials` is a TokenVocabulary.
    found = []
    for folder, _, files in os.walk(os.path.join(REPO, "keras_ordered")):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            tree = ast.parse(open(path, encoding="utf-8").read())
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                assigns = {target.id for item in node.body
                           if isinstance(item, ast.Assign)
                           for target in item.targets
                           if isinstance(target, ast.Name)}
                bases = {getattr(base, "id", getattr(base, "attr", None))
                         for base in node.bases}
                if "specials" in assigns and "TokenVocabulary" not in bases \
                        and node.name != "TokenVocabulary":
                    found.append(f"{os.path.relpath(path, REPO)}:{node.name}")
    assert not found
