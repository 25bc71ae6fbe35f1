"""`keras-ordered serve` over HTTP, in a process of its own: TF Serving's
REST API on a shipped model, on a second one and on an exported SavedModel
of the first (which TF Serving itself would run), bad requests, caps, the
page's files and Ctrl-C."""

import os
import re
import subprocess
import sys
import threading

import pytest

import command_server
from serving_client import ServeProcess

pytestmark = pytest.mark.slow
pytest.importorskip("aiohttp")

SENTENCES = ["The cat sat on the mat.", "Stocks fell 3 % on Friday ."]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    exported = folder / "prpn"
    # `keras-ordered export`, called in this process (the command's own
    # entry point; the served SavedModel is what TF Serving would load).
    from keras_ordered_cli import main as cli_main

    assert cli_main(["export", "--model", "prpn_ptb_quick", "--output",
                     str(exported)]) == 0
    with ServeProcess(["--model", "prpn_ptb_quick", "--model",
                       "onlstm_ptb_small", "--model", str(exported),
                       "--max-body", "20000", "--max-sentences", "8"]) as s:
        yield s


@pytest.fixture(scope="module")
def parse_command_trees():
    """The trees `keras-ordered parse SENTENCES` prints (its default model,
    prpn_ptb_quick): one run of the command, through its entry point in
    this process, for the tests that compare the server's trees with it."""
    import contextlib
    import io

    from keras_ordered_cli import main as cli_main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli_main(["parse", *SENTENCES]) == 0
    return printed.getvalue().splitlines()


def test_binds_loopback_and_names_its_models(server):
    assert server.url.startswith("http://127.0.0.1:")
    assert "prpn_ptb_quick, onlstm_ptb_small, prpn at" in server.first_line


