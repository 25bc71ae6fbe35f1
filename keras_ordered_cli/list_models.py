"""`keras-ordered list-models`: the trained models shipped with the package.

Prints one row per model of `saved_models/` (see
`keras_ordered.shipped`) with what it is and what it is worth, read
from its card: family, preset, PTB perplexity, parsing F1 on the test split
of the WSJ sample against right-branching (the figure of its card). `--json` prints the cards.

Example:

```
keras-ordered list-models
```
"""

import json

from keras_ordered_cli import _common
from keras_ordered_cli._common import CommandError

NAME = "list-models"
NEEDS_TENSORFLOW = False
"""The cards are JSON: this subcommand imports neither Keras nor TensorFlow."""


def add_parser(subparsers):
    """Adds the `list-models` subcommand; returns its parser."""
    parser = subparsers.add_parser(
        NAME,
        help="List the trained models shipped with the package.",
        description="The trained models of saved_models/ (usable by name: "
        "`keras-ordered parse --model NAME`, "
        "`PRPNLanguageModel.from_preset(NAME)`), with their PTB "
        "perplexity and parsing F1 on the WSJ sample's test split against the "
        "right-branching baseline (details in each model's README.md).",
    )
    parser.add_argument(
        "--json", action="store_true", help="Print the cards as JSON."
    )
    return parser


def _figure(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def format_table(cards, default):
    """The table `list-models` prints (a list of lines).

    Every F1 is the one the cards and `saved_models/README.md` give: the
    test split of the WSJ sample (`parsing.splits.test` of the card),
    which played no part in choosing the model.
    """
    header = (
        f"{'name':<18} {'class':<20} {'preset':<7} {'MB':>5} "
        f"{'test ppl':>8} {'F1':>6} {'right-br.':>9}  distance"
    )
    lines = [header, "-" * len(header)]
    for card in cards:
        parsing = card.get("parsing", {})
        test = parsing.get("splits", {}).get("test", {})
        mark = " (default parser)" if card["name"] == default else ""
        if not card.get("parser", True):
            mark = " (language model: its trees do not beat right-branching)"
        lines.append(
            f"{card['name']:<18} {card['class']:<20} {card['preset']:<7} "
            f"{_figure(card.get('megabytes')):>5} "
            f"{_figure(card.get('test_perplexity'), 2):>8} "
            f"{_figure(test.get('sentence_f1'), 2):>6} "
            f"{_figure(test.get('right_branching_sentence_f1'), 2):>9}  "
            f"{parsing.get('distance', '-')}{mark}"
        )
    lines.append(
        "F1: unlabeled sentence-level F1 on the test split of the WSJ sample "
        "(wsj_0100-0149 .mrg, never used to choose a model), as each model's "
        "card gives it; ppl: PTB test perplexity. A parser beats "
        "right-branching there by 2 or more (each model's README.md)."
    )
    return lines


def run(args):
    """Runs `keras-ordered list-models`; returns the exit status."""
    shipped = _common.standalone_module("shipped")
    names = shipped.shipped_names()
    if not names:
        raise CommandError(
            f"No shipped models at {shipped.saved_models_dir()} (set "
            f"${shipped.SAVED_MODELS_ENV} to the saved_models folder of a "
            "keras-ordered clone)."
        )
    cards = [shipped.shipped_card(name) for name in names]
    ensembles = [shipped.ensemble_card(name)
                 for name in shipped.ensemble_names()]
    if args.json:
        print(json.dumps(cards + ensembles, indent=1))
        return 0
    for line in format_table(cards, shipped.DEFAULT_PARSER):
        print(line)
    for line in format_ensembles(ensembles):
        print(line)
    return 0


def format_ensembles(cards):
    """The lines of the shipped ensembles (none without them)."""
    if not cards:
        return []
    lines = ["", "ensembles (the averaged trees of shipped models; "
             "`keras-ordered parse --model NAME`):"]
    for card in cards:
        test = card.get("parsing", {}).get("splits", {}).get("test", {})
        lines.append(
            f"{card['name']:<18} {len(card.get('expanded_members', card['members']))} "
            f"members: {' + '.join(card['members'])}; test F1 "
            f"{_figure(test.get('sentence_f1'), 2)} (best member "
            f"{_figure(test.get('best_member_sentence_f1'), 2)}, "
            f"right-br. {_figure(test.get('right_branching_sentence_f1'), 2)})"
        )
    return lines
