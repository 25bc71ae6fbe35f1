"""Parsing speed of `keras-ordered parse --file` and `evaluate-parsing`
beside the official ON-LSTM or PRPN evaluation loop, with the same
weights, as JSON.

The official code (`--official DIR`, `../shared/reference`: never part of
the package, read at run time) builds its language model (`--family`:
ON-LSTM at the paper's sizes, embeddings 400, 3 layers of 1150, chunks of
10; or PRPN at its paper's, embeddings 800, 2 layers of 1200, 15 slots,
look-back 5, hard gates) with PyTorch's random initialisation (`--seed`)
over the vocabulary of the WSJ-sample sentences, and its
`test_phrase_grammar.test` parses the sentences one at a time, as the
script does (its `Corpus` replaced by the sentences read here: `<eos>`
words `<eos>` for ON-LSTM, `<s>` words `</s>` for PRPN, the tokens of
their `word_tags`). PRPN's loop reads only sentences of at most 10 words
(WSJ10), so its sentences are those. PRPN's files are Python 2: the
harness of `DIR/harness/ref_prpn_torch.py` imports its model, and the
print statements of its `test_phrase_grammar.py` become calls (lib2to3's
print fixer) as it is read. The same weights, converted by
`keras_ordered.models.onlstm.from_official_state_dict` (or `.prpn.`), are
saved as a `.keras` file, and the package's commands run on the same
sentences in processes of their own:

- `keras-ordered parse --file F --no-tokenize` (one line per sentence, the
  official loop's words),
- `keras-ordered evaluate-parsing --treebank DIR --protocol on-lstm` (or
  `--protocol prpn --split wsj10`: the loop's sentences).

Each command's rate is given twice: over its whole run (start-up, model
loading and TensorFlow's tracing included) and net of a run on one
sentence (the start-up subtracted). Each time, the official loop's too,
is the least of `--repeats` runs: the net figures are differences of
two commands' times, which a single busy moment moves. The trees of
`parse` are compared with
the official loop's, sentence by sentence. The models' weights are
random: the trees say nothing about syntax, only whether both parse alike.

    python benchmarks/parse_speed_official.py --official ../shared/reference \\
        --treebank ../shared/data/wsj_sample/mrg --limit 500 --repeats 3 \\
        --record benchmarks/records/parse_speed_official/onlstm_amx_xeon.json
    python benchmarks/parse_speed_official.py --official ../shared/reference \\
        --treebank ../shared/data/wsj_sample/mrg --family prpn --repeats 3 \\
        --record benchmarks/records/parse_speed_official/prpn_amx_xeon.json
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

from keras_ordered._cpu import describe_cpu
from keras_ordered.training.crash_safety import write_json_atomically


def cpu_name():
    """The CPU, in the words of every record."""
    return describe_cpu()


def official_brackets(tree):
    """The official loop's nested lists as the package's brackets."""
    if isinstance(tree, str):
        return tree
    return "(" + " ".join(official_brackets(t) for t in tree) + ")"


def _let_the_official_modules_import():
    """What importing `test_phrase_grammar` needs beyond its files: its
    `data_ptb` lists the files of nltk's `ptb` corpus when imported (an
    empty corpus folder is given: the sentences come from here), and its
    `parse_comparison` imports `gflags`, whose flags the loop never reads
    (a module of no-op functions stands in when it is not installed)."""
    import importlib.util

    import nltk

    root = tempfile.mkdtemp(prefix="empty_nltk_data_")
    os.makedirs(os.path.join(root, "corpora", "ptb"))
    open(os.path.join(root, "corpora", "ptb", "allcats.txt"), "w").close()
    nltk.data.path.insert(0, root)
    if importlib.util.find_spec("gflags") is None:
        stub = types.ModuleType("gflags")
        stub.__getattr__ = _no_op_flag
        sys.modules["gflags"] = stub


def _no_op_flag(name):
    """The stand-in `gflags`' attributes: a no-op function per flag name.
    A module's own names (`__file__`, `__path__`, ...) stay missing, as
    tools that scan `sys.modules` (hypothesis, importlib) expect."""
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda *args, **kwargs: None


def _recording_trees(official_test):
    """Wraps the module's recursive `build_tree` so that the top-level
    calls' trees are kept (in the returned list)."""
    trees, depth = [], [0]
    build = official_test.build_tree

    def recording_build_tree(distances, words):
        depth[0] += 1
        try:
            tree = build(distances, words)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            trees.append(tree)
        return tree

    official_test.build_tree = recording_build_tree
    return trees


def _timed_loop(official_test, model, corpus):
    """Runs the official `test` (no printing); returns (trees, seconds)."""
    import torch

    trees = _recording_trees(official_test)
    start = time.perf_counter()
    with torch.no_grad():
        official_test.test(model, corpus, False)
    seconds = time.perf_counter() - start
    return [official_brackets(t) for t in trees], seconds


def _least_of(repeats, run):
    """`run()` -> (result, seconds), `repeats` times: the first result and
    the least seconds (a busy moment makes a run slower, never faster)."""
    result, seconds = run()
    for _ in range(repeats - 1):
        seconds = min(seconds, run()[1])
    return result, seconds


