"""EVALB in Python: the C program's sample report, hand-computed cases, the command.

The reference is what today's `evalb.c` prints (`sample.current.rsl`), not
the distribution's older `sample.rsl`; `test_evalb_differential.py`
compares whole reports with the compiled C program.
"""

import dataclasses
import os
import re

import nltk
import pytest

from conftest import require_data
from keras_ordered.parsing import evalb

pytestmark = pytest.mark.backends

SUMMARY_FIELDS = {
    "Number of sentence": "sentences",
    "Number of Error sentence": "error_sentences",
    "Number of Skip  sentence": "skipped_sentences",
    "Number of Valid sentence": "valid_sentences",
    "Bracketing Recall": "recall",
    "Bracketing Precision": "precision",
    "Bracketing FMeasure": "f_measure",
    "Complete match": "complete_match",
    "Average crossing": "average_crossing",
    "No crossing": "no_crossing",
    "2 or less crossing": "two_or_less_crossing",
    "Tagging accuracy": "tagging_accuracy",
}
ROW_FIELDS = (
    "id", "length", "status", "recall", "precision", "matched_brackets",
    "gold_brackets", "test_brackets", "crossing_brackets", "words",
    "correct_tags", "tag_accuracy",
)


def sample(name):
    return os.path.join(require_data("evalb"), name)


def parse_report(text):
    """Rows, totals line and summary blocks of an EVALB report."""
    rows, blocks, totals, block = [], {}, None, None
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    for line in lines[rules[0] + 1:rules[1]]:
        rows.append(line.split())
    totals = lines[rules[1] + 1].split()
    for line in lines[rules[1] + 2:]:
        title = re.fullmatch(r"-- (.*) --", line)
        if title:
            block = blocks.setdefault(title.group(1), {})
        elif "=" in line and block is not None:
            name, value = line.split("=")
            block[name.strip()] = value.strip()
    return rows, totals, blocks


def formatted(value):
    return str(value) if isinstance(value, int) else f"{value:.2f}"


@pytest.fixture(scope="module")
def sample_result():
    return evalb.evaluate_files(
        sample("sample.gld"), sample("sample.tst"), sample("sample.prm")
    )


def test_sample_current_rsl_every_row_and_summary_figure(sample_result):
    with open(sample("sample.current.rsl")) as f:
        rows, totals, blocks = parse_report(f.read())
    assert len(rows) == len(sample_result.sentences) == 24
    for expected, row in zip(rows, sample_result.sentences):
        got = [formatted(getattr(row, name)) for name in ROW_FIELDS]
        assert got == expected, f"sentence {row.id}"
    total = sample_result.summary
    assert totals == [
        formatted(total.recall), formatted(total.precision),
        str(total.matched_brackets), str(total.gold_brackets),
        str(total.test_brackets), str(total.crossing_brackets),
        str(total.words), str(total.correct_tags),
        formatted(total.tagging_accuracy),
    ]
    assert set(blocks) == {"All", "len<=40"}
    for title, summary in (("All", total), ("len<=40", sample_result.cutoff_summary)):
        assert len(blocks[title]) == 12
        for name, value in blocks[title].items():
            assert formatted(getattr(summary, SUMMARY_FIELDS[name])) == value, (
                title, name)
    assert (total.sentences, total.error_sentences, total.skipped_sentences,
            total.valid_sentences) == (24, 5, 2, 17)
    assert [r.status for r in sample_result.sentences].count(1) == 5
    # error and skipped rows print zeros, words included
    for row in sample_result.sentences:
        if row.status:
            assert (row.words, row.gold_brackets, row.correct_tags) == (0, 0, 0)
    assert total.crossing_brackets == 1 and total.no_crossing_sentences == 16


def test_sample_report_text_is_the_c_programs(sample_result):
    report = evalb.format_report(sample_result)
    with open(sample("sample.current.rsl")) as f:
        assert report == f.read()
    lines = report.splitlines()
    fmeasure = [line for line in lines if "FMeasure" in line]
    assert fmeasure == [
        "Bracketing FMeasure       =  89.12",  # 2PR/(P+R) of 87.76 / 90.53
        "Bracketing FMeasure       =  83.20",
    ]
    assert lines[lines.index("-- All --") + 7] == fmeasure[0]  # after Precision
    # The older sample.rsl differs in its error rows, crossing total and
    # F-measure lines only.
    with open(sample("sample.rsl")) as f:
        old = f.read().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(old, lines)) if a != b]
    assert len(old) == len(lines) - 2 and len(changed) > 0


