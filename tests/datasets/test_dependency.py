"""Dependency readers, generation order and vocabulary
(keras_ordered.datasets.dependency)."""

import pytest
from conftest import DATA

from keras_ordered.datasets import dependency
from keras_ordered.datasets.dependency import generation_steps

pytestmark = pytest.mark.backends

L, R, NXL, NXR = "GEN-L", "GEN-R", "GEN-NX-L", "GEN-NX-R"


def test_issue_example_the_cat_sat_on_the_mat():
    assert generation_steps([2, 3, 0, 3, 6, 4]) == [
        (3, R, 0, ()), (2, L, 3, ()), (4, R, 3, (2,)), (1, L, 2, ()),
        (6, R, 4, ()), (5, L, 6, ()),
    ]
    # The paper's dependency path of "the" (word 1): RIGHT from the root to
    # "sat", LEFT to "cat", LEFT to "the".
    assert dependency.dependency_path([2, 3, 0, 3, 6, 4], 1) == (
        (0, "RIGHT"), (3, "LEFT"), (2, "LEFT"))


def test_root_with_only_right_children_and_siblings():
    # Word 1 is the root word; 2, 3, 4 its right dependents: nearest first,
    # each further one conditioned on its left adjacent sibling.
    assert generation_steps([0, 1, 1, 1]) == [
        (1, R, 0, ()), (2, R, 1, ()), (3, NXR, 2, ()), (4, NXR, 3, ()),
    ]


def test_left_siblings_nearest_first_and_breadth_first_order():
    # 5 is the root word with left dependents 1, 2, 4 and right 6, 7;
    # 3 depends on 4.
    steps = generation_steps([5, 5, 4, 5, 0, 5, 5])
    assert steps == [
        (5, R, 0, ()),
        (4, L, 5, ()), (2, NXL, 4, ()), (1, NXL, 2, ()),
        (6, R, 5, (1, 2, 4)),  # left dependents farthest-to-nearest
        (7, NXR, 6, ()),
        (3, L, 4, ()),  # children of 4, after all of 5's children
    ]


def test_deep_chains_both_ways():
    n = 12
    right_chain = [0] + list(range(1, n))  # word k+1 depends on word k
    steps = generation_steps(right_chain)
    assert steps == [(1, R, 0, ())] + [(k + 1, R, k, ()) for k in range(1, n)]
    left_chain = list(range(2, n + 1)) + [0]  # word k depends on word k+1
    steps = generation_steps(left_chain)
    assert steps[0] == (n, R, 0, ())
    assert steps[1:] == [(k, L, k + 1, ()) for k in range(n - 1, 0, -1)]
    # A GEN-R step from a head with left dependents reads them all.
    heads = [4, 4, 4, 0, 4]
    assert generation_steps(heads)[-1] == (5, R, 4, (1, 2, 3))


def test_every_word_generated_once_after_its_condition():
    heads = [3, 3, 0, 5, 3, 5, 8, 6, 3]
    steps = generation_steps(heads)
    assert sorted(w for w, *_ in steps) == list(range(1, 10))
    done = {0}
    for word, action, source, context in steps:
        assert source in done
        done.add(word)
        if action == R:
            assert context == tuple(sorted(
                i + 1 for i, h in enumerate(heads) if h == source and i + 1 < source))


@pytest.mark.parametrize("heads, message", [
    ([], "empty sentence"),
    ([2, 5, 0], "the head of word 2 is 5, out of range 0..3"),
    ([2, 1, 0], "a cycle: words 1, 2 are not reachable"),
    ([2, 3, 1], "no root"),
    ([0, 1, 0], "2 roots"),
    ([1, 0], "word 1 is its own head"),
])
def test_bad_trees_are_clear_errors(heads, message):
    with pytest.raises(ValueError, match=message):
        generation_steps(heads)


def test_malt_reader_names_file_and_sentence_on_errors(tmp_path):
    path = tmp_path / "trees.dp"
    path.write_text("The\tDT\t2\ncat\tNN\t0\n\nA\tDT\t2\ndog\tNN\t7\n")
    with pytest.raises(ValueError) as info:
        dependency.read_malt(str(path))
    assert str(path) in str(info.value)
    assert "sentence 2 (line 4)" in str(info.value)
    assert "out of range" in str(info.value)
    path.write_text("The\tDT\tx\n")
    with pytest.raises(ValueError, match="line 1: the head 'x' is not a number"):
        dependency.read_malt(str(path))
    with pytest.raises(FileNotFoundError):
        dependency.read_malt(str(tmp_path / "missing.dp"))


