"""The serving journey: export a shipped model, serve it beside the
shipped `.keras` models (and a shipped ensemble's members), send one
request per signature of each served model, read the page, then Ctrl-C."""

import os
import subprocess

import pytest

import command_server
from checks import TOKENS
from checks import tree_leaves
from serving_client import ServeProcess

pytestmark = pytest.mark.slow

SENTENCE = "The cat sat on the mat."


def test_export_serve_one_request_per_signature_then_stop(tmp_path):
    pytest.importorskip("aiohttp")
    exported = tmp_path / "exported" / "prpn"
    done = subprocess.run(
        command_server.argv(
            ["keras-ordered", "export", "--model", "prpn_ptb_quick",
             "--output", str(exported)]),
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr
    with ServeProcess(["--model", "ensemble_ptb", "--model",
                       str(exported)]) as server:
        names = server.first_line.split(" at ")[0][len("serving "):].split(", ")
        assert "prpn" in names and len(names) >= 3, names
        answered = []
        for name in names:
            status, metadata = server.get(f"/v1/models/{name}/metadata")
            assert status == 200
            signatures = metadata["metadata"]["signature_def"]["signature_def"]
            for signature in sorted(signatures):
                status, answer = server.post(f"/v1/models/{name}:predict", {
                    "signature_name": signature, "instances": [SENTENCE]})
                assert status == 200, answer
                (row,) = answer["predictions"]
                assert row["valid"] and row["tokens"] == TOKENS, row
                assert set(row) == set(signatures[signature]["outputs"])
                if "tree" in row:
                    assert tree_leaves(row["tree"]) == TOKENS
                if "perplexity" in row:
                    assert row["perplexity"] > 1
                answered.append((name, signature))
        assert ("prpn", "score") in answered and ("prpn", "parse") in answered
        status, page = server.post("/api/parse", {"text": SENTENCE,
                                                  "models": names[:2]})
        assert status == 200 and page["sentences"][0]["members"] == 2
    assert server.returncode == 130
    assert server.stderr.strip().splitlines()[-1] == (
        "keras-ordered serve: interrupted")
