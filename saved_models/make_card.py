"""Writes the card (card.json + README.md) of a shipped model.

A maintainer's tool. After a seed study (`benchmarks/parsing_quality.py`),
copy the chosen seed's model here (chosen on the development split or by
validation perplexity, never on the test split) and run

    python saved_models/make_card.py NAME --model runs/X/seed_N/model.keras \
        --results runs/X/seed_N/results.json --study runs/X/summary.json \
        --treebank ../shared/data/wsj_sample/mrg --command "python recipes/..." \
        --selection "..." --wall-minutes M --notes "..."

Without `--model`, the shipped model of that name is re-evaluated and its
card rewritten (training figures kept). Every run also rewrites
`saved_models/README.md`, the index of the shipped models, from the
cards; `python saved_models/make_card.py --index` rewrites only the
generated text (each model's `README.md` and the index) from the
`card.json` files, with no model loaded. The card's parsing figures are
computed here: all 3,253 sentences of the WSJ sample, and its development
(wsj_0001-0099) and test (wsj_0100-0149) splits. A model is listed as a
parser (`"parser": true`) only when its test-split sentence F1 beats
right-branching by at least 2 points; otherwise it ships as a language
model, labelled so. The tests recompute these figures
(tests/test_shipped_models.py) and check that the committed README files
are the text these functions generate from the cards
(tests/test_saved_model_cards.py).
"""

import argparse
import json
import os

from keras_ordered.parsing import RIGHT_BRANCHING_MARGIN as MARGIN

HERE = os.path.dirname(os.path.abspath(__file__))

SCORES = ("sentence_f1", "corpus_f1", "wsj10_sentence_f1")


def split_figures(model, treebank):
    """Parsing figures of `model` and right-branching, whole and per split."""
    from keras_ordered.datasets.treebank import load_treebank
    from keras_ordered.parsing import baseline_predictor
    from keras_ordered.parsing import evaluate_model
    from keras_ordered.parsing import evaluate_parsing
    from keras_ordered.datasets.treebank import WSJ_SAMPLE_SPLITS as SPLITS

    figures = {}
    for split, pattern in {"all": r".*\.mrg", **SPLITS}.items():
        records = load_treebank(treebank, fileids=pattern)
        scores = evaluate_model(records, model)
        right = evaluate_parsing(records, baseline_predictor("right-branching"))
        row = {"sentences": len(records)}
        row.update({key: round(scores[model.default_distance][key], 2)
                    for key in SCORES})
        row.update({f"right_branching_{key}": round(right[key], 2)
                    for key in SCORES})
        row["all_distances"] = {name: round(s["sentence_f1"], 2)
                                for name, s in scores.items()}
        figures[split] = row
    return figures


def split_perplexity(model, data, preset, split="test"):
    """PTB perplexity of `model` on the `"valid"` or `"test"` text, as the
    recipes compute it (the preset's evaluation or test batch size, windows
    of its BPTT length, from zero state; a backward model's sentences
    reversed)."""
    from keras_ordered.datasets import ptb
    from keras_ordered.training.evaluation import perplexity
    from keras_ordered.training.evaluation import evaluate_stream

    (_, valid_ids, test_ids), vocabulary = ptb.load_data(data)
    settings = type(model).get_preset(preset)["training"]
    ids, batch = {"valid": (valid_ids, settings["eval_batch_size"]),
                  "test": (test_ids, settings["test_batch_size"])}[split]
    if getattr(model, "direction", "forward") == "backward":
        # A backward model reads every sentence reversed, as it trained.
        ids = ptb.reverse_sentences(ids, vocabulary.index(ptb.EOS))
    model.compile()
    return perplexity(evaluate_stream(model, ids, batch, settings["bptt"]))


