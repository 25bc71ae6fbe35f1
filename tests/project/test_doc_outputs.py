"""Example outputs printed in the user pages, recomputed and compared.

A page that shows what a command or a model answers must show what it
answers today:

- docs/serving.md's TF Serving responses of the shipped `prpn_ptb_quick`
  model are recomputed with the export's own signature functions
  (`keras_ordered.export.language_model`: the text preprocessing, the
  model pass and the tree building that `export_language_model` writes
  into the SavedModel), run in this process instead of through a saved and
  served copy (tests/export/test_export.py checks that a served SavedModel
  gives the in-process model's numbers to 1e-5); every printed number must
  equal the computed one at the precision it is printed with;
- docs/evaluation.md's lists of the keys of `keras-ordered
  evaluate-parsing --json` are compared with the keys the command prints;
- the README's quick start: what `keras-ordered parse` prints (its Python
  snippet's printed tree is checked by tests/project/test_docs.py, which
  compares the comment after a `print(` with the block's output);
- docs/evaluation.md's drawn tree: what `keras-ordered parse --format text
  --distances` prints, and its SVG file, which the command written beside
  it makes.
"""

import io
import json
import os
import re
import contextlib

import pytest

from conftest import REPO
from conftest import require_data

JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.S)


def _section(page, heading):
    """The text of `page` under the heading `heading`, to the next heading."""
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", text,
                      re.S | re.M)
    assert match, f"{page} has no heading {heading!r}"
    return match.group(1)


def _printed_json(block):
    """A printed JSON block, its decimals kept as the strings printed."""
    return json.loads(block, parse_float=lambda text: text)


def _mismatches(printed, computed, where="response"):
    """Where `printed` (from `_printed_json`) differs from `computed`:
    a printed decimal must be the computed number rounded to the printed
    number of decimals (with 1e-5 of slack for a value on a rounding
    boundary); anything else must be equal."""
    if isinstance(printed, str) and re.fullmatch(r"-?\d+\.\d+", printed):
        decimals = len(printed.split(".")[1])
        ok = abs(float(printed) - float(computed)) <= 0.5 * 10**-decimals + 1e-5
        return [] if ok else [f"{where}: printed {printed}, computed "
                              f"{float(computed):.{decimals + 2}f}"]
    if isinstance(printed, dict):
        if set(printed) != set(computed):
            return [f"{where}: printed keys {sorted(printed)}, computed "
                    f"{sorted(computed)}"]
        return [m for key in printed
                for m in _mismatches(printed[key], computed[key],
                                     f"{where}.{key}")]
    if isinstance(printed, list):
        if len(printed) != len(computed):
            return [f"{where}: printed {len(printed)} values, computed "
                    f"{len(computed)}"]
        return [m for i, (p, c) in enumerate(zip(printed, computed))
                for m in _mismatches(p, c, f"{where}[{i}]")]
    return [] if printed == computed else [
        f"{where}: printed {printed!r}, computed {computed!r}"]


def _as_rest_row(outputs, row=0):
    """One row of signature outputs as TF Serving's REST API writes it
    (per-token outputs padded to the batch's longest sentence, strings
    decoded)."""
    answer = {}
    for key, value in outputs.items():
        value = value.numpy()[row]
        value = value.tolist() if hasattr(value, "tolist") else value
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, list):
            value = [v.decode("utf-8") if isinstance(v, bytes) else v
                     for v in value]
        answer[key] = value
    return answer


@pytest.fixture(scope="module")
def prpn_signatures():
    """The signature functions `export_language_model` writes for the
    shipped `prpn_ptb_quick` model, built in this process."""
    import tensorflow as tf

    import keras_ordered
    from keras_ordered.export import language_model
    from keras_ordered.export import text as text_lib

    model = keras_ordered.models.PRPNLanguageModel.from_preset("prpn_ptb_quick")
    # export_language_model's defaults.
    preprocessor = text_lib.TextPreprocessor(
        list(model.vocabulary), numbers="digit-runs", lowercase=True,
        treebank=True, max_length=language_model.DEFAULT_MAX_LENGTH)
    preprocessor(tf.constant(["a"]))
    return language_model._LanguageModelSignatures(
        model, preprocessor, model.default_distance)


