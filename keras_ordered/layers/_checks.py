"""Argument checks and initializer helpers shared by the layers."""

from keras_ordered._checks import check_positive_int  # noqa: F401


def check_rate(name, rate):
    """`rate` as a float in [0, 1); a ValueError naming `name` otherwise."""
    if not 0.0 <= float(rate) < 1.0:
        raise ValueError(f"`{name}` must be in [0, 1). Received: {name}={rate}")
    return float(rate)




def clone_initializer(initializer, offset=0):
    """A fresh instance of a Keras initializer, its seed shifted by `offset`.

    A Keras initializer returns the same values at every call: each weight
    gets its own instance (seeded ones with a seed shifted by `offset`).
    """
    config = initializer.get_config()
    if isinstance(config.get("seed"), int):
        config["seed"] += offset
    return initializer.__class__.from_config(config)
