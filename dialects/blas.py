"""Two BLAS entry points numpy does not expose, for the reference plan's
update steps (``lowering/reference.py``):

- ``gemm_acc(a, b, c, alpha)``: ``c += alpha * (a @ b)`` in place (GEMM with
  beta = 1), so a weight's SGD update ``W - lr * (X^T @ G)`` is one call that
  writes its result where ``W`` (or a copy of it) is, with no full-size
  gradient in between;
- ``axpy(alpha, x, y)``: ``y += alpha * x`` in one pass (an update ``p -= lr * g``
  whose gradient stays alive, written into ``p``'s donated buffer).

Both are called from numpy's own OpenBLAS (the wheel bundles it as
``numpy.libs/libscipy_openblas64_*.so``, ILP64 symbols ``scipy_cblas_sgemm64_``;
other builds export ``cblas_sgemm64_`` or ``cblas_sgemm``), found at run time
and loaded through ctypes (the same, already loaded library: one thread pool).
Each entry point is checked once against numpy on small operands, transposed
and not; when no library is found, a symbol is missing, its integer width is
unknown or the check fails, the functions return False and callers compute the
same chain with numpy. They also return False for operands they do not take
(other dtypes than float32/float64, strides BLAS cannot describe, overlapping
memory), never computing a wrong answer.

Rounding: BLAS forms ``c + alpha * acc`` in one step per element (with an FMA
on current CPUs), the op chain ``c - fl(s * fl(acc))`` in two: results differ by
about an ulp of ``c`` from numpy's and PyTorch's.

Plain Python and numpy (ctypes): importing this module loads nothing; the
library is looked up on first use.
"""

from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # cblas.h's enums
_TYPES = {np.dtype(np.float32): ("s", ctypes.c_float), np.dtype(np.float64): ("d", ctypes.c_double)}

# per dtype: (gemm, axpy) ctypes functions or None; filled on first use
_FUNCS: dict[np.dtype, tuple[Any, Any]] = {}


