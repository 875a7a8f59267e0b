"""``Adamax``, ``NAdam``, ``RAdam`` and ``Adadelta`` with torch's update
formulas, recorded as the other optimizers are (``optimizer.py``): numbers
that change per step (learning rate, bias corrections, NAdam's momentum
product, RAdam's rectification) enter as 0-d leaves, so every step reuses
one compiled graph and a ``pf.compile``'d step replays them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import replay_effect
from ..ops import abs, maximum, sqrt
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

__all__ = ["Adadelta", "Adamax", "NAdam", "RAdam"]


def _check(lr: float, eps: float, weight_decay: float, betas: tuple[float, float] | None
           ) -> None:
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if betas is not None:
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def _decay_and_moments(group: dict[str, Any], p: Any, grad: Any, state: dict[str, Any],
                       scalar: ScalarLeaves) -> tuple[Any, Any, Any]:
    """What NAdam and RAdam share with Adam: weight decay (coupled into the
    gradient, or decoupled on the parameter) and the two moment updates."""
    (beta1, beta2), wd = group["betas"], group["weight_decay"]
    if wd != 0:
        if group["decoupled_weight_decay"]:
            p.mul_(scalar.of(lambda g=group, w=wd: 1 - g["lr"] * w, p.dtype))
        else:
            grad = grad + p * wd
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg.add_((grad - exp_avg) * (1 - beta1))  # torch's lerp_
    exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
    return grad, exp_avg, exp_avg_sq


class Adamax(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check(lr, eps, weight_decay, betas)
        check_unsupported("Adamax", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (beta1, beta2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["exp_avg"] = zeros_leaf(p)
                        state["exp_inf"] = zeros_leaf(p)
                    count_step(state)
                    if wd != 0:
                        grad = grad + p * wd
                    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                    exp_avg.add_((grad - exp_avg) * (1 - beta1))
                    exp_inf.copy_(maximum(exp_inf * beta2, abs(grad) + eps))
                    neg_clr = scalar.of(lambda g=group, s=state, b=beta1:
                                        -g["lr"] / (1 - b ** step_of(s)), p.dtype)
                    p.add_(exp_avg / exp_inf * neg_clr)


def _nadam_mu(beta1: float, step: int, momentum_decay: float) -> float:
    return beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))


class NAdam(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check(lr, eps, weight_decay, betas)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        check_unsupported("NAdam", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (beta1, beta2), eps = group["betas"], group["eps"]
                decay = group["momentum_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["mu_product"] = step_tensor(1.0)  # 0-d float32, as torch's
                        state["exp_avg"] = zeros_leaf(p)
                        state["exp_avg_sq"] = zeros_leaf(p)
                    count_step(state)

                    def advance_mu(s: dict[str, Any] = state, b: float = beta1,
                                   d: float = decay) -> None:
                        # torch's mu_product *= mu: float32 times mu rounded to float32
                        s["mu_product"] = step_tensor(float(
                            np.float32(step_of(s, "mu_product"))
                            * np.float32(_nadam_mu(b, step_of(s), d))))
                    advance_mu()
                    replay_effect(advance_mu)
                    dt = p.dtype
                    grad, exp_avg, exp_avg_sq = _decay_and_moments(group, p, grad, state,
                                                                   scalar)
                    bc2 = scalar.of(lambda s=state, b=beta2: 1 - b ** step_of(s), dt)
                    denom = sqrt(exp_avg_sq / bc2) + eps
                    grad_coef = scalar.of(
                        lambda g=group, s=state, b=beta1, d=decay:
                        -g["lr"] * (1 - _nadam_mu(b, step_of(s), d))
                        / (1 - step_of(s, "mu_product")),
                        dt)
                    avg_coef = scalar.of(
                        lambda g=group, s=state, b=beta1, d=decay:
                        -g["lr"] * _nadam_mu(b, step_of(s) + 1, d)
                        / (1 - step_of(s, "mu_product") * _nadam_mu(b, step_of(s) + 1, d)), dt)
                    p.add_(grad / denom * grad_coef)
                    p.add_(exp_avg / denom * avg_coef)


def _radam_rect(beta2: float, step: int) -> float:
    """RAdam's variance rectification, or 0 while the variance is not tractable
    (rho_t <= 5: the update is then plain momentum SGD, as torch's branch)."""
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * beta2 ** step / (1 - beta2 ** step)
    if rho_t <= 5:
        return 0.0
    return math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                     / ((rho_inf - 4) * (rho_inf - 2) * rho_t))


class RAdam(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check(lr, eps, weight_decay, betas)
        check_unsupported("RAdam", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (beta1, beta2), eps = group["betas"], group["eps"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["exp_avg"] = zeros_leaf(p)
                        state["exp_avg_sq"] = zeros_leaf(p)
                    count_step(state)
                    dt = p.dtype
                    grad, exp_avg, exp_avg_sq = _decay_and_moments(group, p, grad, state,
                                                                   scalar)
                    # one graph for both of torch's branches: the rectified
                    # update weighted by `on`, the plain one by `1 - on`
                    step_size = scalar.of(lambda g=group, s=state, b=beta1:
                                          g["lr"] / (1 - b ** step_of(s)), dt)
                    on = scalar.of(lambda s=state, b=beta2:
                                   1.0 if _radam_rect(b, step_of(s)) else 0.0, dt)
                    rect_bc2 = scalar.of(lambda s=state, b=beta2: _radam_rect(b, step_of(s))
                                         * math.sqrt(1 - b ** step_of(s)), dt)
                    adaptive = rect_bc2 / (sqrt(exp_avg_sq) + eps)
                    p.sub_(exp_avg * step_size * (adaptive * on + (1 - on)))


class Adadelta(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check(lr, eps, weight_decay, None)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_unsupported("Adadelta", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["square_avg"] = zeros_leaf(p)
                        state["acc_delta"] = zeros_leaf(p)
                    count_step(state)
                    if wd != 0:
                        grad = grad + p * wd
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    square_avg.mul_(rho).add_(grad * grad * (1 - rho))
                    delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad
                    acc_delta.mul_(rho).add_(delta * delta * (1 - rho))
                    p.sub_(delta * scalar.of(lambda g=group: g["lr"], p.dtype,
                                             ("lr", id(group))))
