"""Linearized trees (Vinyals et al., 2015): round trips and repairs."""

import nltk
import pytest

from conftest import require_data
from keras_ordered.parsing import linearize as lin

pytestmark = pytest.mark.backends

FIGURE_2 = "(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S"
JOHN = nltk.Tree.fromstring(
    "(S (NP-SBJ (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))"
)
WORDS = ["John", "has", "a", "dog", "."]
TAGS = ["NNP", "VBZ", "DT", "NN", "."]


def test_figure_2_linearization():
    assert lin.linearize(JOHN) == FIGURE_2.split()


def test_function_tags_and_empty_elements_removed():
    tree = nltk.Tree.fromstring(
        "( (S-TPC-1 (NP-SBJ-1 (-NONE- *)) (VP (VBD said) (PRN (-LRB- -LRB-) "
        "(NP=2 (NN x)) (-RRB- -RRB-)) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) "
        "(PP-LOC-CLR (IN in) (NP (NN y))) (. .)) )"
    )
    cleaned = lin.clean_tree(tree)
    assert cleaned.pformat(margin=10**6) == (
        "(S (VP (VBD said) (PRN (-LRB- -LRB-) (NP (NN x)) (-RRB- -RRB-))) "
        "(PP (IN in) (NP (NN y))) (. .))"
    )
    assert " ".join(lin.linearize(tree)) == (
        "(S (VP XX (PRN XX (NP XX )NP XX )PRN )VP (PP XX (NP XX )NP )PP XX )S"
    )
    assert lin.source_tokens(tree) == [".", "y", "in", "-RRB-", "x", "-LRB-", "said"]
    assert lin.source_tokens(tree, reverse=False)[0] == "said"
    assert lin.strip_function_tags("-NONE-") == "-NONE-"
    assert lin.strip_function_tags("-LRB-") == "-LRB-"
    assert lin.strip_function_tags("PP-LOC-CLR") == "PP"
    assert lin.strip_function_tags("NP-SBJ") == "NP"


def test_only_empty_elements_is_an_error():
    with pytest.raises(ValueError, match="no word left"):
        lin.linearize(nltk.Tree.fromstring("(S (NP (-NONE- *)))"))
    with pytest.raises(ValueError, match="nltk.Tree"):
        lin.linearize("(S (NN x))")


def test_delinearize_well_formed():
    tree, repairs = lin.delinearize(FIGURE_2.split(), WORDS, TAGS)
    assert tree == lin.clean_tree(JOHN)
    assert not repairs.malformed and repairs.total == 0
    tree, _ = lin.delinearize(FIGURE_2.split(), WORDS)
    assert tree.pos() == [(w, "XX") for w in WORDS]
    assert str(tree) == (
        "(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .))"
    )


def test_round_trip_every_wsj_sample_tree():
    from nltk.corpus.reader import BracketParseCorpusReader

    from keras_ordered.datasets.treebank import read_trees

    folder = require_data("wsj_sample", "mrg")
    if folder not in nltk.data.path:
        nltk.data.path.append(folder)
    reader = BracketParseCorpusReader(folder, r".*\.mrg")
    checked = 0
    lengths = set()
    for file_id in reader.fileids():
        for tree in read_trees(reader, file_id):
            gold = lin.clean_tree(tree)
            if gold is None:
                continue
            tokens = lin.linearize(tree)
            words, tags = zip(*gold.pos())
            assert lin.source_tokens(tree) == list(words)[::-1]
            assert tokens.count(lin.WORD_SYMBOL) == len(words)
            rebuilt, repairs = lin.delinearize(tokens, words, tags)
            assert rebuilt == gold, (file_id, " ".join(tokens))
            assert not repairs.malformed
            labels = [t for t in tokens if t != lin.WORD_SYMBOL]
            assert not any("-" in t[1:] and t[1] != "-" for t in labels), tokens
            assert "(-NONE-" not in labels
            lengths.add(len(tokens))
            checked += 1
    assert checked >= 3000  # the sample's 3,253 sentences (sections 00-01)
    assert len(lengths) > 50


