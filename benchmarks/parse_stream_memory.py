"""Peak memory of `keras-ordered parse --file` against the input's length.

Writes files of `--lines` lines (the WSJ sample's sentences, as the
treebank reader gives their words, repeated in order), runs
`keras-ordered parse --model MODEL --file F` on each in a process of its
own, and reads the process's peak resident
memory (`VmHWM` of `/proc/PID/status`, polled until it exits). `parse`
reads, parses and prints a chunk of lines at a time, so the peak should
not grow with the file: the record gives each run's peak, seconds,
sentences per second and the ratio of the longest run's peak to the
shortest's (goal: within 10 %), with the CPU.

    python benchmarks/parse_stream_memory.py --treebank ../shared/data/wsj_sample/mrg \\
        --model distilled_ptb --lines 10000 100000 \\
        --record benchmarks/records/parse_stream_memory/distilled_ptb.json
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from keras_ordered._cpu import describe_cpu
from keras_ordered.training.crash_safety import write_json_atomically


def peak_mib(pid):
    """The peak resident memory so far of process `pid`, in MiB, or None
    once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_parse(command):
    """Runs `command`, its output to a temporary file; returns (peak MiB,
    seconds, printed lines)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out,
                                   stderr=subprocess.PIPE, text=True, env=env)
        peak = 0.0
        while process.poll() is None:
            now = peak_mib(process.pid)
            peak = max(peak, now or 0.0)
            time.sleep(0.05)
        seconds = time.perf_counter() - start
        error = process.stderr.read()
        if process.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{error[-2000:]}")
        out.seek(0)
        printed = sum(1 for _ in out)
    return peak, seconds, printed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", required=True, metavar="DIR")
    parser.add_argument("--model", default="distilled_ptb")
    parser.add_argument("--lines", type=int, nargs="+",
                        default=[10000, 100000])
    parser.add_argument("--record", metavar="FILE")
    args = parser.parse_args(argv)
    from keras_ordered.datasets.treebank import load_treebank

    sentences = [" ".join(r.words) for r in
                 load_treebank(args.treebank)]
    script = shutil.which("keras-ordered") or "keras-ordered"
    folder = tempfile.mkdtemp(prefix="parse_stream_")
    runs = []
    try:
        for count in sorted(args.lines):
            path = os.path.join(folder, f"{count}.txt")
            with open(path, "w", encoding="utf-8") as f:
                for i in range(count):
                    f.write(sentences[i % len(sentences)] + "\n")
            peak, seconds, printed = run_parse(
                [script, "parse", "--model", args.model, "--no-tokenize",
                 "--file", path])
            if printed != count:
                sys.exit(f"parse printed {printed} lines for {count}")
            runs.append({"lines": count, "peak_rss_mib": round(peak, 1),
                         "seconds": round(seconds, 1),
                         "sentences_per_s": round(count / seconds, 1)})
            print(json.dumps(runs[-1]), file=sys.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    record = {
        "command": "python benchmarks/parse_stream_memory.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        "cpu": describe_cpu(),
        "model": args.model,
        "runs": runs,
        "peak_ratio_longest_to_shortest": round(
            runs[-1]["peak_rss_mib"] / runs[0]["peak_rss_mib"], 3),
    }
    print(json.dumps(record, indent=1))
    if args.record:
        write_json_atomically(args.record, record, indent=1)
    return record


if __name__ == "__main__":
    main()
