"""Gold tree preprocessing: punctuation, empty elements, labels, words."""

import os
import re

import nltk
import numpy as np
import pytest

from keras_ordered.datasets import treebank
from keras_ordered.datasets.treebank import clean_tree
from keras_ordered.datasets.treebank import load_treebank
from keras_ordered.datasets.treebank import make_sentence
from keras_ordered.datasets.treebank import map_to_vocabulary
from keras_ordered.datasets.treebank import normalize_word
from keras_ordered.parsing.trees import tree_to_brackets

pytestmark = pytest.mark.backends

# Treebank-II style, with punctuation, -NONE- traces, $, function tags,
# indices and a constituent (NP-SBJ) left empty by the trace removal.
GOLD_1 = """
( (S
    (NP-SBJ-1 (NNP Mr.) (NNP Vinken) )
    (VP (VBZ is)
      (VP (VBN paid)
        (NP (-NONE- *-1) )
        (NP ($ $) (CD 1,500) (-NONE- *U*) )
        (PP-TMP (IN per) (NP (NN week) ))))
    (. .) ))
"""
GOLD_2 = """
( (S
    (S-TPC-2 (NP-SBJ (PRP It) ) (VP (VBD rose) (NP-EXT (CD 5) (NN %) )))
    (, ,)
    (NP-SBJ (PRP he) )
    (VP (VBD said) (SBAR (-NONE- 0) (S (-NONE- *T*-2) )))
    (. .) ))
"""


def gold(text):
    return nltk.Tree.fromstring(text, remove_empty_top_bracketing=True)


def test_normalize_word_official_digit_runs_and_the_ptb_text():
    # Default: as the official evaluation code, every run of digits is N.
    assert normalize_word("Pierre") == "pierre"
    for number, written in [("61", "N"), ("1,500", "N,N"), ("8.45", "N.N"),
                            ("1986-87", "N-N"), ("'82", "'N"), ("%", "%"),
                            ("30-year", "N-year"), ("1980s", "Ns"),
                            ("N.V.", "n.v.")]:
        assert normalize_word(number) == written, number
    # The PTB language-modelling text's way, as an option.
    for number in ["61", "1,500", "8.45", "3\\/4", "1:30", "1986-87", "'82", "%"]:
        assert normalize_word(number, numbers="ptb") == "N", number
    for word in ["30-year", "1980s", "mid-1970s", "N.V.", "'s"]:
        assert normalize_word(word, numbers="ptb") == word.lower(), word
    with pytest.raises(ValueError, match="digit-runs"):
        normalize_word("1", numbers="roman")


def test_strip_function_tags():
    assert treebank.strip_function_tags("NP-SBJ-1") == "NP"
    assert treebank.strip_function_tags("PP-LOC=2") == "PP"
    assert treebank.strip_function_tags("S") == "S"
    assert treebank.strip_function_tags("-NONE-") == "-NONE-"


def test_clean_tree_drops_punctuation_empty_elements_and_empty_constituents():
    cleaned = clean_tree(gold(GOLD_1))
    assert cleaned.leaves() == ["mr.", "vinken", "is", "paid", "N,N", "per", "week"]
    assert cleaned == nltk.Tree.fromstring(
        "(S (NP (NNP mr.) (NNP vinken)) (VP (VBZ is) (VP (VBN paid) "
        "(NP (CD N,N)) (PP (IN per) (NP (NN week))))))"
    )
    cleaned = clean_tree(gold(GOLD_2))
    # The SBAR holding only empty elements is gone.
    assert cleaned.leaves() == ["it", "rose", "N", "%", "he", "said"]
    ptb_style = clean_tree(gold(GOLD_2), numbers="ptb")
    assert ptb_style.leaves() == ["it", "rose", "N", "N", "he", "said"]
    assert "SBAR" not in str(cleaned)


def test_clean_tree_of_nothing_but_punctuation():
    assert clean_tree(gold("( (S (, ,) (-NONE- *T*-1) (. .)) )")) is None
    assert make_sentence(gold("( (S (. .)) )")) is None


def test_sentence_spans_and_labels():
    record = make_sentence(gold(GOLD_1), file_id="x.mrg", index=3)
    # mr. vinken | is | paid | N | per week
    assert record.words == ["mr.", "vinken", "is", "paid", "N,N", "per", "week"]
    assert record.spans == {(0, 7), (0, 2), (2, 7), (3, 7), (5, 7)}
    assert record.labeled_spans == {
        ("S", 0, 7), ("NP", 0, 2), ("VP", 2, 7), ("VP", 3, 7), ("PP", 5, 7)
    }
    assert (record.file_id, record.index, len(record)) == ("x.mrg", 3, 7)

    # Unary chains (S over a lone S, NP over one word) collapse.
    record = make_sentence(gold("( (S (S (NP (PRP It)) (VP (VBZ is) (ADJP (JJ ok)))) (. .)) )"))
    assert record.spans == {(0, 3), (1, 3)}
    assert record.labeled_spans == {("S", 0, 3), ("VP", 1, 3)}


