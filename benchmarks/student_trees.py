"""The distilled student against its teacher and the teacher's members.

For a teacher (an ensemble, as `keras-ordered parse --model` takes it)
and students trained on its trees (`recipes/ptb_distance_parser.py`, one
`--student` per seed), on the WSJ sample's development split
(wsj_0001-0099) and test split (wsj_0100-0149): sentence and corpus F1 of
each member, of the teacher, of each student (and their mean and spread
over seeds) and of right-branching; how closely each student's trees
follow the teacher's (the sentence F1 of one against the other); and the
parsing speed of the teacher and of each student on the development
split's sentences, measured in the same run (sentences/s and the ratio).
With `--jit-compile`, every parser is timed with and without XLA on its
models (`model.jit_compile = True`, TensorFlow), and its speed is the
better of the two.

    python benchmarks/student_trees.py --treebank ../shared/data/wsj_sample/mrg \\
        --teacher ensemble_ptb --student runs/student/seed_1/model.keras \\
        --student runs/student/seed_2/model.keras --record FILE --markdown
"""

import argparse
import json
import statistics
import sys
import time

from keras_ordered._cpu import describe_cpu
from keras_ordered.datasets.treebank import load_treebank_split
from keras_ordered.parsing import baseline_predictor
from keras_ordered.parsing import distance_predictor
from keras_ordered.parsing import evaluate_trees
from keras_ordered.parsing import num_leaves
from keras_ordered.parsing import sentence_f1
from keras_ordered.parsing import tree_to_spans
from keras_ordered.saving import load_ensemble
from keras_ordered.saving import load_model
from keras_ordered.training.crash_safety import write_json_atomically

SPLITS = ("dev", "test")


def _figures(scores):
    return {"sentence_f1": round(scores["sentence_f1"], 2),
            "corpus_f1": round(scores["corpus_f1"], 2)}


def agreement(trees, reference):
    """Sentence F1 (percent) of `trees` against `reference` (the
    teacher's trees), as `keras_ordered.parsing.sentence_f1` scores gold."""
    return round(100 * sentence_f1([tree_to_spans(t) for t in trees],
                                   [tree_to_spans(r) for r in reference],
                                   [num_leaves(r) for r in reference]), 2)


