"""Issue 17: ``softmax`` and ``logsumexp`` along a split dimension, without
gathering it: the shard's max, all-reduced (max; a constant for autodiff),
the shard's sum of ``exp(x - max)``, all-reduced (sum), then ``exp(x - max) /
sum`` or ``max + log(sum)`` on the shard. Values and gradients vs torch, and
the bytes moved (``CompileReport.collectives``) vs a hand count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

RNG = np.random.default_rng(17)
H, W, T = RNG.standard_normal((8, 4)), RNG.standard_normal((4, 16)), RNG.random((8, 16))


def _loss(lib, h, w, t):
    """logsumexp of logits split by vocabulary, and a soft-target term of their
    softmax (distillation: every use sums it over the vocabulary)."""
    z = h @ w
    return (lib.logsumexp(z, 1) ** 2).mean() - (lib.softmax(z, 1) * t).sum(1).mean()


def _torch_grad(f, *arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = f(*ts)
    out.backward()
    return out.item(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("shape,names,batch", [((2,), ("model",), None),
                                               ((2, 2), ("data", "model"), "data")])
def test_split_softmax_and_logsumexp_match_torch(shape, names, batch):
    mesh = pf.DeviceMesh(shape, names)
    ws = pf.shard(pf.tensor(W).requires_grad_(), mesh, P(None, "model"))
    hs = pf.shard(pf.tensor(H).requires_grad_(), mesh, P(batch))
    step = pf.sharding.partition(lambda h, w, t: _loss(pf, h, w, t))
    loss = step(hs, ws, pf.shard(pf.tensor(T), mesh, P(batch, "model")))
    loss.backward()
    want, (gh, gw) = _torch_grad(lambda h, w: _loss(torch, h, w, torch.tensor(T)), H, W)
    np.testing.assert_allclose(loss.item(), want, rtol=1e-12)
    np.testing.assert_allclose(ws.grad.numpy(), gw, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(hs.grad.numpy(), gh, rtol=1e-10, atol=1e-14)
    ir = step.last.device_ir
    assert "sharding.all_gather" not in ir
    assert "pyflame.softmax" not in ir and "pyflame.logsumexp" not in ir
    assert ir.count('reduction = "max"') == 2  # one shift per normalization


def test_logsumexp_over_two_split_dims_keepdim():
    """Both reduced dimensions split (over "a" and "b"), the kept one whole: the
    max and the sum are all-reduced over both axes at once."""
    x = RNG.standard_normal((3, 4, 6)) * 2
    mesh = pf.DeviceMesh((2, 2), ("a", "b"))
    xs = pf.shard(pf.tensor(x).requires_grad_(), mesh, P(None, "a", "b"))

    def f(lib, x):
        return (lib.logsumexp(x, (1, 2), keepdim=True) * x).sum()

    step = pf.sharding.partition(lambda x: f(pf, x))
    out = step(xs)
    out.backward()
    want, (gx,) = _torch_grad(lambda x: f(torch, x), x)
    np.testing.assert_allclose(out.item(), want, rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), gx, rtol=1e-10, atol=1e-13)
    ir = step.last.device_ir
    assert "sharding.all_gather" not in ir
    assert ir.count('axes = ["a", "b"], reduction = "max"') == 1


@pytest.mark.usefixtures("lazy")  # compile_graph of the recorded step (eager mode runs it)
def test_split_logsumexp_bytes_by_hand():
    """A 2x2 mesh, rows over "data", vocabulary over "model", f64: each device
    holds (4, 8) of the (8, 16) logits. Forward: over "model", the (4, 1) max
    and the (4, 1) sum of exponentials (ring all-reduce, n = 2: 32 B per device
    each, 128 B over the 4 devices); over "data", the mean of the loss (an f64
    scalar: 8 B per device, 32 B). Backward: the transposes of the sum's and
    the mean's all-reduces (the max is a constant for autodiff). Gradient: the
    (4, 8) weight block, replicated over "data": 256 B per device. Gathering
    the logits instead would move (n - 1) x 256 B per device, as much again
    for their cotangent."""
    mesh = pf.DeviceMesh((2, 2), ("data", "model"))
    ws = pf.shard(pf.tensor(W).requires_grad_(), mesh, P(None, "model"))
    step = pf.sharding.partition(lambda h, w: pf.logsumexp(h @ w, 1).mean())
    loss = step(pf.shard(pf.tensor(H), mesh, P("data")), ws)
    loss.backward()
    report = pf.compile_graph([loss, ws.grad])
    got = [(c.name, c.axes, c.total_bytes, c.phase) for c in report.collectives]
    model = ("all_reduce", ("model",), 128)
    data = ("all_reduce", ("data",), 32)
    assert sorted(got) == sorted([(*model, "forward")] * 2 + [(*data, "forward")]
                                 + [(*model, "backward"), (*data, "backward")]
                                 + [("all_reduce", ("data",), 4 * 256, "gradient")])
    np.testing.assert_allclose(loss.item(), torch.logsumexp(torch.tensor(H @ W), 1).mean().item(),
                               rtol=1e-12)
