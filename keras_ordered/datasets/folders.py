"""Where the recipes and commands read their data: one rule for all.

A data folder is

1. the folder the user gives (`--data DIR`, `--treebank DIR`), and only
   that one: a folder that does not hold the data is an error, never a
   switch to other data;
2. else `$KERAS_ORDERED_DATA/<sub>` (`ptb`, `wsj_sample/mrg`,
   `wsj_sample/dep`), where `KERAS_ORDERED_DATA` is the folder holding
   this project's data (`../shared/data` beside a checkout);
3. else an error of one line naming both ways.

Nothing is downloaded and no other folder is tried. (The library function
`keras_ordered.datasets.ptb.load_data(path=None)`, called from Python,
may still download the public PTB text; the recipes ask it not to.)
Standard library only.
"""

import os

DATA_ENV_VAR = "KERAS_ORDERED_DATA"
"""Environment variable naming the folder that holds every data set."""


def data_dir(path, sub, option, what):
    """The folder a recipe or command reads, by the rule of this module.

    Args:
        path: str or None, the folder the user gave (`None`: not given).
        sub: str, the data set's folder under `$KERAS_ORDERED_DATA`
            (`"ptb"`, `"wsj_sample/mrg"`, `"wsj_sample/dep"`).
        option: str, the option that gives the folder (`"--data"`), named
            in the error.
        what: str, what the folder holds, named in the error (`"PTB
            language-modelling text"`).

    Returns:
        The folder's path: `path` (user's `~` expanded), else
        `$KERAS_ORDERED_DATA/<sub>`. Whether it holds the data is for the
        reader to check (its error names the folder).

    Raises:
        ValueError: neither `path` nor `KERAS_ORDERED_DATA` is given (one
            line naming both ways).

    Example:

    >>> data_dir("trees", "wsj_sample/mrg", "--treebank", "Treebank .mrg files")
    'trees'
    """
    if path is not None:
        return os.path.expanduser(str(path))
    root = os.environ.get(DATA_ENV_VAR)
    if root:
        return os.path.join(os.path.expanduser(root), *sub.split("/"))
    raise ValueError(
        f"No folder of {what} given: pass {option} DIR, or set "
        f"{DATA_ENV_VAR} to a folder holding {sub}/ (this project's data: "
        f"{DATA_ENV_VAR}=../shared/data beside a checkout)."
    )
