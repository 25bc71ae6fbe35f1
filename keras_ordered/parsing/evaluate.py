"""The unsupervised-parsing evaluation: induced trees against gold trees.

`evaluate_parsing` scores any tree predictor (a model's distances through
`distances_to_tree`, or a baseline) on gold sentences from
`keras_ordered.datasets.treebank.load_treebank`, and reports in one go the
measures the papers use: sentence-level F1 on all sentences and on WSJ10,
corpus-level F1, per-label recall and tree depth. Nothing here imports a
model or TensorFlow: a model enters only through its `sentence_distances`
method (see `keras_ordered.models.base.SyntacticDistanceMixin`).
"""

import dataclasses
import inspect

from keras_ordered._nltk import nltk
import numpy as np

from keras_ordered_options import PROTOCOL_PUNCTUATION
from keras_ordered.parsing import evalb
from keras_ordered.parsing import metrics
from keras_ordered.parsing import trees as trees_lib
from keras_ordered.parsing.baselines import binarized_gold_tree

WSJ10_MAX_LENGTH = 10
"""WSJ10 keeps the sentences of at most this many words (punctuation removed)."""


def _as_tree(tree, index):
    if isinstance(tree, str):
        return trees_lib.brackets_to_tree(tree)
    if not hasattr(tree, "leaves"):
        raise ValueError(
            f"Prediction {index} is a {type(tree).__name__}; `predict` must "
            "return nltk.Tree objects (or bracketed strings), one per "
            "sentence."
        )
    return tree


def evaluate_trees(records, predicted_trees, labels=metrics.LABELS):
    """Scores given induced trees against gold sentences.

    Args:
        records: list of gold sentences (`TreebankSentence`: anything with
            `words`, `spans`, `labeled_spans` and `tree`).
        predicted_trees: list of `nltk.Tree` (or unlabeled bracketed
            strings), one per record, whose leaves are the record's words.
        labels: the gold labels whose recall is reported.

    Returns:
        The dict described in `evaluate_parsing`.
    """
    records = list(records)
    predicted_trees = list(predicted_trees)
    if len(predicted_trees) != len(records):
        raise ValueError(
            f"Got {len(predicted_trees)} predicted trees for {len(records)} "
            "sentences: `predict` must return exactly one tree per sentence."
        )
    if not records:
        raise ValueError("No sentence to evaluate: pass at least one record.")
    everything = metrics.BracketScorer(labels)
    wsj10 = metrics.BracketScorer(labels)
    depths = []
    gold_depths = []
    for index, (record, tree) in enumerate(zip(records, predicted_trees)):
        tree = _as_tree(tree, index)
        length = len(record.words)
        leaves = tree.leaves()
        if len(leaves) != length:
            raise ValueError(
                f"Predicted tree {index} has {len(leaves)} leaves but the "
                f"sentence has {length} words ({' '.join(record.words)!r}): "
                "`predict` must return one leaf per word."
            )
        predicted_spans = trees_lib.tree_to_spans(tree)
        everything.update(
            predicted_spans, record.spans, length, record.labeled_spans
        )
        if length <= WSJ10_MAX_LENGTH:
            wsj10.update(
                predicted_spans, record.spans, length, record.labeled_spans
            )
        depths.append(trees_lib.spans_depth(predicted_spans, length))
        gold_depths.append(trees_lib.spans_depth(record.spans, length))
    result = everything.result()
    result_wsj10 = wsj10.result()
    percent = lambda x: None if x is None else 100.0 * x  # noqa: E731
    return {
        "sentences": result["sentences"],
        "sentence_f1": percent(result["sentence_f1"]),
        "sentence_precision": percent(result["sentence_precision"]),
        "sentence_recall": percent(result["sentence_recall"]),
        "corpus_f1": percent(result["corpus_f1"]),
        "corpus_precision": percent(result["corpus_precision"]),
        "corpus_recall": percent(result["corpus_recall"]),
        "wsj10_sentences": result_wsj10["sentences"],
        "wsj10_sentence_f1": percent(result_wsj10["sentence_f1"]),
        "wsj10_corpus_f1": percent(result_wsj10["corpus_f1"]),
        "label_recall": {
            label: percent(value)
            for label, value in result["label_recall"].items()
        },
        "depth": float(np.mean(depths)),
        "gold_depth": float(np.mean(gold_depths)),
    }


