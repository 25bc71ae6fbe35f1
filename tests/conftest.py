"""Shared test settings: quiet TensorFlow, where the data is."""

import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

# `pytester`: tests/project/test_harness.py runs pytest on a conftest of
# its own.
pytest_plugins = ("pytester",)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# JAX's persistent compilation cache, for the tests and the processes they
# start (set before JAX is imported; the children inherit it): a program
# that several tests or processes compile (a tiny model's training step,
# the recipes' on JAX) is compiled once per run, and a second run reuses
# it. The cached programs are the ones XLA compiles, so results are the
# same. Set JAX_COMPILATION_CACHE_DIR (empty: no cache) to choose.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR",
                      os.path.join(REPO, ".pytest_cache", "jax"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
DATA = os.environ.get(
    "KERAS_ORDERED_DATA", os.path.join(REPO, "..", "shared", "data")
)


DURATIONS_FILE = os.path.join(REPO, "tests", "durations.json")
"""Each test file's measured time in a full run (seconds, summed over its
tests' setup, call and teardown), with the processor and the command
that measured it, and the CPU seconds its tests used in their worker and
in the processes they started (`cpu_seconds`). `--dist loadfile` hands
whole files to the two workers, one
at a time as each worker frees up, in collection order: the files are
collected longest first (`pytest_collection_modifyitems`), so that the
last files to run are short ones and neither worker waits long on the
other at the end. Refreshed by a full run with
`KERAS_ORDERED_RECORD_DURATIONS` naming the file (CONTRIBUTING.md)."""

RECORD_DURATIONS_ENV = "KERAS_ORDERED_RECORD_DURATIONS"

QUICK_LIMIT_SECONDS = 1.5
"""A test not marked `slow` that took at least this long in the measured
run (`DURATIONS_FILE`'s `slow_by_time`) counts as `slow` too: the quick
loop (`-m "not slow"`) leaves it out, the full suite runs it. What is
slow is thus measured, not guessed, and a refresh of the file moves a
test in or out."""


def _measured(path):
    """The record of `DURATIONS_FILE` (or `path`); {} if none."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def file_durations(path=DURATIONS_FILE):
    """`{test file: seconds}` of the last measured full run ({} if none)."""
    return dict(_measured(path).get("files", {}))


def slow_by_time(path=DURATIONS_FILE):
    """`{test id: seconds}`: the tests not marked `slow` that took at least
    `QUICK_LIMIT_SECONDS` in the last measured full run ({} if none, and
    on a backend other than the run's: the quick runs of JAX and PyTorch,
    CI's among them, keep every test marked `backends`)."""
    record = _measured(path)
    if record.get("backend", "tensorflow") != keras_backend():
        return {}
    return dict(record.get("slow_by_time", {}))


def keras_backend():
    """The Keras backend these tests run on (`KERAS_BACKEND`, else
    TensorFlow), read without importing Keras."""
    return os.environ.get("KERAS_BACKEND", "tensorflow")


@pytest.fixture(autouse=True)
def _torch_without_autograd(request):
    """On PyTorch, tests run with autograd off, so that outputs reach NumPy
    as they do on the other backends (a tensor that requires grad refuses
    `np.asarray`); `harness.gradients` turns it on where it differentiates,
    and a test marked `trains` (`model.fit`) keeps it."""
    if (keras_backend() != "torch"
            or request.node.get_closest_marker("trains") is not None):
        yield
        return
    import torch

    with torch.no_grad():
        yield


def pytest_configure(config):
    """Keeps the order of `pytest_collection_modifyitems` under pytest-xdist:
    its `--dist loadfile` otherwise hands out the files with the most
    tests first (`--loadscope-reorder`, on by default), which put the
    slowest files, a few long tests each, at the end of the run."""
    if getattr(config.option, "loadscopereorder", None) is not None:
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks `slow` the tests of `slow_by_time` (before `-m` selects).
    On JAX or PyTorch (`KERAS_BACKEND=jax|torch`), keeps only the tests
    marked `backends` and not `tensorflow_only` (the rest are TensorFlow's: export, tf.distribute,
    the recipes' TensorFlow loop; `KERAS_ORDERED_ALL_BACKEND_TESTS=1` keeps
    them all, to see what else runs); then orders the files by their
    measured time (`DURATIONS_FILE`), longest first; a file not measured
    yet counts the median time (a stable sort: every file's own order of
    tests is kept)."""
    if (keras_backend() != "tensorflow"
            and not os.environ.get("KERAS_ORDERED_ALL_BACKEND_TESTS")):
        def everywhere(item):
            return (item.get_closest_marker("backends") is not None
                    and item.get_closest_marker("tensorflow_only") is None)

        kept = [item for item in items if everywhere(item)]
        deselected = [item for item in items if not everywhere(item)]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    measured_slow = slow_by_time()
    for item in items:
        if item.nodeid in measured_slow:
            item.add_marker(pytest.mark.slow)
    durations = file_durations()
    known = sorted(durations.values())
    median = known[len(known) // 2] if known else 0.0

    def position(item):
        return -durations.get(item.nodeid.split("::")[0], median)

    items.sort(key=position)


def pytest_collection_finish(session):
    """Tunes Python's cyclic garbage collector in each process that runs
    tests, once collection has imported TensorFlow, Keras and the
    package: what they made is frozen and the youngest generation is
    collected every `COMMAND_GC_THRESHOLD` allocations, as in the
    package's commands (`keras_ordered._quiet.collector_tuned_for_commands`).
    Full collections otherwise walk those objects and free almost none:
    the tuning took 2-17 % off the CPU of subsets of tests that run in
    their worker, about 1.5 % off the workers' CPU in a full run
    (`benchmarks/records/suite_time/collector_ab_avx512_epyc_2026-12-06.json`).
    The processes the tests start keep their own collector as it is."""
    import gc
    import sys

    if "keras" not in sys.modules:  # nothing heavy imported
        return
    from keras_ordered import _quiet

    gc.collect()
    with _quiet.collector_tuned_for_commands():
        pass


_MEASURED = {}
_MEASURED_TESTS = {}  # test id -> [seconds, marked slow]
_SLOW_BY_TIME = {}  # "measured": slow_by_time(), read once
_MEASURED_CPU = {}  # test file -> [its worker's CPU, its children's CPU]
_CPU_MARK = {}  # "last": this process's CPU clocks at its last mark

CPU_PROPERTY = "cpu_seconds"
"""The name of the `user_properties` entry that a recording run's reports
carry: `[worker, children]`, the CPU seconds (user and system) that the
test's process and the child processes it waited for used in the
report's phase. They travel with the report from an xdist worker to the
controller, which sums them per file."""


def _recording():
    """Whether this run records durations (`RECORD_DURATIONS_ENV` set)."""
    return bool(os.environ.get(RECORD_DURATIONS_ENV))


def _cpu_clocks():
    """(this process's CPU, its waited-for children's CPU), in seconds."""
    clocks = os.times()
    served = sys.modules.get("command_server")
    return (clocks.user + clocks.system,
            clocks.children_user + clocks.children_system
            + (served.cpu_seconds() if served is not None else 0.0))


def pytest_runtest_logstart(nodeid, location):
    """Marks the CPU clocks as a test starts (recording runs only)."""
    if _recording():
        _CPU_MARK["last"] = _cpu_clocks()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In a recording run, each phase's report carries the CPU its
    process and its children used since the last mark (`CPU_PROPERTY`):
    a full run's CPU split by file, between the tests' own processes and
    the processes they start."""
    outcome = yield
    if _recording():
        now = _cpu_clocks()
        before = _CPU_MARK.get("last", now)
        _CPU_MARK["last"] = now
        outcome.get_result().user_properties.append(
            (CPU_PROPERTY, [round(now[0] - before[0], 3),
                            round(now[1] - before[1], 3)]))


def pytest_runtest_logreport(report):
    """Sums each test file's and each test's time, for
    `KERAS_ORDERED_RECORD_DURATIONS` (under pytest-xdist the workers'
    reports reach the controller here)."""
    if _recording():
        path = report.nodeid.split("::")[0]
        _MEASURED[path] = _MEASURED.get(path, 0.0) + report.duration
        test = _MEASURED_TESTS.setdefault(report.nodeid, [0.0, False])
        test[0] += report.duration
        # A test marked slow by time is not: the record is made anew.
        if "measured" not in _SLOW_BY_TIME:
            _SLOW_BY_TIME["measured"] = slow_by_time()
        test[1] = (report.nodeid not in _SLOW_BY_TIME["measured"]
                   and "slow" in getattr(report, "keywords", {}))
        for name, value in getattr(report, "user_properties", ()):
            if name == CPU_PROPERTY:
                cpu = _MEASURED_CPU.setdefault(path, [0.0, 0.0])
                cpu[0] += value[0]
                cpu[1] += value[1]


def pytest_sessionfinish(session, exitstatus):
    """Writes the files' measured times where
    `KERAS_ORDERED_RECORD_DURATIONS` says (the controller only)."""
    target = os.environ.get(RECORD_DURATIONS_ENV)
    if not target or hasattr(session.config, "workerinput") or not _MEASURED:
        return
    import json

    from keras_ordered._cpu import describe_cpu

    record = {
        "command": f"{RECORD_DURATIONS_ENV}=tests/durations.json python -m "
                   "pytest -q -n 2 --dist loadfile",
        "cpu": describe_cpu(),
        "backend": keras_backend(),
        "total_seconds": round(sum(_MEASURED.values()), 1),
        "files": {path: round(seconds, 2) for path, seconds in sorted(
            _MEASURED.items(), key=lambda item: -item[1])},
        # Where the CPU went: each file's tests in their own (worker)
        # process, and in the processes they started, largest sum first.
        "cpu_seconds": {
            "worker": round(sum(c[0] for c in _MEASURED_CPU.values()), 1),
            "children": round(sum(c[1] for c in _MEASURED_CPU.values()), 1),
            "files": {path: [round(c[0], 2), round(c[1], 2)]
                      for path, c in sorted(_MEASURED_CPU.items(),
                                            key=lambda item: -sum(item[1]))},
        },
        "quick_limit_seconds": QUICK_LIMIT_SECONDS,
        "slow_by_time": {test: round(seconds, 2) for test, (seconds, marked)
                         in sorted(_MEASURED_TESTS.items(),
                                   key=lambda item: -item[1][0])
                         if seconds >= QUICK_LIMIT_SECONDS and not marked},
    }
    with open(target, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")


def require_data(*parts):
    """Path under the shared data; fails in CI (CI set) when missing, else skips."""
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the data at {path} (set KERAS_ORDERED_DATA)")
        pytest.skip(f"data not found at {path}")
    return path


# Gold sentences with hand-computed scores (tests/parsing/test_parsing_metrics.py,
# tests/parsing/test_evaluation_protocols.py).
HAND_SCORED_GOLD = [
    # 6 words, 7 tokens: spans (0,6) (0,2) (2,6) (3,6) (4,6).
    "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
    "(NN mat)))) (. .))",
    # 2 words: only the whole span, so nothing left at sentence level.
    "(S (NP (PRP It)) (VP (VBD rained)) (. .))",
    # 3 words, flat: only the whole span.
    "(NP (DT the) (JJ big) (NN dog))",
    # 1 word.
    "(S (VP (VB Go)) (. !))",
]


def load_benchmark(name):
    """The script `benchmarks/<name>.py` as a module (the scripts are not a
    package)."""
    import importlib.util

    path = os.path.join(REPO, "benchmarks", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recursive_brackets(words, distances):
    """The published recursive top-down parser of syntactic distances,
    written independently of the package (the reference its iterative
    parsers are checked against): split at the first maximum, the split
    word heading the right part. Returns the bracketed string ("w" for one
    word, which the package writes "(w)")."""
    if len(words) == 1:
        return words[0]
    split = max(range(len(words)), key=lambda i: (distances[i], -i))
    right = words[split]
    if split + 1 < len(words):
        rest = recursive_brackets(words[split + 1:], distances[split + 1:])
        right = f"({right} {rest})"
    if split == 0:
        return right
    return f"({recursive_brackets(words[:split], distances[:split])} {right})"


def doc_pages():
    """The user documentation whose commands and snippets the tests run:
    README.md, docs/*.md and docs/models/*.md, as paths from the repository."""
    import glob

    pages = ["README.md"]
    for pattern in ("docs/*.md", "docs/models/*.md"):
        pages += sorted(
            os.path.relpath(path, REPO)
            for path in glob.glob(os.path.join(REPO, pattern))
        )
    return pages


MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_anchors(text):
    """The anchors GitHub gives a page's headings, and its explicit ids."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    anchors = set(re.findall(r'<a id="([^"]+)">', text))
    seen = {}
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def broken_links(page):
    """The relative links of the Markdown file `page` (a path from the
    repository) that lead to no file, or to no heading of it."""
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    broken = []
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = os.path.join(REPO, os.path.dirname(page), file) if file else (
            os.path.join(REPO, page))
        if not os.path.exists(path):
            broken.append(target)
        elif anchor and path.endswith(".md"):
            with open(path, encoding="utf-8") as f:
                if anchor not in markdown_anchors(f.read()):
                    broken.append(target)
    return broken


@pytest.fixture
def harness(tmp_path):
    """The shared checks of tests/harness.py (`TestCase`), with this test's
    temporary folder."""
    from harness import TestCase

    case = TestCase()
    case.tmp_path = tmp_path
    return case
