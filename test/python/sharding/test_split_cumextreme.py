"""Issue 17: ``cummax``/``cummin`` along a split dimension by a carry exchange
(values and indices). Each device scans its block, the blocks' last running
extremes and their global indices are all-gathered (a (rows, 1) slice each per
device, not the blocks), and the blocks before this one are folded into a
carry by the scan's rule: the later element wins ties (torch's index), NaN
wins, a later NaN wins. Values, indices and gradients vs torch, on 2 and 8
blocks, with ties and NaNs, and the bytes vs a hand count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

RNG = np.random.default_rng(23)
X = np.round(RNG.standard_normal((4, 16)), 1)  # one decimal: ties across blocks
X[1, 5] = X[2, 3] = X[2, 12] = np.nan          # a NaN, and a later one in another block
WEIGHTS = RNG.standard_normal((4, 16))          # an index off by one changes the loss


def _f(lib, name, x, w):
    v, i = getattr(lib, name)(x, 1)
    v = lib.where(lib.isnan(v), lib.zeros_like(v), v)
    return (v ** 2).mean() + (i * w).sum()


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape,names,spec", [
    ((2, 2), ("a", "b"), P("a", "b")),              # 2 blocks of 8, rows split too
    ((4, 2), ("s", "t"), P(None, ("s", "t"))),      # 8 blocks of 2 over both axes
])
def test_split_cumextreme_matches_torch(name, shape, names, spec):
    mesh = pf.DeviceMesh(shape, names)
    xs = pf.shard(pf.tensor(X).requires_grad_(), mesh, spec)
    step = pf.sharding.partition(lambda x, w: _f(pf, name, x, w))
    out = step(xs, pf.shard(pf.tensor(WEIGHTS), mesh, spec))  # laid out as x
    out.backward()
    tx = torch.tensor(X, requires_grad=True)
    want = _f(torch, name, tx, torch.tensor(WEIGHTS))
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    ir = step.last.device_ir
    n = mesh.axis_size(spec[1])
    rows = X.shape[0] // mesh.axis_size(spec[0] or ())
    assert f"pyflame.{name} %" in ir and f"tensor<{rows}x{16 // n}xf64>" in ir
    gathers = [ln for ln in ir.splitlines() if "sharding.all_gather" in ln]
    assert len(gathers) == 2  # the running extremes and their indices, not x
    assert f"tensor<{rows}x1xf64> -> tensor<{rows}x{n}xf64>" in gathers[0]
    assert f"tensor<{rows}x1xi64> -> tensor<{rows}x{n}xi64>" in gathers[1]
    # bytes, ring all-gather: (n - 1) x the (rows, 1) f64 values and i64 indices
    # per device (a gathered x would move (n - 1) x rows x 16 / n x 8 per device)
    assert step.last.comm.by_name()["all_gather"] == mesh.size * (n - 1) * rows * (8 + 8)


def test_cummax_needed_whole_is_gathered_first():
    """A cummax whose indices are a program output is computed whole."""
    mesh = pf.DeviceMesh((2,), ("b",))
    xs = pf.shard(pf.tensor(X), mesh, P(None, "b"))
    whole = pf.sharding.partition(lambda x: pf.cummax(x, 1)[1])
    np.testing.assert_array_equal(whole(xs).numpy(), torch.cummax(torch.tensor(X), 1)[1].numpy())
    assert "tensor<4x8xf64> -> tensor<4x16xf64>" in whole.last.device_ir
