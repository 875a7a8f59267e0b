"""Shared helpers for the forward-correctness tests: dtype maps between
pyflame, numpy and torch, random test data, and comparisons against the two
independent oracles (torch on CPU and numpy, computed in float64).

Plain helpers, no fixtures: the test files import what they need.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

ALL_DTYPES = (pf.float32, pf.float64, pf.float16, pf.bfloat16, pf.int32, pf.int64, pf.bool,
              pf.uint8, pf.int8, pf.int16)
FLOAT_DTYPES = (pf.float32, pf.float64, pf.float16, pf.bfloat16)
INT_DTYPES = (pf.int32, pf.int64)

TORCH_DTYPE = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int32": torch.int32, "int64": torch.int64,
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
}


def torch_dtype(d: pf.DType) -> torch.dtype:
    return TORCH_DTYPE[d.name]


def torch_name(td: torch.dtype) -> str:
    return str(td).removeprefix("torch.")


# ---- data ----

def to_torch(a: np.ndarray) -> torch.Tensor:
    """A torch tensor with exactly the values and dtype of ``a`` (bfloat16 too)."""
    a = np.asarray(a)
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


def from_torch(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.numpy()


def random_array(rng: np.random.Generator, shape: Sequence[int], dt: pf.DType,
                 domain: str = "any", low: float = -4.0, high: float = 4.0) -> np.ndarray:
    """Random data of dtype ``dt``. domain: 'any', 'positive' (> 0), 'nonzero',
    'unit' (in (-1, 1))."""
    return np.asarray(_random(rng, tuple(shape), dt, domain, low, high))


def _random(rng, shape, dt, domain, low, high):
    if dt is pf.bool:
        if domain in ("positive", "nonzero"):
            return np.ones(shape, np.bool_)
        return rng.random(shape) < 0.5
    if dt in INT_DTYPES:
        lo, hi = int(low), int(high)
        if domain == "positive":
            lo = 1
        v = rng.integers(lo, hi + 1, size=shape)
        if domain == "nonzero":
            v = np.where(v == 0, 1, v)
        return v.astype(dt.np)
    if domain == "positive":
        v = rng.uniform(0.125, high, size=shape)
    elif domain == "unit":
        v = rng.uniform(-0.99, 0.99, size=shape)
    else:
        v = rng.uniform(low, high, size=shape)
        if domain == "nonzero":
            v = np.where(np.abs(v) < 0.125, 0.5, v)
    return v.astype(dt.np)


def wide(a: Any) -> np.ndarray:
    """Values as float64 (bools and ints too): the numpy oracle computes here."""
    if isinstance(a, torch.Tensor):
        a = from_torch(a)
    if isinstance(a, pf.Tensor):
        a = a.numpy()
    return np.asarray(a).astype(np.float64)


# ---- tolerances ----

_TOL = {  # (rtol, atol) for one correctly rounded op in the result dtype
    "float64": (1e-11, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}


def tolerance(name: str) -> tuple[float, float]:
    return _TOL.get(name, (0.0, 0.0))


# ---- comparison ----

def _np(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return from_torch(x)
    if isinstance(x, pf.Tensor):
        return x.numpy()
    return np.asarray(x)


def assert_close(actual: pf.Tensor, expected: Any, *, dtype: str | None = None,
                 scale: float = 1.0, rtol: float | None = None, atol: float | None = None,
                 what: str = "") -> None:
    """``actual`` (a pyflame tensor) against an oracle result (torch tensor or
    numpy array). The dtype must equal torch's (or ``dtype``); shapes equal;
    values within the tolerance of the result dtype, NaNs where the oracle has
    them. ``scale`` multiplies atol (for sums of many terms)."""
    assert isinstance(actual, pf.Tensor), f"{what}: expected a pyflame Tensor, got {actual!r}"
    exp = _np(expected)
    if dtype is None and isinstance(expected, torch.Tensor):
        dtype = torch_name(expected.dtype)
    if dtype is not None:
        assert actual.dtype.name == dtype, f"{what}: dtype {actual.dtype.name} != {dtype}"
    assert actual.shape == tuple(exp.shape), f"{what}: shape {actual.shape} != {exp.shape}"
    got = actual.numpy()
    assert got.dtype == actual.dtype.np, f"{what}: realized {got.dtype} for {actual.dtype}"
    assert got.shape == actual.shape
    name = actual.dtype.name
    if not actual.dtype.is_floating_point:
        np.testing.assert_array_equal(got, exp, err_msg=what)
        return
    r, a = tolerance(name)
    r = r if rtol is None else rtol
    a = (a if atol is None else atol) * scale
    np.testing.assert_allclose(wide(got), wide(exp), rtol=r, atol=a, equal_nan=True,
                               err_msg=what)


def assert_same(a: pf.Tensor, b: pf.Tensor) -> None:
    """Bit-identical results (eager vs lazy)."""
    assert a.shape == b.shape and a.dtype is b.dtype
    x, y = a.numpy(), b.numpy()
    assert x.dtype == y.dtype
    np.testing.assert_array_equal(np.ascontiguousarray(x).reshape(-1).view(np.uint8),
                                  np.ascontiguousarray(y).reshape(-1).view(np.uint8))


def erf64(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def run_torch(fn: Callable[..., Any], *args: Any, **kwargs: Any
              ) -> tuple[Any, BaseException | None]:
    """Run an oracle ``fn(*args, **kwargs)``; returns (result, None) or (None, the error)."""
    try:
        return fn(*args, **kwargs), None
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError) as e:
        return None, e


# ---- hypothesis strategies ----

def examples(n: int) -> int:
    """``max_examples`` for a hypothesis test; PYFLAME_TEST_SCALE=10 digs deeper."""
    return max(1, int(n * float(os.environ.get("PYFLAME_TEST_SCALE", "1"))))


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5
           ) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcast_pair(min_side: int = 0, max_side: int = 4, max_dims: int = 4):
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side)


dtypes = st.sampled_from(ALL_DTYPES)
seeds = st.integers(0, 2**32 - 1)
