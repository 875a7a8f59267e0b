"""Issue 17: sequence parallelism as Megatron-SP, written with ``shard_map``: the
residual stream's sequence dimension is split over the "model" axis outside
the MLP (layer norm, residual add and the loss run on sequence blocks), an
all-gather over "model" restores the whole sequence before the column-parallel
first layer, and a reduce-scatter of the row-parallel second layer's partial
sums along the sequence returns to sequence blocks; the batch is split over
"data". 20 SGD steps give torch's unsharded losses and weights."""

from __future__ import annotations

import numpy as np
import torch

import pyflame_mlir as pf
from pyflame_mlir import P
from pyflame_mlir.nn import functional as F

B, T, C, H = 4, 8, 6, 12


def _block(lib, x, g, b, w1, w2):
    f = torch.nn.functional if lib is torch else F
    h = f.layer_norm(x, (C,), g, b)
    return x + f.gelu(h @ w1) @ w2


def _device_step(x, g, b, w1, w2):
    """One device: x (B/2, T/2, C) its batch rows and sequence block, w1 (C, H/2)
    and w2 (H/2, C) its hidden features."""
    h = F.layer_norm(x, (C,), g, b)                       # on the sequence block
    h = pf.all_gather(h, "model", dim=1, tiled=True)      # the whole sequence
    part = F.gelu(h @ w1) @ w2                            # partial sums over "model"
    y = x + pf.reduce_scatter(part, "model", dim=1, tiled=True)  # back to blocks
    # the global mean of y^2: every device's block summed over the whole mesh
    return pf.all_reduce((y ** 2).sum(), ("data", "model")) / (B * T * C)


def test_sequence_parallel_mlp_block_trains_like_torch():
    rng = np.random.default_rng(5)
    mesh = pf.DeviceMesh((2, 2), ("data", "model"))
    x = rng.standard_normal((B, T, C))
    ws = [1 + 0.1 * rng.standard_normal(C), 0.1 * rng.standard_normal(C),
          rng.standard_normal((C, H)) * 0.4, rng.standard_normal((H, C)) * 0.4]
    params = [pf.tensor(w).requires_grad_() for w in ws]
    tws = [torch.tensor(w, requires_grad=True) for w in ws]
    step = pf.shard_map(_device_step, mesh,
                        in_specs=(P("data", "model"), P(), P(), P(None, "model"), P("model")),
                        out_specs=P())
    for _ in range(20):
        loss = step(pf.tensor(x), *params)
        loss.backward()
        tl = (_block(torch, torch.tensor(x), *tws) ** 2).mean()
        tl.backward()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
        with pf.no_grad():
            for p in params:
                p -= 0.2 * p.grad
                p.grad = None
        with torch.no_grad():
            for t in tws:
                t -= 0.2 * t.grad
                t.grad = None
    for p, t in zip(params, tws, strict=True):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12)
    names = [c.name for c in step.last_comm.collectives]
    assert names == ["all_gather", "reduce_scatter", "all_reduce"]