def test_sample_error_reasons(sample_result):
    rows = {row.id: row for row in sample_result.sentences}
    assert rows[11].status == rows[14].status == evalb.STATUS_SKIPPED
    assert "word mismatch" in rows[12].reason and "'was'" in rows[12].reason
    assert "length mismatch" in rows[13].reason
    assert rows[19].status == 0  # This = this (EQ_WORD)
    assert rows[20].status == 1  # That != this
    assert rows[24].length == 5 and rows[24].words == 4  # (: *) deleted


def test_load_params_files():
    collins = evalb.load_params(sample("COLLINS.prm"))
    assert collins == evalb.COLLINS_PARAMS
    new = evalb.load_params(sample("new.prm"))
    assert {"S1", "?", "!"} <= new.delete_labels
    assert new.quote_labels == {"``", "''", "POS", "NN", "CD", "VBZ", ":"}
    params = evalb.load_params(sample("sample.prm"))
    assert params.eq_labels == (("T", "TT"),) and params.eq_words == (("This", "this"),)
    assert "." not in params.delete_labels and params.labeled


def test_load_params_errors(tmp_path):
    with pytest.raises(ValueError, match="No EVALB parameter file"):
        evalb.load_params(tmp_path / "missing.prm")
    bad = tmp_path / "bad.prm"
    bad.write_text("# comment\nLABELED 2\n")
    with pytest.raises(ValueError, match="line 2: LABELED is 0"):
        evalb.load_params(bad)
    bad.write_text("DELETE_LABELS TOP\n")
    with pytest.raises(ValueError, match="unknown parameter 'DELETE_LABELS'"):
        evalb.load_params(bad)
    bad.write_text("EQ_LABEL ADVP\n")
    with pytest.raises(ValueError, match="takes two values"):
        evalb.load_params(bad)


def score(gold, test, **params):
    result = evalb.evaluate_trees([gold], [test], evalb.EvalbParams(**params))
    return result.sentences[0], result.summary


def test_duplicate_brackets_are_a_multiset():
    double = "(S (NP (NP (DT a) (NN b))) (VP (VB c)))"
    single = "(S (NP (DT a) (NN b)) (VP (VB c)))"
    row, _ = score(double, single)
    assert (row.gold_brackets, row.test_brackets, row.matched_brackets) == (4, 3, 3)
    assert (row.recall, row.precision) == (75.0, 100.0)
    row, _ = score(single, double)
    assert (row.recall, row.precision) == (100.0, 75.0)
    row, summary = score(double, double)
    assert row.matched_brackets == 4 and summary.complete_match == 100.0


def test_deleted_labels_top_punctuation_and_empty_elements():
    gold = "(TOP (S (NP-SBJ (NN it)) (VP (VBZ works)) (. .)))"
    test = "(S (NP (NN it)) (VP (VBZ works) (. .)))"
    row, summary = score(gold, test)
    # TOP not a bracket; the period and its tag are not scored but count
    # in the length; VP covers "works" on both sides.
    assert (row.length, row.words, row.gold_brackets, row.matched_brackets) == (3, 2, 3, 3)
    assert summary.recall == summary.precision == 100.0
    # -NONE- and the NP it leaves empty are removed; not counted in length.
    row, _ = score("(S (NP-SBJ-1 (-NONE- *)) (VP (VBD slept)) (. .))",
                   "(S (VP (VBD slept)) (. .))")
    assert (row.length, row.words, row.gold_brackets, row.matched_brackets) == (2, 1, 2, 2)
    # Without deletions the period is a word and the TOP a bracket.
    row, _ = score(gold, test, delete_labels=())
    assert (row.words, row.gold_brackets, row.matched_brackets) == (3, 4, 2)
    assert row.crossing_brackets == 0


def test_eq_label_and_tags():
    gold = "(S (NP (PRP He)) (VP (VBD gave) (PRT (RP up))))"
    test = "(S (NP (PRP He)) (VP (VBD gave) (ADVP (RB up))))"
    row, _ = score(gold, test)
    assert (row.matched_brackets, row.correct_tags) == (4, 2)
    row, _ = score(gold, test, eq_labels=())
    assert row.matched_brackets == 3
    row, _ = score(gold, test, eq_labels=[("RP", "RB"), ("ADVP", "PRT")])
    assert row.correct_tags == 3 and row.tag_accuracy == 100.0


