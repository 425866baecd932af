"""Keep freed memory in the process's heap while training (glibc only; exact: changes no number).

A training step allocates and frees tens of megabytes of temporaries (activations, gradients,
gathered rows). With glibc's defaults, blocks that large come from ``mmap`` or are trimmed back
to the system when freed, so every batch faults its pages in again (first touch: a page fault
and the kernel zeroing the page): ~7,000 minor faults per PCNN batch, about a fifth of the
``conv_impl="gather"`` step's CPU time on the 2-core development machine. Raising the mmap and
trim thresholds keeps those pages mapped between batches; the process's resident memory stays
at its peak instead of shrinking after each step.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: allocations below this come from the heap (the default is 128 KiB, raised by glibc up to 32 MiB)
MMAP_THRESHOLD = 256 * 1024 * 1024
#: free memory at the heap's top kept up to this size
TRIM_THRESHOLD = 1024 * 1024 * 1024

_done = False


def retain_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process (once); False where it does not
    apply (not Linux/glibc, or ``WGB_KEEP_HEAP=0`` in the environment)."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux") or os.environ.get("WGB_KEEP_HEAP", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _done = ok
    return ok
