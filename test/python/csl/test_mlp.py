"""The demo MLP (scaled down) on the WSE simulator vs the reference backend:
the forward loss and the gradient graph of pf.grad, on several grids, including
shapes the grids do not divide, and with each matmul algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from _csl_harness import assert_close

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend


def _mlp(batch: int, dim: int, hidden: int, classes: int):
    rng = np.random.default_rng(0)
    x = pf.tensor(rng.standard_normal((batch, dim)).astype(np.float32))
    w1 = pf.tensor((rng.standard_normal((dim, hidden)) * 0.1).astype(np.float32))
    b1 = pf.full([hidden], 0.01)
    w2 = pf.tensor((rng.standard_normal((hidden, classes)) * 0.1).astype(np.float32))

    def loss(w1, w2):
        h = pf.relu(x @ w1 + b1)
        probs = pf.softmax(h @ w2, dim=1)
        return -pf.log(probs).sum()

    return loss, w1, w2


@pytest.mark.parametrize("grid,sizes", [
    ((1, 1), (16, 8, 6, 4)),
    ((4, 4), (16, 8, 6, 4)),
    ((3, 2), (13, 9, 7, 5)),
    ((5, 3), (37, 20, 11, 10)),
])
def test_forward_and_gradient(on_grid, grid, sizes):
    loss, w1, w2 = _mlp(*sizes)

    def fn():
        g1, g2 = pf.grad(loss, argnums=(0, 1))(w1, w2)
        return [loss(w1, w2), g1, g2]

    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("matmul", ["summa", "local"])
def test_matmul_algorithms(on_grid, matmul):
    """The same MLP with the first layer forced onto SUMMA / onto local tiles."""
    prev = csl_backend.configure(matmul=matmul)
    try:
        loss, w1, w2 = _mlp(32, 24, 16, 10)

        def fn():
            g1, g2 = pf.grad(loss, argnums=(0, 1))(w1, w2)
            return [loss(w1, w2), g1, g2]

        ref, got = on_grid((4, 4), fn)
        assert_close(ref, got, rtol=1e-4, atol=1e-5)
    finally:
        csl_backend.configure(matmul=prev.matmul)


def test_automatic_grid(on_grid):
    loss, w1, w2 = _mlp(64, 32, 16, 10)
    ref, got = on_grid(None, lambda: loss(w1, w2))
    assert_close(ref, got, rtol=1e-4)


def test_wse3(on_grid):
    """The same program for WSE-3: queues bound to colors with @initialize_queue."""
    prev = csl_backend.configure(arch="wse3")
    try:
        loss, w1, w2 = _mlp(16, 8, 6, 4)

        def fn():
            g1, g2 = pf.grad(loss, argnums=(0, 1))(w1, w2)
            return [loss(w1, w2), g1, g2]

        ref, got = on_grid((3, 3), fn)
        assert_close(ref, got, rtol=1e-4, atol=1e-5)
        assert csl_backend.last_report().arch == "wse3"
    finally:
        csl_backend.configure(arch=prev.arch)


@pytest.mark.parametrize("grid", [(3, 2), (2, 3)])
def test_gradients_of_every_parameter(on_grid, grid):
    """value_and_grad w.r.t. the input, both weights and both biases (leaves), with
    log_softmax and a mean, on rectangular grids that divide nothing evenly."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((12, 7)).astype(np.float32)
    params = [(rng.standard_normal(s) * 0.2).astype(np.float32)
              for s in ((7, 5), (5,), (5, 3), (3,))]

    def loss(x, w1, b1, w2, b2):
        return -(pf.log_softmax(pf.relu(x @ w1 + b1) @ w2 + b2, dim=1)).mean()

    def fn():
        v, gs = pf.value_and_grad(loss, argnums=(0, 1, 2, 3, 4))(
            pf.tensor(xs), *[pf.tensor(p) for p in params])
        return [v, *gs]

    ref, got = on_grid(grid, fn)
    assert_close(ref, got, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("grid,matmul", [((1, 1), "auto"), ((4, 4), "auto"), ((4, 4), "summa"),
                                         ((16, 16), "auto")])
def test_per_arch_rules_on_every_grid(on_grid, arch, grid, matmul):
    """Issue 15: the MLP's forward and gradient programs for each arch on 1x1, 4x4
    and 16x16 grids pass the simulator's check of the arch's rules (task ids,
    queues, one input direction per color on WSE-3, u16 DSD lengths) and give the
    reference results. On WSE-3 SUMMA's panel relays are store-and-forward through
    the cores (one input direction per color)."""
    prev = csl_backend.configure(arch=arch, matmul=matmul)
    try:
        loss, w1, w2 = _mlp(32, 24, 16, 10)

        def fn():
            g1, g2 = pf.grad(loss, argnums=(0, 1))(w1, w2)
            return [loss(w1, w2), g1, g2]

        ref, got = on_grid(grid, fn)
        assert_close(ref, got, rtol=1e-4, atol=1e-5)
        report = csl_backend.last_report()
        assert report.arch == arch
    finally:
        csl_backend.configure(arch=prev.arch, matmul=prev.matmul)