def evaluate_parsing(records, predict, labels=metrics.LABELS):
    """Evaluates a tree predictor on gold sentences (unlabeled F1 and more).

    Protocol (see `keras_ordered.parsing.metrics` for the details):

    - `sentence_f1`: sentence-level unlabeled F1 averaged over sentences,
      without one-word spans and the whole-sentence span, gold unary chains
      collapsed; a sentence with no gold span left counts as recall 1.
      This is the measure of the PRPN and ON-LSTM papers.
    - `corpus_f1`: EVALB-style F1 from counts summed over the corpus,
      whole-sentence span included.
    - `wsj10_*`: the same on the sentences of at most 10 words after
      punctuation removal.
    - `label_recall`: for each label, the share of gold constituents of two
      words or more with that label whose span is in the induced tree.
    - `depth` / `gold_depth`: mean `tree_depth` of the induced trees and of
      the gold trees.

    Args:
        records: list of `TreebankSentence` from `load_treebank`.
        predict: function mapping a list of sentences (each a list of
            words) to a list of trees (`nltk.Tree`, leaves = the words),
            e.g. `baseline_predictor("right-branching")` or
            `distance_predictor(model)`.
        labels: the gold labels whose recall is reported.

    Returns:
        A dict with `sentences`, `sentence_f1`, `sentence_precision`,
        `sentence_recall`, `corpus_f1`, `corpus_precision`, `corpus_recall`,
        `wsj10_sentences`, `wsj10_sentence_f1`, `wsj10_corpus_f1`,
        `label_recall` (dict label -> recall, `None` when the label never
        occurs), `depth` and `gold_depth`. F1, precision and recall are
        percentages.

    Example:

    >>> from keras_ordered.datasets.treebank import load_treebank
    >>> from keras_ordered.parsing import baseline_predictor
    >>> records = load_treebank("../shared/data/wsj_sample/mrg")
    >>> scores = evaluate_parsing(records, baseline_predictor("right-branching"))
    >>> round(scores["sentence_f1"], 1)
    40.0

    Reference:
        - Shen et al., 2018, "Neural Language Modeling by Jointly Learning
          Syntax and Lexicon" (PRPN), ICLR.
        - Shen et al., 2019, "Ordered Neurons", ICLR.
        - Htut et al., 2018, "Grammar Induction with Neural Language
          Models: An Unusual Replication", EMNLP (on sentence- vs
          corpus-level F1 and the right-branching bias).
    """
    records = list(records)
    predicted = predict([list(record.words) for record in records])
    return evaluate_trees(records, predicted, labels=labels)


def evaluate_distances(records, distances, labels=metrics.LABELS,
                       decoder="right"):
    """Evaluates per-sentence syntactic distances on gold sentences.

    Each sentence's distances are turned into a tree with
    `distances_to_tree`, then scored as in `evaluate_parsing`.

    Args:
        records: list of `TreebankSentence`.
        distances: list of 1-D arrays, one per record, each with one
            distance per word.
        labels: the gold labels whose recall is reported.
        decoder: `"right"` (the published parser) or `"left"` (its mirror
            image), as `distances_to_tree`.

    Returns:
        The dict of `evaluate_parsing`.

    Example:

    >>> from keras_ordered.datasets.treebank import load_treebank
    >>> records = load_treebank("../shared/data/wsj_sample/mrg")
    >>> constant = [np.zeros(len(r.words)) for r in records]
    >>> round(evaluate_distances(records, constant)["sentence_f1"], 1)
    40.0

    (Constant distances give the right-branching trees, and with
    `decoder="left"` the left-branching ones.)
    """
    trees_lib.check_decoder(decoder)
    records = list(records)
    distances = list(distances)
    if len(distances) != len(records):
        raise ValueError(
            f"Got {len(distances)} distance arrays for {len(records)} "
            "sentences: pass one array per sentence."
        )
    predicted = [
        trees_lib.distances_to_tree(record.words, d, decoder=decoder)
        for record, d in zip(records, distances)
    ]
    return evaluate_trees(records, predicted, labels=labels)


