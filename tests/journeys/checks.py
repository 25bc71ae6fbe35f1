"""What the tour's commands print, checked (tests/journeys)."""

import json
import os

TOKENS = ["The", "cat", "sat", "on", "the", "mat", "."]


def tree_leaves(brackets):
    """The leaves of an unlabelled bracketed tree, read independently of the
    package: every token that is not a bracket."""
    return brackets.replace("(", " ").replace(")", " ").split()


def assert_one_tree(stdout, tokens=TOKENS):
    """`parse` printed exactly one tree over `tokens`, brackets balanced."""
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    (tree,) = lines
    assert tree.count("(") == tree.count(")") and tree.startswith("("), tree
    assert tree_leaves(tree) == tokens, tree


def assert_trained(stdout, checkout, run_name):
    """A recipe ended with its results line and saved the model."""
    results = json.loads(stdout.strip().splitlines()[-1])
    assert results["epochs"] if "epochs" in results else results["epochs_run"]
    assert os.path.exists(checkout / "runs" / run_name / "model.keras")
    return results


def assert_exported(stdout, checkout, name):
    """`export` wrote version 1 of a SavedModel and printed its folder."""
    folder = checkout / "exported" / name / "1"
    assert (folder / "saved_model.pb").exists(), stdout
    assert f"exported/{name}/1" in stdout
