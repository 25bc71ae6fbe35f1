"""The shipped models' pages are generated from their cards and agree with them.

`saved_models/README.md` (the index), each `saved_models/<name>/README.md`
and the table of docs/saved_models.md are the text that
`saved_models/make_card.py` generates from the `card.json` files
(`python saved_models/make_card.py --index` rewrites them), and the
figures a card's free text repeats (its notes, how it was chosen) are
those of its fields. tests/test_shipped_models.py recomputes the fields.
"""

import importlib.util
import os
import re

import numpy as np
import pytest

from conftest import REPO

FOLDER = os.path.join(REPO, "saved_models")


def _make_card():
    path = os.path.join(FOLDER, "make_card.py")
    spec = importlib.util.spec_from_file_location("make_card", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_card = _make_card()
CARDS = make_card.read_cards(FOLDER)
REGENERATE = "regenerate with `python saved_models/make_card.py --index`"


def _read(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return f.read()


def test_every_shipped_model_has_a_card():
    from keras_ordered import shipped

    assert [c["name"] for c in CARDS][0] == shipped.DEFAULT_PARSER
    assert sorted(c["name"] for c in CARDS) == sorted(
        name for name in os.listdir(FOLDER)
        if os.path.isfile(os.path.join(FOLDER, name, "model.keras")))


def test_the_index_is_generated_from_the_cards():
    assert _read("saved_models", "README.md") == make_card.index_readme(
        CARDS), f"saved_models/README.md differs from the cards: {REGENERATE}"


@pytest.mark.parametrize("card", CARDS, ids=lambda card: card["name"])
def test_each_model_card_is_generated_from_its_card_json(card):
    assert _read("saved_models", card["name"], "README.md") == (
        make_card.card_readme(card)
    ), f"saved_models/{card['name']}/README.md differs: {REGENERATE}"


def test_docs_saved_models_prints_the_cards_table():
    assert make_card.models_table(CARDS) in _read("docs", "saved_models.md"), (
        "docs/saved_models.md's table of the shipped models is not "
        "make_card.models_table(cards): paste the table of "
        "saved_models/README.md")


def _agrees(printed, value):
    """`printed` (a figure as written, commas allowed) is `value` at the
    printed precision."""
    printed = printed.replace(",", "")
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed) - value) <= 0.5 * 10**-decimals + 1e-9


@pytest.mark.parametrize("card", CARDS, ids=lambda card: card["name"])
def test_figures_in_a_cards_text_are_its_fields(card):
    """The training time and perplexities that the notes repeat, and the
    development-split F1 of the selection, are the card's fields."""
    problems = []
    notes = card.get("notes", "")
    for printed in re.findall(r"([\d,]+(?:\.\d+)?) s of training", notes):
        if not _agrees(printed, card["train_seconds"]):
            problems.append(f"notes: {printed} s of training, field "
                            f"train_seconds {card['train_seconds']}")
    for kind, printed in re.findall(
            r"(validation|test) perplexity (?:of )?(\d+\.\d+)", notes):
        field = card["valid_perplexity" if kind == "validation"
                     else "test_perplexity"]
        if not _agrees(printed, field):
            problems.append(f"notes: {kind} perplexity {printed}, field {field}")
    dev = card["parsing"]["splits"]["dev"]["sentence_f1"]
    match = re.search(r"sentence F1 (\d+\.\d+)", card.get("selection") or "")
    if match and not _agrees(match.group(1), dev):
        problems.append(f"selection: development sentence F1 "
                        f"{match.group(1)}, field {dev}")
    assert not problems, f"saved_models/{card['name']}/card.json: " + "; ".join(
        problems)


@pytest.mark.parametrize("name", ["onlstm_ptb_small", "distilled_ptb"])
def test_a_card_of_half_precision_weights_says_so(name):
    card = next(c for c in CARDS if c["name"] == name)
    plain = make_card.card_readme(card)
    half = dict(card, stored_dtype="float16")
    text = make_card.card_readme(half)
    assert "stored as" not in plain
    assert "The weights are stored as float16" in text
    assert "figures below are those of the stored weights" in text
    assert ", float16 weights |" in make_card.models_table([half])
    assert "float16 weights" not in make_card.models_table([card])


def test_half_precision_without_data_is_refused_before_anything_is_written(
        monkeypatch, capsys):
    name = "no_such_model_for_this_test"
    monkeypatch.setattr("sys.argv", [
        "make_card.py", name, "--model", "runs/x/model.keras",
        "--treebank", "trees", "--half-precision"])
    with pytest.raises(SystemExit):
        make_card.main()
    assert "--half-precision needs --data" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(FOLDER, name))


def test_a_backward_models_card_says_so(tmp_path):
    card = next(c for c in CARDS if c["name"] == "onlstm_ptb_small")
    backward = dict(card, direction="backward")
    assert "read backward" not in make_card.card_readme(card)
    assert "read backward" in make_card.card_readme(backward)
    assert ", backward |" in make_card.models_table([backward])
    assert "backward" not in make_card.models_table([card])


def test_a_backward_models_perplexity_reads_its_sentences_reversed(tmp_path):
    from keras_ordered.datasets import ptb
    from keras_ordered.models.onlstm import ONLSTMLanguageModel

    # Words of distinct counts (no ties in the vocabulary's order).
    train = ["the cat sat on the mat", "the dog sat", "a cat ran on the mat",
             "the cat ran"]
    held_out = ["the cat sat on a mat", "a dog ran on the mat", "the mat sat"]
    as_written, reversed_text = tmp_path / "ptb", tmp_path / "reversed"
    for folder, lines in ((as_written, held_out),
                          (reversed_text, [" ".join(line.split()[::-1])
                                           for line in held_out])):
        folder.mkdir()
        (folder / "train.txt").write_text("\n".join(train) + "\n")
        for split in ("valid", "test"):
            (folder / f"{split}.txt").write_text("\n".join(lines) + "\n")
    vocabulary = ptb.load_data(str(as_written), download=False)[1]
    backward = ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=vocabulary, seed=3, direction="backward")
    forward = ONLSTMLanguageModel.from_preset(
        "tiny", vocabulary=vocabulary, seed=3)
    # Large random weights: an untrained model's near-uniform predictions
    # would not tell the orders apart.
    rng = np.random.default_rng(0)
    weights = [rng.normal(scale=2.0, size=w.shape).astype("float32")
               for w in backward.get_weights()]
    backward.set_weights(weights)
    forward.set_weights(weights)
    for split in ("valid", "test"):
        # The backward model on the text as written is the same network
        # reading each sentence reversed, by a forward model.
        got = make_card.split_perplexity(backward, str(as_written), "tiny",
                                         split)
        want = make_card.split_perplexity(forward, str(reversed_text), "tiny",
                                          split)
        assert got == pytest.approx(want, rel=1e-5)
        assert got != pytest.approx(make_card.split_perplexity(
            forward, str(as_written), "tiny", split), rel=0.01)
