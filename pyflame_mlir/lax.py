"""``pf.lax``: JAX's structured control flow, ``stop_gradient`` and
``checkpoint``, on pyflame's recording.

Recording is Python-driven, so the loops unroll into the graph as they run
(``scan``/``fori_loop``/``map`` with static trip counts record one body per
step; the cache makes the next call of the same program free) and branches
choose with a concrete predicate: ``cond``/``switch``/``while_loop`` read
their predicate's value (evaluating what it needs). Values and derivatives
are JAX's. Under ``vmap`` a mapped ``cond``/``switch`` predicate runs every
branch and selects per example (JAX's batching rule); with a mapped
``while_loop`` predicate or ``fori_loop`` bound ``vmap`` runs the function
per example (each loop until its own end, as JAX's batched loop). Under
``pf.compile`` a predicate read from a traced value makes the program one
that is never replayed (each call runs ``f``: ``stats()["python_reasons"]``
says so), never a stale branch.
Unlike JAX, ``while_loop`` is differentiable in reverse mode here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core import Tensor, detach, realize
from .dialects.dtypes import int64
from .ops import clamp, stack, where
from .tree_util import tree_flatten, tree_unflatten
from .vmap import ConcretizationError, MappedLoopError

__all__ = ["checkpoint", "cond", "fori_loop", "map", "remat", "scan", "select",
           "stop_gradient", "switch", "while_loop"]


def stop_gradient(x: Any) -> Any:
    """The value of ``x`` (a pytree) with no derivative flowing back."""
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [detach(v) if isinstance(v, Tensor) else v for v in leaves])


def _concrete(x: Any, what: str) -> Any:
    """A Python value of a predicate or bound (evaluating a tensor)."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise TypeError(f"lax.{what}: expected a scalar, got a tensor of shape "
                            f"{list(x.shape)}")
        realize([x])  # even a value: a transform tracing f is told it is read
        return x.item()
    return x


def _mapped_value(x: Any, what: str) -> bool:
    """Whether ``x`` is a tensor whose value ``vmap`` cannot give (it depends
    on a mapped argument): then both branches run and ``select`` chooses."""
    if not isinstance(x, Tensor):
        return False
    try:
        _concrete(x, what)
    except ConcretizationError:
        return True
    return False


def _selected(what: str, index: Tensor, results: list[Any]) -> Any:
    """Per leaf, ``results[index]``: JAX's batching of ``cond``/``switch``."""
    flat = [tree_flatten(r) for r in results]
    tree = flat[0][1]
    for _, t in flat[1:]:
        if t != tree:
            raise TypeError(f"lax.{what}: the branches must return the same tree "
                            f"structure, got {tree} and {t}")
    out = []
    for k, first in enumerate(flat[0][0]):
        v = first
        for i in range(1, len(flat)):
            other = flat[i][0][k]
            if isinstance(first, Tensor) and isinstance(other, Tensor) and (
                    first.shape != other.shape or first.dtype != other.dtype):
                raise TypeError(f"lax.{what}: the branches must return the same shapes "
                                f"and dtypes, got {first.dtype.name}{list(first.shape)} and "
                                f"{other.dtype.name}{list(other.shape)} at leaf {k}")
            v = where(index == i, other, v)
        out.append(v)
    return tree_unflatten(tree, out)


def select(pred: Any, on_true: Any, on_false: Any) -> Tensor:
    """``on_true`` where ``pred`` else ``on_false``, elementwise."""
    return where(pred, on_true, on_false)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``;
    under ``vmap`` with a mapped predicate both run and ``select`` chooses
    per example (JAX's batching rule)."""
    if _mapped_value(pred, "cond"):
        return _selected("cond", (pred != 0).to(int64),
                         [false_fun(*operands), true_fun(*operands)])
    return true_fun(*operands) if bool(_concrete(pred, "cond")) else false_fun(*operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(index, 0, len - 1)](*operands)``, as JAX clamps."""
    if not branches:
        raise ValueError("lax.switch: empty branches sequence")
    if _mapped_value(index, "switch"):
        i = clamp(index.to(int64), 0, len(branches) - 1)
        return _selected("switch", i, [b(*operands) for b in branches])
    i = _concrete(index, "switch")
    if isinstance(i, bool | float) or not isinstance(i, int | np.integer):
        raise TypeError(f"lax.switch: the index must be a scalar integer, got "
                        f"{type(i).__name__} {i!r}")
    i = int(i)
    return branches[min(max(i, 0), len(branches) - 1)](*operands)


def _loop_value(x: Any, what: str) -> Any:
    """A loop's predicate or bound as a Python value; one that depends on a
    ``vmap``-mapped argument makes ``vmap`` run the function per example."""
    if _mapped_value(x, what):
        raise MappedLoopError(f"lax.{what}: its predicate or bounds depend on a mapped "
                              "argument (vmap runs each example's loop)")
    return _concrete(x, what)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; under ``vmap`` with a
    mapped predicate each example loops until its own predicate is false."""
    val = init_val
    while bool(_loop_value(cond_fun(val), "while_loop")):
        val = body_fun(val)
    return val


def _int_bound(x: Any, what: str) -> int:
    v = _loop_value(x, what)
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise TypeError(f"lax.{what}: bounds must be integers, got "
                        f"{type(v).__name__} {v!r}")
    return int(v)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[int, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``body_fun(i, val)`` for i in [lower, upper); ``i`` is a Python int."""
    del unroll  # every step is recorded: the loop is unrolled
    val = init_val
    for i in range(_int_bound(lower, "fori_loop"), _int_bound(upper, "fori_loop")):
        val = body_fun(i, val)
    return val


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (a pytree);
    returns the last carry and the ``y``s stacked along a new leading axis."""
    del unroll, _split_transpose
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {v.shape[0] for v in x_leaves}
    if len(lengths) > 1:
        raise ValueError(f"lax.scan got values with different leading axis sizes: "
                         f"{sorted(lengths)}")
    if length is None:
        if not lengths:
            raise ValueError("lax.scan: xs is None (or has no leaves): give length")
        length = lengths.pop()
    elif lengths and lengths != {length}:
        raise ValueError(f"lax.scan got `length` argument of {length} which disagrees with "
                         f"leading axis sizes {sorted(lengths)}")
    carry, ys = init, []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        x = tree_unflatten(x_tree, [v[i] for v in x_leaves]) if x_leaves else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, _stack_trees(ys, "scan")


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` over the leading axis of ``xs``, results stacked."""
    del batch_size
    _, ys = scan(lambda c, x: (c, f(x)), None, xs)
    return ys


def _stack_trees(ys: list[Any], what: str) -> Any:
    if not ys:
        return None
    flat = [tree_flatten(y) for y in ys]
    tree = flat[0][1]
    if any(t != tree for _, t in flat):
        raise TypeError(f"lax.{what}: the body's outputs change structure between steps")
    n = len(flat[0][0])
    return tree_unflatten(tree, [stack([leaves[k] for leaves, _ in flat]) for k in range(n)])


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Any = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable[..., Any]:
    """``jax.checkpoint`` / ``remat``: values and derivatives are ``fun``'s.
    Not implemented: the memory saving (recomputing ``fun``'s activations in
    the backward pass): the reference backend keeps them, as without it."""
    del prevent_cse, policy, static_argnums
    return fun


remat = checkpoint
