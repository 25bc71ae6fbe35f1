"""Sentences in, labelled trees out: the GFL parser's text path.

One path for the recipe (validation EVALB every epoch, the final test
evaluation), the `keras-ordered parse` / `evaluate` commands and the speed
benchmark: the words of each sentence are reversed and looked up in the
parser's `SourceVocabulary`, sentences are decoded in batches of similar
length (greedy or beam search, one loop per batch, on any Keras
backend), the symbols are turned back into trees with
`keras_ordered.parsing.linearize.delinearize` (which repairs malformed
outputs and counts the repairs), and the trees come back in the input
order.

Reference:
    Vinyals, Kaiser, Koo, Petrov, Sutskever & Hinton, 2015, "Grammar as a
    Foreign Language", NeurIPS.
"""

import dataclasses
import time

import numpy as np

from keras_ordered.layers._checks import check_positive_int
from keras_ordered._tokens import check_token_lists
from keras_ordered.parsing import linearize


@dataclasses.dataclass
class ParseResult:
    """What `parse_sentences` returns.

    Attributes:
        trees: list of `nltk.Tree`, one per sentence, in the input order.
        repairs: list of `keras_ordered.parsing.linearize.Repairs`.
        symbols: list of the decoded symbol lists (before repair).
        seconds: wall-clock time of decoding and tree building (the
            first trace of the decoding function excluded when
            `warm_up=True`).
        attention: list of float arrays `(symbols, words)` (greedy
            decoding with `keep_attention=True` only; columns in reading
            order), else None.
    """

    trees: list
    repairs: list
    symbols: list
    seconds: float
    attention: list = None

    @property
    def malformed_rate(self):
        """The fraction of outputs that needed a repair."""
        return linearize.malformed_rate(self.repairs)

    @property
    def sentences_per_second(self):
        """Parsing speed: sentences over `seconds`."""
        return len(self.trees) / self.seconds if self.seconds > 0 else float("inf")


def _check_sentences(sentences, tags):
    sentences = check_token_lists(sentences)
    if not sentences:
        raise ValueError("No sentence to parse: pass at least one sentence.")
    for number, sentence in enumerate(sentences, start=1):
        if not sentence:
            raise ValueError(
                f"Sentence {number} is empty: give each sentence one word "
                "or more."
            )
        if isinstance(sentence[0], (list, tuple)):
            raise ValueError(
                f"Sentence {number} is a list of lists: pass one list of "
                "word strings per sentence."
            )
    if tags is not None:
        tags = [list(t) for t in tags]
        if len(tags) != len(sentences):
            raise ValueError(
                f"Got {len(sentences)} sentences but {len(tags)} tag lists: "
                "pass one tag list per sentence, or tags=None (XX)."
            )
    return sentences, tags


def _decode(model, source_ids, beam_size, factor, offset):
    if beam_size is None:
        return model.greedy_decode(
            source_ids, max_length_factor=factor, max_length_offset=offset
        )
    return model.beam_decode(
        source_ids, beam_size=beam_size, max_length_factor=factor,
        max_length_offset=offset,
    )


