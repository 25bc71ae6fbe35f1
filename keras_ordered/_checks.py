"""Argument checks shared by every part of the package (standard library
only, so that the data loaders below the layers can use them too)."""


def check_positive_int(name, value):
    """`value` if it is an int of 1 or more (not a bool); a ValueError
    naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"`{name}` must be a positive integer. Received: {name}={value!r}"
        )
    return value
