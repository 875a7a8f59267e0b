"""Issue 17: one device program per process, collectives over torch.distributed
(gloo), started by ``python -m pyflame_mlir.launch``; the global losses of 20
SGD steps equal the unsharded ones (torch) step by step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

SCRIPT = Path(__file__).with_name("mp_mlp_script.py")


def _torch_losses(adamw: bool = False, norms: list | None = None) -> list[float]:
    """SGD (lr 0.1), or AdamW (lr 0.05, weight decay 0.1, gradients clipped to norm 10)."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
    w1, w2 = rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5
    ws = [torch.tensor(w, requires_grad=True) for w in (w1, w2)]
    tx, ty = torch.tensor(x), torch.tensor(y)
    opt = torch.optim.AdamW(ws, lr=0.05, weight_decay=0.1) if adamw else None
    out = []
    for _ in range(20):
        loss = ((torch.relu(tx @ ws[0]) @ ws[1] - ty) ** 2).mean()
        loss.backward()
        if norms is not None:
            norms.append(torch.linalg.vector_norm(torch.cat([w.grad.ravel() for w in ws])).item())
        if opt is not None:
            torch.nn.utils.clip_grad_norm_(ws, 10.0)
            opt.step()
            opt.zero_grad()
            out.append(loss.item())
            continue
        with torch.no_grad():
            for w in ws:
                w -= 0.1 * w.grad
                w.grad = None
        out.append(loss.item())
    return out


@pytest.mark.parametrize("nproc,modes", [(2, "dp,partition,zero"),
                                         (4, "dp,mixed,partition,zero")])
def test_launch_matches_unsharded_losses(tmp_path, nproc, modes):
    out = tmp_path / "losses.json"
    r = subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", str(nproc),
                        str(SCRIPT), modes, str(out)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    assert sorted(got) == sorted(modes.split(","))
    zero = got.pop("zero")
    for losses in got.values():
        np.testing.assert_allclose(losses, _torch_losses(), rtol=1e-10)
    np.testing.assert_allclose(zero, _torch_losses(adamw=True), rtol=1e-10)
    stats = json.loads(Path(str(out) + ".stats.json").read_text())
    norms: list[float] = []
    _torch_losses(norms=norms)  # dist.clip_grad_norm_'s global norm of the split gradients
    np.testing.assert_allclose(stats["sgd_grad_norms"], norms, rtol=1e-10)
    _check_partition_traffic(stats, nproc)


def _check_partition_traffic(stats: dict, nproc: int) -> None:
    """``dist.partition`` of the MLP on a 2 x (nproc/2) mesh (batch on "d",
    w1 (6, 4) by columns and w2 (4, 3) by rows on "m", f64): each process holds
    the blocks (6, 4/m) and (4/m, 3), 36/m elements, and reduces them over "d"
    only (2 processes), not over the whole world. By hand, per process:
    an all-reduce of 36/m x 8 B over 2 sends 2 x 1/2 of it; ZeRO-2 sends the
    same as a reduce-scatter (1/2 of it) and an all-gather (its half), and
    keeps AdamW's two moments of its half only: 2 x 18/m x 8 B, 1/nproc of the
    replicated optimizer's 2 x 36 x 8 B (and its steps). The compiler's count
    (``CompileReport.collectives``, phase "gradient") agrees."""
    m = nproc // 2
    block = 36 // m * 8
    assert stats["sgd_grad_bytes_per_device"] == block
    assert stats["compiled_grad_bytes_per_device"] == block
    assert stats["zero_comm"] == [["reduce_scatter", 2, block // 2], ["all_gather", 2, block // 2]]
    # (+ each parameter's 'step', a 0-d float32 tensor as torch's: 2 x 4 B)
    assert stats["zero_state_bytes"] == [2 * 36 * 8 // nproc + 2 * 4] * nproc


def test_launch_reports_a_failing_rank(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os, sys\nsys.exit(3 if os.environ['RANK'] == '1' else 0)\n")
    r = subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", "2", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3