def card_readme(card):
    """The model card for people (`saved_models/<name>/README.md`).

    Args:
        card: dict, the model's `card.json`.

    Returns:
        The text of its README.md, every figure taken from `card`.
    """
    name = card["name"]
    p = card["parsing"]
    dev, test = p["splits"]["dev"], p["splits"]["test"]
    role = (
        "a **parser**: on the test split its trees beat right-branching by "
        f"{MARGIN:.0f} points or more" if card["parser"] else
        "a **language model, not a parser**: on the test split its trees "
        f"do not beat right-branching by {MARGIN:.0f} points "
        "(`keras-ordered parse` still reads its distances, but they are not "
        "better trees than right-branching ones)"
    )
    study = card.get("seed_study")
    study_text = ""
    if study:
        t = study["test"]
        d = study["dev"]
        study_text = f"""
## The preset over seeds

`benchmarks/parsing_quality.py` trained seeds {', '.join(map(str, study['seeds']))}
of this preset ({study['precision']}): validation perplexity
{study['valid_perplexity']['mean']:.1f} +- {study['valid_perplexity']['std']:.1f};
development sentence F1 {d['sentence_f1']['mean']:.1f} +- {d['sentence_f1']['std']:.1f}
({d['sentence_f1']['min']:.1f}-{d['sentence_f1']['max']:.1f}), test
{t['sentence_f1']['mean']:.1f} +- {t['sentence_f1']['std']:.1f}
({t['sentence_f1']['min']:.1f}-{t['sentence_f1']['max']:.1f}); seeds beating
right-branching by {t['beats_right_branching']['margin']:.0f}+ points on the
test split: {t['beats_right_branching']['seeds']} of {t['beats_right_branching']['of']};
self-F1 (agreement between the seeds' trees) {t['self_f1']:.1f} on the test split.
A run of this preset is a draw from that distribution: this file is one
chosen draw, not what every run gives.
"""
    import keras_ordered

    model_class = getattr(keras_ordered.models, card["class"])
    batches = model_class.get_preset(card["preset"])["training"]
    student = card.get("teacher") is not None
    stored = ("" if not card.get("stored_dtype") else f"""
The weights are stored as {card['stored_dtype']} (`make_card.py
--half-precision`, half the size) and load into float32 variables; the
figures below are those of the stored weights.""")
    if student:
        made = (f"""{card['epochs']} epochs, {card['train_seconds']:.0f} s of training
({card['precision']}) on {card['silver_trees']['train']:,} silver trees: the
trees that the teacher, `{card['teacher']}` (tree averaging), gives the
PTB training text once every sentence of the WSJ sample is left out. The
weights are the {card['weights']}, chosen on the ranking loss over the
teacher's trees of the PTB validation text; no gold tree chose anything.
Saved without its optimizer by `saved_models/make_card.py`. Vocabulary:
the {card['vocabulary_size']:,} words of the PTB text (the file holds them
as an asset).{stored}""")
        worth = ("- A parser, not a language model: it gives no "
                 "perplexity.\n- Parsing with the gap decoder")
        role_text = (f"a **parser** distilled from an ensemble; on the test "
                     f"split its trees beat right-branching by "
                     f"{MARGIN:.0f} points or more" if card["parser"]
                     else role)
    else:
        test_ppl = ("" if card["test_perplexity"] is None else
                    f", test **{card['test_perplexity']}** "
                    f"(batch {batches['test_batch_size']})")
        made = (f"""{card['epochs']} epochs, {card['train_seconds']:.0f} s of training
({card['precision']}); the weights are the {card['weights']} (chosen on PTB
validation loss, as the official code). Saved without its optimizer by
`saved_models/make_card.py`. Vocabulary: the {card['vocabulary_size']:,}
words of the PTB text (the file holds them as an asset).{stored}""")
        worth = (f"- PTB perplexity: validation **{card['valid_perplexity']}** "
                 f"(batch {batches['eval_batch_size']}){test_ppl}.\n"
                 "- Unsupervised parsing")
        role_text = role
    trained_on = ("trained on the trees an ensemble gives the PTB text"
                  if student else "trained on the PTB language-modelling text")
    if card.get("direction") == "backward":
        trained_on += (" read backward (every sentence reversed; it parses "
                       "a sentence as written, reversing it itself)")
    readme = f"""# {name}

A `{card['class']}` (`{card['preset']}` preset, {card['parameters']:,}
parameters, {card['megabytes']} MB) {trained_on} on a 2-core CPU:
{role_text}. Load it by name, no network needed:

```python
model = keras_ordered.models.{card['class']}.from_preset("{name}")
```

```bash
keras-ordered parse --model {name} "The cat sat on the mat."
```

## How it was made

```bash
{card['command']}
```

{made}
{'' if not card.get('selection') else chr(10) + 'Why this one: ' + card['selection'] + chr(10)}
## What it is worth

{worth}, distance `{p['distance']}` (the model's default),
  sentence-level F1 against right-branching:
  - test split (wsj_0100-0149, {test['sentences']:,} sentences, never used
    to choose anything): **{test['sentence_f1']}** against
    {test['right_branching_sentence_f1']}; corpus-level {test['corpus_f1']}
    against {test['right_branching_corpus_f1']}; WSJ10
    {test['wsj10_sentence_f1']} against {test['right_branching_wsj10_sentence_f1']};
  - development split (wsj_0001-0099, {dev['sentences']:,} sentences):
    {dev['sentence_f1']} against {dev['right_branching_sentence_f1']};
  - the whole sample ({p['sentences']:,} sentences): {p['sentence_f1']}
    against {p['right_branching_sentence_f1']}; corpus-level
    {p['corpus_f1']} against {p['right_branching_corpus_f1']}.
  Every distance (whole sample): {', '.join(f'{k} {v}' for k, v in p['all_distances'].items())}.
  Recompute with

  ```bash
  keras-ordered evaluate-parsing --treebank ../shared/data/wsj_sample/mrg \\
      --model saved_models/{name}/model.keras --baseline right-branching
  ```

  (`tests/test_shipped_models.py` recomputes these figures, the splits
  included.)
{study_text}
{card['notes']}
"""
    return readme


