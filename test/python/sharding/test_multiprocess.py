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


def _torch_losses() -> list[float]:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
    w1, w2 = rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5
    ws = [torch.tensor(w, requires_grad=True) for w in (w1, w2)]
    tx, ty = torch.tensor(x), torch.tensor(y)
    out = []
    for _ in range(20):
        loss = ((torch.relu(tx @ ws[0]) @ ws[1] - ty) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for w in ws:
                w -= 0.1 * w.grad
                w.grad = None
        out.append(loss.item())
    return out


@pytest.mark.parametrize("nproc,modes", [(2, "dp"), (4, "dp,mixed")])
def test_launch_matches_unsharded_losses(tmp_path, nproc, modes):
    out = tmp_path / "losses.json"
    r = subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", str(nproc),
                        str(SCRIPT), modes, str(out)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    assert sorted(got) == sorted(modes.split(","))
    for losses in got.values():
        np.testing.assert_allclose(losses, _torch_losses(), rtol=1e-10)


def test_launch_reports_a_failing_rank(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os, sys\nsys.exit(3 if os.environ['RANK'] == '1' else 0)\n")
    r = subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", "2", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3
