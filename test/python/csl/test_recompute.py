"""Recomputation instead of keeping (issue #16 leftovers; ``lowering/pyflame_to_wse/
recompute.py``): a training step whose kept activations overflow the SRAM budget
recomputes cheap ones (elementwise of an input kept anyway) in the backward. A
three-layer MLP with SiLU (``z * sigmoid(z)``) on one PE: with the budget below its
plan's high-water mark the step does not fit without recomputation; with it, the
planner recomputes both sigmoids (the report says so), the step fits, and its
losses and weights equal the reference backend's over a few SGD steps."""

from __future__ import annotations

import numpy as np
import pytest
from pyflame_mlir.lowering.wse_memory import MemoryBudgetError

import pyflame_mlir as pf

BATCH, DIM, HIDDEN, OUT, STEPS = 32, 8, 32, 4, 3
BUDGET = 40_000  # bytes of data per PE: the plan keeping every activation needs more


def _train(backend: str, csl, **options) -> tuple[list[float], list[np.ndarray]]:
    pf.set_backend(backend)
    csl.configure(grid=(1, 1), budget=BUDGET, **options)
    rng = np.random.default_rng(0)
    layers = [pf.nn.Linear(DIM, HIDDEN, bias=False), pf.nn.Linear(HIDDEN, HIDDEN, bias=False),
              pf.nn.Linear(HIDDEN, OUT, bias=False)]
    for layer in layers:
        layer.weight.data = pf.tensor((rng.standard_normal(layer.weight.shape) * 0.3)
                                      .astype(np.float32))
    params = [p for layer in layers for p in layer.parameters()]
    opt = pf.optim.SGD(params, lr=0.05)
    losses = []
    for _ in range(STEPS):
        x = pf.tensor(rng.standard_normal((BATCH, DIM)).astype(np.float32))
        y = pf.tensor(rng.standard_normal((BATCH, OUT)).astype(np.float32))
        opt.zero_grad()
        h = x
        for i, layer in enumerate(layers):
            h = layer(h)
            if i < len(layers) - 1:
                h = h * pf.sigmoid(h)  # SiLU: the sigmoid is elementwise of the kept z
        loss = ((h - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.numpy() for p in params]


def test_recomputation_makes_the_step_fit_and_keeps_its_losses(csl):
    with pytest.raises(MemoryBudgetError, match="bytes of SRAM per PE"):
        _train("csl", csl, recompute=False)
    ref, ref_w = _train("reference", csl)
    got, got_w = _train("csl", csl, recompute=True)
    run = csl.last_run()
    assert run.program.memory_bytes <= BUDGET
    assert len(run.recomputed) == 2 and all("pyflame.sigmoid" in r for r in run.recomputed)
    assert "recompute pyflame.sigmoid" in str(pf.csl_report())
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    for g, r in zip(got_w, ref_w):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
