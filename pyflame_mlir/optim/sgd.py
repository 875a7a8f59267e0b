"""``pf.optim.SGD`` with torch's semantics (momentum, dampening, nesterov,
weight decay, maximize), recorded lazily (see ``optimizer.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..autodiff import no_grad
from .optimizer import (
    Optimizer,
    ScalarLeaves,
    check_unsupported,
    guard_hyperparameters,
    zeros_leaf,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_unsupported("SGD", differentiable=differentiable, fused=fused)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                momentum, dampening = group["momentum"], group["dampening"]
                wd, nesterov = group["weight_decay"], group["nesterov"]
                for p, d_p in self._gradients(group):
                    if wd != 0:
                        d_p = d_p + p * wd
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            # zeros + d_p, not d_p itself: a tensor updated in place by
                            # an op of its own, so the evaluation that computes the
                            # update realizes it (core.collect's pending outputs skip
                            # a tensor sharing its op with another, as a gradient does)
                            buf = state["momentum_buffer"] = zeros_leaf(p)
                            buf.add_(d_p)
                        else:
                            buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                        d_p = d_p + buf * momentum if nesterov else buf
                    p.sub_(d_p * scalar.of(lambda g=group: g["lr"], p.dtype, ("lr", id(group))))
