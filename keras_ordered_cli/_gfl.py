"""What `keras-ordered parse` and `evaluate` do with a GFL parser.

Standard library only at import time (see `keras_ordered_cli`); the
functions import the model code when they run.
"""

import sys

from keras_ordered_cli import _common
from keras_ordered_cli._common import CommandError


def is_gfl_parser(model):
    """Whether `model` is a `keras_ordered.models.GFLParser`.

    Imports nothing: a GFL parser was loaded only if its module is.
    """
    module = sys.modules.get("keras_ordered.models.gfl.gfl_parser")
    return module is not None and isinstance(model, module.GFLParser)


def decoding_name(beam_size):
    return "greedy decoding" if beam_size is None else f"beam search, beam {beam_size}"


def parse(model, sentences, *, model_name, beam_size=None, batch_size=64,
          layer=None, distance=None):
    """The labelled tree of each tokenized sentence, as bracketed strings.

    The words are read as the Treebank writes them (`(` as `-LRB-`), and
    every POS tag is `XX`: the parser predicts the constituents, not the
    tags (Vinyals et al. replace every tag by XX).

    Args:
        model: a `keras_ordered.models.GFLParser`.
        sentences: list of token lists.
        model_name: what to call the model in messages (`--model`).
        beam_size: int or None, `--beam-size` (None: greedy decoding).
        batch_size: int, `--batch-size`.
        layer, distance: `--layer` and `--distance`, refused when given
            (a GFL parser has no distances).

    Returns:
        A list of bracketed strings, one per sentence.

    Raises:
        CommandError: `--layer` or `--distance` given, or a sentence the
            parser refuses (one line).
    """
    if layer is not None or distance is not None:
        raise CommandError(
            "--layer and --distance pick a distance of a language model; "
            f"{model_name} is a GFL parser, which has none."
        )
    from keras_ordered.models.gfl.inference import parse_sentences

    words = [[_common.escape(w) for w in tokens] for tokens in sentences]
    try:
        with _common.progress_bar(len(words), "parsing") as bar:
            result = parse_sentences(model, words, beam_size=beam_size,
                                     batch_size=batch_size,
                                     progress=bar.update)
    except ValueError as error:
        raise CommandError(str(error)) from None
    malformed = sum(r.malformed for r in result.repairs)
    _common.note(
        f"parsed with the GFL parser ({decoding_name(beam_size)}); POS "
        f"tags shown as XX; {malformed} of {len(words)} output(s) repaired"
    )
    return [tree.pformat(margin=sys.maxsize) for tree in result.trees]
