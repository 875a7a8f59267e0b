"""The torch eager baseline the backend benchmarks share: one SGD step of a
ReLU MLP with softmax cross-entropy, written as PyTorch users write it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def torch_mlp_step(x_np: np.ndarray, y_np: np.ndarray, init: Sequence[np.ndarray], lr: float
                   ) -> Callable[[], float] | None:
    """A step function (returns the loss) over torch copies of the data, or
    None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    params = [torch.tensor(p, requires_grad=True) for p in init]
    x, y = torch.tensor(x_np), torch.tensor(y_np)

    def step() -> float:
        h = x
        for j in range(0, len(params) - 2, 2):
            h = torch.relu(h @ params[j] + params[j + 1])
        logits = h @ params[-2] + params[-1]
        loss = -(torch.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        return float(loss.detach())
    return step
