"""benchmarks/ is a shelf of maintained tools: every script has a short
entry in benchmarks/README.md and a test, the README holds current figures
only, and the records are data with at most a short NOTE.md."""

import glob
import os
import re

import pytest
from conftest import REPO
from conftest import broken_links

BENCHMARKS = os.path.join(REPO, "benchmarks")
README = os.path.join(BENCHMARKS, "README.md")
README_LINES = 400
ENTRY_LINES = 22  # "at most about 20 lines" per script
NOTE_LINES = 60
# History is git's: no dates, commit hashes or sessions in the README or
# the records' notes.
HISTORY = re.compile(
    r"\b20\d\d-\d\d-\d\d\b|\bsessions?\b|(?<![-\w])rounds? \d",
    re.IGNORECASE)
# A commit hash standing alone (a record file's name may carry one).
COMMIT = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)"
                    r"[0-9a-f]{7,40}(?![\w.])")
# A test reaches a benchmark script through a subprocess or importlib by
# file path, never by editing the import path.
PATH_EDIT = re.compile(r"sys\.path\.(insert|append)|syspath_prepend")


def _scripts():
    return sorted(os.path.basename(p)[:-3]
                  for p in glob.glob(os.path.join(BENCHMARKS, "*.py")))


def _readme():
    with open(README) as f:
        return f.read().splitlines()


def _entries(lines):
    """`{script: its entry's lines}`: a heading that names `script.py`, to
    the next heading."""
    entries = {}
    heading = re.compile(r"^#+ `(\w+)\.py`")
    name = None
    for line in lines:
        if line.startswith("#"):
            match = heading.match(line)
            name = match.group(1) if match else None
            if name:
                entries[name] = []
        if name:
            entries[name].append(line)
    return entries


def test_the_readme_is_short():
    assert len(_readme()) <= README_LINES


def test_every_script_has_a_short_readme_entry():
    entries = _entries(_readme())
    missing = [s for s in _scripts() if s not in entries]
    assert not missing, f"no `## \\`<script>.py\\`` entry for {missing}"
    long = {s: len(e) for s, e in entries.items() if len(e) > ENTRY_LINES}
    assert not long, f"entries over {ENTRY_LINES} lines: {long}"


def test_every_entry_names_a_script_on_the_shelf():
    gone = sorted(set(_entries(_readme())) - set(_scripts()))
    assert not gone, f"entries for scripts that are not there: {gone}"


def test_every_script_has_a_test():
    tests = []
    for path in glob.glob(os.path.join(REPO, "tests", "**", "*.py"),
                          recursive=True):
        if os.path.basename(path) != os.path.basename(__file__):
            with open(path) as f:
                tests.append(f.read())

    # A test runs a script: it loads it by its path, or starts it.
    def runs(script, text):
        return re.search(
            rf"load_benchmark\(\"{script}\"\)"
            rf"|\"benchmarks\",\s*\"{script}\.py\""
            rf"|\"benchmarks/{script}\.py\"", text)

    untested = [s for s in _scripts()
                if not any(runs(s, t) for t in tests)]
    assert not untested, f"benchmark scripts no test runs: {untested}"


def test_record_notes_are_short_and_tell_no_history():
    notes = glob.glob(os.path.join(BENCHMARKS, "records", "*", "*.md"))
    assert notes
    problems = {}
    for path in notes:
        with open(path) as f:
            text = f.read()
        name = os.path.relpath(path, BENCHMARKS)
        if len(text.splitlines()) > NOTE_LINES:
            problems[name] = f"{len(text.splitlines())} lines"
        elif HISTORY.search(text) or COMMIT.search(text):
            found = (HISTORY.search(text) or COMMIT.search(text)).group(0)
            problems[name] = f"history: {found!r}"
    assert not problems, problems


def test_the_readme_tells_no_history():
    found = [line for line in _readme()
             if HISTORY.search(line) or COMMIT.search(line)]
    assert not found, found[:5]


