"""`keras-ordered serve` under load, on loopback, as JSON.

Starts `keras-ordered serve --model MODEL --port 0` in a process of its
own, then, for each count of concurrent clients (`--clients`, default 1, 8
and 32), has every client send `--requests` parse requests (TF Serving's
`:predict`, one sentence each, the sentences of the WSJ sample in turn)
one after the other, and reports per count: p50 and p99 latency,
sentences per second, errors (a status other than 200, or a sentence
answered `valid` false), and the server's resident memory before and after
(`/proc/PID/status`, VmRSS). The clients run in this process (aiohttp, one
asyncio loop), on the same CPU as the server: they take part of it.

Bounded in count and in time: each count of clients stops at
`--requests` per client or after `--max-seconds`, whichever comes first
(the JSON says how many were sent).

    python benchmarks/serve_load.py --treebank ../shared/data/wsj_sample/mrg \\
        --requests 2000 --record benchmarks/records/serve_load/prpn_ptb_quick.json
"""

import argparse
import asyncio
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

from keras_ordered._cpu import describe_cpu
from keras_ordered.training.crash_safety import write_json_atomically

import numpy as np

_LEAF = re.compile(r"\(([^\s()]+) ([^\s()]+)\)")


def treebank_sentences(folder, limit=2000):
    """Up to `limit` sentences of the .mrg files of `folder`, as text
    (the words of each tree, empty elements left out)."""
    sentences = []
    for path in sorted(glob.glob(os.path.join(folder, "*.mrg"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for tree in re.split(r"\n(?=\( ?\()", text):
            words = [word for tag, word in _LEAF.findall(tree)
                     if tag != "-NONE-"]
            if words:
                sentences.append(" ".join(words).replace("-LRB-", "(")
                                 .replace("-RRB-", ")"))
            if len(sentences) >= limit:
                return sentences
    return sentences


def resident_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_name():
    """The CPU, in the words of every record."""
    return describe_cpu()


def start_server(model, extra=()):
    command = shutil.which("keras-ordered") or "keras-ordered"
    process = subprocess.Popen(
        [command, "serve", "--model", model, "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    line = process.stdout.readline()
    if not line.startswith("serving "):
        process.kill()
        sys.exit(f"serve did not start: {line}")
    url = line.split(" at ", 1)[1].split(" ", 1)[0]
    return process, url


async def load(url, name, sentences, clients, requests, max_seconds):
    """Each of `clients` sends `requests` requests in turn; returns the
    latencies (seconds), the errors and the wall time."""
    import aiohttp

    endpoint = f"{url}v1/models/{name}:predict"
    latencies, errors = [], []
    deadline = time.perf_counter() + max_seconds
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)

    async def client(index):
        for n in range(requests):
            if time.perf_counter() > deadline:
                return
            sentence = sentences[(index * requests + n) % len(sentences)]
            body = {"signature_name": "parse", "instances": [sentence]}
            start = time.perf_counter()
            try:
                # One pool of keep-alive connections for every request.
                async with aiohttp.request(
                        "POST", endpoint, json=body, connector=connector,
                        timeout=timeout) as response:
                    answer = await response.json()
                    ok = (response.status == 200
                          and answer["predictions"][0]["valid"])
            except Exception as error:  # counted, the run goes on
                ok, answer = False, {"error": repr(error)}
            latencies.append(time.perf_counter() - start)
            if not ok:
                errors.append(str(answer)[:200])

    try:
        start = time.perf_counter()
        await asyncio.gather(*[client(i) for i in range(clients)])
        wall = time.perf_counter() - start
    finally:
        await connector.close()
    return latencies, errors, wall


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="prpn_ptb_quick")
    parser.add_argument("--treebank", default=None,
                        help="Folder of .mrg files whose sentences are sent "
                        "(default $KERAS_ORDERED_DATA/wsj_sample/mrg).")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--requests", type=int, default=2000,
                        help="Requests per client.")
    parser.add_argument("--max-seconds", type=float, default=300,
                        help="Longest time of one count of clients.")
    parser.add_argument("--max-batch-size", type=int, default=64)
    parser.add_argument("--record", help="Also write the JSON to this file.")
    args = parser.parse_args(argv)
    folder = args.treebank or os.path.join(
        os.environ.get("KERAS_ORDERED_DATA", "../shared/data"),
        "wsj_sample", "mrg")
    sentences = treebank_sentences(folder)
    if not sentences:
        sys.exit(f"no sentence in {folder}")
    counts = [int(c) for c in args.clients.split(",")]
    process, url = start_server(
        args.model, ["--max-batch-size", str(args.max_batch_size)])
    name = args.model
    try:
        # Warm-up: every signature traced, the first batches run.
        asyncio.run(load(url, name, sentences, 4, 10, 60))
        rss_start = resident_mib(process.pid)
        runs = []
        for clients in counts:
            before = resident_mib(process.pid)
            latencies, errors, wall = asyncio.run(load(
                url, name, sentences, clients, args.requests,
                args.max_seconds))
            after = resident_mib(process.pid)
            done = len(latencies)
            runs.append({
                "clients": clients,
                "requests_per_client": args.requests,
                "requests_sent": done,
                "stopped_by_time": done < clients * args.requests,
                "errors": len(errors),
                "first_errors": errors[:3],
                "p50_ms": round(1000 * float(np.percentile(latencies, 50)), 2),
                "p99_ms": round(1000 * float(np.percentile(latencies, 99)), 2),
                "sentences_per_s": round(done / wall, 1),
                "wall_s": round(wall, 1),
                "rss_mib_before": round(before, 1),
                "rss_mib_after": round(after, 1),
            })
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        rss_end = resident_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)
    total = sum(run["requests_sent"] for run in runs)
    one = next((r for r in runs if r["clients"] == 1), None)
    most = max(runs, key=lambda r: r["clients"])
    result = {
        "benchmark": "serve_load",
        "model": args.model,
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "max_batch_size": args.max_batch_size,
        "sentences": f"{folder} ({len(sentences)} sentences, in turn)",
        "runs": runs,
        "requests_in_all": total,
        "rss_mib_after_warm_up": round(rss_start, 1),
        "rss_mib_at_end": round(rss_end, 1),
        "rss_growth": round(rss_end / rss_start - 1, 4),
        "speedup_most_clients_over_one": (
            round(most["sentences_per_s"] / one["sentences_per_s"], 2)
            if one else None),
    }
    print(json.dumps(result, indent=1))
    if args.record:
        write_json_atomically(args.record, result, indent=1)
    return result


if __name__ == "__main__":
    main()
