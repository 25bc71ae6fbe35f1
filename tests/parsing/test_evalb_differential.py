"""EVALB in Python against the C program: the whole report, line by line.

The reference is `evalb.c` of the shared data, compiled here with the system
C compiler. Thousands of (gold, test) tree pairs, from perturbed WSJ trees
of the shared sample and from synthetic trees, are written to a few files
and scored by both programs with `COLLINS.prm`, `new.prm` and `sample.prm`;
the two reports must be equal, character for character. The perturbations
cover what EVALB treats specially: removed, added and relabelled brackets,
unary chains, empty elements, punctuation and other deleted labels, the
unlabelled `( (S ...) )` wrapper of `.mrg` files and roots that lose their
label, `EQ_LABEL` and `EQ_WORD` pairs, function tags and indices, quote
words under `QUOTE_LABEL` tags, length and word mismatches (error
sentences), unclosed brackets, parse failures (skipped sentences),
sentences over `CUTOFF_LEN` words, several bracketings on a line, empty
words and empty constituents, and the spacing the C program's reader
allows.

The C program gives up at its 12th error with `MAX_ERROR 10`; the batches
are scored with `-e` raised on both sides so that a file can hold many
error sentences, and the limit itself has its own test.
"""

import dataclasses
import functools
import glob
import os
import random
import re
import shutil
import subprocess

import pytest

from conftest import require_data
from keras_ordered.parsing import evalb

pytestmark = pytest.mark.slow  # compiles evalb.c, runs it on thousands of trees

PARAMETER_FILES = ("COLLINS.prm", "new.prm", "sample.prm")
# Parameter files of this test, for what the shipped ones leave out:
# EQ_LABEL and EQ_WORD pairs that chain (the C program does not), a
# constituent deleted through an EQ_LABEL of a DELETE_LABEL, another
# CUTOFF_LEN, DELETE_LABEL_FOR_LENGTH beyond -NONE-, and LABELED 0.
OWN_PARAMETER_FILES = {
    "chains.prm": """CUTOFF_LEN 10
LABELED 1
DELETE_LABEL TOP
DELETE_LABEL S1
DELETE_LABEL -NONE-
DELETE_LABEL ,
DELETE_LABEL ``
DELETE_LABEL ''
DELETE_LABEL_FOR_LENGTH -NONE-
DELETE_LABEL_FOR_LENGTH ,
QUOTE_LABEL ``
QUOTE_LABEL ''
QUOTE_LABEL POS
QUOTE_LABEL NN
EQ_LABEL ADVP PRT
EQ_LABEL PRT RP
EQ_LABEL S1 SBAR
EQ_LABEL T TT
EQ_LABEL TT NN
EQ_WORD This this
EQ_WORD this These
""",
    "unlabeled.prm": """LABELED 0
DELETE_LABEL TOP
DELETE_LABEL -NONE-
DELETE_LABEL ,
DELETE_LABEL :
DELETE_LABEL ``
DELETE_LABEL ''
DELETE_LABEL .
DELETE_LABEL_FOR_LENGTH -NONE-
EQ_LABEL ADVP PRT
""",
}
NO_ERROR_LIMIT = 1_000_000
WSJ_PAIRS = 2400
SYNTHETIC_PAIRS = 1600
PAIRS_PER_FILE = 1000
# The C program's fixed arrays and line buffer: inputs beyond them are
# undefined behaviour there, so the generator stays within them.
MAX_WORDS, MAX_BRACKETS, MAX_QUOTES, MAX_LINE = 190, 190, 18, 4900


# ---------------------------------------------------------------------------
# The C program.