def shift_distances(distances, shift):
    """Per-sentence distances moved by `shift` positions (a diagnostic).

    Word `i` takes the distance of word `i + shift`; positions that fall
    outside the sentence take its smallest distance (never the first
    split). A model whose distances are aligned one word late parses
    better with `shift=1` than with `shift=0`: a collapsed PRPN run does
    (benchmarks/README.md, `parsing_quality.py`).

    Args:
        distances: list of 1-D arrays, one per sentence.
        shift: int, positions to move by (0: unchanged).

    Returns:
        A list of 1-D float arrays of the same lengths.

    Example:

    >>> shift_distances([np.array([0.1, 0.9, 0.4])], 1)[0].tolist()
    [0.9, 0.4, 0.1]
    """
    shifted = []
    for d in distances:
        d = np.asarray(d, dtype="float64")
        out = np.full_like(d, d.min() if d.size else 0.0)
        n, k = len(d), int(shift)
        if abs(k) < n:
            if k >= 0:
                out[: n - k] = d[k:]
            else:
                out[-k:] = d[: n + k]
        shifted.append(out)
    return shifted


def check_distance_model(model):
    """Raises a clear error unless `model` yields syntactic distances.

    Args:
        model: any object.

    Returns:
        The list of the model's distance names.
    """
    if not callable(getattr(model, "sentence_distances", None)):
        raise ValueError(
            f"The model ({type(model).__name__}) yields no syntactic "
            "distances: it has no `sentence_distances` method. Use a model "
            "of keras_ordered that induces trees (ON-LSTM, PRPN; see "
            "keras_ordered.models.base.SyntacticDistanceMixin)."
        )
    names = list(getattr(model, "distance_names", []) or [])
    if not names:
        raise ValueError(
            f"The model ({type(model).__name__}) declares no "
            "`distance_names`, so there is no distance to parse with."
        )
    return names


def evaluate_model(records, model, names=None, batch_size=64,
                   labels=metrics.LABELS, shift=0, decoder=None):
    """Evaluates some or all distances of a distance model in one pass.

    The model reads every sentence once (`model.sentence_distances`), and
    each requested distance is scored as in `evaluate_distances`.

    Args:
        records: list of `TreebankSentence`.
        model: a model with `sentence_distances` and `distance_names`.
        names: distance names to evaluate; `None` for all of them.
        batch_size: sentences per forward pass.
        labels: the gold labels whose recall is reported.
        shift: int, score each word with the distance `shift` positions
            later (`shift_distances`; a diagnostic of misaligned runs).
        decoder: `"right"` (the published parser), `"left"` (its mirror
            image) or `"gap"`, as `distances_to_tree`; None: the model's
            own (`trees.model_decoder`).

    Returns:
        A dict name -> the dict of `evaluate_parsing`, in the order of
        `names`.
    """
    decoder = trees_lib.model_decoder(model, decoder)
    available = check_distance_model(model)
    names = available if names is None else list(names)
    for name in names:
        if name not in available:
            raise ValueError(
                f"The model has no distance {name!r}; available: "
                f"{', '.join(available)}."
            )
    trees = model_trees(records, model, names=names, batch_size=batch_size,
                        shift=shift, decoder=decoder)
    return {
        name: evaluate_trees(records, trees[name], labels=labels)
        for name in names
    }


def _reading_arguments(model, progress=None, normalized=False, names=None):
    """The optional arguments of `model.sentence_distances` that are set
    and that it takes: a model of the distance protocol may take only
    `sentences` and `batch_size`."""
    wanted = {}
    if progress is not None:
        wanted["progress"] = progress
    if normalized:
        wanted["normalized"] = True
    if names is not None:
        wanted["names"] = list(names)
    if not wanted:
        return {}
    try:
        parameters = inspect.signature(model.sentence_distances).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return wanted
    return {k: v for k, v in wanted.items() if k in parameters}


def model_distances(records, model, names=None, batch_size=64, shift=0,
                    progress=None):
    """The distances of some or all distance names of a model, in one pass.

    Args:
        records: list of `TreebankSentence` (their words are normalised:
            the model looks them up exactly, as the official evaluations
            do), or of word lists (read as written: see
            `SyntacticDistanceMixin.token_ids`).
        model: a model with `sentence_distances` and `distance_names`.
        names: distance names; `None` for all of them.
        batch_size: sentences per forward pass.
        shift: as `evaluate_model`.
        progress: optional function called with the number of sentences
            of each forward pass (see `sentence_distances`).

    Returns:
        A dict name -> list of 1-D float arrays, one per record.
    """
    available = check_distance_model(model)
    names = available if names is None else list(names)
    for name in names:
        if name not in available:
            raise ValueError(
                f"The model has no distance {name!r}; available: "
                f"{', '.join(available)}."
            )
    sentences = [
        list(r.words) if hasattr(r, "words") else list(r) for r in records
    ]
    # Treebank records hold normalised words, looked up exactly as the
    # official evaluations do; word lists are read as written.
    normalized = bool(records) and all(hasattr(r, "words") for r in records)
    distances = model.sentence_distances(
        sentences, batch_size=batch_size,
        **_reading_arguments(model, progress, normalized, names),
    )
    result = {}
    for name in names:
        values = distances[name]
        if shift:
            values = shift_distances(values, shift)
        result[name] = list(values)
    return result


