"""The reference backend's fast paths for training steps (docs/PERFORMANCE.md,
issue 14): they must give the same values as the plain kernels and torch.

- ``PadSum``: a fused sum of single-use zero paddings (the VJP of conv and
  pooling window slices) adds each padded operand into its region.
- matmul of a stack by one matrix (linear layers) as one GEMM, forward and
  the weight's gradient.
"""

from __future__ import annotations

import numpy as np
import pyflame_mlir.lowering.reference as reference_lowering
import pytest
import torch
from pyflame_mlir.lowering.reference import PadSum

import pyflame_mlir as pf
from pyflame_mlir.compiler import CACHE


def test_pad_sum_matches_pads_then_adds() -> None:
    """Strided (interior) and plain regions, whole-array terms, and a reused
    output buffer holding garbage: the sum of the padded arrays."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    whole = rng.standard_normal((5, 7))
    regions = ((slice(1, 4, 2), slice(0, 5, 2)), (slice(0, 2), slice(4, 7)), None)
    ref = np.zeros((5, 7))
    ref[1:4:2, 0:5:2] += a
    ref[0:2, 4:7] += b
    ref += whole
    kernel = PadSum(regions, (5, 7), np.dtype(np.float64))
    np.testing.assert_allclose(kernel(a, b, whole), ref, rtol=1e-15, atol=1e-15)
    out = np.full((5, 7), np.nan)
    assert kernel(a, b, whole, out=out) is out
    np.testing.assert_allclose(out, ref, rtol=1e-15, atol=1e-15)
    only_pads = PadSum(regions[:2], (5, 7), np.dtype(np.float64))
    np.testing.assert_allclose(only_pads(a, b, out=np.full((5, 7), 9.0)), ref - whole,
                               rtol=1e-14, atol=1e-14)


@pytest.fixture
def plan_steps(monkeypatch):
    """The step names of every reference plan lowered while the test runs."""
    names: list[str] = []
    lower = reference_lowering.lower

    def spy(module, *args, **kwargs):
        plan = lower(module, *args, **kwargs)
        names.extend(st.name for st in plan.steps)
        return plan
    monkeypatch.setattr(reference_lowering, "lower", spy)
    CACHE.clear()
    return names


@pytest.mark.parametrize("stride,dilation,padding", [(1, 1, 1), (2, 1, 0), (2, 2, 2)])
def test_conv_and_pool_gradients_through_pad_sums_match_torch(plan_steps, stride, dilation,
                                                               padding) -> None:
    rng = np.random.default_rng(stride + 3 * dilation)
    x = rng.standard_normal((2, 3, 9, 8))
    w = rng.standard_normal((4, 3, 3, 3))
    c = rng.standard_normal((2, 4, 2, 2))

    def loss(lib, xv, wv):
        y = lib.nn.functional.conv2d(xv, wv, stride=stride, padding=padding,
                                     dilation=dilation)
        y = lib.nn.functional.max_pool2d(lib.relu(y), 2)
        y = lib.nn.functional.adaptive_avg_pool2d(y, 2)
        return (y * lib.tensor(c)).sum()

    gx, gw = pf.grad(lambda a, b: loss(pf, a, b), argnums=(0, 1))(pf.tensor(x), pf.tensor(w))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    loss(torch, tx, tw).backward()
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert "pad_sum" in plan_steps


@pytest.mark.parametrize("xshape,wshape", [((3, 4, 5), (5, 6)), ((2, 1, 3, 5), (5, 2)),
                                           ((0, 4, 5), (5, 6)), ((3, 4, 0), (0, 6))])
def test_stack_times_matrix_and_its_gradients_match_torch(xshape, wshape) -> None:
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(xshape), rng.standard_normal(wshape)
    c = rng.standard_normal(xshape[:-1] + wshape[-1:])
    out = pf.tensor(x.astype(np.float32)) @ pf.tensor(w.astype(np.float32))
    ref = torch.tensor(x, dtype=torch.float32) @ torch.tensor(w, dtype=torch.float32)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    gx, gw = pf.grad(lambda a, b: ((a @ b) * pf.tensor(c)).sum(), argnums=(0, 1))(
        pf.tensor(x), pf.tensor(w))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ((tx @ tw) * torch.tensor(c)).sum().backward()
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
    _, tangent = pf.jvp(lambda a, b: a @ b, (pf.tensor(x), pf.tensor(w)),
                        (pf.tensor(np.ones_like(x)), pf.tensor(np.ones_like(w))))
    _, ttangent = torch.func.jvp(torch.matmul, (torch.tensor(x), torch.tensor(w)),
                                 (torch.ones(xshape, dtype=torch.float64),
                                  torch.ones(wshape, dtype=torch.float64)))
    np.testing.assert_allclose(tangent.numpy(), ttangent.numpy(), rtol=1e-12, atol=1e-12)