@pytest.fixture(scope="session")
def c_evalb(tmp_path_factory):
    """Path of `evalb.c` compiled with the system C compiler.

    Skips without a compiler, except in CI (`CI` set), where it fails.
    """
    source = os.path.join(require_data("evalb"), "evalb.c")
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        message = "no C compiler (gcc or cc) on PATH to build EVALB's evalb.c"
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the EVALB differential test but found {message}: "
                        "install gcc (.ci/run does).")
        pytest.skip(message)
    binary = str(tmp_path_factory.mktemp("evalb_c") / "evalb")
    build = subprocess.run(
        [compiler, "-O2", "-o", binary, source],
        capture_output=True, text=True, check=False,
    )
    assert build.returncode == 0, f"{compiler} could not build evalb.c:\n{build.stderr}"
    return binary


@pytest.fixture(scope="session")
def prm_paths(tmp_path_factory):
    """Name -> path of the shipped and of this test's parameter files."""
    folder = require_data("evalb")
    paths = {name: os.path.join(folder, name) for name in PARAMETER_FILES}
    own = tmp_path_factory.mktemp("evalb_prm")
    for name, text in OWN_PARAMETER_FILES.items():
        (own / name).write_text(text)
        paths[name] = str(own / name)
    return paths


def run_c(binary, prm, gold, test, max_error=None):
    """`evalb -p PRM [-e N] GOLD TEST`: the completed process."""
    command = [binary, "-p", prm]
    if max_error is not None:
        command += ["-e", str(max_error)]
    return subprocess.run(
        command + [gold, test], capture_output=True, text=True, check=False,
    )


def python_report(prm, gold, test, max_error=None):
    """The Python scorer's report of the same files."""
    params = evalb.load_params(prm)
    if max_error is not None:
        params = dataclasses.replace(params, max_error=max_error)
    return evalb.format_report(evalb.evaluate_files(gold, test, params))


def assert_same_report(expected, got, gold_lines, test_lines, what):
    """Equal reports, or a message naming the first differing lines and pairs."""
    if expected == got:
        return
    expected_lines, got_lines = expected.splitlines(), got.splitlines()
    problems = []
    for number in range(max(len(expected_lines), len(got_lines))):
        c = expected_lines[number] if number < len(expected_lines) else "<none>"
        p = got_lines[number] if number < len(got_lines) else "<none>"
        if c == p:
            continue
        problem = f"report line {number + 1}:\n  C:      {c!r}\n  Python: {p!r}"
        row = re.match(r"\s*(\d+)\s", c)
        if row and 3 <= number < 3 + len(gold_lines):
            sentence = int(row.group(1)) - 1
            problem += (
                f"\n  gold: {gold_lines[sentence]}\n  test: {test_lines[sentence]}"
            )
        problems.append(problem)
        if len(problems) == 5:
            break
    pytest.fail(
        f"{what}: the Python report differs from the C program's on "
        f"{sum(a != b for a, b in zip(expected_lines, got_lines))} lines "
        f"({len(expected_lines)} vs {len(got_lines)} lines); first ones:\n"
        + "\n".join(problems)
    )


# ---------------------------------------------------------------------------
# Trees: a constituent is [label, child, ...], a preterminal (tag, word).


def read_sexprs(text):
    """The trees of a `.mrg` text, as nested lists and tuples."""
    tokens = re.findall(r"\(|\)|[^\s()]+", text)
    stack, trees = [[]], []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "(":
            label = ""
            if tokens[i + 1] not in "()":
                label = tokens[i + 1]
                i += 1
            stack.append([label])
        elif token == ")":
            node = stack.pop()
            if len(node) == 2 and isinstance(node[1], str):
                node = (node[0], node[1])
            stack[-1].append(node)
            if len(stack) == 1:
                trees.append(stack[-1].pop())
        else:
            stack[-1].append(token)
        i += 1
    return trees


@functools.lru_cache(maxsize=1)
def wsj_trees():
    """The WSJ sample's trees, in file order."""
    folder = require_data("wsj_sample", "mrg")
    trees = []
    for path in sorted(glob.glob(os.path.join(folder, "*.mrg"))):
        with open(path) as f:
            trees.extend(read_sexprs(f.read()))
    assert len(trees) > 3000, f"only {len(trees)} trees under {folder}"
    return tuple(trees)


