"""The C loops of some reference kernels (``dialects/_kernels.c``, an optional
extension built by setup.py), all float32: GELU and its derivative, softmax and
log_softmax rows, max pooling and its gradient (two pooled dims), scatter_add
of whole rows (an embedding's gradient), relu of strided views. Each loop
implements its op's kernel in this package (same formula and constants) and is
called only from that kernel, which runs its numpy body instead when
``KERNELS`` is None: no build, a stale one, or PYFLAME_NO_NATIVE=1 (read once,
at import). Tests set ``KERNELS`` to None to run the numpy bodies, and
``KERNELS.set_simd(level)`` to run the loops' copy compiled for the baseline
(0), AVX2 (1) or AVX-512 (2)."""

from __future__ import annotations

import os
import warnings
from types import ModuleType

API = 1  # _kernels.c's API: raised when a function's arguments change


def _load() -> ModuleType | None:
    if os.environ.get("PYFLAME_NO_NATIVE", "") not in ("", "0"):
        return None
    try:
        from . import _kernels
    except ImportError:
        return None
    if getattr(_kernels, "API", None) != API:
        warnings.warn(f"pyflame_mlir.dialects._kernels is a stale build (API "
                      f"{getattr(_kernels, 'API', '?')}, needed {API}): the numpy kernels run; "
                      "rebuild it with python setup.py build_ext --inplace", RuntimeWarning,
                      stacklevel=2)
        return None
    return _kernels


KERNELS = _load()
