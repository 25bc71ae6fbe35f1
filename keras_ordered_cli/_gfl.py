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


def parse(model, sentences, args):
    """The labelled tree of each tokenized sentence, as bracketed strings.

    The words are read as the Treebank writes them (`(` as `-LRB-`), and
    every POS tag is `XX`: the parser predicts the constituents, not the
    tags (Vinyals et al. replace every tag by XX).
    """
    if args.layer is not None or args.distance is not None:
        raise CommandError(
            "--layer and --distance pick a distance of a language model; "
            f"{args.model} is a GFL parser, which has none."
        )
    from keras_ordered.models.gfl.inference import parse_sentences

    words = [[_common.escape(w) for w in tokens] for tokens in sentences]
    try:
        with _common.progress_bar(len(words), "parsing") as bar:
            result = parse_sentences(model, words, beam_size=args.beam_size,
                                     batch_size=args.batch_size,
                                     progress=bar.update)
    except ValueError as error:
        raise CommandError(str(error)) from None
    malformed = sum(r.malformed for r in result.repairs)
    _common.note(
        f"parsed with the GFL parser ({decoding_name(args.beam_size)}); POS "
        f"tags shown as XX; {malformed} of {len(words)} output(s) repaired"
    )
    return [tree.pformat(margin=sys.maxsize) for tree in result.trees]