def test_labeled_zero_and_one_and_crossing():
    gold = "(S (NP (DT a) (NN b)) (VP (VB c) (NN d)))"
    test = "(S (VP (DT a) (NN b)) (NP (VB c) (NN d)))"
    row, _ = score(gold, test, labeled=True)
    assert (row.matched_brackets, row.recall) == (1, pytest.approx(100 / 3))
    row, _ = score(gold, test, labeled=False)
    assert (row.matched_brackets, row.recall) == (3, 100.0)
    row, summary = score(gold, "(S (DT a) (X (NN b) (VB c)) (NN d))")
    assert row.crossing_brackets == 1 and summary.average_crossing == 1.0
    assert summary.no_crossing == 0.0 and summary.two_or_less_crossing == 100.0


def test_error_and_skipped_sentences_are_left_out_of_the_totals():
    gold = ["(S (NP (DT a) (NN b)) (VP (VB c)))"] * 4
    test = [
        "(S (NP (DT a) (NN b)) (VP (VB c)))",
        "(S (NP (DT a) (NN b)) (VP (VB c) (NN d)))",  # length mismatch
        "(S (NP (DT a) (NN x)) (VP (VB c)))",  # word mismatch
        None,  # parse failure
    ]
    result = evalb.evaluate_trees(gold, test, evalb.COLLINS_PARAMS)
    assert [r.status for r in result.sentences] == [0, 1, 1, 2]
    assert result.sentences[1].reason == "length mismatch: 3 gold words, 4 test words"
    assert result.sentences[1].words == 0 and result.sentences[1].gold_brackets == 0
    assert result.sentences[1].length == 3
    summary = result.summary
    assert (summary.sentences, summary.error_sentences, summary.skipped_sentences,
            summary.valid_sentences) == (4, 2, 1, 1)
    assert (summary.gold_brackets, summary.words, summary.recall) == (3, 3, 100.0)
    short = evalb.evaluate_trees(gold, test, evalb.EvalbParams(cutoff_len=2))
    assert short.cutoff_summary.sentences == 0 and short.summary.sentences == 4


def test_max_error_gives_up_at_the_error_after_max_error_plus_one():
    # As the C program: with MAX_ERROR 2 it prints its totals with 3 errors
    # and gives up at the 4th.
    gold = ["(S (NN a) (NN b))"] * 5
    test = ["(S (NN a))"] * 5
    result = evalb.evaluate_trees(gold[:3], test[:3], evalb.EvalbParams(max_error=2))
    assert result.summary.error_sentences == 3
    with pytest.raises(evalb.TooManyErrors, match="MAX_ERROR 2") as info:
        evalb.evaluate_trees(gold, test, evalb.EvalbParams(max_error=2))
    assert len(info.value.sentences) == 3
    # an unclosed bracket is an error too, on each side
    with pytest.raises(evalb.TooManyErrors, match="error 3, sentence 2") as info:
        evalb.evaluate_trees(["(S (NN a)", "(S (NN a))"], ["(S (NN a)", "(S (NN b))"],
                             evalb.EvalbParams(max_error=1))
    assert len(info.value.sentences) == 1
    result = evalb.evaluate_trees(gold, test, evalb.EvalbParams(max_error=0))
    assert result.summary.error_sentences == 5


def test_quote_labels_reinsert_mislabelled_quotes():
    gold = "(S (NP (NNS dogs) ('' ')) (VP (VBP bark)))"
    test = "(S (NP (NNS dogs) (POS ')) (VP (VBP bark)))"
    row, _ = score(gold, test)
    assert row.status == evalb.STATUS_ERROR
    row, _ = score(gold, test, quote_labels=["''", "POS"])
    assert row.status == 0 and (row.words, row.correct_tags) == (3, 2)


