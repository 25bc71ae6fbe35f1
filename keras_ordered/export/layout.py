"""The folder layout TF Serving watches: `MODEL_DIR/<version>/`.

Every exporter of `keras_ordered.export` picks its folder with
`version_path` and writes it with `write_version`, so that versions are
numbered, checked, replaced and written all at once the same way for every
model family.
"""

import os

from keras_ordered import _environment
import shutil
import tempfile

STAGING_PREFIX = "."
"""Version folders being written are hidden (`.1.partial-...`): TF Serving
loads numeric folders only, and `write_version` renames a complete one."""

_BEING_WRITTEN = {}
"""The hidden folders `write_version` is writing now -> the model folder
it created for them (or None), for `remove_partial_versions`."""


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
        ValueError: a version that is not a positive int, an existing
            version folder without `overwrite`, an `output` that is a file,
            or a folder that holds anything besides version folders (a
            SavedModel goes into a new folder or a model folder, never
            among other files).

    Example:

    ```python
    from keras_ordered.export.layout import version_path
    assert version_path("exported/new_model").endswith("1")
    ```
    """
    _check_model_folder(output)
    if version is None:
        version = next_version(output)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"`version` must be a positive int, got {version!r}.")
    path = os.path.join(output, str(version))
    if os.path.exists(path) and not overwrite:
        raise ValueError(
            f"{path} exists: pass another version, or overwrite=True "
            "(--overwrite) to replace it."
        )
    return path


def _check_model_folder(output):
    """Refuses an `output` that is a file or a folder of other things, or
    that cannot be written (`keras_ordered._environment.output_problem`)."""
    if not os.path.exists(output):
        _environment.check_output_dir(output, "the export folder")
        return
    if not os.path.isdir(output):
        raise ValueError(
            f"{output} is a file: the output is the folder TF Serving "
            "watches (a new folder, or one of SavedModel versions)."
        )
    others = sorted(
        name for name in os.listdir(output)
        if not (name.isdigit() or name.startswith(STAGING_PREFIX))
    )
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise ValueError(
            f"{output} is not empty and is not a model folder (it holds "
            f"{shown}): pass a new folder, or a folder of SavedModel "
            "versions (1/, 2/, ...)."
        )
    _environment.check_output_dir(output, "the export folder")


def write_version(write, path):
    """Writes a version folder all at once, or not at all.

    `write(folder)` fills a hidden folder beside `path`
    (`.<version>.partial-...`), which is renamed to `path` once `write`
    returns (replacing an older `path`, which `version_path` allowed). On
    any exception, Ctrl-C included, the hidden folder is removed, and so is
    the model folder when this call created it: no partial SavedModel is
    left where TF Serving looks, and a version being replaced stays as it
    was.

    Args:
        write: a function of one folder path (e.g.
            `keras.export.ExportArchive().write_out`).
        path: the version folder, from `version_path`.

    Returns:
        `path`.

    Example:

    ```python
    import os
    import tempfile
    from keras_ordered.export.layout import version_path, write_version

    output = os.path.join(tempfile.mkdtemp(), "model")
    path = write_version(
        lambda folder: open(os.path.join(folder, "saved_model.pb"), "w").close(),
        version_path(output),
    )
    assert os.listdir(output) == ["1"] and os.listdir(path) == ["saved_model.pb"]
    ```
    """
    output = os.path.dirname(path) or "."
    created = not os.path.exists(output)
    os.makedirs(output, exist_ok=True)
    staging = tempfile.mkdtemp(
        prefix=f"{STAGING_PREFIX}{os.path.basename(path)}.partial-", dir=output
    )
    _BEING_WRITTEN[staging] = output if created else None
    try:
        write(staging)
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(staging, path)
    except BaseException:
        remove_partial_versions()
        raise
    finally:
        _BEING_WRITTEN.pop(staging, None)
    return path


def remove_partial_versions():
    """Removes the hidden folders of the versions being written now.

    With them goes each model folder that `write_version` created for
    them. `write_version` calls it on an error; a process that ends at
    once (the command line on Ctrl-C, which exits without unwinding)
    calls it first, so that it leaves no partial SavedModel behind.
    """
    for staging, created in list(_BEING_WRITTEN.items()):
        shutil.rmtree(staging, ignore_errors=True)
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        _BEING_WRITTEN.pop(staging, None)