def _state(model):
    import numpy as np

    return {k: v.detach().numpy().astype(np.float32)
            for k, v in model.state_dict().items()}


def run_official(folder, records, seed, sizes, repeats=1):
    """The official ON-LSTM model and its evaluation loop over `records`;
    returns (state dict, vocabulary, trees, seconds)."""
    import torch

    source = os.path.join(folder, "onlstm")
    sys.path.insert(0, source)
    _let_the_official_modules_import()
    import ON_LSTM  # noqa: F401  (the official modules, unchanged)
    import model as official_model
    import test_phrase_grammar as official_test

    vocabulary = ["<unk>", "<eos>"] + sorted(
        {w for r in records for w in r.words} - {"<unk>", "<eos>"})
    torch.manual_seed(seed)
    model = official_model.RNNModel(
        "LSTM", len(vocabulary), sizes["emb"], sizes["hidden"],
        sizes["chunk"], sizes["layers"], dropout=0, dropouth=0, dropouti=0,
        dropoute=0, wdrop=0, tie_weights=True)
    model.eval()
    corpus = types.SimpleNamespace(
        dictionary=types.SimpleNamespace(
            word2idx={w: i for i, w in enumerate(vocabulary)}),
        test_sens=[["<eos>"] + list(r.words) + ["<eos>"] for r in records],
        test_trees=[r.tree for r in records],
        test_nltktrees=[r.tree for r in records])
    official_test.args = argparse.Namespace(wsj10=False)
    trees, seconds = _least_of(
        repeats, lambda: _timed_loop(official_test, model, corpus))
    return _state(model), vocabulary, trees, seconds