def test_readers_agree_on_one_tree(tmp_path):
    words, tags, heads = ("The", "cat", "sat"), ("DT", "NN", "VBD"), (2, 3, 0)
    malt = tmp_path / "a.dp"
    malt.write_text("The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n\n")
    conllu = tmp_path / "a.conllu"
    conllu.write_text(
        "# text = The cat sat\n"
        "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
        "2-3\tcatsat\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
        "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_\n\n"
    )
    conllx = tmp_path / "a.conll"
    conllx.write_text(
        "1\tThe\t_\tDT\tDT\t_\t2\tNMOD\t_\t_\n"
        "2\tcat\t_\tNN\tNN\t_\t3\tSBJ\t_\t_\n"
        "3\tsat\t_\tVBD\tVBD\t_\t0\tROOT\t_\t_\n\n"
    )
    stanford = tmp_path / "a.sd"
    stanford.write_text("det(cat-2, The-1) nsubj(sat-3, cat-2) root(ROOT-0, sat-3)\n"
                        "root(ROOT-0, Hi-1)\n")
    for path in (malt, conllu, conllx):
        (tree,) = dependency.read_trees(str(path))
        assert (tree.words, tree.heads) == (words, heads), path
    assert dependency.read_trees(str(conllu))[0].tags == ("DET", "NOUN", "VERB")
    assert dependency.read_trees(str(conllx))[0].tags == tags
    trees = dependency.read_trees(str(stanford))
    assert [(t.words, t.heads) for t in trees] == [(words, heads), (("Hi",), (0,))]
    # One tuple per line, blank lines between sentences.
    stanford.write_text("det(cat-2, The-1)\nnsubj(sat-3, cat-2)\n"
                        "root(ROOT-0, sat-3)\n\nroot(ROOT-0, Hi-1)\n")
    trees = dependency.read_trees(str(stanford), "stanford")
    assert [(t.words, t.heads) for t in trees] == [(words, heads), (("Hi",), (0,))]
    stanford.write_text("det(cat-2, The-1) root(ROOT-0, cat-2) root(ROOT-0, x-3)\n")
    with pytest.raises(ValueError, match="sentence 1 .*2 roots"):
        dependency.read_trees(str(stanford))
    conllu.write_text("1\tThe\t_\tDT\tDT\t_\t1\tdet\t_\t_\n\n")
    with pytest.raises(ValueError, match=r"a\.conllu, sentence 1 \(line 1\): "
                       "word 1 is its own head"):
        dependency.read_trees(str(conllu))


def test_wsj_sample_splits_read_every_tree():
    directory = f"{DATA}/wsj_sample/dep"
    import os

    assert os.path.isdir(directory), f"the WSJ sample is needed at {directory}"
    train, files = dependency.load_split(directory, dependency.SAMPLE_SPLITS["train"])
    valid, valid_files = dependency.load_split(directory,
                                               dependency.SAMPLE_SPLITS["valid"])
    assert (os.path.basename(files[0]), os.path.basename(files[-1]), len(files)) == (
        "wsj_0001.dp", "wsj_0139.dp", 139)
    assert len(valid_files) == 10 and len(train) == 3068 and len(valid) == 185
    assert train[0].words[:2] == ("Pierre", "Vinken") and train[0].heads[7] == 0
    for tree in train + valid:
        assert len(generation_steps(tree.heads)) == len(tree.words)


def test_vocabulary_min_count_lowercase_and_specials():
    sentences = [["The", "cat"], ["the", "dog"], ["THE", "cat"]]
    vocabulary = dependency.DependencyVocabulary.from_sentences(
        sentences, lowercase=True, min_count=2)
    assert list(vocabulary) == ["<pad>", "<unk>", "<root>", "the", "cat"]
    assert vocabulary.encode(["The", "dog", "CAT"]) == [3, 1, 4]
    cased = dependency.DependencyVocabulary.from_sentences(sentences)
    assert "The" in cased and "THE" in cased and "the" in cased
    with pytest.raises(ValueError, match="min_count"):
        dependency.DependencyVocabulary.from_sentences(sentences, min_count=0)


def test_bad_heads_give_one_error_and_no_nltk_warning(tmp_path):
    # A bad head is one clear error, with no nltk UserWarning ("The graph
    # doesn't contain a node that depends on the root element.") before it.
    import warnings

    for rows, message in (
        ("The\tDT\t2\ncat\tNN\t-1\n",
         "sentence 1 (line 1): the head of word 2 is -1, out of range 0..2"),
        ("The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t1\n",
         "sentence 1 (line 1): no root (no word has head 0)."),
    ):
        path = tmp_path / "bad.dp"
        path.write_text("a\tDT\t0\n\n" + rows)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError) as info:
                dependency.read_trees(str(path))
        assert [str(w.message) for w in caught] == []
        expected = message.replace("sentence 1 (line 1)", "sentence 2 (line 3)")
        assert str(info.value).startswith(f"{path}, {expected}"), str(info.value)
    path.write_bytes(b"caf\xe9\tNN\t0\n")
    with pytest.raises(ValueError, match=r"line 1 is not valid UTF-8 \(byte "
                       r"0xe9 at column 4\)"):
        dependency.read_trees(str(path))
