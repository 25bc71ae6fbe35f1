"""The CPU's feature flags, read once from `/proc/cpuinfo`.

Used to choose between equivalent computations whose speed depends on the
instruction set (`training.precision.training_policy`,
`layers._tf_recurrence.transposed_product`).
"""

import functools

CPUINFO = "/proc/cpuinfo"


def cpu_flags(cpuinfo=CPUINFO):
    """The set of flags of the first processor in `cpuinfo`.

    Empty where the file does not exist or lists no flags (macOS, Windows).
    """
    if cpuinfo == CPUINFO:
        return _machine_flags()
    return _read_flags(cpuinfo)


@functools.lru_cache(maxsize=1)
def _machine_flags():
    return _read_flags(CPUINFO)


def _read_flags(cpuinfo):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def describe_cpu(cpuinfo=CPUINFO):
    """The CPU in words, for the records of benchmarks: its model name and
    its widest vector units (`"Intel(R) Xeon(R) Processor, AVX-512 +
    AMX"`); `"unknown CPU"` where `cpuinfo` cannot be read."""
    name = "unknown CPU"
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        return name
    flags = cpu_flags(cpuinfo)
    units = [label for flag, label in (("avx512f", "AVX-512"),
                                       ("amx_tile", "AMX"))
             if flag in flags]
    if not units and "avx2" in flags:
        units = ["AVX2"]
    return name + (", " + " + ".join(units) if units else "")