def timed(predict, sentences, repeats=1):
    """`(trees, sentences per second)` of the fastest of `repeats` passes
    over `sentences`, after a first pass that compiles what is compiled
    (every batch shape): on a shared machine the fastest pass is the one
    least slowed by other work."""
    predict(sentences)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        trees = predict(sentences)
        seconds.append(time.perf_counter() - start)
    return trees, len(sentences) / min(seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", required=True, metavar="DIR")
    parser.add_argument("--teacher", nargs="+", default=["ensemble_ptb"],
                        metavar="MODEL")
    parser.add_argument("--student", action="append", required=True,
                        metavar="PATH", help="a student's model.keras "
                        "(repeat for several seeds)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="only the first N sentences of each split "
                        "(quick checks; the figures are then partial)")
    parser.add_argument("--jit-compile", action="store_true",
                        help="time every parser with and without XLA "
                        "(TensorFlow) and keep the better")
    parser.add_argument("--repeats", type=int, default=1, metavar="N",
                        help="timed passes of each parser, the fastest "
                        "kept (default 1)")
    parser.add_argument("--record", metavar="FILE")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    ensemble = load_ensemble(args.teacher)
    students = {path: load_model(path, compile=False) for path in args.student}
    for model in students.values():
        model.jit_compile = args.jit_compile
    record = {
        "command": "python benchmarks/student_trees.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        "cpu": describe_cpu(),
        "teacher": args.teacher,
        "members": [m.name for m in ensemble.members],
        "splits": {},
    }
    for split in SPLITS:
        records = load_treebank_split(args.treebank, split)[0][:args.limit]
        sentences = [list(r.words) for r in records]
        ((_, _, member_trees, teacher_trees),) = ensemble.rows(
            records, batch_size=args.batch_size)
        entry = {
            "sentences": len(records),
            "right_branching": _figures(evaluate_trees(
                records, baseline_predictor("right-branching")(sentences))),
            "members": {m.name: _figures(evaluate_trees(records, trees))
                        for m, trees in zip(ensemble.members, member_trees)},
            "teacher": _figures(evaluate_trees(records, teacher_trees)),
            "students": {},
        }
        for path, model in students.items():
            trees = distance_predictor(model, batch_size=args.batch_size)(
                sentences)
            entry["students"][path] = {
                **_figures(evaluate_trees(records, trees)),
                "agreement_with_teacher": agreement(trees, teacher_trees),
            }
        f1s = [s["sentence_f1"] for s in entry["students"].values()]
        entry["students_sentence_f1"] = {
            "mean": round(statistics.mean(f1s), 2),
            "std": round(statistics.stdev(f1s), 2) if len(f1s) > 1 else 0.0,
            "min": min(f1s), "max": max(f1s), "seeds": len(f1s)}
        entry["best_member_sentence_f1"] = max(
            m["sentence_f1"] for m in entry["members"].values())
        record["splits"][split] = entry
        print(f"{split}: done", file=sys.stderr)
    # Speed: the development split's sentences as words, read as written.
    sentences = [list(r.words) for r in
                 load_treebank_split(args.treebank, "dev")[0][:args.limit]]
    _, teacher_rate = timed(ensemble.predictor(args.batch_size), sentences,
                            args.repeats)
    speed = {"sentences": len(sentences), "xla": args.jit_compile,
             "repeats": args.repeats,
             "students": {}}
    if args.jit_compile:
        speed["teacher_without_xla"] = round(teacher_rate, 1)
        for model in {id(m.model): m.model
                      for m in ensemble.members}.values():
            model.jit_compile = True
        _, rate = timed(ensemble.predictor(args.batch_size), sentences,
                        args.repeats)
        speed["teacher_with_xla"] = round(rate, 1)
        teacher_rate = max(teacher_rate, rate)
    speed["teacher_sentences_per_second"] = round(teacher_rate, 1)
    for path, model in students.items():
        entry = speed["students"][path] = {}
        rate = 0.0
        for xla in (False, True) if args.jit_compile else (False,):
            model.jit_compile = xla
            _, this = timed(distance_predictor(
                model, batch_size=args.batch_size), sentences, args.repeats)
            if args.jit_compile:
                entry["with_xla" if xla else "without_xla"] = round(this, 1)
            rate = max(rate, this)
        entry["sentences_per_second"] = round(rate, 1)
        entry["times_faster"] = round(rate / teacher_rate, 1)
    record["speed"] = speed
    if args.record:
        write_json_atomically(args.record, record, indent=1)
    print(markdown(record) if args.markdown else json.dumps(record, indent=1))
    return 0


def markdown(record):
    """The record as the table of docs/results.md."""
    lines = ["| split | right-branching | best member | teacher | student "
             "(mean +- std over seeds, min-max) | student vs teacher trees |",
             "|---|---|---|---|---|---|"]
    for split, entry in record["splits"].items():
        s = entry["students_sentence_f1"]
        agree = statistics.mean(v["agreement_with_teacher"]
                                for v in entry["students"].values())
        lines.append(
            f"| {split} | {entry['right_branching']['sentence_f1']:.2f} | "
            f"{entry['best_member_sentence_f1']:.2f} | "
            f"{entry['teacher']['sentence_f1']:.2f} | "
            f"**{s['mean']:.2f}** +- {s['std']:.2f} ({s['min']:.2f}-"
            f"{s['max']:.2f}, {s['seeds']} seeds) | {agree:.1f} |")
    speed = record["speed"]
    rates = [v["sentences_per_second"] for v in speed["students"].values()]
    ratios = [v["times_faster"] for v in speed["students"].values()]
    lines.append("")
    xla = (", each the better of with and without XLA" if speed.get("xla")
           else "")
    lines.append(
        f"Speed ({speed['sentences']} dev sentences{xla}, {record['cpu']}): "
        f"teacher {speed['teacher_sentences_per_second']:.0f} sentences/s, "
        f"student {min(rates):.0f}-{max(rates):.0f} sentences/s "
        f"({min(ratios):.1f}-{max(ratios):.1f}x).")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
