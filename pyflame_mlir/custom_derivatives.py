"""JAX's ``custom_vjp`` and ``custom_jvp`` on ``pf.autograd.Function``.

Arguments and results may be pytrees; ``nondiff_argnums`` are passed to
the rules as they are (JAX's convention: first, before the residuals or the
primals). A ``custom_jvp`` function differentiates in reverse mode too: its
JVP rule is linear in the tangents, so the pullback is the VJP of that
linear map (JAX transposes it the same way).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .autodiff import vjp
from .autograd import Function
from .core import Tensor
from .creation import zeros_like
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp"]


def _split(args: tuple, nondiff: tuple[int, ...]) -> tuple[list[Any], list[Any]]:
    """(the static arguments, the differentiable ones), in order."""
    for i in nondiff:
        if i >= len(args):
            raise ValueError(f"nondiff_argnums {nondiff} out of range for {len(args)} "
                             "arguments")
    return [args[i] for i in nondiff], [a for i, a in enumerate(args) if i not in nondiff]


@contextlib.contextmanager
def _inside(f: custom_vjp | custom_jvp) -> Iterator[None]:
    """While a rule of ``f`` runs, calls of ``f`` are calls of its plain function."""
    f._in_rule += 1
    try:
        yield
    finally:
        f._in_rule -= 1


def _merge(static: list[Any], dyn: Sequence[Any], nondiff: tuple[int, ...]) -> list[Any]:
    out, s, d = [], iter(static), iter(dyn)
    for i in range(len(static) + len(dyn)):
        out.append(next(s) if i in nondiff else next(d))
    return out


class custom_vjp:  # noqa: N801  (JAX's name)
    """``@pf.custom_vjp`` then ``f.defvjp(f_fwd, f_bwd)``: ``f_fwd(*args)``
    returns ``(out, residuals)``, ``f_bwd(*nondiff, residuals, cotangent)``
    a tuple with one cotangent per differentiable argument."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._in_rule = 0  # the rules call the function itself: then it is plain ``fun``

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False) -> None:
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp.defvjp(symbolic_zeros=True) is not supported")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self._in_rule:
            return self.fun(*args)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        nondiff = self.nondiff_argnums
        static, dyn = _split(args, nondiff)
        leaves, tree = tree_flatten(dyn)
        fwd, bwd, owner = self.fwd, self.bwd, self
        box: dict[str, Any] = {}

        class Rule(Function):
            @staticmethod
            def forward(ctx: Any, *flat: Any) -> tuple:
                with _inside(owner):
                    out, residuals = fwd(*_merge(static, tree_unflatten(tree, list(flat)),
                                                 nondiff))
                out_leaves, box["out_tree"] = tree_flatten(out)
                ctx.residuals = residuals
                return tuple(out_leaves)

            @staticmethod
            def backward(ctx: Any, *cotangents: Any) -> tuple:
                ct = tree_unflatten(box["out_tree"], list(cotangents))
                with _inside(owner):
                    grads = bwd(*static, ctx.residuals, ct)
                if not isinstance(grads, tuple | list) or len(grads) != len(dyn):
                    raise TypeError(f"custom_vjp bwd rule of {self.__name__} must return a "
                                    f"tuple of length {len(dyn)} (one per differentiable "
                                    f"argument), got {type(grads).__name__}")
                flat, _ = tree_flatten(tuple(grads), is_leaf=lambda x: x is None)
                if len(flat) != len(leaves):
                    raise ValueError(f"custom_vjp bwd rule of {self.__name__}: its cotangents "
                                     f"have {len(flat)} leaves, the arguments {len(leaves)}")
                return tuple(flat)

            @staticmethod
            def jvp(ctx: Any, *tangents: Any) -> tuple:
                raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp "
                                f"function ({owner.__name__}), as in JAX")

        out = Rule.apply(*leaves)
        return tree_unflatten(box["out_tree"], list(out))


class custom_jvp:  # noqa: N801  (JAX's name)
    """``@pf.custom_jvp`` then ``@f.defjvp`` on ``f_jvp(primals, tangents)``
    returning ``(primal_out, tangent_out)`` (or ``f.defjvps`` with one rule
    per argument, ``rule(tangent, primal_out, *primals)``)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self.jvp: Callable[..., Any] | None = None
        self._in_rule = 0

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable:
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp.defjvp(symbolic_zeros=True) is not supported")
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules: Callable[..., Any] | None) -> None:
        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = self.fun(*primals)
            total: Any = None
            for rule, t in zip(rules, tangents):
                if rule is None:
                    continue
                part = rule(t, out, *primals)
                total = part if total is None else total + part
            return out, total if total is not None else zeros_like(out)
        self.jvp = jvp

    def __call__(self, *args: Any) -> Any:
        if self._in_rule:
            return self.fun(*args)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        nondiff = self.nondiff_argnums
        static, dyn = _split(args, nondiff)
        leaves, tree = tree_flatten(dyn)
        fun, rule, owner = self.fun, self.jvp, self
        box: dict[str, Any] = {}

        def tangent_out(primal_leaves: Sequence[Any], tangent_leaves: Sequence[Any]) -> list:
            primals = tuple(tree_unflatten(tree, list(primal_leaves)))
            tangents = tuple(tree_unflatten(tree, list(tangent_leaves)))
            with _inside(owner):
                _, t_out = rule(*static, primals, tangents) if static else \
                    rule(primals, tangents)
            return tree_flatten(t_out)[0]

        class Rule(Function):
            @staticmethod
            def forward(ctx: Any, *flat: Any) -> tuple:
                out = fun(*_merge(static, tree_unflatten(tree, list(flat)), nondiff))
                out_leaves, box["out_tree"] = tree_flatten(out)
                ctx.primal_leaves = flat
                return tuple(out_leaves)

            @staticmethod
            def jvp(ctx: Any, *tangents: Any) -> tuple:
                return tuple(tangent_out(ctx.primal_leaves, tangents))

            @staticmethod
            def backward(ctx: Any, *cotangents: Any) -> tuple:
                primal = ctx.primal_leaves
                diff = [i for i, p in enumerate(primal) if isinstance(p, Tensor)]
                zero = [zeros_like(primal[i]) for i in diff]

                def linear(*ts: Tensor) -> tuple:
                    full: list[Any] = [0.0] * len(primal)  # non-tensor leaves: no tangent
                    for i, t in zip(diff, ts):
                        full[i] = t
                    return tuple(tangent_out(primal, full))
                _, pull = vjp(linear, *zero)
                grads = pull(tuple(cotangents))
                result: list[Any] = [None] * len(primal)
                for i, g in zip(diff, grads):
                    result[i] = g
                return tuple(result)

        out = Rule.apply(*leaves)
        return tree_unflatten(box["out_tree"], list(out))
