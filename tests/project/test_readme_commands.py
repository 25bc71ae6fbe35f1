"""Every shell command of the user pages is one the tools accept, as written.

The pages are README.md, docs/*.md and docs/models/*.md; their commands are
those of the ```bash blocks (```shell blocks are shown, not checked). The
pages' Python blocks run in tests/project/test_docs.py; their shell commands train
for minutes to days, so here each is checked the way the tool itself reads
it: the recipe's or the CLI's own parser accepts its arguments, its preset
exists, and the data folders it names exist beside the checkout. Searches
that share an output folder must be continuations of one another (the
search recipes refuse other settings in a folder they used).
"""

import os
import re
import shlex

import pytest

from conftest import DATA
from conftest import REPO
from conftest import doc_pages

SHELL_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def page_commands(page, with_environment=False):
    """The commands of a page's bash blocks, each a list of words.

    With `with_environment`, each is a pair `(environment, words)`: the
    variables the line sets before its command (`KERAS_BACKEND=jax ...`).
    """
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    commands = []
    for block in SHELL_BLOCK.findall(text):
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            # `KERAS_BACKEND=jax keras-ordered ...`: the command after the
            # environment variables it sets.
            environment = {}
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                name, _, value = words.pop(0).partition("=")
                environment[name] = value
            if words:
                commands.append((environment, words) if with_environment
                                else words)
    return commands


def readme_commands():
    return page_commands("README.md")


def doc_commands():
    """Every page's commands, in the order of doc_pages(), with the page."""
    return [(page, words) for page in doc_pages()
            for words in page_commands(page)]


def _recipe_parser(script):
    from keras_ordered.models import gfl
    from keras_ordered.models import onlstm
    from keras_ordered.models import prpn
    from keras_ordered.training.tasks import gfl as gfl_task
    from keras_ordered.training.tasks.language_model import build_parser

    if script == "wsj_gfl.py":
        return gfl_task.build_parser(), gfl.PRESETS
    if script == "wsj_tdtreelstm.py":
        from keras_ordered.models import tdtreelstm
        from keras_ordered.training.tasks import tdtreelstm as tdtreelstm_task

        return tdtreelstm_task.build_parser(), tdtreelstm.PRESETS
    if script.startswith("tune_"):
        from keras_ordered import tuning
        from keras_ordered.tuning import search

        family = {"tune_onlstm.py": (tuning.ONLSTMHyperModel, onlstm.PRESETS),
                  "tune_prpn.py": (tuning.PRPNHyperModel, prpn.PRESETS)}
        assert script in family, f"README names an unknown recipe {script}"
        hypermodel_class, presets = family[script]
        return search.build_parser("t", hypermodel_class, presets,
                                   "runs/" + script[:-len(".py")]), presets
    from keras_ordered.models import lstm

    if script == "ptb_distance_parser.py":
        from keras_ordered.models import distance_parser
        from keras_ordered.training.tasks import distance_parser as task

        return task.build_parser(), distance_parser.PRESETS
    presets = {"ptb_onlstm.py": onlstm.PRESETS, "ptb_prpn.py": prpn.PRESETS,
               "ptb_lstm.py": lstm.PRESETS}
    assert script in presets, f"README names an unknown recipe {script}"
    return build_parser("t", presets[script], "runs/t"), presets[script]


def _existing(path):
    """A README path: `../shared/data/...` is the shared data folder."""
    prefix = os.path.join("..", "shared", "data")
    if path.startswith(prefix):
        return os.path.exists(os.path.join(DATA, path[len(prefix) + 1:]))
    return os.path.exists(os.path.join(REPO, path))


def test_readme_has_the_set_up_and_quick_start_commands():
    commands = [" ".join(c) for c in readme_commands()]
    assert 'pip install -e .[dev]' in commands
    assert "python -m pytest -q -n 2 --dist loadfile" in commands
    assert any("--preset quick" in c for c in commands)


def test_ci_runs_the_readme_commands():
    # CI must install and test exactly as "Set up" says.
    commands = [" ".join(c) for c in readme_commands()]
    setup = [c for c in commands if c.startswith(("pip install -e",
                                                 "python -m pytest"))][:2]
    ci = open(os.path.join(REPO, ".ci", "run")).read().splitlines()
    for command in setup:
        assert command.replace(".[dev]", '".[dev]"') in ci, command


def test_docs_have_commands():
    pages = {page for page, _ in doc_commands()}
    assert {"README.md", "docs/models/prpn.md", "docs/tuning.md"} <= pages