def repaired(text, words=WORDS, tags=None):
    tree, repairs = lin.delinearize(text.split(), words, tags)
    return str(tree), repairs


def test_repair_missing_closing_brackets_at_the_end():
    tree, repairs = repaired("(S (NP XX )NP (VP XX (NP XX XX")
    assert tree == "(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog) (XX .))))"
    assert repairs.missing_close == 3 and repairs.missing_words == 1
    assert repairs.malformed and repairs.total == 4


def test_repair_missing_opening_brackets_at_the_start():
    tree, repairs = repaired("XX )NP (VP XX (NP XX XX )NP )VP XX )S")
    assert tree == "(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .))"
    assert repairs.as_dict() == {
        **lin.Repairs(missing_open=2).as_dict(),
        "malformed": True,
    }


def test_repair_mismatched_closing_label_closes_the_open_one():
    tree, repairs = repaired("(S (NP XX )VP (VP XX (NP XX XX )S )VP XX )S")
    assert tree == "(S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .))"
    assert repairs.mismatched_close == 2 and repairs.total == 2


def test_repair_extra_words_dropped():
    tree, repairs = repaired("(S (NP XX XX )NP (VP XX (NP XX XX XX )NP )VP XX )S")
    assert tree == "(S (NP (XX John) (XX has)) (VP (XX a) (NP (XX dog) (XX .))))"
    assert repairs.extra_words == 2 and repairs.total == 2


def test_repair_missing_words_attached():
    tree, repairs = repaired("(S (NP XX )NP (VP XX )VP )S")
    assert tree == "(S (NP (XX John)) (VP (XX has)) (XX a) (XX dog) (XX .))"
    assert repairs.missing_words == 3 and repairs.total == 3
    tree, repairs = repaired("(S (NP XX )NP (VP XX", tags=TAGS)
    # attached inside the innermost open constituent, then closed
    assert tree == "(S (NP (NNP John)) (VP (VBZ has) (DT a) (NN dog) (. .)))"
    assert (repairs.missing_words, repairs.missing_close) == (3, 2)


def test_repair_empty_constituents_roots_and_unknown_tokens():
    tree, repairs = repaired("(S (NP XX )NP (ADVP )ADVP (VP XX XX XX <eos> XX )VP )S")
    assert tree == "(S (NP (XX John)) (VP (XX has) (XX a) (XX dog) (XX .)))"
    assert repairs.empty_constituents == 1 and repairs.unknown_tokens == 1
    tree, repairs = repaired("(NP XX XX )NP (VP XX XX XX )VP")
    assert tree == "(S (NP (XX John) (XX has)) (VP (XX a) (XX dog) (XX .)))"
    assert repairs.added_root == 1 and repairs.total == 1
    tree, repairs = repaired("")
    assert tree == "(S (XX John) (XX has) (XX a) (XX dog) (XX .))"
    assert repairs.missing_words == 5 and repairs.added_root == 1


def test_malformed_rate_and_argument_errors():
    records = [lin.delinearize(t.split(), WORDS)[1] for t in (FIGURE_2, "(S XX")]
    assert lin.malformed_rate(records) == 0.5
    assert lin.malformed_rate([]) == 0.0
    with pytest.raises(ValueError, match="one tag per word"):
        lin.delinearize(FIGURE_2.split(), WORDS, tags=["NN"])
    with pytest.raises(ValueError, match="empty sentence"):
        lin.delinearize(FIGURE_2.split(), [])


def test_exported_from_the_parsing_package():
    import keras_ordered.parsing as parsing

    assert parsing.linearize is lin  # the module stays reachable
    assert parsing.linearize_tree(JOHN) == FIGURE_2.split()
    assert parsing.delinearize is lin.delinearize