def write_treebank(directory):
    os.makedirs(directory)
    with open(os.path.join(directory, "wsj_0002.mrg"), "w") as f:
        f.write(GOLD_2)
    with open(os.path.join(directory, "wsj_0001.mrg"), "w") as f:
        f.write(GOLD_1 + "\n( (S (. .)) )\n" + GOLD_2)


def test_load_treebank_orders_by_file_then_sentence(tmp_path):
    directory = str(tmp_path / "wsj_sample" / "mrg")
    write_treebank(directory)
    records = load_treebank(directory)
    assert [(r.file_id, r.index) for r in records] == [
        ("wsj_0001.mrg", 0), ("wsj_0001.mrg", 2), ("wsj_0002.mrg", 0)
    ]
    assert tree_to_brackets(records[0].tree) == (
        "(((mr.) (vinken)) ((is) ((paid) ((N,N)) ((per) ((week))))))"
    )
    # The parent folder and the data root are found too, and the variable.
    assert len(load_treebank(str(tmp_path / "wsj_sample"))) == 3
    assert len(load_treebank(str(tmp_path))) == 3


def test_load_treebank_from_environment(tmp_path, monkeypatch):
    write_treebank(str(tmp_path / "wsj_sample" / "mrg"))
    monkeypatch.setenv("KERAS_ORDERED_DATA", str(tmp_path))
    assert len(load_treebank()) == 3
    monkeypatch.delenv("KERAS_ORDERED_DATA")
    with pytest.raises(ValueError, match="KERAS_ORDERED_DATA"):
        load_treebank()
    with pytest.raises(ValueError, match="No .mrg files"):
        load_treebank(str(tmp_path / "nowhere"))


def test_fast_reader_gives_the_reader_trees(tmp_path):
    from nltk.corpus.reader import BracketParseCorpusReader

    directory = str(tmp_path / "mrg")
    write_treebank(directory)
    nltk.data.path.append(directory)
    reader = BracketParseCorpusReader(directory, r".*\.mrg")
    for file_id in reader.fileids():
        assert treebank.read_trees(reader, file_id) == list(
            reader.parsed_sents(file_id)
        )


def _nltk_trees(text):
    """NLTK's own reading: each s-expression through `Tree.fromstring`."""
    import io

    from nltk.corpus.reader.util import read_sexpr_block

    stream, trees = io.StringIO(text), []
    while block := read_sexpr_block(stream):
        trees += [nltk.Tree.fromstring(b, remove_empty_top_bracketing=True)
                  for b in block]
    return trees


def test_one_pass_reader_gives_nltks_trees_on_the_wsj_sample():
    from conftest import require_data
    from nltk.corpus.reader import BracketParseCorpusReader

    directory = require_data("wsj_sample", "mrg")
    nltk.data.path.append(directory)
    reader = BracketParseCorpusReader(directory, r".*\.mrg")
    for file_id in reader.fileids()[::5]:  # 30 of the 149 files
        trees = treebank.read_mrg_file(os.path.join(directory, file_id))
        assert trees == list(reader.parsed_sents(file_id)), file_id
        with open(os.path.join(directory, file_id), encoding="utf-8") as f:
            assert trees == _nltk_trees(f.read()), file_id


def test_one_pass_reader_gives_nltks_trees_or_refuses_alike(tmp_path):
    """Random texts of brackets, labels, words and blanks: the same trees as
    NLTK's reading (empty top brackets removed, a word after `(` the label,
    `()` an empty tree), or an error where NLTK has one."""
    import random

    pieces = ["(", ")", "(", ")", "NP", "x", " ", " ", "\n", "(S", "( ",
              "-NONE-", "*", "(,", ",)", "\t"]
    rng = random.Random(0)
    path = tmp_path / "a.mrg"
    read = refused = 0
    for _ in range(1000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        path.write_text(text, encoding="utf-8")
        try:
            expected = _nltk_trees(text)
        except ValueError:
            with pytest.raises(ValueError, match="line"):
                treebank.read_mrg_file(path)
            refused += 1
            continue
        assert treebank.read_mrg_file(path) == expected, repr(text)
        read += 1
    assert read > 30 and refused > 30  # both kinds were drawn


def test_max_sentences_reads_the_first_sentences_and_no_further_file(
        monkeypatch):
    from conftest import require_data

    directory = require_data("wsj_sample", "mrg")
    names = sorted(os.listdir(directory))[:6]
    files = [os.path.join(directory, name) for name in names]
    every = load_treebank(directory, fileids=names)
    pairs = treebank.load_treebank_files(files, punctuation=True,
                                         max_length=10)
    # Sentences read by the end of each file, for each loader.
    ends = np.cumsum([sum(r.file_id == n for r in every) for n in names])
    pair_ends = np.cumsum([sum(a.file_id == n for a, _ in pairs)
                           for n in names])
    read = []
    reader = treebank._mrg_text  # every reader of a file's text
    monkeypatch.setattr(treebank, "_mrg_text",
                        lambda path: read.append(path) or reader(path))
    for limit in (1, int(ends[0]), int(ends[0]) + 1, 40, 10_000):
        read.clear()
        records = load_treebank(directory, fileids=names,
                                max_sentences=limit)
        assert [(r.file_id, r.index, r.words, r.spans) for r in records] == [
            (r.file_id, r.index, r.words, r.spans) for r in every[:limit]]
        # The files in order, up to the one that completes the sentences.
        assert len(read) == min(1 + int(np.sum(ends < limit)), len(names))
        read.clear()
        limited = treebank.load_treebank_files(
            files, punctuation=True, max_length=10, max_sentences=limit)
        assert [(a.words, b.words) for a, b in limited] == [
            (a.words, b.words) for a, b in pairs[:limit]]
        assert len(read) == min(1 + int(np.sum(pair_ends < limit)),
                                len(names))
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="max_sentences"):
            load_treebank(directory, max_sentences=bad)
        with pytest.raises(ValueError, match="max_sentences"):
            treebank.load_treebank_files(files, max_sentences=bad)


