"""Unlabeled bracketing scores of induced trees against gold trees.

Two F1 measures are in use in the unsupervised-parsing literature, and they
are often mixed up; this module computes both, on span sets:

- **sentence-level F1** (PRPN, ON-LSTM, Htut et al. 2018): an F1 per
  sentence, averaged over sentences. Spans of one word and the
  whole-sentence span are left out (both are trivially right), gold unary
  chains are collapsed (spans as a set). A sentence whose gold tree has no
  span left counts as recall 1, and as precision 1 if the prediction has
  none either.
- **corpus-level F1** (EVALB style): the counts of matched, predicted and
  gold spans are summed over the corpus, then turned into one precision,
  recall and F1. Spans of one word are left out, the whole-sentence span is
  kept. Spans are sets here too (unlabeled unary chains collapsed).

All scores here are fractions in [0, 1]; `keras_ordered.parsing.evaluate`
reports percentages.
"""

import collections

LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP")
"""Constituent labels whose recall the evaluation reports."""


def _prf(matched, predicted, gold):
    precision = matched / predicted if predicted else 0.0
    recall = matched / gold if gold else 0.0
    f1 = (
        2.0 * precision * recall / (precision + recall)
        if precision + recall > 0
        else 0.0
    )
    return precision, recall, f1


def sentence_scores(predicted_spans, gold_spans):
    """Precision, recall and F1 of one sentence (sentence-level protocol).

    The caller passes the spans already filtered (no one-word spans, no
    whole-sentence span: see `sentence_spans`). A gold set without any span
    gives recall 1 and, when the prediction is empty as well, precision 1.

    Args:
        predicted_spans: iterable of `(start, end)` spans of the induced
            tree.
        gold_spans: iterable of `(start, end)` spans of the gold tree.

    Returns:
        A tuple `(precision, recall, f1)` of floats in [0, 1]; F1 is 0 when
        precision and recall are both 0.

    Example:

    >>> sentence_scores({(0, 2), (2, 4)}, {(0, 2), (1, 4)})
    (0.5, 0.5, 0.5)

    Reference:
        Shen et al., 2019, "Ordered Neurons", ICLR (evaluation code of
        the paper, `test_phrase_grammar.py`).
    """
    predicted_spans = set(predicted_spans)
    gold_spans = set(gold_spans)
    matched = len(predicted_spans & gold_spans)
    precision, recall, f1 = _prf(matched, len(predicted_spans), len(gold_spans))
    if not gold_spans:
        recall = 1.0
        if not predicted_spans:
            precision = 1.0
        f1 = (
            2.0 * precision * recall / (precision + recall)
            if precision + recall > 0
            else 0.0
        )
    return precision, recall, f1


def sentence_spans(spans, length):
    """Keeps the spans the sentence-level F1 scores.

    Args:
        spans: iterable of `(start, end)` spans over `length` words.
        length: number of words of the sentence.

    Returns:
        A set without one-word spans and without the whole-sentence span.
    """
    return {
        (start, end)
        for start, end in spans
        if end - start > 1 and (start, end) != (0, length)
    }


def corpus_spans(spans):
    """Keeps the spans the corpus-level (EVALB-style) F1 scores.

    Args:
        spans: iterable of `(start, end)` spans.

    Returns:
        A set without one-word spans (the whole-sentence span is kept).
    """
    return {(start, end) for start, end in spans if end - start > 1}


