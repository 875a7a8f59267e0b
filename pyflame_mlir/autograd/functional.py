"""``pf.autograd.functional``: PyTorch's ``torch.autograd.functional``
(``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``) on the
function transforms (``autodiff.vjp/jvp``, ``vmap.jacrev/jacfwd``).

torch's conventions, which differ from JAX's: ``inputs`` is a tensor or a
tuple of tensors (the result mirrors it: a tensor for a tensor, a tuple for a
tuple); ``jacobian`` nests outputs outside inputs; results are detached
unless ``create_graph=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autodiff import grad as _grad
from ..autodiff import jvp as _jvp
from ..autodiff import vjp as _vjp
from ..core import Tensor
from ..creation import ones_like
from ..vmap import jacfwd, jacrev

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(inputs: Any, what: str) -> tuple[bool, tuple[Tensor, ...]]:
    """(was it a tuple, the tensors): torch accepts one tensor or a tuple."""
    is_tuple = isinstance(inputs, tuple | list)
    items = tuple(inputs) if is_tuple else (inputs,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"autograd.functional.{what}: the inputs must be Tensors or a "
                            f"tuple of Tensors, but element {i} is {type(t).__name__}")
    return is_tuple, items


def _check_strict(strict: bool, what: str) -> None:
    if strict:
        raise NotImplementedError(
            f"autograd.functional.{what}(strict=True) is not supported: pyflame does not "
            "track which outputs are independent of which inputs; call with strict=False")


def _finish(x: Any, create_graph: bool) -> Any:
    """Detach (torch's create_graph=False) through tuples."""
    if isinstance(x, tuple):
        return tuple(_finish(v, create_graph) for v in x)
    return x if create_graph or not isinstance(x, Tensor) else x.detach()


def _call(func: Callable, inputs: tuple[Tensor, ...], what: str) -> Any:
    out = func(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(f"autograd.functional.{what}: the function must return a Tensor "
                            f"or a tuple of Tensors, but output {i} is {type(o).__name__}")
    return out


def _vector(v: Any, like: tuple[Tensor, ...], what: str, role: str) -> tuple[Tensor, ...]:
    """``v`` checked against the tensors it pairs with; None only for one
    single-element tensor (torch's rule), then 1."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"autograd.functional.{what}: the vector v can only be None if "
                               f"the {role} is a single Tensor with a single element")
        return (ones_like(like[0]),)
    vs = tuple(v) if isinstance(v, tuple | list) else (v,)
    if len(vs) != len(like):
        raise RuntimeError(f"autograd.functional.{what}: v has {len(vs)} elements, the {role} "
                           f"has {len(like)}")
    for a, b in zip(vs, like):
        if not isinstance(a, Tensor) or tuple(a.shape) != tuple(b.shape):
            got = tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__
            raise RuntimeError(f"autograd.functional.{what}: v has shape {got}, the {role} "
                               f"has shape {tuple(b.shape)}: they must match")
    return vs


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """``J[i][j]`` of output i by input j, shaped ``out_i.shape + in_j.shape``
    (a tensor where both are single, one tuple level where one is)."""
    _check_strict(strict, "jacobian")
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise ValueError("torch.autograd.functional.jacobian: `strategy=\"forward-mode\"` "
                         "is only supported with `vectorize=True`")
    in_tuple, xs = _as_tuple(inputs, "jacobian")
    transform = jacfwd if strategy == "forward-mode" else jacrev
    argnums = tuple(range(len(xs)))
    jac = transform(lambda *a: _call(func, a, "jacobian"), argnums=argnums)(*xs)
    # jac: per output (a tuple if the function returns one) a tuple over inputs
    if isinstance(jac, tuple) and jac and isinstance(jac[0], tuple):
        out = tuple(j if in_tuple else j[0] for j in jac)
    else:
        out = jac if in_tuple else jac[0]
    return _finish(out, create_graph)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """``H[i][j]`` of a scalar function, shaped ``in_i.shape + in_j.shape``."""
    _check_strict(strict, "hessian")
    in_tuple, xs = _as_tuple(inputs, "hessian")

    def scalar(*a: Tensor) -> Tensor:
        out = _call(func, a, "hessian")
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("autograd.functional.hessian: the function must return a "
                               "single-element Tensor")
        return out.reshape(())

    argnums = tuple(range(len(xs)))
    first = jacrev(scalar, argnums=argnums)
    outer = jacfwd if outer_jacobian_strategy == "forward-mode" else jacrev
    h = outer(first, argnums=argnums)(*xs)  # per input i a tuple over inputs j
    out = h if in_tuple else h[0][0]
    return _finish(out, create_graph)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``; ``v`` may be omitted for a single-element output."""
    _check_strict(strict, "vjp")
    in_tuple, xs = _as_tuple(inputs, "vjp")
    out, pull = _vjp(lambda *a: _call(func, a, "vjp"), *xs)
    outs = out if isinstance(out, tuple) else (out,)
    vs = _vector(v, outs, "vjp", "output")
    cts = vs if isinstance(out, tuple) else vs[0]
    grads = pull(cts)
    return _finish(out, create_graph), _finish(grads if in_tuple else grads[0], create_graph)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``; ``v`` may be omitted for a single-element input."""
    _check_strict(strict, "jvp")
    in_tuple, xs = _as_tuple(inputs, "jvp")
    vs = _vector(v, xs, "jvp", "input")
    out, tangent = _jvp(lambda *a: _call(func, a, "jvp"), xs, vs)
    return _finish(out, create_graph), _finish(tangent, create_graph)


def _scalar_grad(func: Callable, n: int, what: str) -> Callable:
    def scalar(*a: Tensor) -> Tensor:
        out = _call(func, a, what)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError(f"autograd.functional.{what}: the function must return a "
                               "single-element Tensor")
        return out.reshape(())
    g = _grad(scalar, argnums=tuple(range(n)))
    return lambda *a: tuple(g(*a))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """``(func(inputs), H v)`` of a scalar function (forward over reverse)."""
    _check_strict(strict, "hvp")
    in_tuple, xs = _as_tuple(inputs, "hvp")
    vs = _vector(v, xs, "hvp", "input")
    _, hv = _jvp(_scalar_grad(func, len(xs), "hvp"), xs, vs)
    out = _call(func, xs, "hvp")
    return _finish(out, create_graph), _finish(hv if in_tuple else hv[0], create_graph)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """``(func(inputs), v^T H)`` of a scalar function (reverse over reverse)."""
    _check_strict(strict, "vhp")
    in_tuple, xs = _as_tuple(inputs, "vhp")
    vs = _vector(v, xs, "vhp", "input")
    _, pull = _vjp(_scalar_grad(func, len(xs), "vhp"), *xs)
    vh = pull(vs)
    out = _call(func, xs, "vhp")
    return _finish(out, create_graph), _finish(vh if in_tuple else vh[0], create_graph)