def copy(node):
    return node if isinstance(node, tuple) else [node[0]] + [copy(c) for c in node[1:]]


def constituents(node, parent=None, index=None):
    """`(node, parent, index in parent)` of every constituent, preorder."""
    if isinstance(node, tuple):
        return []
    found = [(node, parent, index)]
    for i, child in enumerate(node[1:], 1):
        found.extend(constituents(child, node, i))
    return found


def preterminals(node, parent=None, index=None):
    """`(preterminal, parent, index in parent)`, left to right."""
    if isinstance(node, tuple):
        return [(node, parent, index)]
    found = []
    for i, child in enumerate(node[1:], 1):
        found.extend(preterminals(child, node, i))
    return found


SPACES = [" ", " ", "  ", "\t"]


def write(node, rng, tight=False):
    """A tree as one line, with the spacing variants the C program reads."""
    if isinstance(node, tuple):
        tag, word = node
        return f"({tag}{rng.choice(SPACES)}{word})"
    label, children = node[0], node[1:]
    if not children:
        return f"({label})"  # an empty constituent (not "(X )": a word)
    parts = [write(child, rng, tight) for child in children]
    space = "" if tight else " "
    inner = (space if tight else rng.choice(SPACES)).join(parts)
    closing = rng.choice(["", "", "", " "])
    return f"({label}{space}{inner}{closing})"


# ---------------------------------------------------------------------------
# Perturbations: each changes a tree in place (or returns a new root).

PHRASES = ["S", "NP", "VP", "PP", "ADVP", "PRT", "SBAR", "ADJP", "T", "TT",
           "S1", "TOP", "X", "", "NP-SBJ", "NP-SBJ-1", "PP-LOC-CLR", "NP=2",
           "S-TPC-1", "-NONE-", "ADVP-TMP", "WHNP-1", "PRN"]
TAGS = ["DT", "NN", "NNS", "VB", "VBD", "VBZ", "IN", "JJ", "RB", "RP", "CD",
        "POS", "PRP", ",", ".", ":", "``", "''", "-NONE-", "?", "!", "T",
        "TT", "NN-1", "-LRB-"]
PUNCTUATION = [(",", ","), (".", "."), (":", ";"), ("``", "``"), ("''", "''"),
               ("?", "?"), ("!", "!"), (".", "?"), (":", "--")]
QUOTE_TAGS = ["``", "''", "POS", "NN", "CD", "VBZ", ":", "DT"]
QUOTE_WORDS = ["'", '"', "/", "'s"]
WORDS = ["the", "a", "cat", "sat", "on", "mat", "This", "this", "These", "of",
         "'", '"', "/", "--", "1987", "Mr.", "-LRB-"]


def remove_bracket(tree, rng):
    inner = [c for c in constituents(tree) if c[1] is not None]
    if inner:
        node, parent, index = rng.choice(inner)
        parent[index:index + 1] = node[1:]


def add_bracket(tree, rng):
    node = rng.choice(constituents(tree))[0]
    if len(node) > 1:
        start = rng.randrange(1, len(node))
        end = rng.randrange(start, len(node)) + 1
        node[start:end] = [[rng.choice(PHRASES)] + node[start:end]]


def relabel(tree, rng):
    rng.choice(constituents(tree))[0][0] = rng.choice(PHRASES)


def unary_chain(tree, rng):
    node, parent, index = rng.choice(constituents(tree) + preterminals(tree))
    if parent is not None:
        label = rng.choice([rng.choice(PHRASES), node[0]])
        parent[index] = [label, node]


def empty_element(tree, rng):
    node = rng.choice(constituents(tree))[0]
    element = rng.choice([
        ("-NONE-", "*T*-1"), ("-NONE-", "*"), ["NP-SBJ", ("-NONE-", "*-2")],
        ["NP", ["NP", ("-NONE-", "0")]], ["SBAR", ("-NONE-", "0"), ["S", ("-NONE-", "*T*-3")]],
    ])
    node.insert(rng.randrange(1, len(node) + 1), copy(element))


