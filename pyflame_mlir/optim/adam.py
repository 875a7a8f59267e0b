"""``pf.optim.Adam`` and ``AdamW`` with torch's semantics (betas, eps,
weight decay coupled or decoupled, amsgrad, maximize), recorded lazily: the
bias corrections and the learning rate enter the graph as 0-d leaf tensors
(see ``optimizer.py``), so every step reuses one compiled graph."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import OBSERVERS, Tensor
from ..indexing import index_select
from ..nn.sparse_grad import rows_of
from ..ops import maximum, sqrt
from .optimizer import (
    Optimizer,
    ScalarLeaves,
    check_unsupported,
    count_step,
    guard_hyperparameters,
    step_of,
    step_tensor,
    zeros_leaf,
)

__all__ = ["Adam", "AdamW", "SparseAdam"]


class Adam(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_unsupported(type(self).__name__, differentiable=differentiable, fused=fused)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (beta1, beta2), eps = group["betas"], group["eps"]
                wd, amsgrad = group["weight_decay"], group["amsgrad"]
                decoupled = group.get("decoupled_weight_decay", False)
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        # zeros as realized values, updated in place from now on
                        state["exp_avg"] = zeros_leaf(p)
                        state["exp_avg_sq"] = zeros_leaf(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = zeros_leaf(p)
                    count_step(state)
                    dt = p.dtype
                    if wd != 0:
                        if decoupled:
                            p.mul_(scalar.of(lambda g=group, wd=wd: 1 - g["lr"] * wd, dt,
                                             ("decay", id(group))))
                        else:
                            grad = grad + p * wd
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.add_((grad - exp_avg) * (1 - beta1))  # torch's lerp_
                    exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
                    # per call: from the step count and the group's current lr
                    neg_step_size = scalar.of(
                        lambda g=group, s=state, b=beta1: -g["lr"] / (1 - b ** step_of(s)), dt)
                    bc2_sqrt = scalar.of(
                        lambda s=state, b=beta2: math.sqrt(1 - b ** step_of(s)), dt)
                    if amsgrad:
                        peak = state["max_exp_avg_sq"]
                        peak.copy_(maximum(peak, exp_avg_sq))
                        denom = sqrt(peak) / bc2_sqrt + eps
                    else:
                        denom = sqrt(exp_avg_sq) / bc2_sqrt + eps
                    p.add_(exp_avg / denom * neg_step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class SparseAdam(Optimizer):
    """torch's ``SparseAdam``: Adam on the rows of a sparse gradient only
    (``nn.Embedding(sparse=True)``; ``nn/sparse_grad.py`` records them). The
    moments and parameter rows a step's gradient does not hold stay as they
    are; a row it holds with a zero gradient is updated (its moments decay).
    A dense gradient raises, as torch's. The rows are read on the host, so a
    step runs eagerly (not inside ``pf.compile``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def _step(self, scalar: ScalarLeaves) -> None:
        if OBSERVERS:
            raise NotImplementedError("SparseAdam.step inside pf.compile: the rows of a sparse "
                                      "gradient are read on the host; step outside the "
                                      "compiled function")
        with no_grad():
            for group in self.param_groups:
                (beta1, beta2), eps, lr = group["betas"], group["eps"], group["lr"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    rows = rows_of(p)
                    if rows is None:
                        raise RuntimeError("SparseAdam does not support dense gradients, please "
                                           "consider Adam instead (a parameter of shape "
                                           f"{list(p.shape)} has a gradient not from a sparse "
                                           "embedding lookup)")
                    grad = -p.grad if group["maximize"] else p.grad
                    _check_rows_hold_the_gradient(grad, rows)
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_leaf(p)
                        state["exp_avg_sq"] = zeros_leaf(p)
                    state["step"] += 1
                    if rows.size == 0:  # (torch: no values, no update; the step counts)
                        continue
                    at = Tensor._leaf(rows)
                    values = index_select(grad, 0, at)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    old_m = index_select(exp_avg, 0, at)
                    m_update = (values - old_m) * (1 - beta1)
                    exp_avg.index_add_(0, at, m_update)
                    old_v = index_select(exp_avg_sq, 0, at)
                    v_update = (values * values - old_v) * (1 - beta2)
                    exp_avg_sq.index_add_(0, at, v_update)
                    numer = m_update + old_m
                    denom = sqrt(v_update + old_v) + eps
                    step = state["step"]
                    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                    p.index_add_(0, at, numer / denom * -step_size)


def _check_rows_hold_the_gradient(grad: Tensor, rows: np.ndarray) -> None:
    """A gradient nonzero outside the recorded rows had a dense contribution
    (the weight used elsewhere too, e.g. tied): torch's is dense, and raises."""
    outside = np.ones(grad.shape[0], dtype=bool)
    outside[rows] = False
    if np.any(np.asarray(grad.numpy())[outside] != 0):
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam "
                           f"instead (the gradient of a parameter of shape {list(grad.shape)} "
                           "is nonzero outside the rows its sparse embedding lookups hold: "
                           "the parameter is used densely too)")