def parse_sentences(
    model,
    sentences,
    tags=None,
    beam_size=None,
    batch_size=64,
    max_length_factor=3,
    max_length_offset=10,
    warm_up=False,
    keep_attention=False,
    progress=None,
):
    """Parses tokenized sentences with a `GFLParser`.

    Args:
        model: a `keras_ordered.models.GFLParser` that knows its
            vocabularies (built with them, or loaded from a `.keras` file).
        sentences: list of lists of words, in reading order (the parser
            reverses them itself), spelled as in the training trees
            (Treebank tokens: `-LRB-` for `(`).
        tags: optional list of POS tag lists (one per word) to put in the
            trees (e.g. the gold tags, as the evaluation does); None gives
            `XX` for every tag.
        beam_size: None for greedy decoding, else the beam's size (the
            paper's 10; 1 equals greedy decoding).
        batch_size: int, sentences decoded together (sentences are sorted
            by length first, so a batch holds sentences of similar length).
        max_length_factor, max_length_offset: at most `factor * n + offset`
            symbols for a sentence of `n` words.
        warm_up: bool, decode one short sentence before starting the clock
            (on TensorFlow the first call traces the decoding
            `tf.function`).
        keep_attention: bool, keep the attention weights (greedy only).
        progress: optional function called after each batch with the
            number of sentences it decoded (e.g. a progress bar's
            `update`).

    Returns:
        A `ParseResult`.

    Example:

    ```python
    import keras_ordered
    from keras_ordered.models.gfl import SourceVocabulary, TargetVocabulary
    from keras_ordered.models.gfl.inference import parse_sentences
    source = SourceVocabulary(["John", "has", "a", "dog"])
    target = TargetVocabulary(["(S", ")S", "(NP", ")NP", "XX"])
    parser = keras_ordered.models.GFLParser.from_preset("tiny", source, target)
    result = parse_sentences(parser, [["John", "has", "a", "dog"]])
    print(result.trees[0], result.malformed_rate)  # an untrained parser's tree
    ```
    """
    if model.source_vocabulary is None or model.target_vocabulary is None:
        raise ValueError(
            "The parser knows only its vocabularies' sizes: build it with "
            "a SourceVocabulary and a TargetVocabulary, or load it from "
            "its .keras file."
        )
    if beam_size is not None and (
        isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer))
        or beam_size < 1
    ):
        raise ValueError(
            "`beam_size` must be None (greedy) or a positive integer. "
            f"Received: {beam_size!r}"
        )
    check_positive_int("batch_size", batch_size)
    if keep_attention and beam_size is not None:
        raise ValueError("`keep_attention` needs greedy decoding (beam_size=None).")
    sentences, tags = _check_sentences(sentences, tags)
    beam_size = None if beam_size is None else int(beam_size)
    vocabulary = model.source_vocabulary
    if warm_up:
        _decode(model, vocabulary.encode_batch([sentences[0][:1]]), beam_size,
                max_length_factor, max_length_offset)
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    symbols = [None] * len(sentences)
    attention = [None] * len(sentences) if keep_attention else None
    started = time.perf_counter()
    for first in range(0, len(order), batch_size):
        indices = order[first:first + batch_size]
        source_ids = vocabulary.encode_batch([sentences[i][::-1] for i in indices])
        result = _decode(model, source_ids, beam_size, max_length_factor,
                         max_length_offset)
        decoded = model.symbols(result["tokens"])
        for row, index in enumerate(indices):
            symbols[index] = decoded[row]
            if keep_attention:
                n = len(sentences[index])
                weights = result["attention"][row, : len(decoded[row]), :n]
                attention[index] = weights[:, ::-1]  # reading order
        if progress is not None:
            progress(len(indices))
    trees, repairs = [], []
    for index, sentence in enumerate(sentences):
        tree, repair = linearize.delinearize(
            symbols[index], sentence, None if tags is None else tags[index]
        )
        trees.append(tree)
        repairs.append(repair)
    seconds = time.perf_counter() - started
    return ParseResult(trees, repairs, symbols, seconds, attention)


def evaluate_parser(model, gold_trees, beam_size=None, batch_size=64,
                    params=None, warm_up=True, **decoding):
    """EVALB scores of a `GFLParser`'s parses of gold trees.

    The parser reads each gold tree's words; its trees get the gold POS
    tags (the paper's parser takes tags from a tagger; EVALB scores the
    brackets, and the tagging accuracy it reports is then 100%).

    Args:
        model: a `GFLParser`.
        gold_trees: list of `nltk.Tree`, cleaned
            (`keras_ordered.parsing.linearize.clean_tree`).
        beam_size, batch_size, warm_up, **decoding: as `parse_sentences`
            (`progress` among them).
        params: EVALB parameters (`None`: `COLLINS.prm`'s).

    Returns:
        `(evalb_result, parse_result)`: a
        `keras_ordered.parsing.evalb.EvalbResult` and the `ParseResult`.
    """
    from keras_ordered.parsing import evalb

    gold_trees = list(gold_trees)
    if not gold_trees:
        raise ValueError("No gold tree to evaluate on.")
    words = [tree.leaves() for tree in gold_trees]
    tags = [[tag for _, tag in tree.pos()] for tree in gold_trees]
    parsed = parse_sentences(model, words, tags=tags, beam_size=beam_size,
                             batch_size=batch_size, warm_up=warm_up, **decoding)
    result = evalb.evaluate_trees(gold_trees, parsed.trees, params)
    return result, parsed


def scores(evalb_result, parse_result):
    """The figures a run reports, as a plain dict (results.json)."""
    summary, cutoff = evalb_result.summary, evalb_result.cutoff_summary
    return {
        "sentences": summary.sentences,
        "evalb_f1": round(summary.f_measure, 2),
        "evalb_recall": round(summary.recall, 2),
        "evalb_precision": round(summary.precision, 2),
        "complete_match": round(summary.complete_match, 2),
        f"sentences_len_le_{evalb_result.params.cutoff_len}": cutoff.sentences,
        f"evalb_f1_len_le_{evalb_result.params.cutoff_len}": round(
            cutoff.f_measure, 2),
        "error_sentences": summary.error_sentences,
        "malformed_rate": round(parse_result.malformed_rate, 4),
        "malformed_sentences": sum(r.malformed for r in parse_result.repairs),
        "seconds": round(parse_result.seconds, 3),
        "sentences_per_second": round(parse_result.sentences_per_second, 1),
    }