# The official code (../shared/reference), imported unchanged, finds its
# own modules only on the import path: the one edit allowed, in the one
# script that runs the official evaluation loop in-process.
OFFICIAL_CODE_IMPORTS = {"benchmarks/parse_speed_official.py"}


@pytest.mark.parametrize("folder", ["tests", "benchmarks"])
def test_no_import_path_editing(folder):
    edits = []
    for path in glob.glob(os.path.join(REPO, folder, "**", "*.py"),
                          recursive=True):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue
        if os.path.relpath(path, REPO) in OFFICIAL_CODE_IMPORTS:
            continue
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if PATH_EDIT.search(line):
                    edits.append(f"{os.path.relpath(path, REPO)}:{number}")
    assert not edits, edits


def test_the_checks_can_fail(tmp_path):
    # The entry parser sees a long entry and a missing one.
    lines = ["# Benchmarks", "## `a.py`: a", *["x"] * 30, "## Other"]
    entries = _entries(lines)
    assert set(entries) == {"a"} and len(entries["a"]) > ENTRY_LINES
    assert HISTORY.search("measured in session 23")
    assert HISTORY.search("on 2026-12-02")
    assert not HISTORY.search("the sessionless record, --rounds 6")
    assert COMMIT.search("seeds 1-5 at commit 6e697a4,")
    assert not COMMIT.search("records/x/tf_43033ea.jsonl, 2048 x 2048")
    assert PATH_EDIT.search("sys.path.insert(0, HERE)")


def test_scripts_import_the_package_not_each_other():
    # What two scripts share lives in keras_ordered/ (with its tests).
    scripts = _scripts()
    sibling = re.compile(
        rf"^\s*(from|import)\s+({'|'.join(scripts)})\b", re.MULTILINE)
    found = {}
    for script in scripts:
        with open(os.path.join(BENCHMARKS, f"{script}.py")) as f:
            hits = [m.group(2) for m in sibling.finditer(f.read())]
        if hits:
            found[script] = hits
    assert not found, found


def test_readme_and_notes_link_to_what_is_there():
    pages = ["benchmarks/README.md"] + sorted(
        os.path.relpath(p, REPO) for p in
        glob.glob(os.path.join(BENCHMARKS, "records", "*", "*.md")))
    broken = {page: links for page in pages if (links := broken_links(page))}
    assert not broken, broken


def _documented_commands():
    """`(page, script, options)` of every `python benchmarks/<script>.py`
    command of the README and the record notes (options up to a bare
    `--`, which hands the rest to a recipe)."""
    pages = [README] + glob.glob(os.path.join(BENCHMARKS, "records", "*",
                                              "*.md"))
    commands = []
    for page in pages:
        with open(page) as f:
            text = re.sub(r"\\\n\s*", " ", f.read())
        for match in re.finditer(r"python benchmarks/(\w+)\.py([^\n`]*)",
                                 text):
            words = match.group(2).split("#")[0].split()
            words = words[:words.index("--")] if "--" in words else words
            commands.append((os.path.relpath(page, REPO), match.group(1),
                             [w.split("=")[0] for w in words
                              if w.startswith("--")]))
    return commands


def test_documented_commands_name_scripts_and_options_that_exist():
    commands = _documented_commands()
    assert len(commands) > 20
    wrong = []
    for page, script, options in commands:
        path = os.path.join(BENCHMARKS, f"{script}.py")
        if not os.path.exists(path):
            wrong.append(f"{page}: {script}.py")
            continue
        with open(path) as f:
            source = f.read()
        wrong += [f"{page}: {script}.py {option}" for option in options
                  if f'"{option}"' not in source]
    assert not wrong, wrong


def test_readme_python_blocks_print_what_the_readme_says(monkeypatch,
                                                          capsys):
    # A block followed by "prints `X`" must print X, run from the
    # repository root on the committed records.
    with open(README) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```\n\n(prints `([^`]*)`)?", text,
                        re.S)
    assert blocks
    monkeypatch.chdir(REPO)
    for code, _, expected in blocks:
        exec(compile(code, README, "exec"), {"__name__": "__main__"})
        printed = capsys.readouterr().out.strip()
        if expected:
            assert printed == expected