def test_nltk_trees_and_input_errors(tmp_path):
    tree = nltk.Tree.fromstring("(S (NP (DT a) (NN b)) (VP (VB c)))")
    result = evalb.evaluate_trees([tree], [str(tree)])
    assert result.summary.f_measure == 100.0
    with pytest.raises(ValueError, match="1 gold trees but 2 test"):
        evalb.evaluate_trees([tree], [tree, tree])
    # what the C program cannot read: a clear error naming the sentence
    with pytest.raises(ValueError, match="test sentence 1: a '\\)' closes no bracket"):
        evalb.evaluate_trees([tree], ["(S (NN a)))"])
    with pytest.raises(ValueError, match="gold sentence 1: the word 'a' under 'S' is"):
        evalb.evaluate_trees(["(S a b)"], [tree])
    with pytest.raises(ValueError, match="'b' is outside any bracket"):
        evalb.evaluate_trees(["(S (NN a)) b"], [tree])
    with pytest.raises(ValueError, match="'a' under 'NN' is followed by ' '"):
        evalb.evaluate_trees(["(S (NN a ))"], [tree])
    with pytest.raises(ValueError, match="ends inside the bracket"):
        evalb.evaluate_trees(["(S (NN a)) (X"], [tree])
    with pytest.raises(ValueError, match="expected a bracketed string"):
        evalb.evaluate_trees([3], [tree])
    # an unclosed bracket: an error sentence, scored in its row as in C
    result = evalb.evaluate_trees([str(tree)], ["(S (NP (DT a) (NN b)) (VP (VB c))"])
    row = result.sentences[0]
    assert row.status == evalb.STATUS_ERROR and "test brackets unbalanced" in row.reason
    assert (row.matched_brackets, row.gold_brackets, row.test_brackets) == (2, 3, 3)
    gold, test = tmp_path / "g", tmp_path / "t"
    gold.write_text("(S (NN a))\n(S (NN b))\n\n")
    test.write_text("(S (NN a))\n")
    with pytest.raises(ValueError, match="has 3 lines but the test file"):
        evalb.evaluate_files(gold, test)
    # blank lines at the end of one file only: ignored, as the C program does
    test.write_text("(S (NN a))\n(S (NN b))\n")
    assert evalb.evaluate_files(gold, test).summary.sentences == 2
    # ... in both: skipped sentences
    test.write_text("(S (NN a))\n(S (NN b))\n\n")
    assert evalb.evaluate_files(gold, test).summary.skipped_sentences == 1
    long = tmp_path / "long"
    long.write_text("(S " + "(NN a) " * 2500 + ")\n")
    with pytest.raises(ValueError, match="reads at most 4999"):
        evalb.evaluate_files(long, test)
    with pytest.raises(ValueError, match="No test file"):
        evalb.evaluate_files(gold, tmp_path / "missing")


def test_parse_bracketed_several_top_level_bracketings():
    words, tags, nodes = evalb.parse_bracketed("(P this) (Q is) (S (R a) (T test))")
    assert words == ["this", "is", "a", "test"] and tags == ["P", "Q", "R", "T"]
    assert nodes == [("S", 2, 4)]


# Corner cases of the C program (wrappers, labels, error rows), as it prints them

CAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))"
CAT_FLAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (DT the) (NN mat))) (. .))"


def report_lines(gold, test, params=None):
    result = evalb.evaluate_trees(gold, test, params)
    return result, evalb.format_report(result).splitlines()


def test_mrg_wrapper_is_a_bracket_as_in_the_c_program():
    # evalb.c with COLLINS.prm: 5 matched, 6 gold, 5 test brackets (the
    # unlabelled "( ... )" counts), and no crossing bracket in the totals.
    result, lines = report_lines([f"( {CAT} )"], [f"( {CAT_FLAT} )"])
    row = result.sentences[0]
    assert (row.matched_brackets, row.gold_brackets, row.test_brackets) == (5, 6, 5)
    assert lines[3] == (
        "   1    7    0   83.33 100.00     5      6    5      0      6     6   100.00")
    assert lines[5] == (
        "                 83.33 100.00      5     6     5      0      6     6   100.00")
    assert "Bracketing Recall         =  83.33" in lines
    # without the wrapper, 4 / 5 / 4
    row = evalb.evaluate_trees([CAT], [CAT_FLAT]).sentences[0]
    assert (row.matched_brackets, row.gold_brackets, row.test_brackets) == (4, 5, 4)


def test_root_losing_its_label_and_error_rows_as_in_the_c_program():
    gold = [f"( {CAT} )", CAT, CAT]
    test = [f"( {CAT.replace('(S ', '( ', 1)} )", CAT.replace("sat", "sit"), ""]
    result, lines = report_lines(gold, test, evalb.load_params(sample("new.prm")))
    assert lines[3:6] == [
        "   1    7    0   83.33  83.33     5      6    6      0      6     6   100.00",
        "   2    7    1    0.00   0.00     0      0    0      0      0     0     0.00",
        "   3    7    2    0.00   0.00     0      0    0      0      0     0     0.00",
    ]
    assert result.summary.precision == pytest.approx(100 * 5 / 6)


