"""Issue 17: scans along a split dimension by a carry exchange. Each device
scans its block, the blocks' totals are all-gathered (a (rows, 1) slice per
device, not the blocks), and each block is combined with the totals of the
blocks before it. Values and gradients vs torch, on 2 and 8 blocks, and the
bytes of the one all-gather vs a hand count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 16))


def _f(lib, name, x):
    if name == "cumprod":
        x = 1 + 0.2 * x  # products of 16 factors near 1
    y = getattr(lib, name)(x, 1)
    return (y ** 2).mean() + (y * 0.5).sum(0).mean()


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("shape,names,spec", [
    ((2, 2), ("a", "b"), P("a", "b")),              # 2 blocks of 8, rows split too
    ((4, 2), ("s", "t"), P(None, ("s", "t"))),      # 8 blocks of 2 over both axes
])
def test_split_scan_matches_torch(name, shape, names, spec):
    mesh = pf.DeviceMesh(shape, names)
    xs = pf.shard(pf.tensor(X).requires_grad_(), mesh, spec)
    step = pf.sharding.partition(lambda x: _f(pf, name, x))
    out = step(xs)
    out.backward()
    tx = torch.tensor(X, requires_grad=True)
    want = _f(torch, name, tx)
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    ir = step.last.device_ir
    n = mesh.axis_size(spec[1])
    rows = X.shape[0] // mesh.axis_size(spec[0] or ())
    # the scan runs on the local block; the one all-gather carries the totals
    assert f"pyflame.{name} %" in ir
    assert f"tensor<{rows}x{16 // n}xf64>" in ir
    (gather,) = [ln for ln in ir.splitlines() if "sharding.all_gather" in ln]
    assert f"tensor<{rows}x1xf64> -> tensor<{rows}x{n}xf64>" in gather
    # bytes, ring all-gather: (n - 1) x the (rows, 1) f64 totals per device
    # (a gathered x would move (n - 1) x rows x 16 / n x 8 per device)
    comm = step.last.comm.by_name()
    assert comm["all_gather"] == mesh.size * (n - 1) * rows * 8


def test_scan_needed_whole_is_gathered_first():
    """A scan whose result is a program output is computed whole (the same
    bytes gathered before as after it); one reduced by its uses stays split."""
    mesh = pf.DeviceMesh((2,), ("b",))
    xs = pf.shard(pf.tensor(X), mesh, P(None, "b"))
    whole = pf.sharding.partition(lambda x: pf.cumsum(x, 1))
    np.testing.assert_allclose(whole(xs).numpy(), np.cumsum(X, 1), rtol=1e-12)
    assert "tensor<4x8xf64> -> tensor<4x16xf64>" in whole.last.device_ir


def test_reverse_split_scan():
    """A reverse cumsum (here the gradient of a cumsum, taken inside the
    partitioned function) along a split dimension: the blocks after this one
    count (``gt`` mask), each block's first element is its total."""
    mesh = pf.DeviceMesh((2,), ("b",))
    xs = pf.shard(pf.tensor(X), mesh, P(None, "b"))

    def f(x):
        g = pf.grad(lambda z: (pf.cumsum(z, 1) * x).sum())(x)  # the reverse cumsum of x
        return (g ** 2).mean()

    step = pf.sharding.partition(f)
    tx = torch.tensor(X)
    want = (torch.flip(torch.cumsum(torch.flip(tx, (1,)), 1), (1,)) ** 2).mean()
    np.testing.assert_allclose(step(xs).item(), want.item(), rtol=1e-12)
    ir = step.last.device_ir
    assert "reverse = true" in ir and "pyflame.gt" in ir
    assert "tensor<4x8xf64> -> tensor<4x16xf64>" not in ir  # x is not gathered