FAMILIES = {"PRPNLanguageModel": "PRPN", "ONLSTMLanguageModel": "ON-LSTM",
            "DistanceParser": "distance parser"}


def read_cards(folder=HERE):
    """The cards of the shipped models: the default parser first, then the
    others by name.

    Args:
        folder: the `saved_models` folder.

    Returns:
        A list of dicts, each a `card.json`.
    """
    from keras_ordered.shipped import DEFAULT_PARSER

    names = sorted(
        name for name in os.listdir(folder)
        if os.path.isfile(os.path.join(folder, name, "card.json")))
    names.sort(key=lambda name: name != DEFAULT_PARSER)
    cards = []
    for name in names:
        with open(os.path.join(folder, name, "card.json")) as f:
            cards.append(json.load(f))
    return cards


def models_table(cards):
    """The table of the shipped models (saved_models/README.md and
    docs/saved_models.md print it), figures as the cards hold them.

    Args:
        cards: list of `card.json` dicts (`read_cards`).

    Returns:
        The Markdown table, one line per model, ending with a newline.
    """
    from keras_ordered.shipped import DEFAULT_PARSER

    lines = [
        "| name | model | size | PTB test ppl | test-split sentence F1 "
        "(right-branching) | distance | role |",
        "|---|---|---|---|---|---|---|",
    ]
    for card in cards:
        test = card["parsing"]["splits"]["test"]
        f1 = (f"**{test['sentence_f1']:.2f}**" if card["parser"]
              else f"{test['sentence_f1']:.2f}")
        role = "parser" if card["parser"] else "language model"
        if card["name"] == DEFAULT_PARSER:
            role += " (the default of `parse`)"
        ppl = card["test_perplexity"]
        lines.append(
            f"| `{card['name']}` | {FAMILIES.get(card['class'], card['class'])}"
            f", `{card['preset']}` preset, {card['precision']}"
            f"{', float16 weights' if card.get('stored_dtype') else ''}"
            f"{', backward' if card.get('direction') == 'backward' else ''} "
            f"| {card['megabytes']} MB | {'-' if ppl is None else ppl} "
            f"| {f1} ({test['right_branching_sentence_f1']}) "
            f"| `{card['parsing']['distance']}` | {role} |")
    return "\n".join(lines) + "\n"


