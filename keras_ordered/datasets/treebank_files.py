"""Treebank splits by file: the training, validation and test trees of a
supervised parser.

The supervised parsing papers train on WSJ sections 02-21, validate on 22
and test on 23. A split is named here by patterns under a treebank root: a
pattern (a shell glob, relative to the root or absolute) that matches a
`.mrg` file takes that file, one that matches a folder takes every `.mrg`
file under it (recursively). So the same options point at the NLTK sample
(`wsj_0001.mrg` ... `wsj_0149.mrg` in one folder) and at the full WSJ
(`00/` ... `24/` folders):

```
files = resolve_split_files("wsj_sample/mrg", ["wsj_00*.mrg", "wsj_01[0-2]*.mrg"])
files = resolve_split_files("treebank_3/parsed/mrg/wsj", ["0[2-9]", "1?", "2[01]"])
```

Trees are read as written (the `.mrg` reader of `keras_ordered.datasets.
treebank` normalises words for unsupervised parsing; here words, case,
numbers and punctuation are kept) and cleaned for linearization with
`keras_ordered.parsing.linearize.clean_tree` (function tags stripped,
`-NONE-` elements removed).

This module imports neither TensorFlow nor any model.
"""

import glob
import os

from keras_ordered.datasets.folders import data_dir
from keras_ordered.datasets.treebank import read_mrg_file
from keras_ordered.parsing import linearize

DATA_ENV_VAR = "KERAS_ORDERED_DATA"

SAMPLE_SPLITS = {
    "train": ("wsj_00*.mrg", "wsj_01[0-2]*.mrg"),
    "valid": ("wsj_013*.mrg",),
    "test": ("wsj_014*.mrg",),
}
"""The splits of the WSJ sample: wsj_0001-0129 / 0130-0139 / 0140-0149."""

WSJ_SPLITS = {
    "train": ("0[2-9]", "1[0-9]", "2[01]"),
    "valid": ("22",),
    "test": ("23",),
}
"""The standard splits of the full WSJ (sections 02-21 / 22 / 23), as
folders under `.../treebank_3/parsed/mrg/wsj`."""


def default_treebank_dir():
    """`$KERAS_ORDERED_DATA/wsj_sample/mrg` (`keras_ordered.datasets.
    folders.data_dir`); a ValueError naming both ways when unset."""
    return data_dir(None, "wsj_sample/mrg", "--treebank",
                    "Treebank .mrg files")


def check_treebank_dir(directory):
    """The absolute path of an existing folder; a ValueError says what is wrong."""
    path = os.path.abspath(os.path.expanduser(str(directory)))
    if not os.path.exists(path):
        raise ValueError(
            f"No treebank folder at {path!r}: pass the folder holding the "
            f"Treebank .mrg files with --treebank, or set {DATA_ENV_VAR} to a "
            "folder holding wsj_sample/mrg/."
        )
    if not os.path.isdir(path):
        raise ValueError(
            f"{path!r} is a file, not a treebank folder: pass the folder "
            "holding the Treebank .mrg files."
        )
    return path


def _mrg_files_under(folder):
    found = []
    for parent, _, names in os.walk(folder):
        found += [os.path.join(parent, n) for n in names if n.endswith(".mrg")]
    return found


def resolve_split_files(directory, patterns, split="split"):
    """The `.mrg` files a split's patterns name, sorted, without repeats.

    Args:
        directory: the treebank root the relative patterns start from.
        patterns: str or list of str: shell globs (absolute or relative to
            `directory`) of `.mrg` files or of folders (every `.mrg` file
            under a folder, recursively).
        split: the split's name, for the messages (`"train"`, ...).

    Returns:
        A sorted list of file paths.

    Raises:
        ValueError: the folder is missing, or the patterns name no `.mrg`
            file (the message gives the patterns and the folder).
    """
    directory = check_treebank_dir(directory)
    if isinstance(patterns, str):
        patterns = [patterns]
    patterns = list(patterns)
    if not patterns:
        raise ValueError(f"No file pattern given for the {split} split.")
    files = set()
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else os.path.join(directory, pattern)
        for match in glob.glob(os.path.expanduser(full)):
            if os.path.isdir(match):
                files.update(_mrg_files_under(match))
            elif match.endswith(".mrg"):
                files.add(match)
    if not files:
        raise ValueError(
            f"The {split} split is empty: no .mrg file matches "
            f"{' '.join(repr(p) for p in patterns)} in {directory} (a pattern "
            "names .mrg files or folders of them, relative to the treebank "
            "folder, e.g. 'wsj_00*.mrg' in the sample or '0[2-9]' in the "
            "full WSJ)."
        )
    return sorted(files)


def read_mrg_trees(path):
    """The trees of one `.mrg` file, as written (top bracket removed).

    Args:
        path: a Penn Treebank bracketed file.

    Returns:
        A list of `nltk.Tree`.

    Raises:
        ValueError: naming the file and line of a tree that cannot be
            read (see `keras_ordered.datasets.treebank.read_mrg_file`).
    """
    return read_mrg_file(path)


def load_split(directory, patterns, split="split", max_sentences=None):
    """The cleaned gold trees of a split (see `resolve_split_files`).

    Trees are cleaned with `keras_ordered.parsing.linearize.clean_tree`;
    those left without a word are skipped.

    Args:
        directory, patterns, split: as `resolve_split_files`.
        max_sentences: int or None, keep only the first N trees.

    Returns:
        `(trees, files)`: a list of `nltk.Tree` and the files read.

    Raises:
        ValueError: no file, or the files hold no tree.

    Example:

    ```python
    # needs: shared data (the WSJ sample)
    from keras_ordered.datasets import treebank_files
    trees, files = treebank_files.load_split(
        "../shared/data/wsj_sample/mrg", treebank_files.SAMPLE_SPLITS["test"],
        "test")
    len(files), len(trees)  # 10 files
    ```
    """
    files = resolve_split_files(directory, patterns, split)
    trees = []
    for path in files:
        for tree in read_mrg_trees(path):
            cleaned = linearize.clean_tree(tree)
            if cleaned is not None:
                trees.append(cleaned)
            if max_sentences is not None and len(trees) >= max_sentences:
                return trees, files
    if not trees:
        raise ValueError(
            f"The {split} split is empty: its {len(files)} file(s) under "
            f"{directory} hold no tree with words (first: {files[0]})."
        )
    return trees, files
