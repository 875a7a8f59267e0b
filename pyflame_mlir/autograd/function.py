"""``pf.autograd.function``: PyTorch's ``torch.autograd.function`` module
(``Function``, ``FunctionCtx``, ``once_differentiable``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..autodiff import is_grad_enabled, no_grad
from ..core import Tensor
from . import Function, FunctionCtx

_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """The identity, whose backward raises: what ``once_differentiable``
    returns under create_graph (torch's DelayedError)."""

    @staticmethod
    def forward(ctx: FunctionCtx, *grads: Tensor) -> Any:
        return tuple(g.clone() for g in grads) if len(grads) > 1 else grads[0].clone()

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor) -> Any:
        raise RuntimeError(_TWICE)


def once_differentiable(fn: Callable) -> Callable:
    """Decorates a Function's ``backward``: it runs under no_grad; when a
    backward with create_graph would differentiate its results, that
    differentiation raises (torch's)."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad
                                            for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        grads = [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]
        if not grads:
            return outputs
        # (torch's: detached copies made to require grad, through a node that raises)
        wrapped = _DelayedError.apply(*[g.detach().requires_grad_(True) for g in grads])
        wrapped = list(wrapped) if isinstance(wrapped, tuple) else [wrapped]
        res = [wrapped.pop(0) if isinstance(o, Tensor) and o.dtype.is_floating_point else o
               for o in outs]
        return res[0] if single else tuple(res)
    return wrapper


__all__ = ["Function", "FunctionCtx", "once_differentiable"]
