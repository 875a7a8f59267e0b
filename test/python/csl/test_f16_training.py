"""Mixed-precision training on the WSE simulator (issue #16): f32 master weights stay
resident in PE memory, the forward casts them to f16 compute copies at the start of
every step (``w.to(pf.float16)``: ``@fs2h`` on the PEs), the loss is taken in f32, the
gradients flow back through the casts into f32, the optimizer updates the masters in
f32; loss scaling optional. The reference backend runs the same mixed-precision
program.

Tolerance: the simulator and the reference round the same f16 ops to the same IEEE
half values, but the matmuls and reductions accumulate in f32 on the PEs where the
reference may round partial sums in f16, and AdamW's update differs in the last f32
bits; over 20 steps the losses agree within ``4 * EPS`` relative and the weights
within ``4 * EPS`` absolute, ``EPS = 2**-10`` (f16's machine epsilon).
"""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend

EPS = float(np.finfo(np.float16).eps)
BATCH, DIM, HIDDEN, OUT = 6, 8, 12, 4


def _model() -> pf.nn.Module:
    rng = np.random.default_rng(0)
    model = pf.nn.Sequential(pf.nn.Linear(DIM, HIDDEN), pf.nn.ReLU(), pf.nn.Linear(HIDDEN, OUT))
    for p in model.parameters():
        p.data = pf.tensor((rng.standard_normal(p.shape) * 0.3).astype(np.float32))
    return model


def _forward(model: pf.nn.Module, x: pf.Tensor) -> pf.Tensor:
    """The f16 forward: compute copies of the f32 masters, cast at the start of the step."""
    first, last = model[0], model[2]
    h = pf.relu(x @ first.weight.to(pf.float16).T + first.bias.to(pf.float16))
    return h @ last.weight.to(pf.float16).T + last.bias.to(pf.float16)


def _train(csl, backend: str, opt_name: str, grid, loss_scale: float = 1.0,
           steps: int = 20):
    pf.set_backend(backend)
    csl.configure(grid=grid)
    model = _model()
    opt = (pf.optim.SGD(model.parameters(), lr=0.05) if opt_name == "sgd"
           else pf.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01))
    rng = np.random.default_rng(1)
    losses, runs = [], []
    for _ in range(steps):
        x = pf.tensor(rng.standard_normal((BATCH, DIM)).astype(np.float16))  # an f16 batch
        y = pf.tensor(rng.standard_normal((BATCH, OUT)).astype(np.float32))
        opt.zero_grad()
        loss = ((_forward(model, x).float() - y) ** 2).mean()
        (loss * loss_scale).backward()
        if loss_scale != 1.0:  # unscale before the f32 update
            for p in model.parameters():
                p.grad = p.grad * (1.0 / loss_scale)
        opt.step()
        losses.append(loss.item())
        if backend == "csl":
            runs.append(csl.last_run())
    return np.array(losses), model, runs


@pytest.fixture
def csl():
    """The csl backend on the simulator (options restored after the test)."""
    prev_backend, prev = pf.get_backend(), csl_backend.configure(mode="simulator")
    try:
        yield csl_backend
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


@pytest.mark.parametrize("opt_name,grid,loss_scale", [("sgd", (1, 1), 1.0),
                                                      ("adamw", (2, 2), 1.0),
                                                      ("sgd", (2, 2), 256.0)])
def test_mixed_precision_training_follows_reference(csl, opt_name, grid, loss_scale):
    ref, ref_model, _ = _train(csl, "reference", opt_name, grid, loss_scale)
    got, model, runs = _train(csl, "csl", opt_name, grid, loss_scale)
    assert ref[-1] < ref[0]  # it trains
    np.testing.assert_allclose(got, ref, rtol=4 * EPS)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert p.numpy().dtype == np.float32  # the masters stay f32
        np.testing.assert_allclose(p.numpy(), q.numpy(), atol=4 * EPS)
    # the f32 masters stay resident: after the first launch a step moves the batch
    # (the f16 x as 16-bit memcpy data, 2 bytes per element; the f32 y 4), the step's
    # scalars and the loss
    batch_bytes = 2 * BATCH * DIM + 4 * BATCH * OUT
    for run in runs[1:-1]:
        assert batch_bytes <= run.traffic.h2d_bytes < batch_bytes + 64, run.traffic
        assert run.traffic.d2h_bytes == 4, run.traffic
    assert runs[-1].program.resident


def test_the_example_trains_the_mlp_in_mixed_precision_on_the_wafer() -> None:
    """examples/train_on_wse.py --dtype f16: AdamW on f32 masters with f16 compute,
    its losses within a few f16 roundings of the reference backend's (it asserts it)."""
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).parents[3] / "examples" / "train_on_wse.py"
    out = subprocess.run([sys.executable, str(example), "--dtype", "f16", "--steps", "3"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "f16 compute on f32 masters" in out.stdout
    assert "largest relative difference of a loss from the reference" in out.stdout
