"""Parsing speed of the GFL parser (LSTM+A), greedy and beam search, as JSON.

Parses the test sentences (by default those of the WSJ sample's test
split, wsj_0140-0149) in batches with `keras_ordered.models.gfl.inference.
parse_sentences` (sorted by length, decoded in graph, then delinearized),
once with greedy decoding and once with beam search, after one warm-up
call of each (which traces the decoding function), and prints sentences
per second. The paper reports 120 sentences/s with greedy decoding on
sentences of any length (Vinyals et al., 2015; their hardware is not ours).

Without `--model`, the parser is an *untrained* model of `--preset`
(default `paper`: 3 x 256 LSTMs, attention 256) over the vocabularies of
the training split: its weights are random, so its outputs rarely end
before the length limit (3 n + 10 symbols) and the figures are a
pessimistic bound for a trained parser, which stops at `<eos>` (the JSON
gives the mean number of decoded symbols per sentence beside the gold
one). Pass `--model runs/gfl_wsj/model.keras` for a trained parser.

    python benchmarks/gfl_parse_speed.py --treebank ../shared/data/wsj_sample/mrg

It runs on any Keras backend (`KERAS_BACKEND`). On JAX each batch shape
(batch size, and sentence length rounded up to 8 words) is compiled the
first time it comes: `--passes 2` parses the sentences twice and reports
each pass, the second with every program compiled.
"""

import argparse
import json
import os
import platform
import time

# TensorFlow's start-up log stays quiet (KERAS_ORDERED_TF_LOGS=1 shows it).
os.environ.setdefault("KERAS_ORDERED_QUIET", "1")

from keras_ordered import backend  # noqa: E402

backend.import_installed_tensorflow()

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_ordered.datasets import treebank_files  # noqa: E402
from keras_ordered.models.gfl import GFLParser  # noqa: E402
from keras_ordered.models.gfl import SourceVocabulary  # noqa: E402
from keras_ordered.models.gfl import TargetVocabulary  # noqa: E402
from keras_ordered.models.gfl.inference import parse_sentences  # noqa: E402
from keras_ordered.parsing import linearize  # noqa: E402


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", default=None, metavar="DIR",
                        help="treebank folder (default: "
                        "$KERAS_ORDERED_DATA/wsj_sample/mrg)")
    parser.add_argument("--test", nargs="+",
                        default=list(treebank_files.SAMPLE_SPLITS["test"]),
                        metavar="PATTERN", help="the sentences to parse "
                        "(default: wsj_014*.mrg)")
    parser.add_argument("--train", nargs="+",
                        default=list(treebank_files.SAMPLE_SPLITS["train"]),
                        metavar="PATTERN", help="vocabularies of an untrained "
                        "model (default: the sample's training split)")
    parser.add_argument("--model", default=None, metavar="PATH",
                        help="a trained GFL parser (.keras); default: an "
                        "untrained model of --preset")
    parser.add_argument("--preset", default="paper",
                        help="preset of the untrained model (default: paper)")
    parser.add_argument("--batch-size", type=int, default=64,
                        help="sentences decoded together (default: 64)")
    parser.add_argument("--beam-size", type=int, default=10,
                        help="beam of the beam search (default: 10, the "
                        "paper's)")
    parser.add_argument("--max-sentences", type=int, default=None,
                        help="parse only the first N test sentences "
                        "(default: all)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the untrained model (default: 0)")
    parser.add_argument("--passes", type=int, default=1,
                        help="parse the sentences this many times, each "
                        "pass reported (default: 1)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    directory = args.treebank or treebank_files.default_treebank_dir()
    test, _ = treebank_files.load_split(directory, args.test, "test",
                                        max_sentences=args.max_sentences)
    if args.model:
        model = keras.saving.load_model(args.model)
        source = f"trained model {args.model}"
    else:
        train, _ = treebank_files.load_split(directory, args.train, "train")
        keras.utils.set_random_seed(args.seed)
        model = GFLParser.from_preset(
            args.preset,
            SourceVocabulary.from_sentences((t.leaves() for t in train),
                                            min_count=2),
            TargetVocabulary.from_sequences(
                linearize.linearize(t, clean=False) for t in train),
            seed=args.seed,
        )
        source = (f"untrained {args.preset} preset (random weights): outputs "
                  "rarely stop before 3n+10 symbols, a pessimistic bound")
    words = [t.leaves() for t in test]
    gold_symbols = np.mean([len(linearize.linearize(t, clean=False)) for t in test])
    result = {
        "model": source,
        "parameters": int(model.count_params()),
        "target_symbols": len(model.target_vocabulary),
        "sentences": len(words),
        "mean_words": round(float(np.mean([len(w) for w in words])), 1),
        "max_words": max(len(w) for w in words),
        "mean_gold_symbols": round(float(gold_symbols), 1),
        "batch_size": args.batch_size,
        "backend": keras.backend.backend(),
        "device": backend.device_name(),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "keras": keras.__version__,
    }
    for name, beam in (("greedy", None), (f"beam_{args.beam_size}", args.beam_size)):
        passes = []
        for _ in range(args.passes):
            parsed = parse_sentences(model, words, beam_size=beam,
                                     batch_size=args.batch_size, warm_up=True)
            passes.append({
                "seconds": round(parsed.seconds, 2),
                "sentences_per_second": round(parsed.sentences_per_second, 1),
                "mean_decoded_symbols": round(
                    float(np.mean([len(s) for s in parsed.symbols])), 1),
                "malformed_rate": round(parsed.malformed_rate, 3),
            })
        result[name] = passes[0] if len(passes) == 1 else passes
    result["date"] = time.strftime("%Y-%m-%d")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
