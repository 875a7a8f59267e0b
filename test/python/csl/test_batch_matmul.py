"""Batched matmul with its batch laid over the PE grid (issue #16 leftovers):
``[B, M, K] @ [B, K, N]`` (wider batch dims folded into B) is ``wse.batch_matmul`` of
the rank-2 views ``[B*M, K]`` and ``[B*K, N]``, the batch rows over a grid axis in
blocks of whole batch elements, each PE multiplying its own; checked against the
reference backend on 1x1, 2x2 and 4x4, f32 and f16, every placement the planner
offers forced once, and the gradient of attention-like scores."""

from __future__ import annotations

import numpy as np
import pytest
from pyflame_mlir.dialects import wse
from pyflame_mlir.lowering import to_wse
from pyflame_mlir.lowering.wse_memory import default_budget, plan_memory
from pyflame_mlir.passes.legalize_for_wse import LegalizeForWse
from xdsl.context import Context

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module
from pyflame_mlir.core import collect

GRIDS = [(1, 1), (2, 2), (4, 4)]
F16_TOL = 4 * 2.0**-10  # f16 tiles, products accumulated in f32, one rounding at the end


def _operands(rng: np.random.Generator, b: int, m: int, k: int, n: int, half: bool):
    a = rng.standard_normal((b, m, k)).astype(np.float32)
    c = rng.standard_normal((b, k, n)).astype(np.float32)
    if half:
        return pf.tensor(a.astype(np.float16)), pf.tensor(c.astype(np.float16))
    return pf.tensor(a), pf.tensor(c)


def _placements(program: wse.ProgramOp) -> list[str]:
    return [str(op.lhs.type.layout) for op in program.body.block.ops
            if isinstance(op, wse.BatchMatmulOp)]


@pytest.mark.parametrize("half", [False, True], ids=["f32", "f16"])
@pytest.mark.parametrize("grid", GRIDS)
def test_batch_matmul_matches_reference(on_grid, grid, half):
    """B = 8 (a multiple of every grid side here): the batch lands on the PEs of an axis
    once the grid has more than one PE, and the products match the reference."""
    ref, got = on_grid(grid, lambda: _operands(np.random.default_rng(3), 8, 6, 5, 8, half)[0]
                       @ _operands(np.random.default_rng(4), 8, 6, 5, 8, half)[1])
    tol = F16_TOL if half else 1e-5
    np.testing.assert_allclose(got[0].astype(np.float32), ref[0].astype(np.float32),
                               rtol=tol, atol=tol)
    assert got[0].dtype == (np.float16 if half else np.float32)


def _forced(label: str):
    """A `_search` that plans once with the (only) batch matmul forced to ``label``."""
    def search(fn, grid, options, resident="all"):
        i = next(k for k, op in enumerate(fn.body.block.ops) if op.name == "pyflame.matmul")
        p = to_wse._plan(fn, grid, options, {i: label}, resident)
        assert p.chosen[i] == label, (p.candidates[i], label)
        program = wse.ProgramOp("main", grid, p.block)
        return p, program, plan_memory(program, options.budget or default_budget())
    return search


@pytest.mark.parametrize("grid", [(2, 2), (4, 4)])
def test_every_batch_placement_matches_reference(on_grid, monkeypatch, grid):
    """Each candidate placement (batch over y or x or on no axis; N over the other
    axis, or whole; held by one line or replicated) forced in turn."""
    b, m, k, n = 4, 3, 5, 8

    def fn(scale: float):
        x, y = _operands(np.random.default_rng(5), b, m, k, n, False)
        return (x * scale) @ y  # a distinct graph per placement (no cached executable)

    labels = _labels(grid, lambda: fn(1.0))
    assert any("B:y" in lab for lab in labels) and any("B:x" in lab for lab in labels), labels
    for i, label in enumerate(labels):
        monkeypatch.setattr(to_wse, "_search", _forced(label))
        ref, got = on_grid(grid, lambda i=i: fn(1.0 + i))
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-5, err_msg=label)


def _labels(grid, fn) -> list[str]:
    """The batch matmul's candidate placements on ``grid`` (one plan, nothing run)."""
    module = build_module(collect([fn()]))
    LegalizeForWse().apply(Context(), module)
    fn_op = to_wse.find_main(module)
    p = to_wse._plan(fn_op, wse.Grid(*grid), to_wse.WseOptions(grid=wse.Grid(*grid)))
    (i,) = [k for k, labels in p.candidates.items() if labels[0].startswith("batch_matmul")]
    return p.candidates[i]


@pytest.mark.parametrize("grid", [(2, 2), (4, 4)])
def test_batch_laid_over_the_grid_when_it_pays(grid):
    """Enough batch elements of enough work: the plan puts the batch on the PEs (rows of
    the batch over an axis), not every element on one PE."""
    x, y = _operands(np.random.default_rng(6), 8, 8, 8, 8, False)
    module = build_module(collect([x @ y]))
    LegalizeForWse().apply(Context(), module)
    low = to_wse.lower_to_wse(module, to_wse.WseOptions(grid=wse.Grid(*grid)))
    (lay,) = _placements(low.program)
    assert "y" in lay or "x" in lay, lay


@pytest.mark.parametrize("half", [False, True], ids=["f32", "f16"])
def test_rank4_heads_and_gradient(on_grid, half):
    """Attention-like scores ``q @ k^T`` over [batch, heads, T, dh] (the batch dims fold
    into one) and their gradients through the batched matmuls of the VJP, on 2x2."""
    rng = np.random.default_rng(7)
    q0 = rng.standard_normal((2, 2, 4, 4)).astype(np.float32)
    k0 = rng.standard_normal((2, 2, 4, 4)).astype(np.float32)

    def fn():
        q, k = pf.tensor(q0, requires_grad=True), pf.tensor(k0, requires_grad=True)
        qq, kk = (q.to(pf.float16), k.to(pf.float16)) if half else (q, k)
        s = (qq @ kk.transpose(-1, -2)).float()
        loss = (s * s).sum()
        dq, dk = pf.autograd.grad(loss, [q, k])
        return [s, dq, dk]

    ref, got = on_grid((2, 2), fn)
    tol = 8 * F16_TOL if half else 1e-5
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * np.abs(r).max())