def test_serving_responses_are_the_shipped_models(prpn_signatures):
    import tensorflow as tf

    section = _section("docs/serving.md", "TF Serving")
    requests = re.findall(r"curl -d '(\{.*?\})'", section)
    blocks = JSON_BLOCK.findall(section)
    assert len(requests) == 1 and len(blocks) == 2, (
        "docs/serving.md's TF Serving section: expected one curl request "
        "and the responses of its parse and score signatures")
    sentences = json.loads(requests[0])["instances"]
    mismatches = []
    for block, signature in zip(blocks, ("parse", "score")):
        outputs = getattr(prpn_signatures, signature)(tf.constant(sentences))
        computed = {"predictions": [_as_rest_row(outputs, row)
                                    for row in range(len(sentences))]}
        mismatches += _mismatches(_printed_json(block), computed, signature)
    assert not mismatches, "docs/serving.md: " + "; ".join(mismatches)


def _documented_keys(case):
    """The keys docs/evaluation.md lists for `case` of `--json`, from its
    line "- {case}: `key`, `key`, ...;" of "Parse and evaluate ..."."""
    section = _section("docs/evaluation.md",
                       "Parse and evaluate from the command line")
    match = re.search(rf"^- {re.escape(case)}: ((?:`\w+`(?:, )?)+)", section,
                      re.M)
    assert match, f"docs/evaluation.md lists no JSON keys for {case!r}"
    return re.findall(r"`(\w+)`", match.group(1))


def _json_of(argv):
    import keras_ordered_cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert keras_ordered_cli.main(argv) == 0
    return json.loads(out.getvalue())


def test_evaluate_parsing_json_keys_are_those_documented():
    treebank = require_data("wsj_sample", "mrg")
    # The page's own command, as printed (no --model).
    without_model = _json_of(["evaluate-parsing", "--treebank", treebank,
                              "--baseline", "right-branching", "--json"])
    assert list(without_model) == _documented_keys("without `--model`")
    # One model and a baseline (50 sentences: the keys do not depend on it).
    with_model = _json_of(["evaluate-parsing", "--treebank", treebank,
                           "--model", "prpn_ptb_quick", "--baseline",
                           "right-branching", "--limit", "50", "--json"])
    assert list(with_model) == _documented_keys("with one `--model`")


def test_readme_quotes_no_test_count_or_suite_time():
    # Counts and durations of test runs go stale with every test added and
    # every machine; the README says how to get them instead.
    section = _section("README.md", "Tests")
    quoted = re.findall(r"\b\d[\d,]* (?:tests?|passed)\b|\b\d+ min(?:utes)? "
                        r"\d+ s\b|\bin (?:about )?\w+ minutes?\b|\d+ s for",
                        section)
    assert not quoted, f"README.md's Tests section quotes {quoted}"


def test_readme_quick_start_parse_prints_what_the_readme_says():
    import shlex

    import keras_ordered_cli

    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    command = re.search(r"```bash\n\s*(keras-ordered parse [^\n]*)\n", text)
    quoted = re.search(r"It prints `([^`]+)`", text)
    assert command and quoted
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert keras_ordered_cli.main(shlex.split(command.group(1))[1:]) == 0
    assert out.getvalue().splitlines() == [quoted.group(1)]


