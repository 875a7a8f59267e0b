"""Issue 17: single-device code over sharded inputs (pf.sharding.partition):
propagation + SPMD partitioning + every device's program on the virtual mesh
give the unsharded results (forward, gradients, SGD training) vs torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

CASES = [  # mesh shape, axis names, specs of x, w1, w2
    ((1,), ("d",), P("d"), P(), P()),
    ((2,), ("d",), P("d"), P(), P()),                       # data parallel
    ((2,), ("m",), P(), P(None, "m"), P("m")),              # Megatron column/row
    ((2, 2), ("d", "m"), P("d"), P(None, "m"), P("m")),     # mixed
    ((4, 2), ("d", "m"), P("d"), P(None, "m"), P("m")),
    ((2, 2), ("d", "m"), P(("d", "m")), P(), P()),          # batch over both axes
]


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 6)), rng.standard_normal((8, 3)),
            rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5)


def _loss(x, y, w1, w2):
    return ((pf.relu(x @ w1) @ w2 - y) ** 2).mean()


@pytest.mark.parametrize("shape,names,sx,s1,s2", CASES)
def test_partitioned_mlp_trains_like_torch(shape, names, sx, s1, s2):
    mesh = pf.DeviceMesh(shape, names)
    x, y, w1, w2 = _data()
    xs = pf.shard(pf.tensor(x), mesh, sx)
    ys = pf.shard(pf.tensor(y), mesh, sx)
    params = [pf.shard(pf.tensor(w1).requires_grad_(), mesh, s1),
              pf.shard(pf.tensor(w2).requires_grad_(), mesh, s2)]
    opt = pf.optim.SGD(params, lr=0.1)
    tw = [torch.tensor(w, requires_grad=True) for w in (w1, w2)]
    topt = torch.optim.SGD(tw, lr=0.1)
    loss_fn = pf.sharding.partition(_loss)
    steps = 20 if len(shape) == 2 else 3  # 20 steps on the 2-d meshes (time)
    for _ in range(steps):
        loss = loss_fn(xs, ys, *params)
        loss.backward()
        tl = ((torch.relu(torch.tensor(x) @ tw[0]) @ tw[1] - torch.tensor(y)) ** 2).mean()
        tl.backward()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
        for p, t in zip(params, tw, strict=True):
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
        opt.step()
        opt.zero_grad()
        topt.step()
        topt.zero_grad()
    assert params[0].sharding.spec == s1  # the parameters stay sharded
    ir = loss_fn.last.device_ir
    if "m" in names:
        assert "sharding.all_reduce" in ir  # the row-parallel partial sums


def test_partitioned_program_reports_its_communication(both_modes):
    """In eager mode too the function is recorded and partitioned (it used to
    run on one device: no program, no collectives), and its result is a value."""
    mesh = pf.DeviceMesh((2,), ("m",))
    x, _, w1, w2 = _data()
    f = pf.sharding.partition(lambda a, b, c: pf.relu(a @ b) @ c)
    out = f(pf.tensor(x), pf.shard(pf.tensor(w1), mesh, P(None, "m")),
            pf.shard(pf.tensor(w2), mesh, P("m")))
    assert pf.is_lazy(out) == (both_modes == "lazy")
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w1, 0) @ w2, rtol=1e-12)
    (ar,) = f.last.comm.collectives
    # one all-reduce of the (8, 3) f64 partial sums over 2 devices: each device
    # sends 2 * (2 - 1) / 2 * 192 bytes
    assert (ar.name, ar.bytes_per_device, ar.total_bytes) == ("all_reduce", 192, 384)
    assert f.last.bytes_estimate == 384  # the compiler's count over the device IR


def test_partitioned_ops_without_rules_and_reshapes(monkeypatch):
    """An op without a factor rule is replicated, with a warning (cumsum has one
    now: it is taken out of the table here); softmax and concat keep their
    dimension whole; reshape and transpose carry the batch split."""
    from pyflame_mlir.dialects import OPS
    from pyflame_mlir.dialects.sharding import FACTOR_RULES

    monkeypatch.delitem(FACTOR_RULES, OPS["cumsum"])
    mesh = pf.DeviceMesh((2, 2), ("a", "b"))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 4))

    def f(t):
        s = pf.softmax(t, dim=1).reshape(4, 8).transpose(0, 1)
        return pf.cumsum(s * 2.0, dim=0).sum(dim=1) + s.sum() + pf.cat([t, t * 3.0], 1).sum(1)

    with pytest.warns(UserWarning, match="cumsum has no factor rule"):
        out = pf.sharding.partition(f)(pf.shard(pf.tensor(x), mesh, P("a", "b")))
    tx = torch.tensor(x)
    ts = torch.softmax(tx, dim=1).reshape(4, 8).T
    want = torch.cumsum(ts * 2.0, dim=0).sum(dim=1) + ts.sum() + torch.cat([tx, tx * 3.0], 1).sum(1)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)


def test_partitioned_attention_splits_heads_like_megatron():
    """Causal self-attention with q, k, v split by heads (columns) and the output
    projection by rows: propagation carries the head split through reshape,
    transpose, the batched matmuls, the mask and softmax; one all-reduce of the
    projection's partial sums; forward and gradients equal torch."""
    B, T, C, H = 2, 4, 8, 2
    mesh = pf.DeviceMesh((2,), ("m",))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((B, T, C))
    ws = [rng.standard_normal((C, C)) * 0.3 for _ in range(4)]
    mask = np.tril(np.ones((T, T)))

    def attention(lib, x, wq, wk, wv, wo, mask):
        def heads(t):
            return (x @ t).reshape(B, T, H, C // H).transpose(1, 2)
        q, k, v = heads(wq), heads(wk), heads(wv)
        att = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(C // H))
        att = att.masked_fill(mask == 0, float("-inf"))
        att = lib.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return ((y @ wo) ** 2).sum()

    f = pf.sharding.partition(lambda *a: attention(pf, *a))
    params = [pf.shard(pf.tensor(w).requires_grad_(), mesh, s)
              for w, s in zip(ws, [P(None, "m")] * 3 + [P("m")], strict=True)]
    out = f(pf.tensor(x), *params, pf.tensor(mask))
    out.backward()
    tws = [torch.tensor(w, requires_grad=True) for w in ws]
    want = attention(torch, torch.tensor(x), *tws, torch.tensor(mask))
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-10)
    for p, t in zip(params, tws, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    ir = f.last.device_ir
    assert ir.count("sharding.all_reduce") == 1 and "sharding.all_gather" not in ir
    assert "tensor<2x1x4x4xf64>" in ir  # each device holds one of the two heads