def model_trees(records, model, names=None, batch_size=64, shift=0,
                progress=None, decoder=None):
    """The trees of some or all distances of a model, in one pass.

    Args:
        records: list of `TreebankSentence` (their words are normalised:
            the model looks them up exactly, as the official evaluations
            do), or of word lists (read as written: see
            `SyntacticDistanceMixin.token_ids`).
        model: a model with `sentence_distances` and `distance_names`.
        names: distance names; `None` for all of them.
        batch_size: sentences per forward pass.
        shift: as `evaluate_model`.
        progress: optional function called with the number of sentences
            of each forward pass (see `sentence_distances`).
        decoder: `"right"` (the published parser), `"left"` (its mirror
            image) or `"gap"`, as `distances_to_tree`; None: the model's
            own (`trees.model_decoder`). For several from one pass, call
            `model_distances` and `distances_to_tree` with each.

    Returns:
        A dict name -> list of `nltk.Tree`, one per record.
    """
    decoder = trees_lib.model_decoder(model, decoder)
    distances = model_distances(records, model, names=names,
                                batch_size=batch_size, shift=shift,
                                progress=progress)
    sentences = [
        list(r.words) if hasattr(r, "words") else list(r) for r in records
    ]
    return {
        name: [
            trees_lib.distances_to_tree(words, d, decoder=decoder)
            for words, d in zip(sentences, values)
        ]
        for name, values in distances.items()
    }


def distance_predictor(model, name=None, batch_size=64, progress=None,
                       decoder=None, with_distances=False):
    """A `predict` function that parses with one distance of a model.

    Args:
        model: a model with `sentence_distances`, `distance_names` and
            `default_distance` (see
            `keras_ordered.models.base.SyntacticDistanceMixin`).
        name: the distance to use (e.g. `"layer2/forget"`); `None` for the
            model's `default_distance`.
        batch_size: sentences per forward pass.
        progress: optional function called with the number of sentences
            of each forward pass (see `sentence_distances`).
        decoder: `"right"` (the published parser), `"left"` (its mirror
            image) or `"gap"`, as `distances_to_tree`; None: the model's
            own (`trees.model_decoder`).
        with_distances: whether the function returns each tree with the
            distances it was built from (to draw them, see
            `keras_ordered.parsing.drawing`).

    Returns:
        A function mapping a list of word lists to a list of `nltk.Tree`,
        or with `with_distances`, of pairs `(tree, distances)` (a float
        array, one distance per word).
    """
    decoder = trees_lib.model_decoder(model, decoder)
    available = check_distance_model(model)
    if name is None:
        name = getattr(model, "default_distance", None) or available[0]
    if name not in available:
        raise ValueError(
            f"The model has no distance {name!r}; available: "
            f"{', '.join(available)}."
        )

    def predict(sentences):
        sentences = [list(words) for words in sentences]
        distances = model.sentence_distances(
            sentences, batch_size=batch_size,
            **_reading_arguments(model, progress, names=[name]),
        )
        trees = [
            trees_lib.distances_to_tree(words, d, decoder=decoder)
            for words, d in zip(sentences, distances[name])
        ]
        if with_distances:
            return [(tree, np.asarray(d, dtype="float64"))
                    for tree, d in zip(trees, distances[name])]
        return trees

    return predict


# --- named protocols: every convention of the literature ---------------------


