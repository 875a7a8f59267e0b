"""Every op the csl backend lowers, on the WSE simulator vs the reference backend.

Ops are batched into a few graphs with many outputs (one compile and one
simulator run per graph and grid); shapes include sizes the grids do not divide.
"""

from __future__ import annotations

import numpy as np
import pytest
from _csl_harness import assert_close

import pyflame_mlir as pf

GRIDS = [(1, 1), (3, 2), (4, 4)]


def _data():
    rng = np.random.default_rng(5)
    a = pf.tensor(rng.standard_normal((9, 7)).astype(np.float32))
    b = pf.tensor(rng.standard_normal((9, 7)).astype(np.float32))
    pos = pf.tensor(rng.uniform(0.5, 2.0, (9, 7)).astype(np.float32))
    row = pf.tensor(rng.standard_normal(7).astype(np.float32))
    col = pf.tensor(rng.standard_normal((9, 1)).astype(np.float32))
    return a, b, pos, row, col


@pytest.mark.parametrize("grid", GRIDS)
def test_elementwise(on_grid, grid):
    def fn():
        a, b, pos, row, col = _data()
        return [a + b, a - b, a * b, a / pos, pf.maximum(a, b), pf.minimum(a, b), -a, pf.abs(a),
                pf.relu(a), pf.exp(a), pf.log(pos), pf.sqrt(pos), pf.rsqrt(pos), pf.tanh(a),
                pf.log1p(pos),
                pf.sigmoid(a), pf.reciprocal(pos), pf.sin(a), pf.cos(a), a * a, pf.sign(a),
                a + row, a * col, col - a, a / col, row * 2.0 + 1.0, 3.0 - a, a ** 2]
    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=3e-5, atol=3e-6)


def test_log1p_special_values(on_grid):
    """log1p is made of log_f32 on a PE (CSL's <math> has no log1p that we know of):
    -1, below -1, signed zero, x too tiny for 1 + x, 1 + x rounding to x, inf, NaN."""
    x = np.array([-1.0, -2.0, -0.0, 0.0, 1e-10, -3e-9, 1e-30, 2.5e-4, -0.5, 0.75, 3.0,
                  1e30, 3e38, np.inf, -np.inf, np.nan], np.float32)
    with np.errstate(all="ignore"):
        ref, got = on_grid((2, 2), lambda: pf.log1p(pf.tensor(x)))
    assert_close(ref, got, rtol=3e-7, atol=0.0)
    num = ~np.isnan(ref[0])
    assert np.array_equal(np.signbit(got[0][num]), np.signbit(ref[0][num]))


@pytest.mark.parametrize("grid", GRIDS[1:])
def test_compare_and_select(on_grid, grid):
    def fn():
        a, b, pos, row, col = _data()
        m = a > b
        return [a > b, a >= b, a < row, a <= 0.0, a == a, a != b, pf.where(m, a, b),
                pf.where(a > 0.0, a, 0.0), pf.logical_and(m, a > 0.0),
                pf.logical_or(m, a > 0.0), pf.logical_not(m), m.float() * a]
    ref, got = on_grid(grid, fn)
    assert_close(ref, got)


@pytest.mark.parametrize("grid", GRIDS)
def test_reductions(on_grid, grid):
    def fn():
        a, b, pos, row, col = _data()
        return [a.sum(), a.sum(dim=0), a.sum(dim=1), a.sum(dim=1, keepdim=True),
                a.mean(dim=0), a.mean(), a.amax(dim=1) if hasattr(a, "amax") else
                a.max(dim=1).values, a.max(dim=0).values, a.min(dim=1).values,
                a.min(dim=0, keepdim=True).values, row.sum(), row.max()]
    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=3e-5, atol=1e-5)


@pytest.mark.parametrize("grid", GRIDS)
def test_softmax_family(on_grid, grid):
    def fn():
        a, b, pos, row, col = _data()
        return [pf.softmax(a, dim=1), pf.softmax(a, dim=0), pf.log_softmax(a, dim=1),
                pf.logsumexp(a, dim=1), pf.logsumexp(a, dim=0, keepdim=True)]
    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=3e-5, atol=3e-6)


@pytest.mark.parametrize("grid", GRIDS)
def test_matmul_shapes(on_grid, grid):
    def fn():
        rng = np.random.default_rng(2)
        a = pf.tensor(rng.standard_normal((9, 7)).astype(np.float32))
        w = pf.tensor(rng.standard_normal((7, 5)).astype(np.float32))
        v = pf.tensor(rng.standard_normal(7).astype(np.float32))
        u = pf.tensor(rng.standard_normal(9).astype(np.float32))
        return [a @ w, a @ v, u @ a, v @ v, a.T @ a, a @ a.T, (a @ w).T]
    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=3e-5, atol=1e-5)


def test_shape_ops_and_constants(on_grid):
    def fn():
        a, b, pos, row, col = _data()
        return [a.T, a.reshape(1, 9, 7).reshape(9, 7), row.reshape(1, 7) + a,
                pf.broadcast_to(row, (9, 7)), pf.full((9, 7), 2.5) * a,
                pf.arange(7).float() * row, a.T.sum(dim=0)]
    ref, got = on_grid((3, 2), fn)
    assert_close(ref, got)


@pytest.mark.parametrize("grid", [(1, 1), (3, 2), (4, 4)])
def test_edge_cases(on_grid, grid):
    """0-d inputs, unit dims, a 1xK @ KxN matmul, dot products, outputs that are
    inputs, duplicated outputs, unit-dim reshapes."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((9, 7)).astype(np.float32)
    r = rng.standard_normal((1, 7)).astype(np.float32)
    c = rng.standard_normal((9, 1)).astype(np.float32)
    v = rng.standard_normal(7).astype(np.float32)

    def fn():
        A, R, C, V, S = (pf.tensor(t) for t in (a, r, c, v, np.float32(2.5)))
        return [A * S, S + 1.0, R @ A.T, A @ R.T, C * R, A, A * 2.0, A * 2.0, V @ V,
                (V * 3.0).sum(), A.sum(dim=1).reshape(9, 1) * C, C.reshape(9) + 1.0]

    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=3e-5, atol=1e-6)
