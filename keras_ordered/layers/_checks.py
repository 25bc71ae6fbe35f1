"""Argument checks and initializer helpers shared by the layers."""


def check_rate(name, rate):
    """`rate` as a float in [0, 1); a ValueError naming `name` otherwise."""
    if not 0.0 <= float(rate) < 1.0:
        raise ValueError(f"`{name}` must be in [0, 1). Received: {name}={rate}")
    return float(rate)


def check_positive_int(name, value):
    """`value` if it is an int of 1 or more (not a bool); a ValueError
    naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"`{name}` must be a positive integer. Received: {name}={value!r}"
        )
    return value


def clone_initializer(initializer, offset=0):
    """A fresh instance of a Keras initializer, its seed shifted by `offset`.

    A Keras initializer returns the same values at every call: each weight
    gets its own instance (seeded ones with a seed shifted by `offset`).
    """
    config = initializer.get_config()
    if isinstance(config.get("seed"), int):
        config["seed"] += offset
    return initializer.__class__.from_config(config)
