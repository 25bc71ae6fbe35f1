"""Linearized constituency trees for sequence-to-sequence parsing.

The target side of "Grammar as a Foreign Language" (Vinyals et al., 2015,
Figure 2): a tree is written depth-first as a sequence of tokens, an
opening bracket carrying its label (`"(NP"`), a closing bracket carrying
it too (`")NP"`), and every part-of-speech tag with its word replaced by
the single symbol `XX`:

    (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))
    ->  (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S

The encoder reads the words in reverse order (`source_tokens`). The
decoder's output goes back to a tree with `delinearize`, which puts the
words (and tags, when a tagger gives them) back in place of the `XX`s and
repairs malformed outputs the way the paper does, counting every repair
so that the rate of malformed trees can be reported.

Before linearizing, gold trees are cleaned (`clean_tree`): function tags
and indices are stripped from the labels (`NP-SBJ-1` -> `NP`,
`PP-LOC-CLR` -> `PP`; labels that begin with a dash, such as `-NONE-`,
`-LRB-`, are kept whole), `-NONE-` empty elements are removed with the
constituents they leave empty, and an unlabeled top bracket (`( (S ...))`
of the `.mrg` files) is dropped.

Plain Python on top of `nltk.Tree`: nothing here imports a model or
TensorFlow.

Reference:
    Vinyals, Kaiser, Koo, Petrov, Sutskever & Hinton, 2015, "Grammar as a
    Foreign Language", NeurIPS.
"""

import dataclasses
import re

from keras_ordered._nltk import nltk

from keras_ordered.parsing import trees as trees_lib

WORD_SYMBOL = "XX"
"""The token that stands for every (POS tag, word) pair."""

OPEN = "("
CLOSE = ")"
EMPTY_ELEMENT = "-NONE-"
"""The POS tag of the Treebank's empty elements (traces, null subjects)."""

_FUNCTION_TAG = re.compile(r"[-=]")


def strip_function_tags(label):
    """Removes function tags and indices from a Treebank label.

    Args:
        label: a label such as `"NP-SBJ-1"`, `"PP-LOC-CLR"`, `"NP=2"`.

    Returns:
        The bare category (`"NP"`, `"PP"`, `"NP"`). A label that begins
        with a dash (`"-NONE-"`, `"-LRB-"`) is returned unchanged.

    Example:

    ```python
    from keras_ordered.parsing import linearize
    assert linearize.strip_function_tags("PP-LOC-CLR") == "PP"
    assert linearize.strip_function_tags("-LRB-") == "-LRB-"
    ```
    """
    if not isinstance(label, str):
        raise ValueError(
            f"A tree label must be a string, got {label!r} of type "
            f"{type(label).__name__}."
        )
    if label.startswith("-"):
        return label
    return _FUNCTION_TAG.split(label)[0]


def _is_preterminal(node):
    return (
        isinstance(node, nltk.Tree) and len(node) == 1 and isinstance(node[0], str)
    )


def _check_tree(tree):
    if not isinstance(tree, nltk.Tree):
        raise ValueError(
            f"Expected an nltk.Tree, got {tree!r} of type "
            f"{type(tree).__name__}: read trees with nltk's "
            "BracketParseCorpusReader or `nltk.Tree.fromstring`."
        )


def _clean(node):
    if _is_preterminal(node):
        if node.label() == EMPTY_ELEMENT:
            return None
        return nltk.Tree(node.label(), [node[0]])
    children = []
    for child in node:
        if isinstance(child, str):
            raise ValueError(
                f"Word {child!r} sits under {node.label()!r} beside other "
                "children: expected Treebank trees where every word has its "
                "own POS preterminal."
            )
        cleaned = _clean(child)
        if cleaned is not None:
            children.append(cleaned)
    if not children:
        return None
    return nltk.Tree(strip_function_tags(node.label()), children)


def clean_tree(tree):
    """Cleans a gold Treebank tree before linearization.

    Strips function tags from the constituent labels (POS tags are kept as
    they are), removes `-NONE-` empty elements and the constituents left
    without words, and drops an unlabeled top bracket. Words, POS tags,
    punctuation and unary chains are kept.

    Args:
        tree: an `nltk.Tree` with POS preterminals, as read from a `.mrg`
            file.

    Returns:
        A new `nltk.Tree`, or `None` when no word is left.

    Example:

    ```python
    import nltk
    from keras_ordered.parsing import linearize
    gold = nltk.Tree.fromstring(
        "(S (NP-SBJ-1 (-NONE- *)) (VP (VBD slept) (ADVP-TMP (RB late))))")
    print(linearize.clean_tree(gold))
    # (S (VP (VBD slept) (ADVP (RB late))))
    ```
    """
    _check_tree(tree)
    while (
        tree.label() == ""
        and len(tree) == 1
        and isinstance(tree[0], nltk.Tree)
    ):
        tree = tree[0]
    return _clean(tree)


