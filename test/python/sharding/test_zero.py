"""Issue 17: optimizer-state sharding (ZeRO-1, ``pf.sharding.ZeroAdamW``): the
AdamW moments split over the "data" axis, each device updating its block of
every parameter and all-gathering it, train a data-parallel MLP to torch's
AdamW losses and weights, step by step."""

from __future__ import annotations

import numpy as np
import torch

import pyflame_mlir as pf
from pyflame_mlir import P


def test_zero1_adamw_matches_torch():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
    ws = [rng.standard_normal((6, 5)) * 0.5, rng.standard_normal(5) * 0.1,
          rng.standard_normal((5, 3)) * 0.5]  # 30, 5 (padded to 8) and 15 (to 16) elements
    mesh = pf.DeviceMesh((4, 2), ("data", "model"))
    params = [pf.tensor(w).requires_grad_() for w in ws]
    opt = pf.sharding.ZeroAdamW(params, mesh, "data", lr=0.05, weight_decay=0.1)
    tws = [torch.tensor(w, requires_grad=True) for w in ws]
    topt = torch.optim.AdamW(tws, lr=0.05, weight_decay=0.1)
    loss_fn = pf.sharding.partition(lambda a, b, w1, b1, w2: ((pf.relu(a @ w1 + b1) @ w2 - b)
                                                                ** 2).mean())
    xs, ys = pf.shard(pf.tensor(x), mesh, P("data")), pf.shard(pf.tensor(y), mesh, P("data"))
    for _ in range(20):
        loss = loss_fn(xs, ys, *params)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tl = ((torch.relu(torch.tensor(x) @ tws[0] + tws[1]) @ tws[2] - torch.tensor(y))
              ** 2).mean()
        topt.zero_grad()
        tl.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
    for p, t in zip(params, tws, strict=True):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12)
    m, v = opt.moments(0)
    assert m.sharding.spec == P("data") and m.shape == (32,)  # 30 padded to 4 blocks of 8
    np.testing.assert_allclose(m.numpy()[:30], topt.state[tws[0]]["exp_avg"].numpy().ravel(),
                               rtol=1e-9, atol=1e-12)
    # the all-gather of the last parameter's updated 4-element blocks (f64, 32 B):
    # each device sends 3 x 32 B, 8 devices
    (ag,) = opt.last_comm.collectives
    assert (ag.name, ag.axes, ag.bytes_per_device, ag.total_bytes) == \
        ("all_gather", ("data",), 96, 768)