def index_readme(cards):
    """The index of the shipped models (`saved_models/README.md`).

    Args:
        cards: list of `card.json` dicts (`read_cards`).

    Returns:
        The text of saved_models/README.md.
    """
    links = ", ".join(f"[{c['name']}]({c['name']}/README.md)" for c in cards)
    return f"""# saved_models/

Trained models shipped with keras-ordered, usable by name with no network
(`keras-ordered list-models` lists them with their figures). This file is
generated from the cards (`python saved_models/make_card.py --index`):

{models_table(cards)}
The perplexity is on the PTB test text; the F1 figures are the
sentence-level F1 of the model's default distance on the test split of
the WSJ sample (wsj_0100-0149, never used to choose a model), beside
right-branching's. A model is listed as a parser only when that F1 beats
right-branching by {MARGIN:.0f} points or more; the others ship as
language models, labelled so by `list-models`. Each model's card says how
it was made and what it is worth: {links}.

```python
model = keras_ordered.models.PRPNLanguageModel.from_preset("prpn_ptb_quick")
```

```bash
keras-ordered parse "The cat sat on the mat."          # uses prpn_ptb_quick
keras-ordered parse --model onlstm_ptb_small "The cat sat on the mat."
keras-ordered export --model prpn_ptb_quick --output exported/prpn
```

Each folder holds `model.keras` (weights, config and the 10,000-word PTB
vocabulary, saved without an optimizer), `card.json` (the figures, read by
`list-models` and recomputed by `tests/test_shipped_models.py`) and
`README.md` (the model card, generated from `card.json`: data, preset,
command, training time, perplexity, parsing F1 against right-branching).
The vocabulary is derived from the PTB text; no corpus text or treebank
file is shipped.

A model is retrained whenever its architecture changes: the test loads
each shipped model with the current code and checks its config against
the preset it names. To ship a new one, run a seed study
(`benchmarks/parsing_quality.py`), choose a seed on the development split
or by validation perplexity (never on the test split), and run
`saved_models/make_card.py` (its docstring has the command).

The models ship inside the package: a built wheel (`pip install
".[jax,draw]"`, or from an index) holds them in `keras_ordered/saved_models/`,
and a clone or its editable install reads this folder in place. Elsewhere
set `KERAS_ORDERED_SAVED_MODELS` to a folder of them.
"""


