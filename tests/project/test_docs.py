"""Documentation that runs: the user pages' and the docstrings' Python examples.

Every fenced ```python block of README.md, docs/*.md and docs/models/*.md
is executed exactly as printed, each in a fresh namespace (a reader copies
one block at a time, so each imports what it uses), from a temporary
working directory; the `>>>` examples of the package's and the command's
docstrings must print what they show (`doctest`). The blocks of one docstring of the package's public
modules share a namespace that starts with `keras`, `np` and
`keras_ordered`. A block that needs more names it in a comment on its
first line: `# needs: ptb` blocks run on the shared PTB text (set as
`$KERAS_ORDERED_DATA`); `# needs: shared data` blocks run from a
checkout beside the shared data, as printed (`../shared/data/...`); any
other need (`# needs: torch`, a checkpoint, the network) is not here, so
those blocks are only compiled.

The relative links of the pages must lead to files of the repository.
"""

import importlib
import inspect
import os
import pkgutil
import re

import pytest

import keras_ordered
import keras_ordered_cli
import command_server
from conftest import DATA
from conftest import REPO
from conftest import broken_links
from conftest import doc_pages

BLOCK = re.compile(r"```python\n(.*?)```", re.S)
# An example that trains (`fit`, a `Runner`), searches or exports (seconds to a minute each)
# runs with the slow tests; the others in the quick loop too.
HEAVY = re.compile(
    r"\bfit\(|Runner\(|\.search\(|make_tuner|HyperModel|\bexport_\w*\(|saved_model")


def _param(code, id):
    """A test parameter, marked slow when `code` trains, searches or exports."""
    heavy = HEAVY.search(code if isinstance(code, str) else "\n".join(code))
    return pytest.param(code, id=id,
                        marks=[pytest.mark.slow] if heavy else [])


