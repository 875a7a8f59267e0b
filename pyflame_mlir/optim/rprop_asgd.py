"""``torch.optim.Rprop`` and ``torch.optim.ASGD``, step for step as torch
2.13's single-tensor implementations (the reference the tests compare with)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import Tensor, replay_effect
from ..ops import clamp, sign, where
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

__all__ = ["ASGD", "Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation: a per-element step size, grown by
    ``etas[1]`` while the gradient keeps its sign and shrunk by ``etas[0]``
    (skipping that update) when it flips. ``lr`` is the initial step size,
    read once, at a parameter's first step (as torch)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_unsupported("Rprop", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "capturable": capturable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (eta_minus, eta_plus), (low, high) = group["etas"], group["step_sizes"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["prev"] = zeros_leaf(p)
                        state["step_size"] = Tensor._leaf(
                            np.full(p.shape, group["lr"], dtype=p.dtype.np))
                    count_step(state)
                    prev, step_size = state["prev"], state["step_size"]
                    agreement = sign(grad * prev)
                    factor = where(agreement > 0, eta_plus,
                                   where(agreement < 0, eta_minus, 1.0))
                    step_size.copy_(clamp(step_size * factor, low, high))
                    grad = where(factor == eta_minus, 0.0, grad)  # a flip: no update
                    p.sub_(sign(grad) * step_size)
                    prev.copy_(grad)


class ASGD(Optimizer):
    """Averaged SGD: SGD with an ``lr`` decaying as ``lr / (1 + lambd lr
    t)^alpha`` and, from step ``t0`` on, a running average of the parameter
    in ``state["ax"]``. The two schedules (``eta``, ``mu``) are Python numbers
    of the step count, fed to the step as scalars."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_unsupported("ASGD", differentiable=differentiable)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                lambd, wd = group["lambd"], group["weight_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        state["eta"] = step_tensor(float(group["lr"]))  # 0-d float32, as torch's
                        state["mu"] = step_tensor(1.0)
                        state["ax"] = zeros_leaf(p)
                    count_step(state)
                    if wd != 0:
                        grad = grad + p * wd
                    eta = scalar.of(lambda s=state: step_of(s, "eta"), p.dtype)
                    p.mul_(1 - lambd * eta)
                    p.sub_(grad * eta)
                    ax = state["ax"]
                    mu = scalar.of(lambda s=state: step_of(s, "mu"), p.dtype)
                    # torch branches on mu.item(): a copy while mu is 1 (exactly p)
                    ax.copy_(where(mu == 1, p, ax + (p - ax) * mu))

                    def schedule(s: dict[str, Any] = state, g: dict[str, Any] = group) -> None:
                        s["eta"] = step_tensor(
                            g["lr"] / (1 + g["lambd"] * g["lr"] * step_of(s)) ** g["alpha"])
                        s["mu"] = step_tensor(1 / max(1, step_of(s) - g["t0"]))
                    schedule()
                    replay_effect(schedule)