def _prepared(tree, clean):
    _check_tree(tree)
    if not clean:
        return tree
    cleaned = clean_tree(tree)
    if cleaned is None:
        raise ValueError(
            "The tree has no word left once its -NONE- empty elements are "
            f"removed: {tree}. Skip such trees before linearizing."
        )
    return cleaned


def _linearize(node, tokens):
    if _is_preterminal(node):
        tokens.append(WORD_SYMBOL)
        return
    label = node.label()
    tokens.append(OPEN + label)
    for child in node:
        if isinstance(child, str):
            raise ValueError(
                f"Word {child!r} sits under {label!r} beside other children: "
                "every word needs its own POS preterminal."
            )
        _linearize(child, tokens)
    tokens.append(CLOSE + label)


def linearize(tree, clean=True):
    """Writes a tree as the target token sequence of Vinyals et al. (2015).

    Depth-first: `"(LABEL"` opens a constituent, `")LABEL"` closes it, and
    each POS preterminal (tag and word) becomes `XX`.

    Args:
        tree: an `nltk.Tree` whose words all sit under POS preterminals.
        clean: bool, whether to apply `clean_tree` first (strip function
            tags, remove `-NONE-` elements and the constituents they leave
            empty). Defaults to `True`.

    Returns:
        A list of token strings.

    Example:

    ```python
    import nltk
    from keras_ordered.parsing import linearize
    tree = nltk.Tree.fromstring(
        "(S (NP-SBJ (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))")
    print(" ".join(linearize.linearize(tree)))
    # (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S
    ```

    Reference:
        Vinyals et al., 2015, "Grammar as a Foreign Language", NeurIPS
        (Figure 2).
    """
    tree = _prepared(tree, clean)
    tokens = []
    _linearize(tree, tokens)
    return tokens


def source_tokens(tree, reverse=True, clean=True):
    """The encoder's input for a tree: its words, reversed by default.

    Args:
        tree: an `nltk.Tree` with POS preterminals.
        reverse: bool, whether to reverse the words (the paper feeds the
            sentence backwards). Defaults to `True`.
        clean: bool, whether to remove `-NONE-` empty elements first
            (as `linearize` does). Defaults to `True`.

    Returns:
        A list of word strings.

    Example:

    ```python
    import nltk
    from keras_ordered.parsing import linearize
    tree = nltk.Tree.fromstring("(S (NP (NNP John)) (VP (VBZ runs)) (. .))")
    assert linearize.source_tokens(tree) == [".", "runs", "John"]
    ```
    """
    words = list(_prepared(tree, clean).leaves())
    return words[::-1] if reverse else words


@dataclasses.dataclass
class Repairs:
    """What `delinearize` had to repair in one decoded token sequence.

    Every field counts one kind of repair; a well-formed sequence has all
    of them at 0.

    Attributes:
        missing_open: closing brackets without an open constituent: an
            opening bracket with their label was added at the start.
        missing_close: constituents still open at the end: closed there.
        mismatched_close: closing brackets whose label differs from the
            open constituent's: they close the open constituent (its label
            is kept).
        extra_words: `XX` tokens beyond the number of words: dropped.
        missing_words: words without an `XX`: attached at the end, inside
            the innermost constituent still open (else the root).
        empty_constituents: constituents that received no word: removed.
        added_root: sequences that gave several top-level constituents (or
            words outside any bracket): wrapped in one root constituent.
        unknown_tokens: tokens that are neither brackets nor `XX`: dropped.
    """

    missing_open: int = 0
    missing_close: int = 0
    mismatched_close: int = 0
    extra_words: int = 0
    missing_words: int = 0
    empty_constituents: int = 0
    added_root: int = 0
    unknown_tokens: int = 0

    @property
    def malformed(self):
        """Whether the sequence needed any repair."""
        return self.total > 0

    @property
    def total(self):
        """The number of repairs of every kind together."""
        return sum(dataclasses.astuple(self))

    def as_dict(self):
        """The counts by kind, and `malformed`, as a plain dict."""
        result = dataclasses.asdict(self)
        result["malformed"] = self.malformed
        return result


def malformed_rate(repairs):
    """The fraction of decoded sequences that needed a repair.

    Args:
        repairs: iterable of `Repairs` (one per sentence, as returned by
            `delinearize`).

    Returns:
        A float in [0, 1] (0.0 for an empty iterable).

    Example:

    ```python
    from keras_ordered.parsing import linearize
    records = [linearize.Repairs(), linearize.Repairs(missing_close=1)]
    assert linearize.malformed_rate(records) == 0.5
    ```
    """
    repairs = list(repairs)
    if not repairs:
        return 0.0
    return sum(1 for r in repairs if r.malformed) / len(repairs)


class _Node:
    __slots__ = ("label", "children")

    def __init__(self, label):
        self.label = label
        self.children = []