def _dedent_blocks(text):
    blocks = []
    for block in BLOCK.findall(text):
        lines = block.split("\n")
        indent = min(
            (len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0
        )
        blocks.append("\n".join(l[indent:] for l in lines))
    return blocks


def _modules(*packages):
    """Every module of `packages`, imported, in walk order."""
    for package in packages:
        for info in pkgutil.walk_packages(package.__path__,
                                          package.__name__ + "."):
            yield importlib.import_module(info.name)


def _docstring_examples():
    examples = []
    for module in _modules(keras_ordered):
        objects = [module] + [
            obj for _, obj in inspect.getmembers(module)
            if (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == module.__name__
        ]
        for obj in objects:
            blocks = _dedent_blocks(inspect.getdoc(obj) or "")
            if blocks:
                name = getattr(obj, "__qualname__", module.__name__)
                examples.append(_param(blocks, f"{module.__name__}:{name}"))
    return examples


def _run(blocks, tmp_path, monkeypatch, namespace=None):
    import keras
    import numpy as np

    monkeypatch.chdir(tmp_path)
    if namespace is None:
        namespace = {"keras": keras, "np": np, "keras_ordered": keras_ordered}
    for block in blocks:
        first = block.strip().split("\n")[0]
        if "needs: shared data" in first:
            _beside_the_shared_data(tmp_path, monkeypatch)
        elif "needs:" in first and "needs: ptb" not in first:
            compile(block, "<example>", "exec")
            continue
        if "needs: ptb" in first:
            path = os.path.join(DATA, "ptb")
            if not os.path.isdir(path):
                pytest.skip(f"example needs the PTB text at {path}")
            monkeypatch.setenv("KERAS_ORDERED_DATA", DATA)
        exec(compile(block, "<example>", "exec"), namespace)


def _beside_the_shared_data(tmp_path, monkeypatch):
    """Works from `tmp_path/checkout`, beside `tmp_path/shared/data` (a
    link to the shared data): where the README's layout puts a clone."""
    if not os.path.isdir(DATA):
        pytest.skip(f"example needs the shared data at {DATA}")
    shared = tmp_path / "shared"
    if not shared.exists():
        shared.mkdir()
        (shared / "data").symlink_to(os.path.abspath(DATA))
        (tmp_path / "checkout").mkdir()
    monkeypatch.chdir(tmp_path / "checkout")


@pytest.mark.parametrize("blocks", _docstring_examples())
def test_docstring_example_runs(blocks, tmp_path, monkeypatch):
    _run(blocks, tmp_path, monkeypatch)


def _doctest_modules():
    """The modules of the package and the command whose docstrings hold
    `>>>` examples."""
    import doctest

    finder = doctest.DocTestFinder()
    return [module.__name__
            for module in _modules(keras_ordered, keras_ordered_cli)
            if any(test.examples for test in finder.find(module))]


@pytest.mark.parametrize("name", _doctest_modules())
def test_doctest_examples_show_what_they_return(name, tmp_path, monkeypatch):
    """The `>>>` examples give what they print, as `python -m doctest`
    checks (run from a checkout beside the shared data, as printed)."""
    import doctest

    module = importlib.import_module(name)
    _beside_the_shared_data(tmp_path, monkeypatch)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} >>> examples of {name} fail"


def _page_blocks():
    params = []
    for page in doc_pages():
        with open(os.path.join(REPO, page), encoding="utf-8") as f:
            blocks = _dedent_blocks(f.read())
        params += [
            _param(block, f"{page}:{index}")
            for index, block in enumerate(blocks)
        ]
    return params


def test_readme_and_docs_have_python_blocks():
    pages = {param.id.split(":")[0] for param in _page_blocks()}
    assert "README.md" in pages
    assert "docs/models/onlstm.md" in pages


def printed_outputs(block):
    """The outputs a block shows: each comment line right after a line
    that calls `print(` (`print(x)` then `# 42` says that 42 is printed)."""
    lines = block.split("\n")
    return [
        line.strip()[2:]
        for before, line in zip(lines, lines[1:])
        if "print(" in before and line.strip().startswith("# ")
    ]


def test_printed_outputs_are_read_from_the_comment_after_a_print():
    block = "x = 1\nprint(x)\n# 1\n# not an output\ny = 2  # nor this"
    assert printed_outputs(block) == ["1"]


def _runs_in_a_fresh_process(block):
    """The Serve client snippet (a SavedModel loaded as a client does):
    `test_serve_client_snippet_runs_as_printed` runs it, alone, in a fresh
    process, and checks what it prints; it is not run here a second time."""
    return "tf.saved_model.load(" in block


@pytest.mark.parametrize(
    "block", [p for p in _page_blocks()
              if not _runs_in_a_fresh_process(p.values[0])])
def test_doc_python_block_runs(block, tmp_path, monkeypatch, capsys):
    _run([block], tmp_path, monkeypatch, namespace={"__name__": "__main__"})
    printed = capsys.readouterr().out.splitlines()
    for expected in printed_outputs(block):
        assert expected in printed, (
            f"the page shows {expected!r} as printed; the block printed "
            f"{printed}")


@pytest.mark.parametrize("page", doc_pages())
def test_doc_relative_links_lead_to_files(page):
    """Relative links lead to files, and their #anchors to headings."""
    broken = broken_links(page)
    assert not broken, f"{page} links to missing files or headings: {broken}"


@pytest.mark.slow
def test_serve_client_snippet_runs_as_printed(tmp_path):
    # The Serve client snippet run exactly as printed, alone, in a fresh
    # Python process, so that a name it uses without importing it (a
    # shared namespace of blocks would hide that) fails here. The
    # SavedModel is loaded with TensorFlow as a client does; TF Serving's
    # model server itself is not available here.
    import subprocess
    import sys

    (snippet,) = [p.values[0] for p in _page_blocks()
                  if _runs_in_a_fresh_process(p.values[0])]
    assert snippet.startswith("import tempfile\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        command_server.argv([sys.executable, "-c", snippet]), cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # The last line prints the sentence's log-probability and perplexity.
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("[") and last.count("[") == 2, result.stdout
    for expected in printed_outputs(snippet):
        assert expected in result.stdout.splitlines(), result.stdout


DIARY = re.compile(
    r"\b20\d\d-[01]\d-[0-3]\d\b|today's code|\bcode of [0-9a-f]{7}\b"
    r"|\bcommit [0-9a-f]{7}\b|\bat [0-9a-f]{7}\b"
    # A commit hash standing alone ("; 388afe2)"), letters and digits mixed.
    r"|(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w.])"
    r"|\bso far\b|\bnot yet measured\b")


@pytest.mark.parametrize("page", doc_pages())
def test_user_pages_tell_what_the_package_does_not_how_the_work_went(page):
    """History lives in git and the release notes: no dates, commit hashes
    or "today's code" on a user page (benchmarks/README.md and the records
    name their runs)."""
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        found = sorted({m.group(0) for m in DIARY.finditer(f.read())})
    assert not found, f"{page}: {found}"
