"""``Muon`` with torch's update (``torch.optim.Muon``, Keller Jordan's
optimizer for 2-D hidden-layer weights): momentum (Nesterov by default),
then the update orthogonalized by ``ns_steps`` quintic Newton-Schulz
iterations in bfloat16 (torch's precision), decoupled weight decay and a
shape-dependent learning-rate scale. Recorded lazily like the other
optimizers: the step is matmuls and elementwise ops, one compiled graph."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..autodiff import no_grad
from ..core import Tensor
from ..dialects.dtypes import bfloat16, float32
from ..ops import clamp, convert, matmul, sqrt, sum
from .optimizer import Optimizer, ScalarLeaves, guard_hyperparameters, zeros_leaf

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float],
                               ns_steps: int, eps: float) -> Tensor:
    """torch's ``_zeropower_via_newtonschulz``: ``X <- a X + (b G + c G^2) X``
    with ``G = X X^T`` on the normalized bfloat16 matrix (wide side last)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients

    def bf16(t: Tensor) -> Tensor:  # round to bfloat16 where torch's bf16 kernels do, and
        return convert(convert(t, bfloat16), float32)  # compute between in float32 (as they)

    x = bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.t()
    x = bf16(x / clamp(bf16(sqrt(sum(x * x))), min=eps))
    for _ in range(ns_steps):
        gram = bf16(matmul(x, x.t()))
        update = bf16(gram * b + matmul(gram, gram) * c)  # one addmm: one rounding
        x = bf16(x * a + matmul(update, x))
    return convert(x.t() if tall else x, bfloat16)


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients,
                                  "eps": eps, "ns_steps": ns_steps,
                                  "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {list(p.shape)}")

    @staticmethod
    def _gradients(group: dict[str, Any]) -> Any:
        for p in group["params"]:
            if p.grad is not None:
                yield p, p.grad

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                mu, wd = group["momentum"], group["weight_decay"]
                for p, grad in self._gradients(group):
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = zeros_leaf(p)
                    buf = state["momentum_buffer"]
                    buf.add_((grad - buf) * (1 - mu))  # torch's lerp_(grad, 1 - momentum)
                    update = grad + (buf - grad) * mu if group["nesterov"] else buf
                    ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                       group["ns_steps"], group["eps"])
                    p.mul_(scalar.of(lambda g=group, w=wd: 1 - float(g["lr"]) * w, p.dtype))
                    step = scalar.of(lambda g=group, s=tuple(p.shape): -_adjust_lr(
                        float(g["lr"]), g["adjust_lr_fn"], s), p.dtype)
                    p.add_(convert(ortho, p.dtype) * step)