@dataclasses.dataclass(frozen=True)
class Protocol:
    """One way of scoring induced trees, as a paper's evaluation does it.

    Attributes:
        name: the name `evaluate-parsing --protocol` takes.
        measure: `"sentence"` (F1 per sentence, averaged) or `"corpus"`
            (one F1 from counts summed over the corpus): the headline
            figure; both are always computed.
        punctuation: `True` scores trees over every token (punctuation
            included: the model parses it and its spans count); `False`
            removes punctuation from the sentences first (by POS).
        whole_span: `True` counts the whole-sentence span.
        min_length: sentences of fewer tokens are left out.
        headline: the length bucket the paper reports (`None`: all
            lengths; 10: WSJ10).
        source: where the choices come from.
        empty_sentences: `"score"`: a sentence with no gold span to score
            has recall 1, and precision 1 when the prediction has none
            either (PRPN and ON-LSTM scripts); `"skip"`: a sentence whose
            gold or predicted span set is empty is left out of the
            sentence-level mean but kept in the corpus counts (compound
            PCFG's `eval.py`).
        unary_root_whole_span: compound PCFG's `eval.py` drops only the
            last (outermost) span of the gold list, so when the gold root
            has a single phrasal child (e.g. `(S (VP ...))` once the final
            period is gone) the child's whole-sentence span stays in the
            gold set (and is never predicted).
    """

    name: str
    measure: str
    punctuation: bool
    whole_span: bool
    min_length: int
    headline: object
    source: str
    empty_sentences: str = "score"
    unary_root_whole_span: bool = False
    scorer: str = "spans"
    evalb_params: object = None

    def choices(self):
        """The protocol's choices, one short phrase each."""
        if self.scorer == "evalb":
            params = self.evalb_params or evalb.COLLINS_PARAMS
            return [
                "corpus-level F1 by this package's EVALB (equal to evalb.c), "
                + ("labelled" if params.labeled else "unlabelled (LABELED 0)")
                + "; sentence-level F1 is the mean of its per-sentence F1",
                "punctuation kept (scored as words)" if self.punctuation
                else "punctuation removed (by POS tag) before EVALB",
                "DELETE_LABEL " + " ".join(sorted(params.delete_labels)),
                "every bracket EVALB counts: the top one (so the "
                "whole-sentence span counted), one-word brackets and each "
                "level of a gold unary chain (the predicted tree has gold "
                "POS tags and phrases labelled X)",
                "sentences of every length kept",
                "headline: " + ("all lengths" if self.headline is None
                                else f"sentences of <= {self.headline} words"),
            ]
        return [
            ("sentence-level F1 (F1 of each sentence, averaged)"
             if self.measure == "sentence"
             else "corpus-level F1 (matched/predicted/gold counts summed "
             "over the corpus)"),
            "punctuation kept (scored as words)" if self.punctuation
            else "punctuation removed (by POS tag)",
            "whole-sentence span counted" if self.whole_span
            else "whole-sentence span not counted"
            + (" (but kept in the gold set when the gold root has a single "
               "phrasal child)" if self.unary_root_whole_span else ""),
            "one-word spans not counted; gold unary chains collapsed",
            (f"sentences of fewer than {self.min_length} words left out"
             if self.min_length > 1 else "sentences of every length kept")
            + ("; a sentence with no gold span to score (<= 2 words) "
               "scores 100" if not self.whole_span and self.min_length <= 2
               and self.empty_sentences == "score"
               else "; a sentence with no gold or no predicted span left "
               "out of the sentence-level mean (kept in the corpus counts)"
               if self.empty_sentences == "skip" else ""),
            "headline: " + ("all lengths" if self.headline is None
                            else f"sentences of <= {self.headline} words "
                            "(punctuation removed)"),
        ]


