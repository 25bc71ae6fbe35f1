"""Shared test settings: quiet TensorFlow, where the data is."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

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


# The test files that take longest, the longest first (their summed test
# times in a full run on the 2-core Intel Xeon, AVX-512, 2026-11-29; from
# `--junitxml`). `--dist loadfile` hands whole files to the two workers,
# one at a time as each worker frees up, in collection order: the longest
# collected first, and the last files to run are short ones, so neither
# worker waits long on the other at the end. (`pytest_configure` below
# keeps xdist from putting the files with the most tests first instead.)
SLOWEST_FILES = (
    "tests/training/test_ctrl_c.py",
    "tests/project/test_docs.py",
    "tests/training/test_distributed_replicas.py",
    "tests/tuning/test_tuning.py",
    "tests/models/prpn/test_prpn_model.py",
    "tests/export/test_export.py",
    "tests/backends/test_training_backends.py",
    "tests/journeys/test_prpn_journey.py",
    "tests/training/test_structure_learning.py",
    "tests/training/test_crash_kill.py",
    "tests/project/test_gpu_run.py",
    "tests/models/prpn/test_prpn_official_steps.py",
    "tests/journeys/test_gfl_journey.py",
    "tests/journeys/test_tdtreelstm_journey.py",
    "tests/journeys/test_onlstm_journey.py",
    "tests/training/test_distributed_workers.py",
    "tests/backends/test_tdtreelstm_backends.py",
    "tests/backends/test_shipped_backends.py",
    "tests/export/test_export_tdtreelstm.py",
    "tests/training/test_recipe_usability.py",
    "tests/training/test_gfl_recipe.py",
    "tests/models/tdtreelstm/test_tdtreelstm_model.py",
    "tests/models/gfl/test_gfl_model.py",
    "tests/cli/test_cli_backends.py",
    "tests/cli/test_cli_manners.py",
    "tests/training/test_training_fidelity.py",
    "tests/models/onlstm/test_onlstm_model.py",
    "tests/export/test_export_gfl.py",
    "tests/test_shipped_models.py",
    "tests/training/test_tdtreelstm_recipe.py",
    "tests/backends/test_gfl_backends.py",
    "tests/test_fuzz.py",
    "tests/cli/test_cli_command.py",
    "tests/training/test_profile_step.py",
    "tests/journeys/test_tuning_journey.py",
)


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


def pytest_collection_modifyitems(config, items):
    """On JAX or PyTorch (`KERAS_BACKEND=jax|torch`), keeps only the tests
    marked `backends` and not `tensorflow_only` (the rest are TensorFlow's: export, tf.distribute,
    the recipes' TensorFlow loop; `KERAS_ORDERED_ALL_BACKEND_TESTS=1` keeps
    them all, to see what else runs); then moves the files of `SLOWEST_FILES`
    to the front, in its order (a stable sort: every file's own order, and
    the others', is kept)."""
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
    rank = {path: i for i, path in enumerate(SLOWEST_FILES)}

    def position(item):
        return rank.get(item.nodeid.split("::")[0], len(rank))

    items.sort(key=position)


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


@pytest.fixture
def harness(tmp_path):
    """The shared checks of tests/harness.py (`TestCase`), with this test's
    temporary folder."""
    from harness import TestCase

    case = TestCase()
    case.tmp_path = tmp_path
    return case