class BracketScorer:
    """Accumulates both unlabeled F1 measures and per-label recall.

    Feed it one sentence at a time with `update`, then read `result()`.

    Args:
        labels: the gold labels whose recall is tracked.

    Example:

    >>> scorer = BracketScorer()
    >>> scorer.update(predicted_spans={(0, 3), (1, 3)},
    ...               gold_spans={(0, 3), (0, 2)}, length=3)
    (0.0, 0.0, 0.0)
    >>> round(scorer.result()["sentence_f1"], 3)
    0.0
    >>> round(scorer.result()["corpus_f1"], 3)
    0.5
    """

    def __init__(self, labels=LABELS):
        self.labels = tuple(labels)
        self.reset()

    def reset(self):
        """Forgets every sentence seen so far."""
        self.sentences = 0
        self.sum_precision = 0.0
        self.sum_recall = 0.0
        self.sum_f1 = 0.0
        self.matched = 0
        self.predicted = 0
        self.gold = 0
        self.label_found = collections.Counter()
        self.label_total = collections.Counter()

    def update(self, predicted_spans, gold_spans, length, labeled_spans=()):
        """Scores one sentence.

        Args:
            predicted_spans: spans `(start, end)` of the induced tree (any
                superset: one-word and whole spans are filtered here).
            gold_spans: spans of the gold tree, likewise.
            length: number of words of the sentence.
            labeled_spans: gold `(label, start, end)` triples for per-label
                recall; a labeled span counts as found when its
                `(start, end)` is among the predicted spans (whole-sentence
                span included, as an induced tree always has it).

        Returns:
            The sentence's `(precision, recall, f1)`.
        """
        predicted_spans = set(predicted_spans)
        gold_spans = set(gold_spans)
        scores = sentence_scores(
            sentence_spans(predicted_spans, length),
            sentence_spans(gold_spans, length),
        )
        self.sentences += 1
        self.sum_precision += scores[0]
        self.sum_recall += scores[1]
        self.sum_f1 += scores[2]

        predicted_corpus = corpus_spans(predicted_spans)
        gold_corpus = corpus_spans(gold_spans)
        self.matched += len(predicted_corpus & gold_corpus)
        self.predicted += len(predicted_corpus)
        self.gold += len(gold_corpus)

        for label, start, end in set(labeled_spans):
            if label in self.labels and end - start > 1:
                self.label_total[label] += 1
                if (start, end) in predicted_corpus:
                    self.label_found[label] += 1
        return scores

    def result(self):
        """The scores so far, as fractions in [0, 1].

        Returns:
            A dict with `sentences`, `sentence_precision`, `sentence_recall`,
            `sentence_f1` (means over sentences), `corpus_precision`,
            `corpus_recall`, `corpus_f1` (from summed counts), and
            `label_recall` (dict label -> recall, `None` for a label never
            seen in the gold trees).
        """
        n = self.sentences
        corpus_precision, corpus_recall, corpus_f1 = _prf(
            self.matched, self.predicted, self.gold
        )
        return {
            "sentences": n,
            "sentence_precision": self.sum_precision / n if n else 0.0,
            "sentence_recall": self.sum_recall / n if n else 0.0,
            "sentence_f1": self.sum_f1 / n if n else 0.0,
            "corpus_precision": corpus_precision,
            "corpus_recall": corpus_recall,
            "corpus_f1": corpus_f1,
            "label_recall": {
                label: (
                    self.label_found[label] / self.label_total[label]
                    if self.label_total[label]
                    else None
                )
                for label in self.labels
            },
        }


def corpus_f1(predicted, gold):
    """Corpus-level (EVALB-style) unlabeled precision, recall and F1.

    Args:
        predicted: list of span sets, one per sentence.
        gold: list of span sets, one per sentence.

    Returns:
        A tuple `(precision, recall, f1)` of floats in [0, 1].

    Example:

    >>> corpus_f1([{(0, 3), (1, 3)}], [{(0, 3), (0, 2)}])
    (0.5, 0.5, 0.5)

    Reference:
        Sekine and Collins, 1997, EVALB.
    """
    if len(predicted) != len(gold):
        raise ValueError(
            f"Got {len(predicted)} predicted span sets but {len(gold)} gold "
            "ones: pass one of each per sentence."
        )
    matched = total_predicted = total_gold = 0
    for p, g in zip(predicted, gold):
        p, g = corpus_spans(p), corpus_spans(g)
        matched += len(p & g)
        total_predicted += len(p)
        total_gold += len(g)
    return _prf(matched, total_predicted, total_gold)


def sentence_f1(predicted, gold, lengths):
    """Sentence-level unlabeled F1, averaged over sentences.

    Args:
        predicted: list of span sets, one per sentence.
        gold: list of span sets, one per sentence.
        lengths: list of sentence lengths (number of words).

    Returns:
        The mean F1, a float in [0, 1] (0 for no sentence).

    Example:

    >>> sentence_f1([{(0, 3), (1, 3)}], [{(0, 3), (0, 2)}], [3])
    0.0
    """
    if not len(predicted) == len(gold) == len(lengths):
        raise ValueError(
            f"Got {len(predicted)} predicted span sets, {len(gold)} gold "
            f"ones and {len(lengths)} lengths: pass one of each per sentence."
        )
    if not lengths:
        return 0.0
    total = 0.0
    for p, g, n in zip(predicted, gold, lengths):
        total += sentence_scores(sentence_spans(p, n), sentence_spans(g, n))[2]
    return total / len(lengths)


def self_f1(runs, lengths):
    """Agreement between the trees of several runs: mean pairwise F1.

    The "self-F1" of the unsupervised-parsing literature (Williams et al.,
    2018; Kim et al., 2019): for every pair of runs (e.g. seeds), the
    sentence-level F1 of one run's trees against the other's (the measure
    is symmetric), averaged over the pairs. 100 % means that every run
    induces the same trees.

    Args:
        runs: list of runs, each a list of span sets, one per sentence, all
            over the same sentences.
        lengths: list of sentence lengths (number of words).

    Returns:
        A float in [0, 1]; None with fewer than two runs.

    Example:

    >>> self_f1([[{(0, 2)}], [{(0, 2)}], [{(1, 3)}]], [3])
    0.3333333333333333

    Reference:
        Williams, Drozdov, Bowman, 2018, "Do latent tree learning models
        identify meaningful structure in sentences?", TACL.
    """
    runs = [list(run) for run in runs]
    if len(runs) < 2:
        return None
    pairs = [
        sentence_f1(runs[a], runs[b], lengths)
        for a in range(len(runs)) for b in range(a + 1, len(runs))
    ]
    return sum(pairs) / len(pairs)


