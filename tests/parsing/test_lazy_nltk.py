"""nltk loads on the first tree, not on `import keras_ordered`
(keras_ordered._nltk): a process that only trains never pays for it."""

import pickle
import subprocess
import sys

import nltk
import pytest

from conftest import REPO
from keras_ordered import parsing
from keras_ordered.parsing import brackets_to_tree
from keras_ordered.parsing import trees


@pytest.mark.slow
def test_importing_the_package_does_not_load_nltk():
    code = (
        "import sys, keras_ordered, keras_ordered.training\n"
        "assert 'nltk.tree' not in sys.modules, 'nltk loaded on import'\n"
        "from keras_ordered.parsing import brackets_to_tree\n"
        "tree = brackets_to_tree('((The cat) sat)')\n"
        "import nltk\n"
        "assert isinstance(tree, nltk.Tree) and 'nltk.tree' in sys.modules\n"
        "print(type(tree).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "UnlabeledTree"


def test_the_lazily_made_class_is_one_class_an_nltk_tree():
    tree = brackets_to_tree("((The cat) sat)")
    assert type(tree) is parsing.UnlabeledTree is trees.UnlabeledTree
    assert isinstance(tree, nltk.Tree)
    assert "UnlabeledTree" in dir(parsing) and "UnlabeledTree" in dir(trees)
    assert type(tree).__qualname__ == "UnlabeledTree"
    again = pickle.loads(pickle.dumps(tree))
    assert type(again) is trees.UnlabeledTree and again == tree
    with pytest.raises(AttributeError, match="no attribute 'Unlabeled'"):
        trees.Unlabeled