def _to_tree(node, repairs):
    # Without recursion: a decoder may emit thousands of nested brackets.
    def branch(node, children):
        children = [child for child in children if child is not None]
        if not children:
            repairs.empty_constituents += 1
            return None
        return nltk.Tree(node.label, children)

    return trees_lib.fold_tree(
        node,
        leaf=lambda preterminal: preterminal,  # an nltk.Tree, already built
        branch=branch,
        children=lambda item: item.children if isinstance(item, _Node) else None,
    )


def delinearize(tokens, words, tags=None, root_label="S"):
    """Builds the tree of a (decoded) linearized sequence, repairing it.

    The `XX` tokens receive `words` in order, each under its tag (`tags`,
    or `XX` when no tagger gives them). A malformed sequence is repaired as
    Vinyals et al. (2015) do, and every repair is counted (`Repairs`):

    - a closing bracket with no open constituent: an opening bracket with
      its label is added at the start (around everything before it);
    - constituents left open at the end: closed at the end;
    - a closing bracket whose label is not that of the open constituent:
      it closes the open constituent, whose label is kept;
    - more `XX` than words: the extra ones are dropped; fewer: the
      remaining words are attached at the end, inside the innermost open
      constituent (else the last root);
    - constituents that get no word are removed; several top-level
      constituents are wrapped in one `root_label` constituent; tokens
      that are neither brackets nor `XX` are dropped.

    A bare `")"` or `"("` (no label) is accepted; an unlabeled opening
    bracket gives a constituent labelled `root_label`.

    Args:
        tokens: list of token strings (`"(NP"`, `")NP"`, `"XX"`), e.g.
            from `linearize` or a decoder.
        words: list of the sentence's words, in reading order (not
            reversed).
        tags: optional list of POS tags, one per word. Defaults to `XX`
            for every word.
        root_label: label of the root added when a sequence gives several
            top-level constituents. Defaults to `"S"`.

    Returns:
        A tuple `(tree, repairs)`: an `nltk.Tree` whose leaves are exactly
        `words`, and a `Repairs` record (`repairs.malformed` is `False` for
        a well-formed sequence).

    Example:

    ```python
    from keras_ordered.parsing import linearize
    tokens = "(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S".split()
    words = ["John", "has", "a", "dog", "."]
    tree, repairs = linearize.delinearize(
        tokens, words, tags=["NNP", "VBZ", "DT", "NN", "."])
    print(tree)
    # (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))
    assert not repairs.malformed
    tree, repairs = linearize.delinearize(tokens[:-1] + ["XX"], words)
    # one XX too many (dropped), S left open (closed at the end)
    assert (repairs.extra_words, repairs.missing_close) == (1, 1)
    ```
    """
    tokens = list(tokens)
    words = list(words)
    if not words:
        raise ValueError("Cannot delinearize over an empty sentence: pass at "
                         "least one word.")
    for word in words:
        if not isinstance(word, str):
            raise ValueError(
                f"Words must be strings, got {word!r} of type "
                f"{type(word).__name__}."
            )
    if tags is None:
        tags = [WORD_SYMBOL] * len(words)
    else:
        tags = list(tags)
        if len(tags) != len(words):
            raise ValueError(
                f"Got {len(words)} words but {len(tags)} tags: pass one tag "
                "per word, or no tags (every tag is then XX)."
            )
    repairs = Repairs()
    stack = []  # open constituents, innermost last
    top = []  # finished top-level constituents and stray words
    next_word = 0

    def attach(item):
        (stack[-1].children if stack else top).append(item)

    def preterminal(index):
        return nltk.Tree(tags[index], [words[index]])

    for token in tokens:
        if not isinstance(token, str):
            raise ValueError(
                f"Tokens must be strings, got {token!r} of type "
                f"{type(token).__name__}."
            )
        if token == WORD_SYMBOL:
            if next_word < len(words):
                attach(preterminal(next_word))
                next_word += 1
            else:
                repairs.extra_words += 1
        elif token.startswith(OPEN):
            stack.append(_Node(token[len(OPEN):] or root_label))
        elif token.startswith(CLOSE):
            label = token[len(CLOSE):]
            if not stack:
                # An opening bracket was missing at the start.
                repairs.missing_open += 1
                node = _Node(label or root_label)
                node.children = top
                top = [node]
                continue
            node = stack.pop()
            if label and label != node.label:
                repairs.mismatched_close += 1
            attach(node)
        else:
            repairs.unknown_tokens += 1
    while next_word < len(words):
        repairs.missing_words += 1
        item = preterminal(next_word)
        next_word += 1
        if stack:
            stack[-1].children.append(item)
        elif top and isinstance(top[-1], _Node):
            top[-1].children.append(item)
        else:
            top.append(item)
    while stack:
        repairs.missing_close += 1
        node = stack.pop()
        attach(node)
    trees = [_to_tree(item, repairs) for item in top]
    trees = [tree for tree in trees if tree is not None]
    if len(trees) == 1 and not _is_preterminal(trees[0]):
        return trees[0], repairs
    repairs.added_root += 1
    return nltk.Tree(root_label, trees), repairs
