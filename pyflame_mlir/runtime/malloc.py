"""Keep freed array memory in the process (glibc's malloc), once per process.

numpy allocates every array with ``malloc``. glibc serves a block above its
mmap threshold (128 KiB at first, raised to the size of the largest such
block freed so far) with a fresh ``mmap`` and unmaps it when it is freed, and
gives the top of the heap back to the OS once more than twice that threshold
is free there. So a training step that makes and drops arrays of a few MiB
(a convolution's columns, max pooling's windows, a kernel's temporaries)
takes page faults on fresh zeroed pages at every step: measured on the CNN
step of ``bench/cnn.py`` (one thread, AMD EPYC), 56-58 ms CPU per step with
glibc's defaults against 48-51 ms with the settings below; torch eager in the
same process gains ~6% (its CPU allocator is ``malloc`` too).

The settings: blocks up to 32 MiB (glibc's largest mmap threshold on 64-bit)
come from the heap, and up to 256 MiB of free heap top stays mapped. The
process's resident memory then stays near its peak instead of falling
between steps; that is the trade, as in PyTorch's caching GPU allocator.
Nothing changes where the user set glibc's own knobs (``MALLOC_*_`` or
``GLIBC_TUNABLES``), with ``PYFLAME_MALLOC_TUNING=0``, or off glibc.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20
_USER_KNOBS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
               "GLIBC_TUNABLES")
_state: list[bool] = []  # [applied] once tried


def keep_freed_memory() -> bool:
    """Apply the settings above once per process; whether they are in force."""
    if _state:
        return _state[0]
    _state.append(False)
    if not sys.platform.startswith("linux") or os.environ.get("PYFLAME_MALLOC_TUNING") == "0" \
            or any(k in os.environ for k in _USER_KNOBS):
        return False
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False  # not glibc: its knobs mean nothing there
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _state[0] = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _state[0]