def test_tdtreelstm_serving_response_is_the_signatures():
    """docs/serving.md's TD-TreeLSTM response: every field the signature
    computes from the request alone (words, heads, length, valid, error,
    the zeros of an invalid tree) as printed; `…`, a trained model's
    number, stands for any number, and the count of them must match."""
    import tempfile

    import tensorflow as tf

    from keras_ordered.datasets.dependency import DependencyVocabulary
    from keras_ordered.export import tdtreelstm
    from keras_ordered.export import text as text_lib
    from keras_ordered.models import TDTreeLSTMLanguageModel

    section = _section("docs/serving.md", "TD-TreeLSTM and LdTreeLSTM")
    (request,) = re.findall(r"curl -d '(\{.*?\})'", section)
    (block,) = JSON_BLOCK.findall(section)
    trees = json.loads(request)[
        "instances"]
    printed = _printed_json(block.replace("…", '"…"'))
    words = ["The", "cat", "sat", "on", "the", "mat", "."]
    model = TDTreeLSTMLanguageModel.from_preset(
        "tiny", DependencyVocabulary.from_sentences([words]), ld=True, seed=1)
    with tempfile.TemporaryDirectory() as folder:
        vocabulary_file = text_lib.write_vocabulary(
            list(model.vocabulary), os.path.join(folder, "vocabulary.txt"))
        signatures = tdtreelstm._TDTreeLSTMSignatures(
            model, vocabulary_file, tdtreelstm.DEFAULT_MAX_LENGTH)
        outputs = signatures.score(tf.constant(trees))
    computed = [_as_rest_row(outputs, row) for row in range(len(trees))]

    def elided(printed_value, computed_value):
        if printed_value == "…":
            return printed_value
        if isinstance(printed_value, list):
            return [elided(p, c) for p, c in zip(printed_value, computed_value)]
        return computed_value

    expected = {"predictions": [
        {key: elided(row[key], answer[key]) if key in answer else None
         for key in row}
        for row, answer in zip(printed["predictions"], computed)]}
    mismatches = _mismatches(printed, expected, "score")
    assert [set(row) for row in printed["predictions"]] == [
        set(answer) for answer in computed]
    assert not mismatches, "docs/serving.md: " + "; ".join(mismatches)


def _drawn_trees_section():
    section = _section("docs/evaluation.md", "Drawn trees")
    commands = re.findall(r"^(keras-ordered parse [^\n]*)$", section, re.M)
    drawings = re.findall(r"```text\n(.*?)```", section, re.S)
    assert commands and drawings, (
        "docs/evaluation.md's Drawn trees: expected keras-ordered parse "
        "commands and a ```text block of what the first prints")
    return commands, drawings


def test_evaluation_page_drawn_tree_is_what_parse_prints():
    import shlex

    import keras_ordered_cli

    commands, drawings = _drawn_trees_section()
    argv = shlex.split(commands[0])[1:]
    assert argv[:3] == ["parse", "--format", "text"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert keras_ordered_cli.main(argv) == 0
    assert out.getvalue() == drawings[0]


def test_evaluation_page_svg_is_what_its_command_writes(tmp_path):
    import shlex
    import xml.etree.ElementTree as ElementTree

    import keras_ordered_cli

    pytest.importorskip("svgling")
    commands, _ = _drawn_trees_section()
    (command,) = [c for c in commands if "--format svg" in c]
    argv = shlex.split(command)[1:]
    documented = argv[argv.index("--output") + 1]
    argv[argv.index("--output") + 1] = str(tmp_path / "tree.svg")
    with contextlib.redirect_stdout(io.StringIO()):
        assert keras_ordered_cli.main(argv) == 0

    def content(path):
        # The words and the bars, which svgling's version does not move.
        root = ElementTree.parse(path).getroot()
        svg = "{http://www.w3.org/2000/svg}"
        return ([t.text for t in root.iter(f"{svg}text")],
                [round(float(r.get("height")), 2) for r in root.iter(f"{svg}rect")
                 if r.get("class") == "distance"])

    written = content(tmp_path / "tree.svg")
    assert written == content(os.path.join(REPO, documented)), (
        f"{documented} is out of date: run `{command}` at the root of the "
        "repository")
    assert len(written[1]) == 7
