"""A one-time warm-up of numpy's OpenBLAS single-precision GEMM.

Measured on the project's 2-core AMD EPYC machines with numpy 2.4's OpenBLAS
0.3.31 (Haswell kernels): in a fresh process, every ``sgemm`` whose result
has at most ~320 columns runs at 10-12 GFLOP/s, a third of the kernel's rate
-- the MLP step's ``(64, 784) @ (784, 256)`` took 2.2 ms against torch's
0.8 ms -- until one product with more result columns than one block of
OpenBLAS's (e.g. ``(64, 256) @ (256, 512)``) has run in the process. From then
on the same calls run at 28-36 GFLOP/s, in every thread. The kernel, its
arguments and its packing buffers are the same before and after (checked
under gdb); double precision is not affected; the cause inside OpenBLAS was
not found. ``bench/sgemm_warmup.py`` shows the effect side by side; the
reference and mlir backends run the warm-up once before their first program.
"""

from __future__ import annotations

import numpy as np

_done = False


def warm_sgemm() -> None:
    """Run the warm-up product once per process (about 0.3 ms)."""
    global _done
    if _done:
        return
    _done = True
    a = np.ones((64, 256), np.float32)
    b = np.ones((256, 512), np.float32)
    np.matmul(a, b)
