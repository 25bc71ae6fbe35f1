"""Shared test settings: quiet TensorFlow, where the data is."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get(
    "KERAS_ORDERED_DATA", os.path.join(REPO, "..", "shared", "data")
)


def require_data(*parts):
    """Path under the shared data; fails in CI (CI set) when missing, else skips."""
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the data at {path} (set KERAS_ORDERED_DATA)")
        pytest.skip(f"data not found at {path}")
    return path
