"""gelu's VJP (the ``gelu_grad`` op) on the csl backend: ``legalize-for-wse``
runs its decomposition (lowering/pyflame_to_wse/support.py: DECOMPOSED), so a
step through GELU trains on the WSE simulator as on the reference backend."""

from __future__ import annotations

import numpy as np
import torch

import pyflame_mlir as pf


def test_gelu_gradient_on_the_grid_matches_reference_and_torch(on_grid) -> None:
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    x[0, :3] = [0.0, -0.0, 1e-4]  # the series near 0

    def grad() -> pf.Tensor:
        t = pf.tensor(x, requires_grad=True)
        (pf.nn.functional.gelu(t) * 3.0).sum().backward()
        return t.grad

    ref, csl = on_grid(None, grad)
    tx = torch.tensor(x, requires_grad=True)
    (torch.nn.functional.gelu(tx) * 3.0).sum().backward()
    np.testing.assert_allclose(ref[0], tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    # the grid's exp differs from numpy's by a few ulp
    np.testing.assert_allclose(csl[0], ref[0], rtol=1e-4, atol=1e-5)
