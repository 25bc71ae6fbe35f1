"""Writes the card (card.json + README.md) of a shipped model.

A maintainer's tool: after training with a recipe and evaluating with
`keras-ordered evaluate-parsing --json`, copy the model here and run

    python saved_models/make_card.py NAME --model runs/X/model.keras \
        --results runs/X/results.json --evaluation eval.json \
        --command "python recipes/... " --wall-minutes M --notes "..."

It re-saves the model without its optimizer into saved_models/NAME/ and
writes the figures the tests recompute (tests/test_shipped_models.py).
"""

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--model", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--evaluation", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--wall-minutes", type=float, required=True)
    parser.add_argument("--notes", default="")
    args = parser.parse_args()

    import keras_ordered

    model = keras_ordered.load_model(args.model, compile=False)
    folder = os.path.join(HERE, args.name)
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, "model.keras")
    model.save(target)
    results = json.load(open(args.results))
    evaluation = json.load(open(args.evaluation))
    distance = model.default_distance
    scores = evaluation["distances"][distance]
    baseline = evaluation["baselines"]["right-branching"]
    card = {
        "name": args.name,
        "class": type(model).__name__,
        "preset": results["preset"],
        "parameters": int(model.count_params()),
        "megabytes": round(os.path.getsize(target) / 1e6, 1),
        "vocabulary_size": len(model.vocabulary),
        "data": "PTB language-modelling text (Mikolov's ptb.{train,valid,"
        "test}.txt, 10k words)",
        "command": args.command,
        "epochs": results["epochs"],
        "train_seconds": results["train_seconds"],
        "wall_minutes": args.wall_minutes,
        "weights": results.get("weights", "last"),
        "valid_perplexity": round(results["valid_perplexity"], 2),
        "test_perplexity": round(results["test_perplexity"], 2),
        "parsing": {
            "treebank": "wsj_sample/mrg (wsj_0001-0149)",
            "protocol": "keras-ordered evaluate-parsing: every sentence, "
            "punctuation kept, digit runs as N, unlabeled brackets of "
            "length > 1 without the whole-sentence span",
            "sentences": scores["sentences"],
            "distance": distance,
            "sentence_f1": round(scores["sentence_f1"], 2),
            "corpus_f1": round(scores["corpus_f1"], 2),
            "wsj10_sentence_f1": round(scores["wsj10_sentence_f1"], 2),
            "right_branching_sentence_f1": round(baseline["sentence_f1"], 2),
            "right_branching_corpus_f1": round(baseline["corpus_f1"], 2),
            "right_branching_wsj10_sentence_f1": round(
                baseline["wsj10_sentence_f1"], 2
            ),
            "all_distances": {
                name: round(row["sentence_f1"], 2)
                for name, row in evaluation["distances"].items()
            },
        },
        "notes": args.notes,
    }
    with open(os.path.join(folder, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
        f.write("\n")
    p = card["parsing"]
    beats = p["sentence_f1"] > p["right_branching_sentence_f1"]
    readme = f"""# {args.name}

A `{card['class']}` (`{card['preset']}` preset, {card['parameters']:,}
parameters, {card['megabytes']} MB) trained on the PTB language-modelling
text on a 2-core CPU. Load it by name, no network needed:

```python
model = keras_ordered.models.{card['class']}.from_preset("{args.name}")
```

```bash
keras-ordered parse --model {args.name} "The cat sat on the mat."
```

## How it was made

```bash
{args.command}
```

{card['epochs']} epochs, {card['train_seconds']:.0f} s of training
({card['wall_minutes']:.0f} minutes of wall time with the evaluations);
the weights are the {card['weights']}. Saved without its optimizer by
`saved_models/make_card.py`. Vocabulary: the {card['vocabulary_size']:,}
words of the PTB text (the file holds them as an asset).

## What it is worth

- PTB perplexity: validation **{card['valid_perplexity']}** (batch 10),
  test **{card['test_perplexity']}** (batch 1).
- Unsupervised parsing on {p['treebank']}, all {p['sentences']:,}
  sentences, distance `{p['distance']}` (the model's default):
  sentence-level F1 **{p['sentence_f1']}** against right-branching
  {p['right_branching_sentence_f1']}; corpus-level {p['corpus_f1']}
  against {p['right_branching_corpus_f1']}; sentences of at most 10 words
  {p['wsj10_sentence_f1']} against {p['right_branching_wsj10_sentence_f1']}.
  It {'beats' if beats else 'does **not** beat'} right-branching on
  sentence-level F1. Every distance: {', '.join(f'{k} {v}' for k, v in p['all_distances'].items())}.
  Recompute with

  ```bash
  keras-ordered evaluate-parsing --treebank ../shared/data/wsj_sample/mrg \\
      --model saved_models/{args.name}/model.keras --baseline right-branching
  ```

  (`tests/test_shipped_models.py` recomputes these figures.)

{args.notes}
"""
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(readme)
    print(json.dumps(card, indent=1))


if __name__ == "__main__":
    main()
