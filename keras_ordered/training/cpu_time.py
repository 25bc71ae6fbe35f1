"""The measured time of the language-model presets on a CPU, and the
warning that quotes it.

`CPU_MINUTES_PER_EPOCH` holds the minutes per epoch of the ON-LSTM and
PRPN presets on a 2-core CPU; `cpu_warning` turns them into the warning a
recipe prints when a preset would train for hours without a GPU.
`benchmarks/preset_epoch_time.py` measures the same figures on any
machine.
"""

from keras_ordered import backend

CPU_MINUTES_PER_EPOCH = {
    # ON-LSTM `small` and `medium`: their recipe runs (the seed studies,
    # in their presets' mixed_bfloat16); the others
    # `benchmarks/preset_epoch_time.py --model onlstm`.
    "ONLSTMLanguageModel": {"ptb": 9.9, "small": 3.1, "medium": 4.5,
                            "tiny": 11.1},
    # PRPN `quick` and `up`: their recipe runs (`quick`'s seed study, in
    # float32); `small`: `preset_epoch_time.py --presets small --steps
    # 20` on idle cores; the others `preset_epoch_time.py --model prpn`.
    "PRPNLanguageModel": {"ptb": 18.9, "up": 0.1, "small": 3.7,
                          "quick": 5.5, "tiny": 14.0},
}
"""Minutes per epoch (training plus validation) of the presets on a 2-core
CPU (the AVX-512 EPYC of benchmarks/README.md), in each preset's default
precision, which `cpu_warning` quotes. The package owns these figures:
`benchmarks/preset_epoch_time.py` measures them again on any machine."""


def duration(minutes):
    """A time in minutes as a person reads it: seconds, minutes, hours or
    days.

    Args:
        minutes: float.

    Returns:
        The text, e.g. `"45 s"`, `"3.1 min"`, `"2.5 h"`, `"9 days"`.

    Example:

    ```python
    from keras_ordered.training.cpu_time import duration

    print(duration(0.75), duration(150), duration(13000))  # 45 s 2.5 h 9 days
    ```
    """
    if minutes < 1:
        return f"{minutes * 60:.0f} s"
    if minutes < 10:
        return f"{minutes:.1f} min"
    if minutes < 90:
        return f"{minutes:.0f} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 60 / 24:.0f} days"


def cpu_warning(name, presets, minutes):
    """A warning when a preset would run for many hours without a GPU.

    Args:
        name: the preset's name.
        presets: the family's presets (their epochs).
        minutes: preset name -> measured minutes per epoch on a CPU (the
            family's `CPU_MINUTES_PER_EPOCH`).

    Returns:
        The warning, or None when a GPU is visible, or when the preset's
        whole training takes less than 3 hours on a CPU (by its measured
        time per epoch).

    Example:

    ```python
    from keras_ordered.models import onlstm
    from keras_ordered.training.cpu_time import CPU_MINUTES_PER_EPOCH
    from keras_ordered.training.cpu_time import cpu_warning

    print(cpu_warning("ptb", onlstm.PRESETS,
                      CPU_MINUTES_PER_EPOCH["ONLSTMLanguageModel"]))
    ```
    """
    epochs = presets[name]["training"]["epochs"]
    if not minutes.get(name) or minutes[name] * epochs < 180:
        return None
    if backend.gpu_visible():
        return None
    alternatives = [
        f"--preset {other} (~{duration(minutes[other])} per "
        f"epoch, {p['training']['epochs']} epoch(s))"
        for other, p in presets.items()
        if other in ("small", "quick") and minutes.get(other)
    ]
    return (
        f"warning: no GPU is visible. Preset {name!r} takes about "
        f"{duration(minutes[name])} per epoch on a CPU, so its {epochs} "
        f"epochs would take about {duration(minutes[name] * epochs)}. On a "
        "CPU, try "
        f"{' or '.join(alternatives) or 'a smaller preset'}. (Times per "
        "epoch measured on a 2-core CPU with benchmarks/preset_epoch_time.py; "
        "measure yours the same way.)"
    )