@pytest.mark.parametrize("name", ["prpn_ptb_quick", "onlstm_ptb_small", "prpn"])
def test_status_and_metadata(server, name):
    status, answer = server.get(f"/v1/models/{name}")
    assert status == 200
    assert answer == {"model_version_status": [{
        "version": "1", "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""}}]}
    assert server.get(f"/v1/models/{name}/versions/1")[0] == 200
    status, metadata = server.get(f"/v1/models/{name}/metadata")
    assert status == 200
    assert metadata["model_spec"]["name"] == name
    signatures = metadata["metadata"]["signature_def"]["signature_def"]
    assert {"parse", "score", "serving_default"} <= set(signatures)
    parse = signatures["parse"]
    assert parse["inputs"]["sentences"]["dtype"] == "DT_STRING"
    assert {"tokens", "length", "distance", "tree", "valid", "error"} <= set(
        parse["outputs"])
    assert parse["outputs"]["tree"]["dtype"] == "DT_STRING"
    assert parse["outputs"]["distance"]["dtype"] == "DT_FLOAT"


def test_rows_and_columns_give_the_trees_of_parse(server, parse_command_trees):
    trees = parse_command_trees
    status, rows = server.post("/v1/models/prpn_ptb_quick:predict", {
        "signature_name": "parse", "instances": SENTENCES})
    assert status == 200
    assert [row["tree"] for row in rows["predictions"]] == trees
    status, columns = server.post("/v1/models/prpn_ptb_quick:predict", {
        "inputs": {"sentences": SENTENCES}})  # serving_default is parse
    assert status == 200
    assert columns["outputs"]["tree"] == trees
    assert columns["outputs"]["tokens"][0] == [
        "The", "cat", "sat", "on", "the", "mat", "."]


def _close(a, b, where=""):
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert abs(a - b) <= 1e-5 * max(1.0, abs(a)), (where, a, b)
    else:
        assert a == b, (where, a, b)


@pytest.mark.parametrize("signature", ["parse", "score"])
def test_keras_file_answers_as_its_exported_saved_model(server, signature):
    # `prpn` is the SavedModel TF Serving would load: the same request gets
    # the same answer from both.
    request = {"signature_name": signature,
               "instances": SENTENCES + ["", "a\x07b"]}
    answers = [server.post(f"/v1/models/{name}:predict", request)
               for name in ("prpn_ptb_quick", "prpn")]
    assert [status for status, _ in answers] == [200, 200]
    _close(answers[0][1], answers[1][1])
    rows = answers[0][1]["predictions"]
    # Bad sentences are answered in the row, as the SavedModel does.
    assert [row["valid"] for row in rows] == [True, True, False, False]
    assert rows[2]["error"] == "empty sentence: give at least one word"
    assert rows[3]["error"].startswith("control character")


def test_concurrent_requests_get_their_lone_answers(server):
    sentences = [f"The {w} sat on the mat ." for w in
                 ("cat", "dog", "big old cat", "man", "bird", "child")]
    alone = {s: server.post("/v1/models/onlstm_ptb_small:predict",
                            {"instances": [s]})[1] for s in sentences}
    together = {}

    def send(sentence):
        together[sentence] = server.post(
            "/v1/models/onlstm_ptb_small:predict", {"instances": [sentence]})

    threads = [threading.Thread(target=send, args=(s,)) for s in sentences * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for sentence in sentences:
        status, answer = together[sentence]
        assert status == 200
        _close(alone[sentence], answer)


@pytest.mark.parametrize("path, body, status, words", [
    ("/v1/models/prpn_ptb_quick:predict", b'{"instances": [', 400, "not valid JSON"),
    ("/v1/models/nope:predict", {"instances": ["a"]}, 404, "nope"),
    ("/v1/models/prpn_ptb_quick:predict",
     {"signature_name": "tree", "instances": ["a"]}, 400, "tree"),
    ("/v1/models/prpn_ptb_quick:predict", {"sentences": ["a"]}, 400,
     "Unknown field 'sentences'"),
    ("/v1/models/prpn_ptb_quick:predict", {"instances": [1]}, 400, "string"),
    ("/v1/models/prpn_ptb_quick:predict", {"instances": ["a"] * 9}, 400,
     "9 sentences"),
    ("/v1/models/prpn_ptb_quick:predict",
     {"instances": ["word " * 5000]}, 413, "20000 bytes"),
    ("/v1/models/prpn_ptb_quick/versions/2:predict", {"instances": ["a"]},
     404, "version 2"),
    ("/v1/models/prpn_ptb_quick:classify", {"instances": ["a"]}, 400,
     ":predict"),
    ("/api/parse", {"text": "   \n  "}, 400, "empty"),
    ("/api/parse", {"text": "The cat\x07 sat."}, 400, "control character"),
    ("/api/parse", {"text": "The cat.", "models": ["/etc/passwd"]}, 404,
     "No model '/etc/passwd'"),
    ("/api/parse", {"text": "The cat.", "model": "x"}, 400, "Unknown field"),
    ("/api/parse", {"text": "The cat.", "decoder": "middle"}, 400, "decoder"),
])
def test_bad_requests_get_json_errors_and_the_server_stays_up(
        server, path, body, status, words):
    got, answer = server.post(path, body)
    assert (got, set(answer)) == (status, {"error"}), answer
    assert words in answer["error"] and "\n" not in answer["error"]
    assert server.get("/v1/models/prpn_ptb_quick")[0] == 200


def test_the_page_and_its_files_come_from_the_package_only(server):
    status, headers, page = server.raw("/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    text = page.decode("utf-8")
    assert "/assets/page.js" in text and "/assets/page.css" in text
    for path in ("/assets/page.js", "/assets/page.css"):
        status, _, body = server.raw(path)
        text += body.decode("utf-8")
        assert status == 200
    # Nothing from elsewhere: no absolute URL (http:, https:, //host) to load.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert not re.search(r"""(url\(|import |fetch\()["']?(https?:)?//""", text)
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    for path in ("/assets/../serve.py", "/assets/models.py", "/../../etc/passwd",
                 "/assets/%2e%2e/models.py", "/v1/models/..%2f..%2fetc"):
        assert server.raw(path)[0] == 404, path


def test_page_parses_with_one_model_and_with_an_ensemble(server,
                                                        parse_command_trees):
    trees = parse_command_trees
    status, one = server.post("/api/parse", {"text": "\n".join(SENTENCES)})
    assert status == 200 and one["models"] == ["prpn_ptb_quick"]
    assert [s["brackets"] for s in one["sentences"]] == trees
    assert one["sentences"][0]["svg"].count('class="distance"') == 7
    status, both = server.post("/api/parse", {
        "text": SENTENCES[0], "models": ["prpn_ptb_quick", "onlstm_ptb_small"]})
    assert status == 200
    (sentence,) = both["sentences"]
    assert sentence["members"] == 2 and sentence["votes"]["0-7"] == 2
    assert "2/2" in sentence["svg"]


def test_a_port_in_use_is_one_line():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            command_server.argv(
                [sys.executable, "-m", "keras_ordered_cli", "serve",
                 "--model", "prpn_ptb_quick", "--port", str(port)]),
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"keras-ordered serve: error: Cannot listen on 127.0.0.1:{port}")



def _printed_matches(printed, computed, where="answer"):
    """Where a printed JSON answer differs from a computed one: a printed
    decimal is the computed number rounded to its decimals."""
    if isinstance(printed, str) and re.fullmatch(r"-?\d+\.\d+", printed):
        decimals = len(printed.split(".")[1])
        ok = abs(float(printed) - computed) <= 0.5 * 10**-decimals + 1e-5
        return [] if ok else [f"{where}: printed {printed}, served {computed}"]
    if isinstance(printed, dict):
        if set(printed) != set(computed):
            return [f"{where}: keys {sorted(printed)} != {sorted(computed)}"]
        return [m for k in printed
                for m in _printed_matches(printed[k], computed[k], f"{where}.{k}")]
    if isinstance(printed, list):
        if len(printed) != len(computed):
            return [f"{where}: {len(printed)} values, served {len(computed)}"]
        return [m for i, (p, c) in enumerate(zip(printed, computed))
                for m in _printed_matches(p, c, f"{where}[{i}]")]
    return [] if printed == computed else [f"{where}: {printed!r} != {computed!r}"]


def test_the_documented_request_gets_the_documented_answers(server):
    import json

    from conftest import REPO

    with open(os.path.join(REPO, "docs", "serving.md"), encoding="utf-8") as f:
        page = f.read()
    here = page.split("## Try it here", 1)[1].split("\n## ", 1)[0]
    deploy = page.split("\n## TF Serving\n", 1)[1].split("\n## ", 1)[0]
    (curl,) = re.findall(r"curl -d '(\{.*?\})' (\S+)", here)
    assert curl in re.findall(r"curl -d '(\{.*?\})' (\S+)", deploy)
    body, url = curl
    path = "/" + url.split("/", 3)[3]
    request = json.loads(body)
    blocks = re.findall(r"```json\n(.*?)```", deploy, re.S)
    for block, signature in zip(blocks, ("parse", "score")):
        request["signature_name"] = signature
        status, answer = server.post(path, request)
        assert status == 200
        printed = json.loads(block, parse_float=lambda text: text)
        assert not _printed_matches(printed, answer), _printed_matches(
            printed, answer)


def test_gfl_and_tdtreelstm_files_are_served_through_their_export(tmp_path):
    from harness import tiny_gfl_parser
    from harness import tiny_tdtreelstm_lm

    tiny_gfl_parser().save(str(tmp_path / "gfl.keras"))
    tiny_tdtreelstm_lm().save(str(tmp_path / "td.keras"))
    with ServeProcess(["--model", str(tmp_path / "gfl.keras"), "--model",
                       str(tmp_path / "td.keras")],
                      env={"TMPDIR": str(tmp_path)}) as s:
        status, gfl = s.post("/v1/models/gfl:predict",
                             {"instances": ["The cat sat ."]})
        assert status == 200
        (row,) = gfl["predictions"]
        assert row["tokens"] == ["The", "cat", "sat", "."] and row["valid"]
        assert row["tree"].count("(XX ") == 4
        status, td = s.post("/v1/models/td:predict", {
            "signature_name": "score",
            "instances": ["the\tDT\t2\ncat\tNN\t0", "a\tDT\t5"]})
        assert status == 200
        first, second = td["predictions"]
        assert first["valid"] and first["heads"] == [2, 0]
        assert first["sentence_log_prob"] < 0
        assert not second["valid"] and second["error"]
        # The page draws models of syntactic distances only.
        assert s.get("/api/models") == (200, {
            "models": [], "decoders": ["right", "left"], "max_sentences": 64})
        # The temporary exports are gone once loaded.
        assert not [p for p in tmp_path.iterdir()
                    if p.name.startswith("keras_ordered_serve_")]


def test_ctrl_c_stops_it_with_one_line(server):
    # The module's server (three models, after every request above), so no
    # server process of its own: the last test of the file, since it stops
    # the server (a later test would find it gone).
    assert server.get("/v1/models/prpn_ptb_quick")[0] == 200
    assert server.stop() == 130
    lines = server.stderr.strip().splitlines()
    assert lines[-1] == "keras-ordered serve: interrupted"
    assert not any("Traceback" in line for line in lines)
