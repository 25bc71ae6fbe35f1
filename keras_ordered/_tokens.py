"""Checks of the token lists the Python API takes.

A sentence is a list of token strings (`["the", "cat", "sat"]`). A plain
string where a list of tokens belongs would be read one character per
token (`"the cat"` as 7 "words"), silently; these checks turn that into a
`TypeError` that says what to pass. Standard library only.
"""

_SEQUENCE_HINT = (
    "pass a list of token strings, e.g. {example} (split a raw sentence "
    "with str.split() or keras_ordered.export.text.tokenize_python)"
)


def _example(text):
    words = text.split()[:3] or ["the", "cat", "sat"]
    return repr(words)


def check_token_list(tokens, name="tokens"):
    """A sentence's tokens as a list, refusing a string in their place.

    Args:
        tokens: a list (or other iterable) of token strings.
        name: what to call the argument in the message.

    Returns:
        The tokens, as a list.

    Raises:
        TypeError: `tokens` is a `str` or `bytes` (one sentence written as
            text), or is not iterable.

    Example:

    ```python
    from keras_ordered._tokens import check_token_list
    assert check_token_list(("the", "cat")) == ["the", "cat"]
    try:
        check_token_list("the cat")
    except TypeError as error:
        assert "list of token strings" in str(error)
    ```
    """
    if isinstance(tokens, (str, bytes)):
        text = tokens.decode("utf-8", "replace") if isinstance(tokens, bytes) else tokens
        raise TypeError(
            f"`{name}` is the string {text[:40]!r}, not a list of tokens: "
            + _SEQUENCE_HINT.format(example=_example(text))
            + "."
        )
    try:
        return list(tokens)
    except TypeError:
        raise TypeError(
            f"`{name}` must be a list of token strings, got "
            f"{type(tokens).__name__}."
        ) from None


def check_token_lists(sentences, name="sentences"):
    """A batch of sentences as a list of token lists (see `check_token_list`).

    Args:
        sentences: a list of sentences, each a list of token strings.
        name: what to call the argument in the message.

    Returns:
        A list of lists.

    Raises:
        TypeError: `sentences` is itself a string, or one of its sentences
            is a string instead of a list of tokens (the message gives its
            index).

    Example:

    ```python
    from keras_ordered._tokens import check_token_lists
    assert check_token_lists([["a", "b"]]) == [["a", "b"]]
    ```
    """
    if isinstance(sentences, (str, bytes)):
        raise TypeError(
            f"`{name}` is a string, not a list of sentences: pass a list of "
            "token lists, e.g. [['the', 'cat', 'sat']]."
        )
    sentences = check_token_list(sentences, name)
    return [
        check_token_list(sentence, f"{name}[{index}]")
        for index, sentence in enumerate(sentences)
    ]
