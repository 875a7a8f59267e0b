"""Issue 17: Megatron's vocabulary-parallel cross entropy. Logits split by
vocabulary (the head's weight split by columns) are not gathered before
``log_softmax``: each device takes its shard's max (all-reduced, max), its sum
of exponentials (all-reduced, sum) and the target logit where its shard owns
the target (all-reduced, sum). Values and gradients vs torch, and the bytes
moved (``CompileReport.collectives``) vs a hand count without any all-gather."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P
from pyflame_mlir.nn import functional as F

N, C, V = 8, 4, 16


def _data():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((N, C)), rng.standard_normal((C, V)),
            rng.integers(0, V, N))


def _loss(h, w, y):
    return F.cross_entropy(h @ w, y)


def _torch(h, w, y):
    tw = torch.tensor(w, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(torch.tensor(h) @ tw, torch.tensor(y))
    tl.backward()
    return tl.item(), tw.grad.numpy()


def torch_sgd_losses(steps: int) -> list[float]:
    """torch's losses of ``steps`` SGD steps (lr 0.5) on the weight."""
    h, w, y = _data()
    out = []
    for _ in range(steps):
        loss, grad = _torch(h, w, y)
        w = w - 0.5 * grad
        out.append(loss)
    return out


CASES = [((2,), ("model",), None), ((2, 2), ("data", "model"), "data"),
         ((4, 2), ("model", "data"), "data")]


@pytest.mark.parametrize("shape,names,batch", CASES)
def test_vocab_parallel_cross_entropy_matches_torch(shape, names, batch):
    h, w, y = _data()
    mesh = pf.DeviceMesh(shape, names)
    ws = pf.shard(pf.tensor(w).requires_grad_(), mesh, P(None, "model"))
    opt = pf.optim.SGD([ws], lr=0.5)
    step = pf.sharding.partition(_loss)
    hs, ys = pf.shard(pf.tensor(h), mesh, P(batch)), pf.shard(pf.tensor(y), mesh, P(batch))
    for _ in range(3):  # a few SGD steps: the sharded weight follows torch's
        loss = step(hs, ws, ys)
        loss.backward()
        want, grad = _torch(h, w, y)
        np.testing.assert_allclose(loss.item(), want, rtol=1e-12)
        np.testing.assert_allclose(ws.grad.numpy(), grad, rtol=1e-10, atol=1e-14)
        opt.step()
        opt.zero_grad()
        w = w - 0.5 * grad
    ir = step.last.device_ir
    assert "sharding.all_gather" not in ir
    n_model = mesh.axis_size("model")
    assert f"tensor<{N // (mesh.size // n_model)}x{V // n_model}xf64>" in ir  # split logits
    assert ir.count('reduction = "max"') == 1


def test_vocab_parallel_bytes_by_hand(lazy):
    """A 2x2 mesh, rows over "data", vocabulary over "model"; f64. Each device
    holds (4, 8) of the (8, 16) logits. Forward: over "model" (ring all-reduce:
    2 (n - 1) / n of the operand per device, n = 2), the (4, 1) max, the (4, 1)
    sum of exponentials and the (4,) target logits: 32 B per device each, 128 B
    over the 4 devices; over "data", the loss's numerator and denominator
    (f64 scalars: 8 B per device, 32 B). Backward: the transposes of the two
    differentiable all-reduces over "model" (the max is a constant for
    autodiff) and of the numerator's. Gradient: the (4, 8) weight block,
    replicated over "data", all-reduced: 256 B per device. The all-gather this
    replaces would move (n - 1) x 256 B = 256 B per device for the logits alone,
    as much again for their cotangent.
    Lazy-only: it compiles the recorded step (eager mode runs it).
    """
    h, w, y = _data()
    mesh = pf.DeviceMesh((2, 2), ("data", "model"))
    ws = pf.shard(pf.tensor(w).requires_grad_(), mesh, P(None, "model"))
    step = pf.sharding.partition(_loss)
    loss = step(pf.shard(pf.tensor(h), mesh, P("data")), ws,
                pf.shard(pf.tensor(y), mesh, P("data")))
    loss.backward()
    report = pf.compile_graph([loss, ws.grad])
    got = [(c.name, c.axes, c.total_bytes, c.phase) for c in report.collectives]
    model = ("all_reduce", ("model",), 128)
    data = ("all_reduce", ("data",), 32)
    assert sorted(got) == sorted([(*model, "forward")] * 3 + [(*data, "forward")] * 2
                                 + [(*model, "backward")] * 2 + [(*data, "backward")]
                                 + [("all_reduce", ("data",), 4 * 256, "gradient")])
    assert report.collective_bytes == 3 * 128 + 2 * 32 + 2 * 128 + 32 + 1024


def test_split_log_softmax_values_and_gradients():
    """log_softmax along a split dimension whose every use is reduced along it
    (soft-target cross entropy, a mean of squares) stays split, vs torch; a
    log_softmax (or softmax) needed whole is computed whole (gathered first)."""
    rng = np.random.default_rng(4)
    x, t = rng.standard_normal((4, 8)) * 3, rng.random((4, 8))
    mesh = pf.DeviceMesh((2,), ("m",))

    def f(lib, x, t):
        logp = lib.log_softmax(x, 1)
        return -(logp * t).sum(1).mean() + (logp ** 2).mean()

    xs = pf.shard(pf.tensor(x).requires_grad_(), mesh, P(None, "m"))
    ts = pf.shard(pf.tensor(t), mesh, P(None, "m"))
    step = pf.sharding.partition(lambda x, t: f(pf, x, t))
    out = step(xs, ts)
    out.backward()
    tx = torch.tensor(x, requires_grad=True)
    tl = f(torch, tx, torch.tensor(t))
    tl.backward()
    np.testing.assert_allclose(out.item(), tl.item(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert "sharding.all_gather" not in step.last.device_ir
    for name in ("log_softmax", "softmax"):
        whole = pf.sharding.partition(lambda x, name=name: getattr(F, name)(x, 1))
        want = getattr(torch, name)(tx, 1).detach().numpy()
        np.testing.assert_allclose(whole(xs).numpy(), want, rtol=1e-12)
        assert "sharding.all_gather" in whole.last.device_ir
