"""Explicit derivatives for the math functions that are composites (``lgamma``,
``digamma``, ``erfinv``, ``xlogy``, ``hypot``...): torch's formulas
(``derivatives.yaml``), not the derivative of the composite's inner steps.

A composite's value is a series of guarded branches (a reflection, a series
near a pole, a constant at an infinity): differentiated step by step, a
constant branch gives 0 where the function's derivative is infinite (``erfinv``
at +-1, ``digamma`` at its poles) and a guard's dead branch can give NaN where
it is finite (``erfc`` at +inf). ``elementwise`` computes the value without
recording its steps and attaches the partial derivatives torch uses, for
reverse mode (``vjp``) and forward mode (``jvp``: torch's forward formulas,
which differ from the reverse ones at a few points, e.g. ``hypot(0, inf)``).
The partials are themselves recorded ops of the inputs, so higher derivatives
follow (``lgamma''`` is ``polygamma(1, x)``), under ``vmap`` and ``pf.compile``
as any ``pf.autograd.Function``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .autodiff import no_grad
from .autograd import Function
from .core import GRAD_MODE, Tensor
from .creation import zeros_like

Partials = Callable[..., Sequence[Tensor | None]]


def _sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A gradient at the broadcast shape summed back to an operand's shape."""
    while g.ndim > len(shape):
        g = g.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdim=True)
    return g


def elementwise(name: str, value: Callable[..., Tensor], inputs: Sequence[Tensor],
                vjp: Partials, jvp: Partials | None = None,
                tangent: Callable[..., Tensor] | None = None, with_result: bool = False
                ) -> Tensor:
    """``value(*inputs)`` (computed on the detached inputs) with the derivative
    ``sum_i partial_i * d input_i``: ``vjp(*inputs)`` gives the partials
    reverse mode uses, ``jvp(*inputs)`` those forward mode uses (default the
    same); a None partial is a zero one (the input gets no gradient). The
    partials are functions of the inputs, recorded (a partial that needs the
    value recomputes it: higher derivatives flow through it).
    Every partial multiplies its tangent, a zero tangent included (torch's
    forward formulas do: ``0 * inf`` is NaN there as in torch); an input
    without a tangent adds nothing. ``with_result``: reverse mode calls
    ``vjp(*inputs, result)`` with the output itself (torch's ``result``,
    saved as torch saves an output: its graph kept, so higher derivatives
    still flow), not recomputing it; forward mode then needs its own ``jvp``
    of the inputs alone."""
    with no_grad():  # the value's steps are not differentiated (nor their rules recorded)
        out = value(*[t.detach() for t in inputs])
    mode = GRAD_MODE  # (Function.apply's test: a functional transform may differentiate)
    if not (mode.trace_depth > 0 or (mode.enabled and any(t.requires_grad for t in inputs))):
        return out  # (under no_grad a transform's forward mode still needs the rule)
    if with_result and jvp is None and tangent is None:
        raise ValueError(f"{name}: with_result needs a forward rule of the inputs (jvp)")
    forward_rule = jvp or vjp

    class Rule(Function):
        @staticmethod
        def forward(ctx: Any, *xs: Tensor) -> Tensor:
            ctx.save_for_backward(*xs, out) if with_result else ctx.save_for_backward(*xs)
            ctx.save_for_forward(*xs)
            # a built-in op's semantics: an input without a tangent adds no term
            # (a materialized zero times an infinite derivative would be NaN)
            ctx.set_materialize_grads(False)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> tuple:
            xs = ctx.saved_tensors
            if grad is None:
                return (None,) * len(ctx.needs_input_grad)
            parts = vjp(*xs)
            xs = xs[:-1] if with_result else xs
            return tuple(None if d is None or not need else _sum_to(grad * d, x.shape)
                         for x, d, need in zip(xs, parts, ctx.needs_input_grad))

        @staticmethod
        def jvp(ctx: Any, *tangents: Tensor | None) -> Tensor:
            xs = ctx.saved_tensors
            if tangent is not None:
                return tangent([zeros_like(x) if t is None else t for x, t in zip(xs, tangents)],
                               *xs) + zeros_like(out)
            total: Tensor | None = None
            for d, t in zip(forward_rule(*xs), tangents):
                if d is None or t is None:  # no tangent (torch: an undefined one)
                    continue
                term = t * d
                total = term if total is None else total + term
            return zeros_like(out) if total is None else total + zeros_like(out)

    Rule.__name__ = Rule.__qualname__ = name
    return Rule.apply(*inputs)
