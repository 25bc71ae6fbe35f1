"""`argparse` types of numeric options, shared by the command line and the
recipes (`keras_ordered.training.options`).

Standard library only: `keras-ordered --help` imports this module.
"""

import argparse


def _int_option(text, smallest, what):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < smallest:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def positive_int(text):
    """`argparse` type of a count option: an int of 1 or more.

    Args:
        text: the option's value as given.

    Returns:
        The int.

    Raises:
        argparse.ArgumentTypeError: `argparse` then prints the usage and
            `error: argument --batch-size: must be a positive integer (1,
            2, ...), got '0'`, and exits with status 2.

    Example:

    >>> positive_int("64")
    64
    """
    return _int_option(text, 1, "a positive integer (1, 2, ...)")


def non_negative_int(text):
    """`argparse` type of a seed or limit that may be 0: an int >= 0.

    Args:
        text: the option's value as given.

    Returns:
        The int.

    Raises:
        argparse.ArgumentTypeError: for a negative or non-integer value.

    Example:

    >>> non_negative_int("0")
    0
    """
    return _int_option(text, 0, "an integer of 0 or more")


def positive_float(text):
    """`argparse` type of a rate or duration: a float above 0.

    Args:
        text: the option's value as given.

    Returns:
        The float.

    Raises:
        argparse.ArgumentTypeError: for 0, a negative value or a non-number.

    Example:

    >>> positive_float("0.003")
    0.003
    """
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be a positive number, got {text!r}")
    return value
