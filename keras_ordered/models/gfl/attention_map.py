"""The attention heat map of one parse (Vinyals et al., 2015, Figure 4)."""

import numpy as np

from keras_ordered._environment import install_hint


def require_matplotlib():
    """The `matplotlib` module, or an ImportError of one line naming the
    extra that installs it (`draw`)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "Drawing attention maps needs matplotlib: "
            f"{install_hint('draw')}"
        ) from None
    return matplotlib


def plot_attention_map(weights, words, symbols, path, title=None):
    """Writes the attention matrix of one decoded sentence as a PNG.

    Args:
        weights: float array `(len(symbols), len(words))`: row `t` is the
            attention over the input words while symbol `t` was produced,
            columns in reading order (`ParseResult.attention` gives them
            so; the encoder itself reads the words reversed).
        words: list of the sentence's words (x axis).
        symbols: list of the decoded symbols (y axis, top to bottom).
        path: str, the PNG file to write.
        title: optional title.

    Returns:
        `path`.

    Example:

    ```python
    from keras_ordered.models.gfl.attention_map import plot_attention_map
    plot_attention_map([[1.0, 0.0], [0.2, 0.8]], ["John", "runs"],
                       ["(S", "XX"], "attention.png")
    ```
    """
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    weights = np.asarray(weights, dtype="float32")
    if weights.shape != (len(symbols), len(words)):
        raise ValueError(
            f"`weights` must have shape (symbols, words) = "
            f"({len(symbols)}, {len(words)}). Received: {weights.shape}"
        )
    width = max(4.0, 0.35 * len(words) + 1.5)
    height = max(3.0, 0.22 * len(symbols) + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    image = axes.imshow(weights, cmap="Greys", vmin=0.0, vmax=1.0,
                        aspect="auto", interpolation="nearest")
    axes.set_xticks(range(len(words)))
    axes.set_xticklabels(words, rotation=90)
    axes.set_yticks(range(len(symbols)))
    axes.set_yticklabels(symbols)
    axes.set_xlabel("input words (reading order)")
    axes.set_ylabel("output symbols")
    if title:
        axes.set_title(title)
    figure.colorbar(image, ax=axes, fraction=0.04)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