def test_map_to_vocabulary():
    vocabulary = ["<eos>", "<unk>", "the", "N"]
    assert map_to_vocabulary(["the", "N", "cat"], vocabulary) == [
        "the", "N", "<unk>"
    ]
    assert map_to_vocabulary(["the"], {"the": 0, "<unk>": 1}) == ["the"]
    with pytest.raises(ValueError, match="<unk>"):
        map_to_vocabulary(["the"], ["the"])


def _kept_by_reading_every_tree(path, max_length):
    return [(index, str(tree))
            for index, tree in enumerate(treebank.read_mrg_file(path))
            if treebank._word_count(tree) <= max_length]


def test_short_trees_are_those_of_reading_every_tree_on_the_sample():
    from conftest import require_data

    directory = require_data("wsj_sample", "mrg")
    files = sorted(os.path.join(directory, name)
                   for name in os.listdir(directory) if name.endswith(".mrg"))
    for path in files:
        every = [(index, treebank._word_count(tree), tree)
                 for index, tree in enumerate(treebank.read_mrg_file(path))]
        for max_length in (0, 3, 10, 40):
            kept = treebank._short_trees(path, max_length)
            assert [(index, tree) for index, tree in kept] == [
                (index, tree) for index, words, tree in every
                if words <= max_length], (path, max_length)


@pytest.mark.parametrize("text", [
    # Two trees on one line, a word with a bracket-free odd spelling, an
    # empty top bracketing, a one-word tree.
    "(S (NN a))(S (NN b) (-NONE- *) (NN c))\n( (S (NN \\/)) )\n(NN d)\n",
    # A word outside any bracket: read whole, as read_mrg_file reads it.
    "junk (S (NN a) (NN b))\n",
    # Unbalanced: read_mrg_file's own error.
    "(S (NN a) (NN b)\n",
])
def test_short_trees_of_odd_files_are_those_of_reading_every_tree(
        tmp_path, text):
    path = tmp_path / "wsj_0001.mrg"
    path.write_text(text)
    try:
        expected = _kept_by_reading_every_tree(str(path), 1)
    except ValueError as error:
        with pytest.raises(ValueError, match=re.escape(str(error))):
            treebank._short_trees(str(path), 1)
        return
    kept = [(index, str(tree))
            for index, tree in treebank._short_trees(str(path), 1)]
    assert kept == expected


def test_a_length_limit_cleans_only_the_trees_it_keeps(tmp_path, monkeypatch):
    # Three words and five punctuation tokens: kept under a limit of 3
    # (punctuation does not count); four words: left out without being
    # cleaned; the records are those of cleaning every tree.
    text = ("(S (NP (DT a) (, ,) (NN b)) (: :) (`` ``) (VP (VB c)) (. .) "
            "('' ''))\n(S (NP (DT a) (NN b)) (VP (VB c) (NP (NN d))))\n"
            "(S (-NONE- *) (NP (NN e)) (. .))\n")
    path = tmp_path / "wsj_0001.mrg"
    path.write_text(text)
    unlimited = treebank.load_treebank_files([str(path)], punctuation=True)
    cleaned = []
    real = treebank.make_sentence_pair

    def counting(tree, *args, **kwargs):
        cleaned.append(tree)
        return real(tree, *args, **kwargs)

    monkeypatch.setattr(treebank, "make_sentence_pair", counting)
    kept = treebank.load_treebank_files([str(path)], punctuation=True,
                                        max_length=3)
    assert [p.words for p, _ in kept] == [["a", "b", "c"], ["e"]]
    assert [q.words for _, q in kept] == [
        ["a", ",", "b", ":", "``", "c", ".", "''"], ["e", "."]]
    assert [(p.spans, q.spans) for p, q in kept] == [
        (p.spans, q.spans) for p, q in unlimited if len(p.words) <= 3]
    assert len(cleaned) == 2
