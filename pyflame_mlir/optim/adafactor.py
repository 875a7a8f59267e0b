"""``Adafactor`` with torch's update (``torch.optim.Adafactor``, Shazeer and
Stern 2018 as torch writes it): the second moment of a matrix (or of the last
two dims of a higher-rank parameter) is kept factored as a row and a column
mean of the squared gradient, a vector's in full; the step is relative to the
parameter's RMS and the update is clipped to RMS ``d``.

torch reads the parameter's and the update's norms on the host (``.item()``)
each step; here they stay in the graph as 0-d tensors (``maximum(eps2, rms)``
and ``maximum(1, rms / d)`` are the same numbers), so the whole step is still
recorded lazily and every step reuses one compiled graph. The per-step
numbers (``rho_t``, ``step ** beta2_decay``) are 0-d leaves, as the other
optimizers' are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import Tensor, detach
from ..nn.module import _host_value
from ..ops import clamp, convert, matmul, maximum, mean, rsqrt, sqrt, sum
from ..torch_api import finfo
from .optimizer import (
    Optimizer,
    ScalarLeaves,
    check_unsupported,
    count_step,
    guard_hyperparameters,
    step_of,
    step_tensor,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        check_unsupported("Adafactor")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def _step(self, scalar: ScalarLeaves) -> None:
        with no_grad():
            for group in self.param_groups:
                guard_hyperparameters(group)
                (eps1, eps2), d, wd = group["eps"], group["d"], group["weight_decay"]
                decay = group["beta2_decay"]
                for p, grad in self._gradients(group):
                    if not p.dtype.is_floating_point:
                        raise RuntimeError("Adafactor: parameters must be floating point")
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor(0)
                        if grad.ndim > 1:
                            row, col = list(grad.shape), list(grad.shape)
                            row[-1], col[-2] = 1, 1
                            state["row_var"] = Tensor._leaf(np.zeros(row, p.dtype.np))
                            state["col_var"] = Tensor._leaf(np.zeros(col, p.dtype.np))
                        else:
                            state["variance"] = Tensor._leaf(np.zeros(p.shape, p.dtype.np))
                    count_step(state)
                    e1 = float(finfo(p.dtype).eps) if eps1 is None else eps1
                    weight = scalar.of(lambda s=state, b=decay: step_of(s) ** b, p.dtype)
                    rho = scalar.of(lambda g=group, s=state: min(float(g["lr"]),
                                                                 1 / math.sqrt(step_of(s))),
                                    p.dtype)
                    n = max(p.numel(), 1)
                    rms = sqrt(sum(p * p)) / math.sqrt(n)
                    alpha = maximum(rms, eps2) * rho  # from the parameter before the decay
                    if wd != 0:
                        p.mul_(scalar.of(lambda g=group, w=wd: 1 - float(g["lr"]) * w,
                                         p.dtype))
                    if grad.ndim > 1:
                        row_var, col_var = state["row_var"], state["col_var"]
                        row_var.add_((mean(grad * grad, -1, keepdim=True) - row_var) * weight)
                        col_var.add_((mean(grad * grad, -2, keepdim=True) - col_var) * weight)
                        estimate = matmul(row_var, col_var) / clamp(
                            mean(row_var, -2, keepdim=True), min=e1)
                    else:
                        variance = state["variance"]
                        variance.add_((grad * grad - variance) * weight)
                        estimate = variance
                    update = rsqrt(clamp(estimate, min=e1 * e1)) * grad
                    urms = sqrt(sum(update * update)) / (math.sqrt(max(update.numel(), 1)) * d)
                    p.add_(update * (-alpha / maximum(urms, 1.0)))

    @staticmethod
    def _unpack(key: str, value: Any, p: Tensor) -> Any:
        if key not in ("row_var", "col_var"):
            return Optimizer._unpack(key, value, p)
        t = _host_value(value)
        want = list(p.shape)
        want[-1 if key == "row_var" else -2] = 1
        if list(t.shape) != want:
            raise ValueError(f"optimizer state {key!r} of shape {list(t.shape)} does not "
                             f"match its parameter's shape {list(p.shape)} (expected {want})")
        return convert(t, p.dtype) if t.dtype is not p.dtype else detach(t)
