"""The folder layout TF Serving watches: `MODEL_DIR/<version>/`.

Every exporter of `keras_ordered.export` writes its SavedModel through
`version_path`, so that versions are numbered, checked and replaced the
same way for every model family.
"""

import os
import shutil


def next_version(directory):
    """1 + the largest numeric version folder in `directory` (1 if none)."""
    if not os.path.isdir(directory):
        return 1
    versions = [int(name) for name in os.listdir(directory) if name.isdigit()]
    return max(versions, default=0) + 1


def version_path(output, version=None, overwrite=False):
    """The folder `output/<version>` a SavedModel is to be written to.

    Args:
        output: the model folder TF Serving watches.
        version: a positive int, or None for `next_version(output)`.
        overwrite: whether an existing version folder may be replaced (it
            is removed here).

    Returns:
        The path, which does not exist on return.

    Raises:
        ValueError: a version that is not a positive int, or an existing
            version folder without `overwrite`.

    Example:

    ```python
    from keras_ordered.export.layout import version_path
    assert version_path("exported/new_model").endswith("1")
    ```
    """
    if version is None:
        version = next_version(output)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"`version` must be a positive int, got {version!r}.")
    path = os.path.join(output, str(version))
    if os.path.exists(path):
        if not overwrite:
            raise ValueError(
                f"{path} exists: pass another version, or overwrite=True "
                "(--overwrite) to replace it."
            )
        shutil.rmtree(path)
    return path
