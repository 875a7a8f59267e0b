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
from .optimizer import Optimizer, ScalarLeaves, check_unsupported, zeros_leaf

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
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
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
                    state["step"] += 1
                    step = state["step"]
                    dt = p.dtype
                    if wd != 0:
                        if decoupled:
                            p.mul_(scalar(1 - lr * wd, dt))
                        else:
                            grad = grad + p * wd
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.add_((grad - exp_avg) * (1 - beta1))  # torch's lerp_
                    exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
                    step_size = lr / (1 - beta1 ** step)
                    bc2_sqrt = math.sqrt(1 - beta2 ** step)
                    if amsgrad:
                        peak = state["max_exp_avg_sq"]
                        peak.copy_(maximum(peak, exp_avg_sq))
                        denom = sqrt(peak) / scalar(bc2_sqrt, dt) + eps
                    else:
                        denom = sqrt(exp_avg_sq) / scalar(bc2_sqrt, dt) + eps
                    p.add_(exp_avg / denom * scalar(-step_size, dt))


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