def punctuation(tree, rng):
    node = rng.choice(constituents(tree))[0]
    node.insert(rng.randrange(1, len(node) + 1), rng.choice(PUNCTUATION))


def drop_word(tree, rng):
    leaves = preterminals(tree)
    if len(leaves) > 1:
        _, parent, index = rng.choice(leaves)
        del parent[index]


def retag(tree, rng):
    (tag, word), parent, index = rng.choice(preterminals(tree))
    parent[index] = (rng.choice(TAGS + [tag]), word)


def change_word(tree, rng):
    (tag, word), parent, index = rng.choice(preterminals(tree))
    parent[index] = (tag, rng.choice(WORDS + [word.upper()]))


def quote_word(tree, rng):
    """A quote word (`'`, `"`, `/`) under a tag of `new.prm`'s QUOTE_LABELs."""
    _, parent, index = rng.choice(preterminals(tree))
    parent[index] = (rng.choice(QUOTE_TAGS), rng.choice(QUOTE_WORDS))


def requote(tree, rng):
    """Another quote tag for a quote word (deleted on one side only, say)."""
    quotes = [leaf for leaf in preterminals(tree) if leaf[0][1] in QUOTE_WORDS]
    if quotes:
        (_, word), parent, index = rng.choice(quotes)
        parent[index] = (rng.choice(QUOTE_TAGS), word)
    else:
        quote_word(tree, rng)


def function_tag(tree, rng):
    node = rng.choice(constituents(tree))[0]
    if node[0] and not node[0].startswith("-"):
        node[0] += rng.choice(["-SBJ", "-SBJ-1", "=2", "-LOC-CLR", "-1", "-TMP=3"])


def root_loses_label(tree, rng):
    tree[0] = ""


def empty_word(tree, rng):
    _, parent, index = rng.choice(preterminals(tree))
    parent[index] = (rng.choice(["NN", "X"]), "")


def empty_constituent(tree, rng):
    node = rng.choice(constituents(tree))[0]
    node.insert(rng.randrange(1, len(node) + 1), [rng.choice(PHRASES)])


TEST_EDITS = [remove_bracket, add_bracket, relabel, unary_chain, empty_element,
              punctuation, drop_word, retag, change_word, quote_word, requote,
              function_tag, root_loses_label, empty_word, empty_constituent]
WEIGHTS = [8, 8, 6, 4, 3, 3, 1, 3, 1, 1, 8, 2, 1, 0.3, 0.5]
BOTH_EDITS = [empty_element, punctuation, quote_word, function_tag,
              unary_chain, add_bracket]