def test_f_measure_of_no_matched_bracket_prints_nan():
    long = "(S " + " ".join(f"(NP (DT a) (NN w{i}))" for i in range(25)) + ")"
    result, lines = report_lines([long], [long])
    nan = "Bracketing FMeasure       = %6s" % evalb._C_NAN  # -nan on x86
    assert [line for line in lines if "FMeasure" in line] == [
        "Bracketing FMeasure       = 100.00", nan]  # all, len<=40
    assert result.cutoff_summary.f_measure == 0.0
    # no gold or no test bracket: the totals line has no bracket figures
    _, lines = report_lines(["(S (NN a))"], [""])
    assert lines[5] == "      0     0     0.00"


def test_labels_as_the_c_program_compares_them():
    # EQ_LABEL pairs do not chain
    row, _ = score("(S (C (NN a) (NN b)))", "(S (A (NN a) (NN b)))",
                   eq_labels=[("A", "B"), ("B", "C")])
    assert row.matched_brackets == 1
    # tags are compared as written, constituents once stripped
    row, _ = score("(S-1 (NP-SBJ=2 (NN-1 a)) (VB b))", "(S (NP (NN a)) (VB b))")
    assert (row.matched_brackets, row.correct_tags) == (2, 1)
    # a constituent whose label is an EQ_LABEL of a DELETE_LABEL is removed
    row, _ = score("(S (SBAR (NN a) (NN b)))", "(S (NN a) (NN b))",
                   delete_labels=["S1"], eq_labels=[("SBAR", "S1")])
    assert (row.gold_brackets, row.matched_brackets) == (1, 1)
    # the length counts deleted tags, DELETE_LABEL_FOR_LENGTH as written
    row, _ = score("(S (NN a) (. .) (-NONE- *))", "(S (NN a) (. .))")
    assert (row.length, row.words) == (2, 1)


def test_test_side_without_words_is_skipped():
    row, _ = score(CAT, "(S (. .) (-NONE- *))")
    assert row.status == evalb.STATUS_SKIPPED and row.reason == "no test word left"


# The command ----------------------------------------------------------------


def run_cli(argv, capsys):
    from keras_ordered_cli import main

    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_prints_the_report(sample_result, capsys):
    status, out, err = run_cli(
        ["evalb", sample("sample.gld"), sample("sample.tst"), "-p", sample("sample.prm")],
        capsys,
    )
    assert status == 0 and err == ""
    assert out == evalb.format_report(sample_result)
    status, out, _ = run_cli(["evalb", sample("sample.gld"), sample("sample.gld")], capsys)
    assert status == 0 and "Bracketing FMeasure       = 100.00" in out
    # COLLINS.prm by default: MAX_ERROR 10 but no error here
    status, out, err = run_cli(
        ["evalb", sample("sample.gld"), sample("sample.tst"), "-e", "3"], capsys
    )
    assert status == 2 and out == ""
    # COLLINS.prm (no EQ_WORD): the 5th error, after -e 3 + 1 = 4
    assert "Gave up at error 5, sentence 19" in err and len(err.splitlines()) == 1
    status, out, _ = run_cli(
        ["evalb", sample("sample.gld"), sample("sample.tst"), "-p",
         sample("sample.prm"), "-e", "4"], capsys,
    )
    assert status == 0 and out == evalb.format_report(sample_result)


def test_cli_missing_file_is_one_line_exit_2(tmp_path, capsys):
    status, out, err = run_cli(
        ["evalb", str(tmp_path / "gold.txt"), sample("sample.tst")], capsys
    )
    assert status == 2 and out == ""
    assert err.startswith("keras-ordered evalb: error: No gold file at")
    assert len(err.strip().splitlines()) == 1
    status, _, err = run_cli(
        ["evalb", sample("sample.gld"), sample("sample.tst"), "-p",
         str(tmp_path / "x.prm")],
        capsys,
    )
    assert status == 2 and "No EVALB parameter file" in err


def test_replace_params_keeps_validation():
    params = dataclasses.replace(evalb.COLLINS_PARAMS, delete_labels=["TOP"])
    assert params.delete_labels == frozenset(["TOP"])
    with pytest.raises(ValueError, match="collection of labels"):
        evalb.EvalbParams(delete_labels="TOP")
