"""``pf.optim.Adam`` and ``AdamW`` with torch's semantics (betas, eps,
weight decay coupled or decoupled, amsgrad, maximize), recorded lazily: the
bias corrections and the learning rate enter the graph as 0-d leaf tensors
(see ``optimizer.py``), so every step reuses one compiled graph."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..autodiff import no_grad
from ..ops import maximum, sqrt
from .optimizer import (
    Optimizer,
    ScalarLeaves,
    check_unsupported,
    count_step,
    guard_hyperparameters,
    zeros_leaf,
)

__all__ = ["Adam", "AdamW"]


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
                        state["step"] = 0
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
                        lambda g=group, s=state, b=beta1: -g["lr"] / (1 - b ** s["step"]), dt)
                    bc2_sqrt = scalar.of(
                        lambda s=state, b=beta2: math.sqrt(1 - b ** s["step"]), dt)
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