PROTOCOLS = {
    "on-lstm": Protocol(
        "on-lstm", "sentence",
        punctuation=PROTOCOL_PUNCTUATION["on-lstm"], whole_span=False,
        min_length=1, headline=None,
        source="Shen et al., 2019, Ordered Neurons (ICLR): "
        "yikangshen/Ordered-Neurons test_phrase_grammar.py, functions "
        "test and get_brackets (mean of per-sentence F1, recall 1 and "
        "precision 1 for empty span sets), data_ptb.py (Corpus.tokenize, "
        "tree2list, filter_words: tokens kept by the word_tags list); WSJ "
        "test (section 23), and WSJ10 (--wsj10: <= 10 words from all WSJ "
        "sections 00-24)",
    ),
    "prpn": Protocol(
        "prpn", "sentence",
        punctuation=PROTOCOL_PUNCTUATION["prpn"], whole_span=False,
        min_length=1, headline=10,
        source="Shen et al., 2018, PRPN (ICLR): yikangshen/PRPN "
        "test_phrase_grammar.py, functions test and get_brackets (sentences "
        "of <= 10 words from all WSJ sections 00-24, mean of per-sentence "
        "F1), data_ptb.py (Corpus.tokenize, tree2list, filter_words)",
    ),
    "compound-pcfg": Protocol(
        "compound-pcfg", "sentence",
        punctuation=PROTOCOL_PUNCTUATION["compound-pcfg"], whole_span=False,
        min_length=2, headline=None,
        source="Kim, Dyer and Rush, 2019, Compound PCFGs (ACL): "
        "harvardnlp/compound-pcfg eval.py, function main (one-word "
        "sentences skipped; the last, outermost gold span dropped; a "
        "sentence with an empty gold or predicted span set left out of the "
        "sentence-level mean; corpus-level F1 from summed tp/fp/fn), "
        "utils.py (get_nonbinary_spans, get_stats), process_ptb.py "
        "(get_data_ptb: PRPN's word_tags filter; WSJ test = section 23)",
        empty_sentences="skip", unary_root_whole_span=True,
    ),
    "evalb": Protocol(
        "evalb", "corpus",
        punctuation=PROTOCOL_PUNCTUATION["evalb"], whole_span=True,
        min_length=1, headline=None,
        source="EVALB (Sekine and Collins, 1997), unlabelled: COLLINS.prm "
        "with LABELED 0 (as harvardnlp/urnng's COLLINS.prm: DELETE_LABEL "
        "TOP -NONE- , : `` '' .), run by keras_ordered.parsing.evalb (equal "
        "to evalb.c: tests/parsing/test_evalb_differential.py) on the trees with "
        "punctuation removed, the induced tree carrying the gold POS tags",
        scorer="evalb", evalb_params=evalb.EvalbParams(labeled=False),
    ),
    "sentence-punct": Protocol(
        "sentence-punct", "sentence",
        punctuation=PROTOCOL_PUNCTUATION["sentence-punct"], whole_span=False,
        min_length=1, headline=None,
        source="the sentence-level measure of on-lstm, on trees over every "
        "token (punctuation kept); no official script",
    ),
    "corpus-punct": Protocol(
        "corpus-punct", "corpus",
        punctuation=PROTOCOL_PUNCTUATION["corpus-punct"], whole_span=True,
        min_length=1, headline=None,
        source="the corpus-level span measure (the corpus-F1 column: "
        "unlabelled spans, unary chains collapsed, whole-sentence span "
        "kept) on trees over every token (punctuation kept and scored); no "
        "official script",
    ),
}
"""The named protocols of `evaluate-parsing --protocol` (docs/evaluation.md,
"Protocols")."""


def get_protocol(protocol):
    """A `Protocol` from its name (or itself); a ValueError names the choices."""
    if isinstance(protocol, Protocol):
        return protocol
    if protocol not in PROTOCOLS:
        raise ValueError(
            f"Unknown protocol {protocol!r}: choose one of "
            f"{', '.join(PROTOCOLS)}."
        )
    return PROTOCOLS[protocol]


def _percent_scores(scores):
    return {
        bucket: {
            key: (value if key == "sentences" or value is None
                  else 100.0 * value)
            for key, value in values.items()
        }
        for bucket, values in scores.items()
    }


def _checked_spans(spans, record, protocol, index):
    """A prediction given as its spans, or a one-line ValueError: EVALB
    scores trees, and the spans must fit the sentence."""
    if protocol.scorer != "spans":
        raise ValueError(
            f"Prediction {index} is a set of spans, but protocol "
            f"{protocol.name!r} scores trees with EVALB: pass trees.")
    length = len(record.words)
    if any(not 0 <= start < end <= length for start, end in spans) or (
            length > 1 and (0, length) not in spans):
        raise ValueError(
            f"Prediction {index}'s spans are not those of a tree over the "
            f"sentence's {length} words (every span inside (0, {length}), "
            "the whole span among them).")
    return spans