def write_index(folder=HERE):
    """Writes every card's README.md and saved_models/README.md from the
    `card.json` files of `folder`."""
    cards = read_cards(folder)
    for card in cards:
        with open(os.path.join(folder, card["name"], "README.md"), "w") as f:
            f.write(card_readme(card))
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(index_readme(cards))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?")
    parser.add_argument("--index", action="store_true",
                        help="only rewrite the README files from the cards")
    parser.add_argument("--model", default=None)
    parser.add_argument("--results", default=None)
    parser.add_argument("--study", default=None,
                        help="summary.json of benchmarks/parsing_quality.py")
    parser.add_argument("--treebank")
    parser.add_argument("--data", default=None,
                        help="PTB folder: computes the test perplexity "
                        "when the results lack it (a run with --skip-test)")
    parser.add_argument("--command", default=None)
    parser.add_argument("--selection", default=None,
                        help="how the shipped seed was chosen")
    parser.add_argument("--wall-minutes", type=float, default=None)
    parser.add_argument("--notes", default=None)
    parser.add_argument("--half-precision", action="store_true",
                        help="store the weights as float16 (half the size; "
                        "keras_ordered.saving.half_precision_copy); the "
                        "perplexities (--data) and trees are measured on "
                        "the stored weights")
    args = parser.parse_args()
    if args.index:
        write_index()
        return
    if not args.name or not args.treebank:
        parser.error("give NAME and --treebank DIR (or --index)")

    import keras_ordered

    folder = os.path.join(HERE, args.name)
    target = os.path.join(folder, "model.keras")
    previous = {}
    if os.path.exists(os.path.join(folder, "card.json")):
        with open(os.path.join(folder, "card.json")) as f:
            previous = json.load(f)
    half = args.half_precision or previous.get("stored_dtype") == "float16"
    results = previous
    if args.results:
        with open(args.results) as f:
            results = json.load(f)
    student = results.get("teacher") is not None
    if half and args.model and not student and not args.data:
        parser.error("--half-precision needs --data: the card's perplexities "
                     "are measured on the stored weights")
    if args.model:
        model = keras_ordered.load_model(args.model, compile=False)
        os.makedirs(folder, exist_ok=True)
        # Saved without its optimizer, then stored compressed (lossless),
        # its weights as float16 with --half-precision.
        model.save(target + ".saved.keras")
        copy = (keras_ordered.saving.half_precision_copy if half
                else keras_ordered.saving.compressed_copy)
        copy(target + ".saved.keras", target)
        os.remove(target + ".saved.keras")
        model = keras_ordered.load_model(target, compile=False)
    else:
        model = keras_ordered.load_model(target, compile=False)
    if half and args.model and not student:
        # The checkpoint's perplexities are not the stored weights'.
        results = dict(results, **{
            f"{split}_perplexity": split_perplexity(
                model, args.data, results["preset"], split)
            for split in ("valid", "test")})
    elif not student and not results.get("test_perplexity") and args.data:
        results = dict(results, test_perplexity=split_perplexity(
            model, args.data, results["preset"]))
    figures = split_figures(model, args.treebank)
    test = figures["test"]
    parses = test["sentence_f1"] >= (
        test["right_branching_sentence_f1"] + MARGIN)
    distance = model.default_distance
    card = {
        "name": args.name,
        "class": type(model).__name__,
        "preset": results["preset"],
        "parser": bool(parses),
        "parameters": int(model.count_params()),
        "megabytes": round(os.path.getsize(target) / 1e6, 1),
        "vocabulary_size": len(model.vocabulary),
        "data": ("the PTB language-modelling text (Mikolov's ptb.{train,"
                 "valid}.txt, 10k words) without the WSJ sample's sentences, "
                 "parsed by the teacher" if student else
                 "PTB language-modelling text (Mikolov's ptb.{train,valid,"
                 "test}.txt, 10k words)"),
        "command": args.command or previous["command"],
        "epochs": results.get("epochs", results.get("epochs_run")),
        "train_seconds": results["train_seconds"],
        "wall_minutes": args.wall_minutes or previous.get("wall_minutes"),
        "weights": results.get("weights", "last"),
        "precision": results.get("precision", "float32"),
        **({"stored_dtype": "float16"} if half else {}),
        **({"direction": "backward"}
           if getattr(model, "direction", "forward") == "backward" else {}),
        "valid_perplexity": (None if student
                             else round(results["valid_perplexity"], 2)),
        "test_perplexity": (round(results["test_perplexity"], 2)
                            if results.get("test_perplexity") else None),
        "parsing": {
            "treebank": "wsj_sample/mrg (wsj_0001-0149)",
            "protocol": "keras-ordered evaluate-parsing: every sentence, "
            "punctuation kept, digit runs as N, unlabeled brackets of "
            "length > 1 without the whole-sentence span",
            "distance": distance,
            **{key: value for key, value in figures["all"].items()},
            "splits": {split: figures[split] for split in ("dev", "test")},
        },
        **({"teacher": results["teacher"],
            "silver_trees": results["silver_trees"]} if student else {}),
        "selection": args.selection or previous.get("selection"),
        "notes": args.notes if args.notes is not None else previous.get(
            "notes", ""),
    }
    if args.study:
        with open(args.study) as f:
            study = json.load(f)
        card["seed_study"] = {
            "command": "python benchmarks/parsing_quality.py ...",
            "seeds": study["seeds"],
            "precision": study["precision"],
            "valid_perplexity": study["valid_perplexity"],
            **{split: {
                "sentence_f1": study["splits"][split]["distances"][distance][
                    "sentence_f1"],
                "beats_right_branching": study["splits"][split][
                    "beats_right_branching"],
                "self_f1": study["splits"][split]["self_f1"],
            } for split in ("dev", "test")},
        }
    elif previous.get("seed_study"):
        card["seed_study"] = previous["seed_study"]
    with open(os.path.join(folder, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
        f.write("\n")
    readme = card_readme(card)
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(readme)
    write_index()
    print(json.dumps(card, indent=1))


if __name__ == "__main__":
    main()