def _library_candidates() -> list[str]:
    """numpy's bundled OpenBLAS first, then any BLAS already loaded in the process."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    found = sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*")))
    found += sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs",
                                           "*openblas*")))
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in os.path.basename(path) and path.startswith("/") \
                        and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _symbols(lib: ctypes.CDLL, p: str) -> tuple[Any, Any, Any] | None:
    """(gemm, axpy, the integer type) under the first naming that ``lib``
    exports with a known integer width, else None."""
    for prefix, suffix, int_t in (("scipy_cblas_", "64_", ctypes.c_int64),
                                  ("cblas_", "64_", ctypes.c_int64)):
        try:
            return (getattr(lib, f"{prefix}{p}gemm{suffix}"),
                    getattr(lib, f"{prefix}{p}axpy{suffix}"), int_t)
        except AttributeError:
            continue
    try:
        gemm, axpy = getattr(lib, f"cblas_{p}gemm"), getattr(lib, f"cblas_{p}axpy")
        config = lib.openblas_get_config
    except AttributeError:
        return None  # not OpenBLAS: its integer width is unknown here
    config.restype = ctypes.c_char_p
    int_t = ctypes.c_int64 if b"USE64BITINT" in (config() or b"") else ctypes.c_int32
    return gemm, axpy, int_t


def _bind(d: np.dtype) -> tuple[Any, Any]:
    p, real = _TYPES[d]
    for path in _library_candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = _symbols(lib, p)
        if found is None:
            continue
        gemm, axpy, int_t = found
        ptr = ctypes.c_void_p
        gemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, int_t, int_t, int_t, real,
                         ptr, int_t, ptr, int_t, real, ptr, int_t]
        gemm.restype = None
        axpy.argtypes = [int_t, real, ptr, int_t, ptr, int_t]
        axpy.restype = None
        _FUNCS[d] = (gemm, axpy)
        if _verified(d):
            return gemm, axpy
    return None, None


def _funcs(d: np.dtype) -> tuple[Any, Any]:
    f = _FUNCS.get(d)
    if f is None:
        _FUNCS[d] = (None, None)  # while checking, and for good if no library passes
        f = _FUNCS[d] = _bind(d)
    return f


def _verified(d: np.dtype) -> bool:
    """The bound functions against numpy (float64 products) on small operands:
    every transpose combination, a leading dimension larger than the row."""
    rng = np.random.default_rng(0)
    try:
        for ta in (False, True):
            for tb in (False, True):
                # (3, 5) and (5, 4), transposed views or rows longer than the matrix
                a = np.asarray(rng.standard_normal((5, 3)), d).T if ta else \
                    np.asarray(rng.standard_normal((3, 8)), d)[:, :5]
                b = np.asarray(rng.standard_normal((4, 9)), d)[:, :5].T if tb else \
                    np.asarray(rng.standard_normal((5, 9)), d)[:, :4]
                c = np.asarray(rng.standard_normal((3, 4)), d)
                want = c.astype(np.float64) - 0.5 * (a.astype(np.float64) @ b.astype(np.float64))
                got = c.copy()
                if not _gemm_call(d, a, b, got, -0.5) or \
                        not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                    return False
        x = np.asarray(rng.standard_normal(11), d)
        y = np.asarray(rng.standard_normal(11), d)
        want = y.astype(np.float64) + 0.25 * x
        got = y.copy()
        return _axpy_call(d, 0.25, x, got) and np.allclose(got, want, rtol=1e-5, atol=1e-5)
    except (ctypes.ArgumentError, OSError, ValueError):
        return False


def _operand(m: np.ndarray, item: int) -> tuple[int, int] | None:
    """(transpose flag, leading dimension) of a 2-D operand in row-major BLAS terms."""
    s0, s1 = m.strides
    rows, cols = m.shape
    if (s1 == item or cols == 1) and s0 % item == 0 and s0 // item >= max(1, cols):
        return _NO_TRANS, s0 // item
    if (s0 == item or rows == 1) and s1 % item == 0 and s1 // item >= max(1, rows):
        return _TRANS, s1 // item
    return None


def _gemm_call(d: np.dtype, a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float) -> bool:
    gemm = _FUNCS[d][0]
    if gemm is None:
        return False
    item = d.itemsize
    la, lb = _operand(a, item), _operand(b, item)
    if la is None or lb is None:
        return False
    m, k = a.shape
    n = b.shape[1]
    if m and n:
        gemm(_ROW_MAJOR, la[0], lb[0], m, n, k, alpha, a.ctypes.data, la[1], b.ctypes.data,
             lb[1], 1.0, c.ctypes.data, max(1, n))
    return True


def _axpy_call(d: np.dtype, alpha: float, x: np.ndarray, y: np.ndarray) -> bool:
    axpy = _FUNCS[d][1]
    if axpy is None:
        return False
    if y.size:
        axpy(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
    return True


def _takes(d: np.dtype, *arrays: np.ndarray) -> bool:
    return all(x.dtype == d and x.dtype.isnative for x in arrays) and d in _TYPES


def gemm_acc(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float) -> bool:
    """``c += alpha * (a @ b)`` in place for 2-D float32/float64 operands of one
    dtype (``c`` C-contiguous and writeable, sharing no memory with ``a`` or
    ``b``); False, having done nothing, when that cannot run through BLAS."""
    d = c.dtype
    if a.ndim != 2 or b.ndim != 2 or c.ndim != 2 or not _takes(d, a, b) \
            or not c.flags.c_contiguous or not c.flags.writeable \
            or c.shape != (a.shape[0], b.shape[1]) or a.shape[1] != b.shape[0] \
            or np.may_share_memory(c, a) or np.may_share_memory(c, b):
        return False
    if _funcs(d)[0] is None:
        return False
    return _gemm_call(d, a, b, c, alpha)


def axpy(alpha: float, x: np.ndarray, y: np.ndarray) -> bool:
    """``y += alpha * x`` in place for C-contiguous float32/float64 arrays of one
    shape and dtype sharing no memory; False, having done nothing, otherwise."""
    d = y.dtype
    if x.shape != y.shape or not _takes(d, x) or not x.flags.c_contiguous \
            or not y.flags.c_contiguous or not y.flags.writeable \
            or np.may_share_memory(x, y):
        return False
    if _funcs(d)[1] is None:
        return False
    return _axpy_call(d, alpha, x, y)


def available(d: Any) -> bool:
    """Whether both entry points run through BLAS for dtype ``d`` (bound and checked)."""
    d = np.dtype(d)
    return d in _TYPES and all(f is not None for f in _funcs(d))


__all__ = ["available", "axpy", "gemm_acc"]
