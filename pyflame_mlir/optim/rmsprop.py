"""``pf.optim.RMSprop`` and ``pf.optim.Adagrad`` with torch's semantics,
recorded lazily (see ``optimizer.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import Tensor
from ..ops import sqrt
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

__all__ = ["Adagrad", "RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_unsupported("RMSprop", differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                alpha, eps = group["alpha"], group["eps"]
                wd, momentum, centered = group["weight_decay"], group["momentum"], \
                    group["centered"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["square_avg"] = zeros_leaf(p)
                        if momentum > 0:
                            state["momentum_buffer"] = zeros_leaf(p)
                        if centered:
                            state["grad_avg"] = zeros_leaf(p)
                    count_step(state)
                    if wd != 0:
                        grad = grad + p * wd
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(grad * grad * (1 - alpha))
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.add_((grad - grad_avg) * (1 - alpha))  # torch's lerp_
                        avg = sqrt(square_avg - grad_avg * grad_avg) + eps
                    else:
                        avg = sqrt(square_avg) + eps
                    lr = scalar.of(lambda g=group: g["lr"], p.dtype, ("lr", id(group)))
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(grad / avg)
                        p.sub_(buf * lr)
                    else:
                        p.sub_(grad / avg * lr)


class Adagrad(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_unsupported("Adagrad", differentiable=differentiable, fused=fused)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:  # torch creates the state here, not at the first step
            for p in group["params"]:
                self.state[p]["step"] = step_tensor(0)
                self.state[p]["sum"] = Tensor._leaf(np.full(
                    p.shape, group["initial_accumulator_value"], dtype=p.dtype.np))

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                lr_decay, eps, wd = group["lr_decay"], group["eps"], group["weight_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    count_step(state)
                    if wd != 0:
                        grad = grad + p * wd
                    clr = scalar.of(lambda g=group, s=state, d=lr_decay:
                                    g["lr"] / (1 + (step_of(s) - 1) * d), p.dtype)
                    state_sum = state["sum"]
                    state_sum.add_(grad * grad)
                    p.sub_(grad / (sqrt(state_sum) + eps) * clr)
