"""``pf.lax``: JAX's structured control flow, ``stop_gradient`` and
``checkpoint``, on pyflame's recording.

Recording is Python-driven, so the loops unroll into the graph as they run
(``scan``/``fori_loop``/``map`` with static trip counts record one body per
step; the cache makes the next call of the same program free) and branches
choose with a concrete predicate: ``cond``/``switch``/``while_loop`` read
their predicate's value (evaluating what it needs). Values and derivatives
are JAX's; under ``pf.compile`` a traced predicate cannot be read and raises.
Unlike JAX, ``while_loop`` is differentiable in reverse mode here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .core import Tensor, detach
from .ops import stack
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "cond", "fori_loop", "map", "remat", "scan", "stop_gradient",
           "switch", "while_loop"]


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
        return x.item()
    return x


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``."""
    return true_fun(*operands) if bool(_concrete(pred, "cond")) else false_fun(*operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(index, 0, len - 1)](*operands)``, as JAX clamps."""
    if not branches:
        raise ValueError("lax.switch: empty branches sequence")
    i = int(_concrete(index, "switch"))
    return branches[min(max(i, 0), len(branches) - 1)](*operands)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    val = init_val
    while bool(_concrete(cond_fun(val), "while_loop")):
        val = body_fun(val)
    return val


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[int, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``body_fun(i, val)`` for i in [lower, upper); ``i`` is a Python int."""
    del unroll  # every step is recorded: the loop is unrolled
    val = init_val
    for i in range(int(_concrete(lower, "fori_loop")), int(_concrete(upper, "fori_loop"))):
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