def evaluate_protocol(records, predicted_trees, protocol,
                      bucket_lengths=None, buckets=metrics.LENGTH_BUCKETS):
    """Scores induced trees under one protocol, by sentence length.

    Args:
        records: gold `TreebankSentence`s, with punctuation when the
            protocol keeps it (`load_treebank_split(..., punctuation=True)`
            gives both versions).
        predicted_trees: one tree (`nltk.Tree` or bracketed string) per
            record, over the record's words; or, for a protocol scored on
            spans (not EVALB), the tree's spans as `trees.tree_to_spans`
            gives them (a `set` or `frozenset` of `(start, end)`, which
            holds the whole sentence's span when it has two words or more:
            `baseline_predictor(..., spans=True)` gives them).
        protocol: a `Protocol` or the name of one of `PROTOCOLS`.
        bucket_lengths: the number of words of each sentence without
            punctuation (default: the records' lengths), which decides its
            length bucket.
        buckets: maximum lengths (`None`: all).

    Returns:
        A dict bucket (`"<=10"`, `"<=20"`, `"<=40"`, `"all"`) -> dict with
        `sentences`, `sentence_f1`, `sentence_precision`, `sentence_recall`,
        `corpus_f1`, `corpus_precision`, `corpus_recall` (percentages).

    Example:

    >>> from keras_ordered.datasets.treebank import make_sentence
    >>> import nltk
    >>> gold = make_sentence(nltk.Tree.fromstring(
    ...     "(S (NP (DT the) (NN cat)) (VP (VBD sat)))"))
    >>> scores = evaluate_protocol([gold], ["((the cat) sat)"], "on-lstm")
    >>> scores["all"]["sentence_f1"]
    100.0
    """
    protocol = get_protocol(protocol)
    records = list(records)
    predicted_trees = list(predicted_trees)
    if len(predicted_trees) != len(records):
        raise ValueError(
            f"Got {len(predicted_trees)} predicted trees for {len(records)} "
            "sentences."
        )
    predicted, lengths = [], []
    for index, (record, tree) in enumerate(zip(records, predicted_trees)):
        if isinstance(tree, (set, frozenset)):
            predicted.append(_checked_spans(tree, record, protocol, index))
            lengths.append(len(record.words))
            continue
        tree = _as_tree(tree, index)
        if len(tree.leaves()) != len(record.words):
            raise ValueError(
                f"Predicted tree {index} has {len(tree.leaves())} leaves but "
                f"the sentence has {len(record.words)} words."
            )
        predicted.append(trees_lib.tree_to_spans(tree)
                         if protocol.scorer == "spans" else tree)
        lengths.append(len(record.words))
    if protocol.scorer == "evalb":
        return _percent_scores(_evalb_scores(
            records, predicted, protocol, bucket_lengths, buckets))
    gold = [r.spans for r in records]
    whole_span = protocol.whole_span
    if protocol.unary_root_whole_span and not whole_span:
        # The whole span is removed here, and kept in the gold set of a
        # sentence whose root has a single phrasal child.
        predicted = [metrics.protocol_spans(p, n, False)
                     for p, n in zip(predicted, lengths)]
        gold = [
            metrics.protocol_spans(g, n, _unary_root(r.tree))
            for g, n, r in zip(gold, lengths, records)
        ]
        whole_span = True
    scores = metrics.protocol_scores(
        predicted, gold, lengths,
        whole_span=whole_span, min_length=protocol.min_length,
        bucket_lengths=bucket_lengths, buckets=buckets,
    )
    if protocol.empty_sentences == "skip":
        sizes = list(lengths if bucket_lengths is None else bucket_lengths)
        keep = [
            i for i, n in enumerate(lengths)
            if metrics.protocol_spans(predicted[i], n, whole_span)
            and metrics.protocol_spans(gold[i], n, whole_span)
        ]
        kept = metrics.protocol_scores(
            [predicted[i] for i in keep], [gold[i] for i in keep],
            [lengths[i] for i in keep], whole_span=whole_span,
            min_length=protocol.min_length,
            bucket_lengths=[sizes[i] for i in keep], buckets=buckets,
        )
        for bucket, values in scores.items():
            for key in ("sentence_precision", "sentence_recall",
                        "sentence_f1"):
                values[key] = kept[bucket][key]
    return _percent_scores(scores)


def _tagged(tree, tags):
    """`tree` (over the words) as the bracketed line EVALB reads for a test
    tree: `tags` as preterminals, every phrase labelled `X`; built without
    recursion (`trees_lib.fold_tree`), so any depth works."""
    position = iter(tags)
    text = trees_lib.fold_tree(
        tree,
        leaf=lambda word: f"({next(position)} {word})",
        branch=lambda node, children: "(X " + " ".join(children) + ")",
    )
    return text if isinstance(tree, nltk.Tree) else f"(X {text})"