@pytest.mark.parametrize(
    "page, words", doc_commands(),
    ids=lambda value: value if isinstance(value, str) else " ".join(value)[:60],
)
def test_doc_command_is_accepted_as_written(page, words):
    if words[0] == "python" and words[1].startswith("recipes/"):
        assert os.path.exists(os.path.join(REPO, words[1]))
        parser, presets = _recipe_parser(os.path.basename(words[1]))
        if "--help" in words:
            with pytest.raises(SystemExit) as exit_info:
                parser.parse_args(words[2:])
            assert exit_info.value.code == 0
            return
        args = parser.parse_args(words[2:])
        assert args.preset in presets
        for folder in (getattr(args, "data", None),
                       getattr(args, "parse_eval", None),
                       getattr(args, "treebank", None)):
            if folder is not None:
                assert _existing(folder), f"{folder} does not exist"
    elif words[0] == "keras-ordered":
        from keras_ordered_cli import build_parser

        args = build_parser().parse_args(words[1:])
        treebank = getattr(args, "treebank", None)
        if treebank is not None:
            assert _existing(treebank), f"{treebank} does not exist"
    else:
        # pip, pytest, tensorboard, saved_model_cli, TF Serving's docker
        # image and its REST client: not ours to parse.
        assert words[0] in (
            "pip", "python", "tensorboard", "saved_model_cli", "docker",
            "curl", "gcc", "/tmp/evalb",
        ), words


DATA_OPTIONS = ("--data", "--treebank")
"""What names a recipe's data on its command line (the text, or the trees
of the treebank recipes)."""


@pytest.mark.parametrize("page", doc_pages())
def test_recipe_commands_name_their_data_visibly(page):
    """A recipe command copied from a page runs on a fresh clone: it names
    its data (`--data`, `--treebank`) or sets `KERAS_ORDERED_DATA` in the
    command, instead of relying on a variable the reader may not have."""
    hidden = [
        " ".join(words)
        for environment, words in page_commands(page, with_environment=True)
        if words[0] == "python" and words[1].startswith("recipes/")
        and "--help" not in words
        and "KERAS_ORDERED_DATA" not in environment
        and not any(word.split("=")[0] in DATA_OPTIONS for word in words)
    ]
    assert not hidden, f"{page}: commands without their data: {hidden}"


def test_exported_models_are_ignored_by_git():
    """The tour and the pages export to exported/: never a file to commit."""
    import subprocess

    result = subprocess.run(
        ["git", "check-ignore", "-q", "exported/prpn/1/saved_model.pb"],
        cwd=REPO, check=False)
    if result.returncode == 128:
        pytest.skip("not a git checkout")
    assert result.returncode == 0, "exported/ is not in .gitignore"


def test_searches_sharing_an_output_folder_continue_each_other():
    """Run in order, a search command must not reuse the folder of another
    search with other settings (the recipe would refuse it); only
    `--max-trials` may grow."""
    searches = {}
    for page, words in doc_commands():
        if words[0] != "python" or not words[1].startswith("recipes/tune_"):
            continue
        script = os.path.basename(words[1])
        parser, _ = _recipe_parser(script)
        if "--help" in words:
            continue
        settings = vars(parser.parse_args(words[2:]))
        settings["script"] = script
        output = settings.pop("output")
        settings.pop("max_trials")
        first = searches.setdefault(output, (page, settings))
        assert first[1] == settings, (
            f"{page}: `{' '.join(words)}` reuses {output}, the folder of a "
            f"search with other settings in {first[0]}"
        )


def test_ci_installs_without_tensorflow_as_the_backends_page_says():
    # docs/backends.md's install without TensorFlow is the one CI checks.
    commands = [" ".join(shlex.quote(w) if " " in w or ">" in w or "<" in w
                         else w for w in c)
                for c in page_commands("docs/backends.md")
                if c[0] == "pip"]
    # One install: the package through its extras (a built wheel, not an
    # editable tree, and no --no-deps workaround).
    assert commands == ["pip install .[jax,draw]"], commands
    # Lines continued with a backslash are one command.
    text = open(os.path.join(REPO, ".ci", "run")).read()
    ci = [line.strip() for line in text.replace("\\\n", " ").splitlines()]
    for command in commands:
        assert any(shlex.split(line) == shlex.split(command) for line in ci
                   if line and not line.startswith("#")), command
    assert "--no-deps" not in text
