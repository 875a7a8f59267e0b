"""Issue 17: a periodic slice along a split dimension (every ``k``-th element
from one of the first ``k``: RoPE's ``x[..., 0::2]`` and ``x[..., 1::2]``)
stays split: each block of the result is the same slice of the operand's
block, no gather. Where the device count does not divide the result, the
dimension is gathered first. Values and gradients vs torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

RNG = np.random.default_rng(29)


def _rotate(lib, x, cos, sin):
    """Rotary embedding on interleaved pairs, then a loss reducing it."""
    even, odd = x[..., 0::2], x[..., 1::2]
    y = lib.cat([even * cos - odd * sin, even * sin + odd * cos], -1)
    return (y ** 2 * lib.arange(y.shape[-1], dtype=y.dtype)).mean() + x[..., 1::4].sum()


@pytest.mark.parametrize("shape,names,spec,gathers", [
    ((2, 2), ("a", "b"), P("a", None, "b"), 0),       # blocks of 8 features: 4 pairs each
    ((4,), ("b",), P(None, None, "b"), 0),            # blocks of 4 features: 2 pairs each
    ((8,), ("b",), P(None, None, "b"), 1),            # blocks of 2: x[..., 1::4] has 4 (< 8)
])
def test_periodic_slice_stays_split(shape, names, spec, gathers):
    x, ang = RNG.standard_normal((2, 3, 16)), RNG.standard_normal((3, 8))
    cos, sin = np.cos(ang), np.sin(ang)
    mesh = pf.DeviceMesh(shape, names)
    xs = pf.shard(pf.tensor(x).requires_grad_(), mesh, spec)
    step = pf.sharding.partition(lambda x, c, s: _rotate(pf, x, c, s))
    out = step(xs, pf.tensor(cos), pf.tensor(sin))
    out.backward()
    tx = torch.tensor(x, requires_grad=True)
    want = _rotate(torch, tx, torch.tensor(cos), torch.tensor(sin))
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    ir = step.last.device_ir
    n = mesh.axis_size("b")
    # the even/odd halves are sliced from the local block (16 / n features)
    assert f"tensor<{2 // mesh.axis_size(spec[0] or ())}x3x{16 // n}xf64>) -> " \
           f"tensor<{2 // mesh.axis_size(spec[0] or ())}x3x{8 // n}xf64>" in ir
    # x itself is gathered only for the slice the devices cannot share out
    x_gathers = [ln for ln in ir.splitlines() if "sharding.all_gather %0 " in ln]
    assert len(x_gathers) == gathers
