"""saved_models/README.md agrees with the cards and with `list-models`.

tests/test_saved_model_cards.py checks that the index is the text that
saved_models/make_card.py generates. This file reads the index as a
reader does, without the generator: the models its table lists, the
figures and roles of each row, and the models and F1 figures its prose
names, each against the `card.json` files and the table that
`keras-ordered list-models` prints. It fails on an index written by hand
that has drifted from the cards, and on a generator that prints the wrong
field. No model is loaded.
"""

import json
import os
import re

import pytest

from conftest import REPO
from keras_ordered.parsing import RIGHT_BRANCHING_MARGIN
from keras_ordered_cli import list_models

FOLDER = os.path.join(REPO, "saved_models")
README = os.path.join(FOLDER, "README.md")
# A shipped model's name as the pages write it: `prpn_ptb_quick`.
MODEL_NAME = re.compile(r"`([a-z0-9]+_ptb_[a-z0-9]+)`")


def _cards():
    cards = {}
    for name in sorted(os.listdir(FOLDER)):
        path = os.path.join(FOLDER, name, "card.json")
        if os.path.isfile(os.path.join(FOLDER, name, "model.keras")):
            with open(path, encoding="utf-8") as f:
                cards[name] = json.load(f)
    return cards


CARDS = _cards()


def _read(path=README):
    with open(path, encoding="utf-8") as f:
        return f.read()


def readme_table(text):
    """The rows of the first Markdown table whose header has a `name`
    column, each a dict of header -> cell text."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and "name" in cells:
            rows = []
            for row in lines[index + 2:]:
                if not row.startswith("|"):
                    break
                values = [c.strip() for c in row.strip().strip("|").split("|")]
                rows.append(dict(zip(cells, values)))
            return rows
    return []


def _column(row, *words):
    """The cell of the first column whose header holds all `words`."""
    for header, value in row.items():
        if all(w in header for w in words):
            return value
    return None


def _agrees(printed, value):
    """`printed` (a figure as written) is `value` at the printed precision."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed) - value) <= 0.5 * 10**-decimals + 1e-9


def _card_f1s(card):
    """Every sentence-level F1 a card holds (the whole sample, each split,
    each distance, right-branching)."""
    parsing = card["parsing"]
    figures = [parsing["sentence_f1"], parsing["right_branching_sentence_f1"]]
    figures += list(parsing.get("all_distances", {}).values())
    for split in parsing.get("splits", {}).values():
        figures += [split["sentence_f1"], split["right_branching_sentence_f1"]]
        figures += list(split.get("all_distances", {}).values())
    return figures


def row_problems(row, card):
    """What a table row says that its card does not."""
    problems = []
    name = card["name"]
    test = card["parsing"]["splits"]["test"]
    ppl = _column(row, "ppl")
    if ppl is not None and ppl != "-" and not _agrees(ppl, card["test_perplexity"]):
        problems.append(f"{name}: test perplexity {ppl}, card "
                        f"{card['test_perplexity']}")
    f1 = _column(row, "sentence F1")
    match = re.fullmatch(r"\**([\d.]+)\**\s*\(([\d.]+)\)", f1 or "")
    if not match:
        problems.append(f"{name}: no 'F1 (right-branching)' cell: {f1!r}")
    else:
        if not _agrees(match.group(1), test["sentence_f1"]):
            problems.append(f"{name}: test-split sentence F1 {match.group(1)}, "
                            f"card {test['sentence_f1']}")
        if not _agrees(match.group(2), test["right_branching_sentence_f1"]):
            problems.append(
                f"{name}: right-branching {match.group(2)}, card "
                f"{test['right_branching_sentence_f1']}")
    distance = _column(row, "distance")
    if distance is not None and distance.strip("`") != card["parsing"]["distance"]:
        problems.append(f"{name}: distance {distance}, card "
                        f"{card['parsing']['distance']}")
    role = _column(row, "role") or ""
    if role.startswith("parser") != bool(card["parser"]):
        problems.append(f"{name}: role {role!r}, card parser={card['parser']}")
    return problems


def prose_problems(text, cards):
    """Models named outside the table that are not shipped, shipped models
    said to be removed, and F1 figures beside a model name that none of its
    card's F1 figures are."""
    prose = "\n".join(line for line in text.splitlines()
                      if not line.startswith("|"))
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    problems = []
    for sentence in re.split(r"(?<=[.;])\s+", prose):
        names = MODEL_NAME.findall(sentence)
        for name in names:
            if name not in cards:
                problems.append(f"names {name}, which is not shipped")
            elif re.search(r"\bremoved\b|\bno longer\b", sentence):
                problems.append(f"says the shipped {name} is gone: "
                                f"{sentence.strip()!r}")
        for name in [n for n in names if n in cards]:
            for printed in re.findall(r"F1[^\d(]{0,20}(\d+\.\d+)", sentence):
                if not any(_agrees(printed, f) for f in _card_f1s(cards[name])):
                    problems.append(f"quotes F1 {printed} beside {name}, whose "
                                    "card holds no such figure")
    return problems


def test_every_shipped_model_has_one_row():
    names = [row["name"].strip("`") for row in readme_table(_read())]
    assert sorted(names) == sorted(CARDS), (
        f"saved_models/README.md lists {names}; the shipped models "
        f"(folders with a model.keras) are {sorted(CARDS)}")


def test_each_row_gives_its_cards_figures_and_role():
    problems = []
    for row in readme_table(_read()):
        card = CARDS.get(row["name"].strip("`"))
        if card is not None:
            problems += row_problems(row, card)
    assert not problems, "saved_models/README.md: " + "; ".join(problems)


def test_the_prose_names_shipped_models_with_their_figures():
    problems = prose_problems(_read(), CARDS)
    assert not problems, "saved_models/README.md " + "; ".join(problems)


@pytest.mark.parametrize("name", sorted(CARDS))
def test_a_parser_is_what_list_models_and_the_margin_call_one(name):
    card = CARDS[name]
    test = card["parsing"]["splits"]["test"]
    beats = (test["sentence_f1"]
             >= test["right_branching_sentence_f1"] + RIGHT_BRANCHING_MARGIN)
    assert bool(card["parser"]) == beats, (
        f"{name}: card parser={card['parser']}, test-split F1 "
        f"{test['sentence_f1']} against right-branching "
        f"{test['right_branching_sentence_f1']}")
    (line,) = [l for l in list_models.format_table([card], default=None)
               if l.startswith(name + " ")]
    assert ("language model" in line) == (not card["parser"]), line



@pytest.mark.parametrize("name", sorted(CARDS))
def test_list_models_and_the_index_give_one_f1_per_model(name):
    """`list-models` shows the F1 of the card and of the index: the test
    split's, on one named sentence set."""
    card = CARDS[name]
    test = card["parsing"]["splits"]["test"]
    lines = list_models.format_table([card], default=None)
    (line,) = [l for l in lines if l.startswith(name + " ")]
    shown = line.split()
    assert f"{test['sentence_f1']:.2f}" in shown, line
    assert f"{test['right_branching_sentence_f1']:.2f}" in shown, line
    # The index shows a parser's F1 in bold, a language model's plain.
    shown_f1 = (f"**{test['sentence_f1']:.2f}**" if card["parser"]
                else f"| {test['sentence_f1']:.2f} (")
    assert shown_f1 in _read()
    assert "test split of the WSJ sample (wsj_0100-0149" in lines[-1]
