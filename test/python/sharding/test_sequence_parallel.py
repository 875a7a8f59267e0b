"""Issue 17: sequence parallelism as Megatron-SP, written with ``shard_map``: the
residual stream's sequence dimension is split over the "model" axis outside
the MLP (layer norm, residual add and the loss run on sequence blocks), an
all-gather over "model" restores the whole sequence before the column-parallel
first layer, and a reduce-scatter of the row-parallel second layer's partial
sums along the sequence returns to sequence blocks; the batch is split over
"data". 20 SGD steps give torch's unsharded losses and weights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P
from pyflame_mlir.nn import functional as F

sys.path.insert(0, str(Path(__file__).parent))
from test_vocab_parallel import torch_sgd_losses  # noqa: E402

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


# ---- the same block written with specs: pf.reshard inside a partition-ed function ----


def _sp_loss(mesh, batch):
    """Single-device code; two layouts asked for inside it make it Megatron-SP:
    the whole sequence before the column-parallel layer, sequence blocks after
    the row-parallel one (the partitioner inserts the all-gather and the
    reduce-scatter)."""

    def loss(x, g, b, w1, w2):
        h = F.layer_norm(x, (C,), g, b)                    # on sequence blocks
        h = pf.reshard(h, mesh, P(batch))                  # whole sequence
        part = F.gelu(h @ w1) @ w2                         # partial sums over "model"
        y = x + pf.reshard(part, mesh, P(batch, "model"))  # sequence blocks again
        return (y ** 2).mean()

    return loss


STEPS = 20


def _sp_data() -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((B, T, C))
    return x, [1 + 0.1 * rng.standard_normal(C), 0.1 * rng.standard_normal(C),
               rng.standard_normal((C, H)) * 0.4, rng.standard_normal((H, C)) * 0.4]


def _torch_sp_losses(steps: int) -> list[float]:
    x, ws = _sp_data()
    tws = [torch.tensor(w, requires_grad=True) for w in ws]
    out = []
    for _ in range(steps):
        tl = (_block(torch, torch.tensor(x), *tws) ** 2).mean()
        tl.backward()
        with torch.no_grad():
            for t in tws:
                t -= 0.2 * t.grad
                t.grad = None
        out.append(tl.item())
    return out


def test_sequence_parallel_with_specs_on_two_processes(tmp_path):
    """mp_sp_script.py: the SP block with specs, and the vocabulary-parallel
    cross entropy (test_vocab_parallel.py), one device per process."""
    out = tmp_path / "losses.json"
    script = Path(__file__).with_name("mp_sp_script.py")
    r = subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", "2",
                        str(script), str(out)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    np.testing.assert_allclose(got["sp"], _torch_sp_losses(STEPS), rtol=1e-10)
    np.testing.assert_allclose(got["ce"], torch_sgd_losses(3), rtol=1e-12)


@pytest.mark.parametrize("shape,names", [((2,), ("model",)), ((2, 2), ("data", "model"))])
def test_sequence_parallel_with_specs_trains_like_torch(shape, names):
    mesh = pf.DeviceMesh(shape, names)
    batch = "data" if "data" in names else None
    x, ws = _sp_data()
    specs = [P(), P(), P(None, "model"), P("model")]
    params = [pf.shard(pf.tensor(w).requires_grad_(), mesh, s) for w, s in zip(ws, specs)]
    tws = [torch.tensor(w, requires_grad=True) for w in ws]
    step = pf.sharding.partition(_sp_loss(mesh, batch))
    xs = pf.shard(pf.tensor(x), mesh, P(batch, "model"))
    for _ in range(STEPS if len(shape) == 2 else 5):
        loss = step(xs, *params)
        loss.backward()
        tl = (_block(torch, torch.tensor(x), *tws) ** 2).mean()
        tl.backward()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
        for p, t in zip(params, tws, strict=True):
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)
        with pf.no_grad():
            for p in params:
                p -= 0.2 * p.grad
                p.grad = None
        with torch.no_grad():
            for t in tws:
                t -= 0.2 * t.grad
                t.grad = None
    ir = step.last.device_ir
    # the all-gather of the normalized sequence blocks and the reduce-scatter of
    # the partial sums, both along the sequence (dim 1) over "model"; the
    # weights stay local: no all-gather of them
    local_t = T // 2
    nb = B // 2 if batch else B
    gathers = [ln for ln in ir.splitlines() if "sharding.all_gather" in ln]
    assert len(gathers) == 1 and 'axes = ["model"], dim = 1' in gathers[0], gathers
    assert f"tensor<{nb}x{local_t}x{C}xf64> -> tensor<{nb}x{T}x{C}xf64>" in gathers[0]
    scatters = [ln for ln in ir.splitlines() if "sharding.reduce_scatter" in ln]
    assert len(scatters) == 1 and 'axes = ["model"], dim = 1' in scatters[0], scatters
    # forward: the gather and the scatter move the same bytes (a (nb, T, C) f64
    # tensor's (n - 1)/n per device, n = 2), plus the loss's all-reduce
    comm = step.last.comm.by_name()
    per_device = nb * T * C * 8 // 2
    assert comm["all_gather"] == comm["reduce_scatter"] == mesh.size * per_device