def python3_module(path, name):
    """The Python 2 file at `path` as a module: its print statements made
    calls by lib2to3's print fixer (the only Python 2 syntax of PRPN's
    `test_phrase_grammar.py`), the rest read as written."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lib2to3 is deprecated, not gone
        from lib2to3 import refactor

        tool = refactor.RefactoringTool(["lib2to3.fixes.fix_print"])
        with open(path, encoding="utf-8") as f:
            source = str(tool.refactor_string(f.read() + "\n", path))
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)
    return module


PRPN_MAX_WORDS = 10
"""The official PRPN loop skips sentences of more than 10 words."""


def run_official_prpn(folder, records, seed, sizes, repeats=1):
    """The official PRPN model (built through the reference harness's
    patches for today's PyTorch) and its evaluation loop over `records`;
    returns (state dict, vocabulary, trees, seconds)."""
    import torch

    sys.path.insert(0, os.path.join(folder, "harness"))
    import ref_prpn_torch

    official_model, _, _ = ref_prpn_torch.load_reference(
        None, src_dir=os.path.join(folder, "prpn"))
    # The loop's module imports `data_ptb` (Python 2: cPickle, and nltk's
    # full PTB at import) for nothing it runs: an empty module stands in.
    sys.modules.setdefault("data_ptb", types.ModuleType("data_ptb"))
    official_test = python3_module(
        os.path.join(folder, "prpn", "test_phrase_grammar.py"),
        "test_phrase_grammar")
    vocabulary = ["<eos>", "<unk>", "<s>"] + sorted(
        {w for r in records for w in r.words} - {"<eos>", "<unk>", "<s>"})
    index = {w: i for i, w in enumerate(vocabulary)}
    index["</s>"] = index["<eos>"]  # the official sentence end
    torch.manual_seed(seed)
    model = official_model.PRPN(
        len(vocabulary), sizes["emb"], sizes["hidden"], sizes["layers"],
        sizes["slots"], sizes["lookback"], 0.1, 0.0, 0.0, 0.0, True, True, 0)
    model.eval()
    corpus = types.SimpleNamespace(
        dictionary=index,
        train_sens=[["<s>"] + list(r.words) + ["</s>"] for r in records],
        train_trees=[r.tree for r in records])
    trees, seconds = _least_of(
        repeats, lambda: _timed_loop(official_test, model, corpus))
    return _state(model), vocabulary, trees, seconds


FAMILIES = {
    "on-lstm": {"emb": 400, "hidden": 1150, "layers": 3, "chunk": 10},
    "prpn": {"emb": 800, "hidden": 1200, "layers": 2, "slots": 15,
             "lookback": 5},
}
"""Each family's paper sizes (the defaults of `--emb`, `--hidden`, ...)."""


def timed(command):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return done.stdout, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", default="../shared/reference")
    parser.add_argument("--treebank", default=None)
    parser.add_argument("--limit", type=int, default=None,
                        help="Parse only the first N sentences.")
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--family", choices=sorted(FAMILIES),
                        default="on-lstm")
    for size in sorted({k for sizes in FAMILIES.values() for k in sizes}):
        parser.add_argument(f"--{size}", type=int, default=None,
                            help="(default: the family's paper size)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="Time the official loop and each command this "
                        "many times and keep the least time of each.")
    parser.add_argument("--record")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_ORDERED_QUIET", "1")
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.parsing import brackets_to_tree
    from keras_ordered.parsing import tree_to_brackets

    treebank = args.treebank or os.path.join(
        os.environ.get("KERAS_ORDERED_DATA", "../shared/data"),
        "wsj_sample", "mrg")
    sizes = {k: v if getattr(args, k) is None else getattr(args, k)
             for k, v in FAMILIES[args.family].items()}
    prpn = args.family == "prpn"
    if prpn:
        # The loop's sentences: at most 10 words (evaluate-parsing's
        # wsj10 split).
        every = load_treebank(treebank)
        records = [r for r in every
                   if len(r.words) <= PRPN_MAX_WORDS][:args.limit]
        treebank_limit = args.limit  # of the wsj10 split's sentences
        from keras_ordered.models.prpn import from_official_state_dict

        state, vocabulary, official_trees, official_seconds = (
            run_official_prpn(args.official, records, args.seed, sizes,
                              args.repeats))
        model = from_official_state_dict(
            state, vocabulary=vocabulary, num_slots=sizes["slots"])
        choice, split = [], ["--split", "wsj10"]
    else:
        records = load_treebank(treebank, max_sentences=args.limit)
        treebank_limit = args.limit
        from keras_ordered.models.onlstm import from_official_state_dict

        state, vocabulary, official_trees, official_seconds = run_official(
            args.official, records, args.seed, sizes, args.repeats)
        model = from_official_state_dict(state, vocabulary=vocabulary,
                                         weight_drop=0.0)
        choice, split = ["--distance", "forget", "--layer", "2"], []

    folder = tempfile.mkdtemp(prefix="parse_speed_")
    try:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        lines = os.path.join(folder, "sentences.txt")
        with open(lines, "w", encoding="utf-8") as f:
            f.write("".join(" ".join(r.words) + "\n" for r in records))
        one = os.path.join(folder, "one.txt")
        with open(one, "w", encoding="utf-8") as f:
            f.write(" ".join(records[0].words) + "\n")
        script = shutil.which("keras-ordered") or "keras-ordered"
        parse = [script, "parse", "--model", path, "--no-tokenize",
                 *choice, "--file"]
        def least(command):
            return _least_of(args.repeats, lambda: timed(command))

        printed, parse_seconds = least(parse + [lines])
        _, parse_one = least(parse + [one])
        evaluate = [script, "evaluate-parsing", "--model", path, "--protocol",
                    args.family, *choice, *split, "--json", "--treebank"]
        limit = ["--limit", str(treebank_limit)] if treebank_limit else []
        _, evaluate_seconds = least(evaluate + [treebank] + limit)
        _, evaluate_one = least(evaluate + [treebank, "--limit", "1"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    def canonical(text):
        if "(" not in text:
            return text  # the official loop's one-word sentence: the word
        tree = brackets_to_tree(text)
        leaves = tree.leaves()
        return tree_to_brackets(tree) if len(leaves) > 1 else leaves[0]

    ours = [canonical(line) for line in printed.splitlines()]
    theirs = [canonical(tree) for tree in official_trees]
    same = sum(a == b for a, b in zip(ours, theirs))
    n = len(records)

    def rates(seconds, one_seconds):
        net = seconds - one_seconds
        return {"seconds": round(seconds, 2),
                "sentences_per_s": round(n / seconds, 1),
                "seconds_one_sentence": round(one_seconds, 2),
                "sentences_per_s_net_of_start": (
                    round((n - 1) / net, 1) if net > 0 else None)}

    official_rate = n / official_seconds
    parse_rates = rates(parse_seconds, parse_one)
    evaluate_rates = rates(evaluate_seconds, evaluate_one)
    result = {
        "benchmark": "parse_speed_official",
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "model": dict(sizes, family=args.family,
                      weights=f"random, torch seed {args.seed}"),
        "sentences": n,
        "treebank": treebank,
        "repeats": args.repeats,
        "official_test_phrase_grammar": {
            "seconds": round(official_seconds, 2),
            "sentences_per_s": round(official_rate, 1)},
        "parse_file": parse_rates,
        "evaluate_parsing": evaluate_rates,
        "times_official": {
            "parse_file": round(parse_rates["sentences_per_s"] / official_rate, 2),
            "parse_file_net_of_start": (
                round(parse_rates["sentences_per_s_net_of_start"]
                      / official_rate, 2)
                if parse_rates["sentences_per_s_net_of_start"] else None),
            "evaluate_parsing": round(
                evaluate_rates["sentences_per_s"] / official_rate, 2),
            "evaluate_parsing_net_of_start": (
                round(evaluate_rates["sentences_per_s_net_of_start"]
                      / official_rate, 2)
                if evaluate_rates["sentences_per_s_net_of_start"] else None),
        },
        "same_trees": f"{same} of {n}",
        "first_differences": [
            {"official": b, "parse": a} for a, b in zip(ours, theirs)
            if a != b][:3],
    }
    print(json.dumps(result, indent=1))
    if args.record:
        write_json_atomically(args.record, result, indent=1)
    return result


if __name__ == "__main__":
    main()