def _evalb_scores(records, predicted_trees, protocol, bucket_lengths, buckets):
    """`metrics.protocol_scores`' dict, each sentence scored by EVALB."""
    params = protocol.evalb_params or evalb.COLLINS_PARAMS
    gold = [r.tree for r in records]
    test = [_tagged(tree, [tag for _, tag in r.tree.pos()])
            for tree, r in zip(predicted_trees, records)]
    rows = evalb.evaluate_trees(gold, test, params).sentences
    for row, record in zip(rows, records):
        if row.status != evalb.STATUS_OK:
            raise ValueError(
                f"EVALB could not score sentence {row.id} ({record.file_id} "
                f"#{record.index}): {row.reason}"
            )
    sizes = list(bucket_lengths if bucket_lengths is not None
                 else [len(r.words) for r in records])
    result = {}
    for bucket in buckets:
        kept = [row for row, size in zip(rows, sizes)
                if bucket is None or size <= bucket]
        if not kept:
            result[metrics.bucket_name(bucket)] = {"sentences": 0, **dict.fromkeys(
                ("sentence_precision", "sentence_recall", "sentence_f1",
                 "corpus_precision", "corpus_recall", "corpus_f1"))}
            continue
        summary = evalb.summarize(kept)
        sentence = [(row.precision / 100, row.recall / 100) for row in kept]
        result[metrics.bucket_name(bucket)] = {
            "sentences": len(kept),
            "sentence_precision": float(np.mean([p for p, _ in sentence])),
            "sentence_recall": float(np.mean([r for _, r in sentence])),
            "sentence_f1": float(np.mean(
                [2 * p * r / (p + r) if p + r else 0.0 for p, r in sentence])),
            "corpus_precision": summary.precision / 100,
            "corpus_recall": summary.recall / 100,
            "corpus_f1": summary.f_measure / 100,
        }
    return result


def _unary_root(tree):
    """Whether a gold tree's root (below an unlabelled top node, which
    NLTK's PTB reader strips) has a single child that is a phrase."""
    while (isinstance(tree, nltk.Tree) and tree.label() in ("", "ROOT", "TOP")
           and len(tree) == 1 and isinstance(tree[0], nltk.Tree)):
        tree = tree[0]
    return (isinstance(tree, nltk.Tree) and len(tree) == 1
            and isinstance(tree[0], nltk.Tree) and tree[0].height() > 2)


def headline(scores, protocol):
    """The figure a paper using `protocol` reports, from `evaluate_protocol`'s
    scores (a percentage, or `None` for an empty bucket)."""
    protocol = get_protocol(protocol)
    bucket = metrics.bucket_name(protocol.headline)
    return scores[bucket][f"{protocol.measure}_f1"]


def binarized_gold_trees(records):
    """The binarized gold tree of each record (`binarized_gold_tree`): the
    best a binary tree can score."""
    return [binarized_gold_tree(record.tree) for record in records]


def mean_std_max(values):
    """`{"mean", "std", "max"}` of numbers (`None`s ignored; sample standard
    deviation, n - 1, 0 for a single value; all `None` for no value).

    Example:

    >>> mean_std_max([1.0, 2.0, 3.0])
    {'mean': 2.0, 'std': 1.0, 'max': 3.0}
    """
    values = [float(v) for v in values if v is not None]
    if not values:
        return {"mean": None, "std": None, "max": None}
    array = np.asarray(values)
    return {
        "mean": float(array.mean()),
        "std": float(array.std(ddof=1)) if len(values) > 1 else 0.0,
        "max": float(array.max()),
    }


def summarize_runs(runs, keys=("sentence_f1", "corpus_f1",
                               "wsj10_sentence_f1")):
    """Mean, standard deviation and maximum of metrics over runs (seeds).

    Args:
        runs: list of dicts of `evaluate_parsing` (one per run).
        keys: the metrics to summarise.

    Returns:
        A dict key -> `mean_std_max`.
    """
    return {key: mean_std_max([run.get(key) for run in runs]) for key in keys}


def trees_self_f1(runs):
    """Self-F1 (percent) of several runs' trees over the same sentences:
    `keras_ordered.parsing.metrics.self_f1` on their spans.

    Args:
        runs: list of runs, each a list of trees (one per sentence).

    Returns:
        A percentage, or `None` with fewer than two runs.

    Example:

    >>> round(trees_self_f1([["(a (b c))"], ["(a (b c))"], ["((a b) c)"]]), 1)
    33.3
    """
    runs = [[_as_tree(t, i) for i, t in enumerate(run)] for run in runs]
    if len(runs) < 2:
        return None
    lengths = [len(tree.leaves()) for tree in runs[0]]
    spans = [[trees_lib.tree_to_spans(tree) for tree in run] for run in runs]
    value = metrics.self_f1(spans, lengths)
    return None if value is None else 100.0 * value
