"""TensorFlow's pooled CPU allocator for the package's commands (standard
library only).

TensorFlow's default CPU allocator takes every tensor from the C library's
`malloc`. glibc maps large blocks from the system and unmaps them on
`free`, and the size from which it does so moves with what the process
freed before. A training step allocates and frees the same large tensors
at every step (PRPN `ptb`'s logits alone, `(64, 35, 10000)` float32, are
90 MB), so whether they are mapped and unmapped again, with their pages
faulted in afresh, depends on what the process happened to run first: on
a 2-core AVX2 EPYC the same PRPN `ptb` training step took 10 s in one
process and 6.5 s in another, with 3.7 times the page faults and 3.7
times the system time in the slow one. TensorFlow's BFC allocator on the
CPU (`TF_CPU_ALLOCATOR_USE_BFC=true`) keeps the memory it has taken in a
pool and reuses it: every process runs at the fast speed. It changes no
arithmetic (the same 64-byte alignment). The pool grows as the process
needs, up to TensorFlow's limit of 64 GB (`TF_CPU_BFC_MEM_LIMIT_IN_MB`),
and is not returned to the system before the process ends.

Where TensorFlow runs oneDNN (by default on CPUs with AVX512_VNNI,
AVX512_BF16 or AMX, and wherever `TF_ENABLE_ONEDNN_OPTS=1`), its CPU
allocator is oneDNN's, which pools by itself: the variable changes
nothing there (TensorFlow reports the pool's statistics with it set to
false).

TensorFlow reads the variable once, when it makes its CPU allocator (at
its first tensor), so it must be set before TensorFlow runs anything. The
recipes and the `keras-ordered` command ask for it (through
`KERAS_ORDERED_QUIET`, which they set before importing the package); a
value the user set is kept. A script that imports `keras_ordered` as a
library can set the variable itself before importing TensorFlow.
"""

import os

POOLED_ALLOCATOR_ENV = "TF_CPU_ALLOCATOR_USE_BFC"


def request_pooled_allocator(environ=None):
    """Asks TensorFlow for its pooled (BFC) CPU allocator unless the
    variable is set already. Takes effect only before TensorFlow's first
    tensor.

    Args:
        environ: the environment to set (default `os.environ`).

    Returns:
        The variable's value after the call.
    """
    environ = os.environ if environ is None else environ
    return environ.setdefault(POOLED_ALLOCATOR_ENV, "true")
