"""``pf.nn.utils``: gradient clipping and flattening with torch's semantics;
``rnn`` (packed sequences) and ``parametrize``/``parametrizations``
(weight and spectral norm) as torch's submodules.
Recorded lazily: clipping a step's gradients joins the step's graph (only
``error_if_nonfinite=True`` evaluates, to decide whether to raise)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...autodiff import no_grad
from ...core import Tensor
from ...creation import tensor as _tensor
from ...ops import abs as _abs
from ...ops import amax, cat, clamp, reshape, stack
from ...ops import sum as _sum
from . import rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "rnn",
           "vector_to_parameters"]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _vector_norm(x: Tensor, ord: float) -> Tensor:  # noqa: A002  (torch's name)
    if ord == math.inf:
        return amax(_abs(x))
    if ord == 2:
        return _sum(x * x) ** 0.5
    if ord == 1:
        return _sum(_abs(x))
    if ord <= 0:
        raise ValueError(f"clip_grad_norm_: norm_type {ord} is not supported (use a positive "
                         "number or inf)")
    return _sum(_abs(x) ** ord) ** (1.0 / ord)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients so that their total ``norm_type`` norm is at most
    ``max_norm``; returns the total norm (before clipping). ``foreach`` is
    accepted for torch's signature: the clip is one recorded graph anyway."""
    del foreach
    norm_type = float(norm_type)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return _tensor(0.0)
    with no_grad():
        norms = [_vector_norm(g, norm_type) for g in grads]
        dt = norms[0].dtype
        total = _vector_norm(stack([n if n.dtype is dt else n.astype(dt) for n in norms]),
                             norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        clip_coef = clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(clip_coef)
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]``."""
    del foreach
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated."""
    return cat([reshape(p, -1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    n = sum(p.numel() for p in params)
    if vec.shape != (n,):
        raise ValueError(f"vector_to_parameters: vec has shape {list(vec.shape)}, the "
                         f"parameters hold {n} elements")
    offset = 0
    with no_grad():
        for p in params:
            k = p.numel()
            p.copy_(reshape(vec[offset:offset + k], p.shape))
            offset += k