def synthetic_tree(rng, words):
    """A random tree over about `words` words with EVALB's special labels."""
    def grow(size, depth):
        if size == 1 and (depth > 5 or rng.random() < 0.7):
            if rng.random() < 0.12:
                return rng.choice(PUNCTUATION + [("-NONE-", "*")])
            return (rng.choice(TAGS), rng.choice(WORDS))
        parts, left = [], size
        while left > 0:
            take = rng.randint(1, max(1, min(left, size // 2 or 1)))
            parts.append(grow(take, depth + 1))
            left -= take
        return [rng.choice(PHRASES)] + parts
    tree = grow(words, 0)
    return tree if isinstance(tree, list) else ["S", tree]


def wrap(tree, rng):
    """The `.mrg` wrapper `( (S ...) )`, a TOP or S1 root, or nothing."""
    kind = rng.random()
    if kind < 0.25:
        return ["", tree]
    if kind < 0.35:
        return [rng.choice(["TOP", "S1", "ROOT"]), tree]
    return tree


def within_c_limits(*trees):
    for tree in trees:
        if isinstance(tree, str):
            continue
        leaves = preterminals(tree)
        quotes = sum(1 for _, word in (leaf for leaf, _, _ in leaves) if word in QUOTE_WORDS)
        if (len(leaves) > MAX_WORDS or len(constituents(tree)) > MAX_BRACKETS
                or quotes > MAX_QUOTES):
            return False
    return True


def perturbed_pair(gold, rng):
    """A (gold line, test line) pair from a gold tree."""
    inner = copy(gold)
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        rng.choice(BOTH_EDITS)(inner, rng)
    gold = wrap(inner, rng)
    # the test tree: the same wrapper, mostly, or its own
    test = copy(gold) if rng.random() < 0.8 else wrap(copy(inner), rng)
    edits = rng.choices([0, 1, 2, 3, 5], weights=[3, 4, 3, 2, 1])[0]
    for _ in range(edits):
        rng.choices(TEST_EDITS, weights=WEIGHTS)[0](test, rng)
    tight = rng.random() < 0.1
    gold_line, test_line = write(gold, rng, tight), write(test, rng, tight)
    special = rng.random()
    if special < 0.02:
        test_line = ""  # a parse failure
    elif special < 0.03:
        test_line = "(S (. .) (-NONE- *) (, ,))"  # no word left: skipped
    elif special < 0.04:
        test_line = test_line[:-1]  # one bracket left unclosed
    elif special < 0.045:
        gold_line = gold_line[:-1]
    elif special < 0.06:
        # several bracketings side by side on a line
        gold_line = f"(NP (DT This)) {gold_line} (. .)"
        test_line = f"(NP (DT {rng.choice(['This', 'this'])})) {test_line} (. .)"
    return gold, test, gold_line, test_line


def make_pairs(seed, wsj_count, synthetic_count):
    """Seeded, deterministic (gold line, test line) pairs within C's limits."""
    rng = random.Random(seed)
    sources = wsj_trees()
    pairs, attempts = [], 0
    while len(pairs) < wsj_count + synthetic_count:
        attempts += 1
        if len(pairs) < wsj_count:
            source = sources[attempts * 7 % len(sources)]
        else:
            source = synthetic_tree(rng, rng.choice([1, 2, 3, 5, 8, 15, 30, 45, 60]))
        gold, test, gold_line, test_line = perturbed_pair(source, rng)
        if (within_c_limits(gold, test) and len(gold_line) < MAX_LINE
                and len(test_line) < MAX_LINE):
            pairs.append((gold_line, test_line))
    return pairs


def write_batches(folder, pairs):
    """The pairs as (gold path, test path, gold lines, test lines) batches."""
    batches = []
    for number, first in enumerate(range(0, len(pairs), PAIRS_PER_FILE)):
        chunk = pairs[first:first + PAIRS_PER_FILE]
        gold_lines = [g for g, _ in chunk]
        test_lines = [t for _, t in chunk]
        paths = []
        for side, lines in (("gold", gold_lines), ("test", test_lines)):
            path = folder / f"batch{number}.{side}"
            path.write_text("\n".join(lines) + "\n")
            paths.append(str(path))
        batches.append((paths[0], paths[1], gold_lines, test_lines))
    return batches


# ---------------------------------------------------------------------------
# The tests.


def test_generator_is_deterministic_and_varied():
    first = make_pairs(7, 60, 40)
    assert first == make_pairs(7, 60, 40)
    assert first != make_pairs(8, 60, 40)
    text = "\n".join(g + "\n" + t for g, t in make_pairs(1, WSJ_PAIRS, SYNTHETIC_PAIRS))
    for needle in ("( (", "-NONE-", "NP-SBJ", "(PRT", "(ADVP", "(S1", "(TOP",
                   "(POS '", "(`` \"", "=2", "(. .)"):
        assert needle in text, needle


@pytest.mark.parametrize("prm", PARAMETER_FILES + tuple(OWN_PARAMETER_FILES))
def test_report_equals_the_c_programs(c_evalb, prm_paths, tmp_path, monkeypatch, prm):
    """Thousands of pairs, the whole report, with each parameter file."""
    prm_path = prm_paths[prm]
    reinserted = []  # quote words QUOTE_LABEL puts back: the pairs must have some
    reinsert = evalb._reinsert
    monkeypatch.setattr(evalb, "_reinsert", lambda *a: reinserted.append(a) or reinsert(*a))
    pairs = make_pairs(20240601, WSJ_PAIRS, SYNTHETIC_PAIRS)
    for gold, test, gold_lines, test_lines in write_batches(tmp_path, pairs):
        c = run_c(c_evalb, prm_path, gold, test, NO_ERROR_LIMIT)
        assert c.returncode == 0, c.stderr[-2000:]
        got = python_report(prm_path, gold, test, NO_ERROR_LIMIT)
        assert_same_report(c.stdout, got, gold_lines, test_lines,
                           f"{prm}, {os.path.basename(gold)}")
        # the figures the batches must exercise, as the C program prints them
        rows = [line.split() for line in c.stdout.splitlines()[3:3 + len(gold_lines)]]
        statuses = {row[2] for row in rows}
        assert statuses == {"0", "1", "2"}, statuses
        assert any(int(row[1]) > 40 for row in rows)
    if evalb.load_params(prm_path).quote_labels:
        assert len(reinserted) >= 10, len(reinserted)


def test_cli_prints_the_c_programs_report(c_evalb, tmp_path, capsys):
    from keras_ordered_cli import main

    prm = os.path.join(require_data("evalb"), "new.prm")
    pairs = make_pairs(99, 300, 200)
    gold, test, gold_lines, test_lines = write_batches(tmp_path, pairs)[0]
    c = run_c(c_evalb, prm, gold, test, NO_ERROR_LIMIT)
    status = main(["evalb", gold, test, "-p", prm, "-e", str(NO_ERROR_LIMIT)])
    out, _ = capsys.readouterr()
    assert status == 0
    assert_same_report(c.stdout, out, gold_lines, test_lines, "keras-ordered evalb")


CAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))"
CAT_FLAT = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (DT the) (NN mat))) (. .))"
LONG = "(S " + " ".join(f"(NP (DT a) (NN w{i}))" for i in range(25)) + " (. .))"
HAND_PICKED = {
    "issue_cases": [
        (f"( {CAT} )", f"( {CAT_FLAT} )"),  # the wrapper is a bracket
        (f"( {CAT} )", f"( {CAT.replace('(S ', '( ', 1)} )"),  # root loses label
        (CAT, CAT.replace("sat", "sit")),  # word mismatch: zeros
        (CAT, CAT_FLAT.replace("(DT the) ", "")),  # length mismatch: zeros
        (CAT, CAT[:-1]),  # test bracket left unclosed: an error, scored
        (CAT[:-1], CAT[:-1]),
        (CAT, ""),  # parse failure
        (CAT, "(S (. .) (-NONE- *))"),  # no test word left: skipped
        ("(S (NN a) ('' ') (NN b))", "(S (NN a) (POS ') (NN b))"),  # QUOTE_LABEL
        ("(S (NN a) ('' ') (`` \") (NN b))", "(S (NN a) (POS ') (NN b))"),
        ("(S (NN a) ('' ') (POS ') (NN b))", "(S (NN a) (`` ') (NN b))"),
        ("(S (NP (NN-1 a)) (VP (VB b)))", "(S (NP (NN a)) (VP (VB b)))"),  # raw tags
        ("(S (-NONE- (NN a)) (VP (VB b)))", "(S (-LRB- (NN a)) (VP (VB b)))"),
        ("(S (NP (NP (DT a) (NN b))) (VP (VB c)))", "(S (NP (DT a) (NN b)) (VP (VB c)))"),
        ("(S (X ) (NP) () (NN a) )", "(S (Y ) (NN a))"),  # empty word, empty brackets
        ("(S(NP(DT a)\t(NN b))(VP (VB c) ))", "(S (NP (DT a)) (NN b) (VP (VB c)))"),
        ("(A (NN x)) (B (NN y) (NN z))", "(A (NN x) (NN y)) (B (NN z))"),  # several trees
        ("(S (NP (DT a) (NN b) (VP (VB c) (NN d)))", "(S (DT a) (X (NN b) (VB c)) (NN d))"),
        (LONG, LONG.replace("(NP (DT a) (NN w3))", "(DT a) (NN w3)")),
    ],
    # F-measures 0 / 0 (no bracket in the cut-off block; none matched)
    "only_long": [(LONG, LONG), (LONG, "")],
    "none_matched": [("(S (NN a) (NN b))", "(X (NN a) (NN b))")],
    "all_skipped": [(CAT, ""), ("(S (NN a))", "(S (. .))")],
}