# --- the conventions of the literature, side by side ---------------------------

LENGTH_BUCKETS = (10, 20, 40, None)
"""Sentence-length buckets of the protocol scores (`None`: all lengths);
lengths are counted in words, punctuation removed."""


def bucket_name(max_length):
    """`"<=10"` for 10, `"all"` for `None`."""
    return "all" if max_length is None else f"<={max_length}"


def protocol_spans(spans, length, whole_span):
    """The spans a protocol scores: no one-word spans; the whole-sentence
    span only when `whole_span` is true.

    Example:

    >>> sorted(protocol_spans({(0, 3), (0, 2), (1, 2)}, 3, whole_span=False))
    [(0, 2)]
    """
    return {
        (start, end) for start, end in spans
        if end - start > 1 and (whole_span or (start, end) != (0, length))
    }


def protocol_scores(predicted, gold, lengths, whole_span=False, min_length=1,
                    bucket_lengths=None, buckets=LENGTH_BUCKETS):
    """Sentence-level and corpus-level F1 under one set of choices, by length.

    Each sentence is scored on the spans of `protocol_spans` (so one-word
    spans never count; the whole-sentence span counts only with
    `whole_span`). The sentence-level F1 is the mean over sentences of
    `sentence_scores` (a sentence with no gold span to score has recall 1,
    and precision 1 when the prediction has none either: with the whole
    span left out, every sentence of one or two words scores 100);
    the corpus-level F1 is from the counts summed over the sentences.

    Args:
        predicted: list of span sets, one per sentence.
        gold: list of span sets, one per sentence.
        lengths: number of tokens of each sentence (the trees' leaves).
        whole_span: bool, keep the whole-sentence span.
        min_length: sentences of fewer tokens are left out (2: no
            one-word sentence, as compound PCFG's evaluation).
        bucket_lengths: the lengths that decide the buckets (default
            `lengths`; pass the lengths without punctuation to bucket
            sentences scored with punctuation as WSJ10 does).
        buckets: maximum lengths (`None`: all).

    Returns:
        A dict bucket name (`bucket_name`) -> dict with `sentences`,
        `sentence_precision`, `sentence_recall`, `sentence_f1`,
        `corpus_precision`, `corpus_recall`, `corpus_f1` (fractions in
        [0, 1]; `None` for an empty bucket).

    Example:

    >>> scores = protocol_scores([{(0, 2), (0, 3)}], [{(1, 3), (0, 3)}], [3])
    >>> scores["all"]["sentence_f1"], scores["all"]["corpus_f1"]
    (0.0, 0.0)
    >>> protocol_scores([{(0, 2), (0, 3)}], [{(1, 3), (0, 3)}], [3],
    ...                 whole_span=True)["all"]["sentence_f1"]
    0.5
    """
    if not len(predicted) == len(gold) == len(lengths):
        raise ValueError(
            f"Got {len(predicted)} predicted span sets, {len(gold)} gold "
            f"ones and {len(lengths)} lengths: pass one of each per sentence."
        )
    bucket_lengths = list(lengths if bucket_lengths is None else bucket_lengths)
    totals = {
        bucket_name(b): dict(n=0, p=0.0, r=0.0, f=0.0, m=0, np=0, ng=0)
        for b in buckets
    }
    for p, g, n, size in zip(predicted, gold, lengths, bucket_lengths):
        if n < min_length:
            continue
        p = protocol_spans(p, n, whole_span)
        g = protocol_spans(g, n, whole_span)
        precision, recall, f1 = sentence_scores(p, g)
        matched = len(p & g)
        for b in buckets:
            if b is not None and size > b:
                continue
            t = totals[bucket_name(b)]
            t["n"] += 1
            t["p"] += precision
            t["r"] += recall
            t["f"] += f1
            t["m"] += matched
            t["np"] += len(p)
            t["ng"] += len(g)
    result = {}
    for name, t in totals.items():
        if not t["n"]:
            result[name] = {
                "sentences": 0, "sentence_precision": None,
                "sentence_recall": None, "sentence_f1": None,
                "corpus_precision": None, "corpus_recall": None,
                "corpus_f1": None,
            }
            continue
        cp, cr, cf = _prf(t["m"], t["np"], t["ng"])
        result[name] = {
            "sentences": t["n"],
            "sentence_precision": t["p"] / t["n"],
            "sentence_recall": t["r"] / t["n"],
            "sentence_f1": t["f"] / t["n"],
            "corpus_precision": cp,
            "corpus_recall": cr,
            "corpus_f1": cf,
        }
    return result