@pytest.mark.parametrize("prm", PARAMETER_FILES + tuple(OWN_PARAMETER_FILES))
@pytest.mark.parametrize("case", sorted(HAND_PICKED))
def test_hand_picked_cases_equal_the_c_programs(c_evalb, prm_paths, tmp_path, case, prm):
    gold_lines = [g for g, _ in HAND_PICKED[case]]
    test_lines = [t for _, t in HAND_PICKED[case]]
    gold, test = write_files(
        tmp_path, "\n".join(gold_lines) + "\n", "\n".join(test_lines) + "\n"
    )
    c = run_c(c_evalb, prm_paths[prm], gold, test, NO_ERROR_LIMIT)
    assert c.returncode == 0, c.stderr
    got = python_report(prm_paths[prm], gold, test, NO_ERROR_LIMIT)
    assert_same_report(c.stdout, got, gold_lines, test_lines, f"{case}, {prm}")


def write_files(folder, gold, test):
    paths = (str(folder / "gold.txt"), str(folder / "test.txt"))
    for path, text in zip(paths, (gold, test)):
        with open(path, "w") as f:
            f.write(text)
    return paths


@pytest.mark.parametrize("errors", [10, 11, 12, 13])
def test_max_error_gives_up_where_the_c_program_does(c_evalb, tmp_path, errors):
    """With MAX_ERROR 10 the C program prints its totals up to 11 errors."""
    prm = os.path.join(require_data("evalb"), "COLLINS.prm")
    sentence = "(S (NP (DT a) (NN b)) (VP (VB c)))"
    gold = [sentence] * 15
    test = [sentence] * 15
    for i in range(errors):
        test[i + 2] = "(S (NP (DT a)) (VP (VB c)))"  # length mismatch
    gold_path, test_path = write_files(tmp_path, "\n".join(gold) + "\n", "\n".join(test) + "\n")
    c = run_c(c_evalb, prm, gold_path, test_path)
    if errors <= 11:
        assert c.returncode == 0
        assert_same_report(c.stdout, python_report(prm, gold_path, test_path),
                           gold, test, f"{errors} errors")
    else:
        assert c.returncode == 1 and "=== Summary ===" not in c.stdout
        with pytest.raises(evalb.TooManyErrors, match="Gave up at error 12") as info:
            python_report(prm, gold_path, test_path)
        printed = c.stdout.splitlines()[3:]
        assert len(printed) == len(info.value.sentences) == 2 + 11


@pytest.mark.parametrize("gold_end, test_end", [
    ("\n", "\n\n"), ("\n\n", "\n"), ("\n\n\n", "\n\n"), ("", "\n"), ("\n \n", "\n\t\n"),
])
def test_blank_lines_at_the_end(c_evalb, tmp_path, gold_end, test_end):
    """Blank lines in both files are skipped sentences; in one only, ignored."""
    prm = os.path.join(require_data("evalb"), "COLLINS.prm")
    lines = ["(S (NP (DT a) (NN b)) (VP (VB c)))", "( (S (NP (NN b)) (VP (VB c))) )"]
    gold_path, test_path = write_files(
        tmp_path, "\n".join(lines) + gold_end, "\n".join(lines) + test_end
    )
    c = run_c(c_evalb, prm, gold_path, test_path)
    assert c.returncode == 0
    assert_same_report(c.stdout, python_report(prm, gold_path, test_path),
                       lines, lines, repr((gold_end, test_end)))
