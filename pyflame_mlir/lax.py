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
As JAX, ``while_loop`` is differentiable in forward mode only (``jvp``,
``jacfwd``; reverse mode raises JAX's error), except inside a ``vmap``'s
one-for-all trace, where its reverse derivative is computed; ``fori_loop``
reads its bounds, so it is always JAX's static-bounds loop (a scan, both
modes).
The array ops follow: elementwise, shapes, slicing, ``dot_general``,
reductions and sorts, then the convolutions (on ``nn.functional``'s) and
``reduce_window`` (what flax's Conv, ConvTranspose and pools call).
"""

from __future__ import annotations

import builtins
import enum
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import composites2, creation, indexing, ops, reductions, special
from .autograd import Function
from .core import Tensor, detach, realize, source
from .dialects.dtypes import bool_, int32, int64
from .dialects.dtypes import dtype as to_dtype
from .jax_config import config, default_float, default_int
from .nn import functional as F
from .ops import stack, where
from .tree_util import tree_flatten, tree_unflatten
from .vmap import (
    CollectiveInTrace,
    ConcretizationError,
    MappedLoopError,
    collective_trace,
    in_vmap_trace,
)

__all__ = [  # control flow, then lax's array ops
    "checkpoint", "cond", "fori_loop", "map", "remat", "scan", "select", "stop_gradient",
    "switch", "while_loop",
    "conv", "conv_general_dilated", "conv_transpose", "conv_with_general_padding",
    "reduce_window", "reduce", "ConvDimensionNumbers", "Precision", "bessel_i0e", "bessel_i1e",
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast_shapes", "clz", "collapse", "reduce_precision",
    "conv_dimension_numbers", "dot", "RoundingMethod", "igamma", "igammac", "nextafter",
    "optimization_barrier",
    "padtype_to_pads", "polygamma", "population_count", "reciprocal", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "split", "tile", "zeta",
    "abs", "acos", "acosh", "add", "argmax", "argmin", "asin", "asinh", "associative_scan",
    "atan", "atan2", "atanh", "batch_matmul", "broadcast", "broadcast_in_dim",
    "broadcasted_iota", "cbrt", "ceil", "clamp", "concatenate", "convert_element_type", "cos",
    "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma", "div",
    "dot_general", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq",
    "erf", "erf_inv", "erfc", "exp", "exp2", "expand_dims", "expm1", "floor", "full",
    "full_like", "ge", "gt", "index_in_dim", "integer_pow", "iota", "is_finite", "le",
    "lgamma", "log", "log1p", "logistic", "lt", "max", "min", "mul", "ne", "neg", "pad", "pow",
    "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "rem",
    "reshape", "rev", "round", "rsqrt", "select_n", "sign", "sin", "sinh", "slice",
    "slice_in_dim", "sort", "sort_key_val", "sqrt", "square", "squeeze", "sub", "tan", "tanh",
    "top_k", "transpose",
    "all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin", "ppermute",
    "psum", "psum_scatter"]


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


_KINDS = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}  # bool < int < float < complex


def _aval(x: Any) -> tuple[tuple[int, ...], str, int, bool]:
    """(shape, dtype name, kind, weak) of a leaf as JAX types it: a Python
    scalar is weakly typed (it takes the other side's dtype of its kind), a
    tensor or array strongly."""
    if isinstance(x, Tensor):
        return tuple(x.shape), x.dtype.name, x.dtype.category, False
    if isinstance(x, bool | int | float | complex):
        return (), type(x).__name__, _KINDS[np.dtype(type(x)).kind], True
    a = np.asarray(x)
    return a.shape, a.dtype.name, _KINDS.get(a.dtype.kind, -1), False


def _same_types(what: str, names: tuple[str, str], first: Any, other: Any,
                promotes: bool = False) -> None:
    """Two trees that must have one structure and, leaf by leaf, one shape and
    dtype: JAX's ``TypeError``s. A weak (Python scalar) leaf takes the other's
    dtype of the same kind; with ``promotes`` (a loop carry: ``first`` the
    input, ``other`` the output) a weak input also takes a higher kind (int to
    float) and a weak output a lower one, as JAX promotes weak carries."""
    a_leaves, a_tree = tree_flatten(first)
    b_leaves, b_tree = tree_flatten(other)
    if a_tree != b_tree:
        raise TypeError(f"{what} must have the same pytree structure, but they differ: "
                        f"{names[0]} is {a_tree}, {names[1]} is {b_tree}")
    for k, (a, b) in enumerate(zip(a_leaves, b_leaves)):
        (sa, da, ka, wa), (sb, db, kb, wb) = _aval(a), _aval(b)
        ok = da == db or ((wa or wb) and ka == kb) or (
            promotes and ((wa and kb >= ka) or (wb and kb <= ka)))
        if sa != sb or not ok:
            raise TypeError(f"{what} must have equal types (the same shapes and dtypes), "
                            f"but they differ: leaf {k} of "
                            f"{names[0]} is {da}{list(sa)}, of {names[1]} {db}{list(sb)}")


def _branch_results(what: str, results: list[Any]) -> None:
    """JAX traces every branch of ``cond``/``switch``: their outputs must agree
    in structure, shapes and dtypes whichever branch is taken."""
    for i, r in enumerate(results[1:], start=1):
        _same_types(f"lax.{what}: branch outputs", ("branch 0", f"branch {i}"),
                    results[0], r)


def _run_branches(what: str, branches: list[Callable[..., Any]], operands: tuple) -> list[Any]:
    """Every branch's result, checked to agree (JAX traces every branch, so a
    disagreement raises whichever is taken). The branches must be pure, as in
    JAX (torch.cond forbids mutation too): one that modifies an operand in
    place raises instead of having run for nothing."""
    tensors = [t for t in tree_flatten(operands)[0] if isinstance(t, Tensor)]
    versions = [t._version for t in tensors]
    results = [b(*operands) for b in branches]
    if [t._version for t in tensors] != versions:
        raise RuntimeError(f"lax.{what}: a branch modified an operand in place; every branch "
                           "runs (JAX traces them all) and must be pure")
    _branch_results(what, results)
    return results


def _selected(what: str, index: Tensor, results: list[Any]) -> Any:
    """Per leaf, ``results[index]``: JAX's batching of ``cond``/``switch``."""
    _branch_results(what, results)
    flat = [tree_flatten(r) for r in results]
    tree = flat[0][1]
    out = []
    for k, first in enumerate(flat[0][0]):
        v = first
        for i in range(1, len(flat)):
            v = where(index == i, flat[i][0][k], v)
        out.append(v)
    return tree_unflatten(tree, out)


def select(pred: Any, on_true: Any, on_false: Any) -> Tensor:
    """``on_true`` where ``pred`` else ``on_false``, elementwise."""
    return where(pred, on_true, on_false)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``;
    under ``vmap`` with a mapped predicate both run and ``select`` chooses
    per example (JAX's batching rule). Both always run (lazily: the branch
    not taken is recorded, never evaluated) so that branches whose outputs
    disagree raise as in JAX; they must not modify their operands."""
    if _mapped_value(pred, "cond"):
        return _selected("cond", (pred != 0).to(int64),
                         [false_fun(*operands), true_fun(*operands)])
    taken = bool(_concrete(pred, "cond"))
    results = _run_branches("cond", [false_fun, true_fun], operands)
    return _as_arrays(results[int(taken)])  # (a Python-number result: an array, as JAX's)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(index, 0, len - 1)](*operands)``, as JAX clamps."""
    if not branches:
        raise ValueError("lax.switch: empty branches sequence")
    if _mapped_value(index, "switch"):
        i = ops.clamp(index.to(int64), 0, len(branches) - 1)
        return _selected("switch", i, [b(*operands) for b in branches])
    i = _concrete(index, "switch")
    if isinstance(i, bool | float) or not isinstance(i, int | np.integer):
        raise TypeError(f"lax.switch: the index must be a scalar integer, got "
                        f"{type(i).__name__} {i!r}")
    i = builtins.min(builtins.max(int(i), 0), len(branches) - 1)
    return _as_arrays(_run_branches("switch", list(branches), operands)[i])


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
    mapped predicate each example loops until its own predicate is false.
    Differentiable in forward mode only, as JAX's."""
    val = _as_arrays(python_while_loop(cond_fun, body_fun, init_val))  # (the predicate
    # reads a Python number of the carry for free; the result is arrays, as JAX's)
    if in_vmap_trace():  # (a custom rule would make vmap run f per example)
        return val
    leaves, tree = tree_flatten(val)
    pos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor) and v.dtype.is_floating_point]
    if not pos:
        return val
    outs = _ForwardOnly.apply(*[leaves[i] for i in pos])
    for i, o in zip(pos, outs if isinstance(outs, tuple | list) else (outs,)):
        leaves[i] = o
    return tree_unflatten(tree, leaves)


def python_while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
                      init_val: Any) -> Any:
    """``while_loop``'s loop, differentiable in both modes (``torch.while_loop``'s:
    torch differentiates the loop it ran)."""
    val, steps = init_val, 0
    while bool(_loop_value(_predicate(cond_fun(val)), "while_loop")):
        new = body_fun(val)
        _carry_types("while_loop", val, new)
        val, steps = new, steps + 1
    if not steps:  # JAX traces the body even when it never runs: its types are checked
        _carry_types("while_loop", val, body_fun(val))
    return val


class _ForwardOnly(Function):
    """``while_loop``'s results: the tangents pass (forward mode), reverse mode
    raises as JAX's (a loop of unknown trip count has no transpose there)."""

    @staticmethod
    def forward(ctx: Any, *xs: Tensor) -> tuple:
        return tuple(x.clone() for x in xs)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> tuple:
        return tuple(tangents)

    @staticmethod
    def backward(ctx: Any, *cotangents: Any) -> tuple:
        raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                         "lax.fori_loop with dynamic start/stop values. Try using lax.scan, "
                         "or using fori_loop with static start/stop.")


def _as_arrays(carry: Any) -> Any:
    """A loop's initial carry as JAX takes it: Python numbers become arrays of
    JAX's default dtypes (int32/float32, 64-bit with x64), so the loop returns
    arrays as JAX's does."""
    leaves, tree = tree_flatten(carry)
    out = []
    for v in leaves:
        if isinstance(v, bool):
            v = creation.tensor(v, dtype=bool_)
        elif isinstance(v, int):
            v = creation.tensor(v, dtype=default_int())
        elif isinstance(v, float):
            v = creation.tensor(v, dtype=default_float())
        out.append(v)
    return tree_unflatten(tree, out)


def _predicate(p: Any) -> Any:
    """``while_loop``'s ``cond_fun`` result: a boolean scalar, as JAX requires."""
    if isinstance(p, Tensor) and (p.dtype is not bool_ or p.ndim != 0):
        raise TypeError(f"lax.while_loop: cond_fun must return a boolean scalar, but got "
                        f"{p.dtype.name}{list(p.shape)}")
    return p


def _carry_types(what: str, carry: Any, new: Any) -> None:
    """A loop body's carry output must have its input's structure, shapes and
    dtypes (JAX's ``TypeError``)."""
    _same_types(f"lax.{what}: the body function's carry input and carry output",
                ("the input", "the output"), carry, new, promotes=True)


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
    lo, hi = _int_bound(lower, "fori_loop"), _int_bound(upper, "fori_loop")
    for i in range(lo, hi):
        new = body_fun(i, val)
        _carry_types("fori_loop", val, new)
        val = new
    if hi <= lo:  # JAX traces the body even when it never runs: its types are checked
        _carry_types("fori_loop", val, body_fun(lo, val))
    return _as_arrays(val)  # (a weak Python carry comes back as an array, as JAX's)


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
        new, y = f(carry, x)
        _carry_types("scan", carry, new)
        carry = new
        ys.append(_as_arrays(y))
    if reverse:
        ys.reverse()
    # (Python-number carries and outputs come back as arrays, as JAX's)
    return _as_arrays(carry), _stack_trees(ys, "scan")


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


def _saves(answer: bool) -> Callable[..., bool]:
    def policy(prim: Any, *args: Any, **params: Any) -> bool:
        del prim, args, params
        return answer
    return policy


def _saves_dots(no_batch_dims: bool) -> Callable[..., bool]:
    def policy(prim: Any, *args: Any, **params: Any) -> bool:
        del args
        if getattr(prim, "name", prim) != "dot_general":
            return False
        if not no_batch_dims:
            return True
        (_, _), (lhs_batch, rhs_batch) = params.get("dimension_numbers", ((), ((), ())))
        return not lhs_batch and not rhs_batch
    return policy


def _names(keep: bool) -> Callable[..., Callable[..., bool]]:
    def make(*names: str) -> Callable[..., bool]:
        def policy(prim: Any, *args: Any, **params: Any) -> bool:
            del args
            named = getattr(prim, "name", prim) == "name" and params.get("name") in names
            return named if keep else not named
        return policy
    return make


def _both(a: Callable[..., bool], b: Callable[..., bool]) -> Callable[..., bool]:
    def policy(prim: Any, *args: Any, **params: Any) -> bool:
        return a(prim, *args, **params) or b(prim, *args, **params)
    return policy


# jax.checkpoint_policies: what a checkpointed function's backward may keep
# instead of recomputing. JAX's predicates (prim, *avals, **params) -> bool;
# pf.checkpoint accepts them and saves no memory yet (its values and
# gradients are the function's whatever the policy)
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_saves(True), nothing_saveable=_saves(False),
    dots_saveable=_saves_dots(False), checkpoint_dots=_saves_dots(False),
    dots_with_no_batch_dims_saveable=_saves_dots(True),
    checkpoint_dots_with_no_batch_dims=_saves_dots(True),
    save_only_these_names=_names(True), save_any_names_but_these=_names(False),
    save_anything_except_these_names=_names(False), save_from_both_policies=_both)


# ---- lax's array ops: JAX's signatures and conventions on pyflame's ops ----
# (each is a composition of ops whose semantics live in their table entries;
# what is lax's own here is the convention: argument order, clamped dynamic
# starts, truncating integer division, rounding away from zero, ...)

def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else ops.as_tensor_arg(x)


def add(x: Any, y: Any) -> Tensor:
    return ops.add(_t(x), y)


def sub(x: Any, y: Any) -> Tensor:
    return ops.sub(_t(x), y)


def mul(x: Any, y: Any) -> Tensor:
    return ops.mul(_t(x), y)


def div(x: Any, y: Any) -> Tensor:
    """``x / y``; for integers rounded toward zero (C's division, as lax)."""
    x, y = _t(x), _t(y)
    if x.dtype.is_floating_point or y.dtype.is_floating_point:
        return ops.div(x, y)
    return ops.div(x, y, rounding_mode="trunc")


def rem(x: Any, y: Any) -> Tensor:
    """The remainder with the sign of ``x`` (C's ``fmod``, as lax)."""
    return ops.fmod(_t(x), y)


def max(x: Any, y: Any) -> Tensor:  # noqa: A001  (lax.max: elementwise)
    return ops.maximum(_t(x), _t(y))


def min(x: Any, y: Any) -> Tensor:  # noqa: A001
    return ops.minimum(_t(x), _t(y))


def clamp(min: Any, x: Any, max: Any) -> Tensor:  # noqa: A002  (lax's argument order)
    """``x`` clamped to ``[min, max]`` (lax's order: the bounds around ``x``)."""
    return ops.minimum(ops.maximum(_t(x), _t(min)), _t(max))


def round(x: Any, rounding_method: int = 0) -> Tensor:  # noqa: A001
    """lax's default rounds halves away from zero; ``rounding_method=1``
    (TO_NEAREST_EVEN) as numpy."""
    x = _t(x)
    if int(rounding_method) == 1:
        return ops.round(x)
    return ops.sign(x) * ops.floor(ops.abs(x) + 0.5)


def integer_pow(x: Any, y: int) -> Tensor:
    if not isinstance(y, int):
        raise TypeError(f"lax.integer_pow: the exponent must be a Python int, got {y!r}")
    return ops.pow(_t(x), y)


def square(x: Any) -> Tensor:
    x = _t(x)
    return x * x


def rsqrt(x: Any) -> Tensor:
    return ops.rsqrt(_t(x))


def cbrt(x: Any) -> Tensor:
    x = _t(x)
    return ops.sign(x) * ops.pow(ops.abs(x), 1.0 / 3.0)


def logistic(x: Any) -> Tensor:
    return ops.sigmoid(_t(x))


def is_finite(x: Any) -> Tensor:
    return ops.isfinite(_t(x))


def _unary(name: str, target: str) -> Callable[[Any], Tensor]:
    op = getattr(ops, target, None) or getattr(composites2, target)

    def f(x: Any) -> Tensor:
        return op(_t(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``lax.{name}``: elementwise ``{target}``."
    return f


neg, abs, sign, floor, ceil = (_unary(n, t) for n, t in (  # noqa: A001
    ("neg", "neg"), ("abs", "abs"), ("sign", "sign"), ("floor", "floor"), ("ceil", "ceil")))
exp, exp2, log, log1p, expm1 = (_unary(n, n) for n in ("exp", "exp2", "log", "log1p", "expm1"))
sqrt, tanh, sin, cos, tan = (_unary(n, n) for n in ("sqrt", "tanh", "sin", "cos", "tan"))
asin, acos, atan, sinh, cosh = (_unary(n, n) for n in ("asin", "acos", "atan", "sinh", "cosh"))
asinh, acosh, atanh, erf, erfc = (_unary(n, n) for n in ("asinh", "acosh", "atanh", "erf",
                                                         "erfc"))
lgamma, digamma = _unary("lgamma", "lgamma"), _unary("digamma", "digamma")
erf_inv = _unary("erf_inv", "erfinv")


def pow(x: Any, y: Any) -> Tensor:  # noqa: A001
    return ops.pow(_t(x), y)


def atan2(x: Any, y: Any) -> Tensor:
    return ops.atan2(_t(x), _t(y))


def eq(x: Any, y: Any) -> Tensor:
    return ops.eq(_t(x), y)


def ne(x: Any, y: Any) -> Tensor:
    return ops.ne(_t(x), y)


def lt(x: Any, y: Any) -> Tensor:
    return ops.lt(_t(x), y)


def le(x: Any, y: Any) -> Tensor:
    return ops.le(_t(x), y)


def gt(x: Any, y: Any) -> Tensor:
    return ops.gt(_t(x), y)


def ge(x: Any, y: Any) -> Tensor:
    return ops.ge(_t(x), y)


def select_n(which: Any, *cases: Any) -> Tensor:
    """``cases[which]`` elementwise (a bool ``which`` picks between two)."""
    if not cases:
        raise ValueError("lax.select_n: at least one case is needed")
    w = _t(which)
    if w.dtype is bool_:
        if len(cases) != 2:
            raise ValueError(f"lax.select_n: a boolean selector takes 2 cases, got "
                             f"{len(cases)}")
        return where(w, _t(cases[1]), _t(cases[0]))
    out = _t(cases[0])
    for i in range(1, len(cases)):
        out = where(w == i, _t(cases[i]), out)
    return out


def saturating_cast(t: Tensor, d: Any) -> Tensor:
    """``t`` as dtype ``d`` with XLA's float-to-integer conversion: values
    beyond the integer type's range saturate at its bounds, NaN becomes 0
    (torch's and numpy's casts wrap them)."""
    if not t.dtype.is_floating_point or d.is_floating_point or d is bool_:
        return t.to(d)
    info = np.iinfo(d.np)
    cast = t.to(d)
    lo, hi = creation.tensor(int(info.min), dtype=d), creation.tensor(int(info.max), dtype=d)
    out = where(t >= float(info.max), hi, where(t <= float(info.min), lo, cast))
    return where(ops.isnan(t), creation.tensor(0, dtype=d), out)


# ---- bitcast_convert_type: the IEEE fields as integer arithmetic ----

# float dtype -> (bits, exponent bits, mantissa bits)
_FLOAT_FIELDS = {"float16": (16, 5, 10), "bfloat16": (16, 8, 7), "float32": (32, 8, 23),
                 "float64": (64, 11, 52)}


def _width(dt: Any) -> int:
    return dt.np.itemsize * 8


def _f64(x: Any) -> Tensor:
    return ops.as_tensor_arg(np.float64(x))


def _i64(x: int) -> Tensor:
    return ops.as_tensor_arg(np.int64(x))


def _float_bits(x: Tensor) -> Tensor:
    """The bit pattern of float ``x`` as int64: the unsigned pattern below 64
    bits, the signed one for float64. Sign, exponent and mantissa come from
    exact float64 arithmetic (frexp, scalings by powers of two); NaN is the
    quiet NaN with the sign bit clear (0x7fc00000 for float32)."""
    w, ebits, mbits = _FLOAT_FIELDS[x.dtype.name]
    bias, emax = (1 << (ebits - 1)) - 1, (1 << ebits) - 1
    v = x.to(to_dtype("float64"))
    sign = composites2.signbit(v)
    a = ops.abs(v)
    m, e = composites2.frexp(a)
    biased = e.to(int64) - 1 + bias  # a = (2 m) 2^(e - 1), 1 <= 2 m < 2
    normal = ops.logical_and(biased >= 1, a > 0.0)  # (frexp(0) is (0, 0))
    mant_normal = (m * 2.0 - 1.0) * float(1 << mbits)
    half = (bias - 1 + mbits) // 2  # a * 2^(bias - 1 + mbits), in two exact steps
    mant_sub = a * float(2.0 ** half) * float(2.0 ** (bias - 1 + mbits - half))
    mant = where(normal, mant_normal, mant_sub)
    exp = where(normal, biased, _i64(0))
    inf, nan = ops.isinf(v), ops.isnan(v)
    exp = where(ops.logical_or(inf, nan), _i64(emax), exp)
    mant = where(inf, _f64(0.0), where(nan, _f64(float(1 << (mbits - 1))), mant))
    bits = exp * _i64(1 << mbits) + ops.round(mant).to(int64)
    top = -(1 << 63) if w == 64 else 1 << (w - 1)
    return bits + where(ops.logical_and(sign, ops.logical_not(nan)), _i64(top), _i64(0))


def _bits_float(bits: Tensor, dt: Any) -> Tensor:
    """The float of dtype ``dt`` whose bit pattern ``bits`` holds (as
    :func:`_float_bits` gives it), from float64 arithmetic (exact)."""
    w, ebits, mbits = _FLOAT_FIELDS[dt.name]
    bias, emax = (1 << (ebits - 1)) - 1, (1 << ebits) - 1
    if w == 64:
        sign = bits < 0
        rest = ops.bitwise_and(bits, _i64((1 << 63) - 1))
    else:
        sign = bits >= (1 << (w - 1))
        rest = ops.bitwise_and(bits, _i64((1 << (w - 1)) - 1))
    exp = ops.floor_divide(rest, _i64(1 << mbits))
    mant = ops.bitwise_and(rest, _i64((1 << mbits) - 1))
    sub = exp == 0
    digits = where(sub, mant, mant + (1 << mbits)).to(to_dtype("float64"))
    power = (where(sub, _i64(1), exp) - (bias + mbits)).to(to_dtype("float64"))
    half = ops.floor(power / 2.0)  # two factors: 2^power alone may be subnormal
    mag = digits * ops.exp2(half) * ops.exp2(power - half)
    special_ = where(mant == 0, _f64(np.inf), _f64(np.nan))
    mag = where(exp == emax, special_, mag)
    return where(sign, ops.neg(mag), mag).to(dt)


def _int_bits(x: Tensor) -> Tensor:
    w = _width(x.dtype)
    u = x.to(int64)
    return u if w == 64 else ops.bitwise_and(u, _i64((1 << w) - 1))


def _bits_int(bits: Tensor, dt: Any) -> Tensor:
    w = _width(dt)
    if w == 64 or dt.np.kind == "u":
        return bits.to(dt)
    return where(bits >= (1 << (w - 1)), bits - (1 << w), bits).to(dt)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Tensor:
    """``jax.lax.bitcast_convert_type``: the operand's bits read as
    ``new_dtype``, little-endian (numpy's ``view``): a narrower type adds a
    trailing axis of ``w_in / w_out`` parts, a wider one takes the trailing
    axis of ``w_out / w_in`` parts. Computed on the IEEE fields with integer
    arithmetic; a NaN's sign and payload are not carried (every NaN reads
    as the quiet NaN with the sign clear, JAX's ``jnp.nan``: 0x7fc00000 for
    float32). No derivative flows through it (JAX's is zero)."""
    x = _t(operand)
    dt = to_dtype(new_dtype)
    if not config.jax_enable_x64 and dt.name in ("int64", "float64"):
        dt = to_dtype("int32" if dt.name == "int64" else "float32")
    if x.dtype is bool_ or dt is bool_:
        if x.dtype is dt:
            return x
        raise TypeError(f"lax.bitcast_convert_type does not support bool values unless the "
                        f"operand and destination types match. Got operand dtype={x.dtype.name}"
                        f", new_dtype={dt.name}")
    if x.dtype is dt:
        return x
    w_in, w_out = _width(x.dtype), _width(dt)
    if w_in < w_out and (x.ndim == 0 or x.shape[-1] * w_in != w_out):
        raise TypeError(f"Attempting to convert array of shape {tuple(x.shape)} from "
                        f"{x.dtype.name} of size {w_in} bits to {dt.name} of size {w_out} "
                        f"bits, but {x.shape[-1] if x.ndim else 1} * {w_in} != {w_out}")
    x = detach(x)
    bits = _float_bits(x) if x.dtype.is_floating_point else _int_bits(x)
    if w_in > w_out:  # little-endian parts along a new last axis
        mask = _i64((1 << w_out) - 1)
        bits = stack([ops.bitwise_and(ops.floor_divide(bits, _i64(1 << (w_out * j)))
                                      if j else bits, mask)
                      for j in range(w_in // w_out)], -1)
    elif w_in < w_out:
        total = None
        for j in range(w_out // w_in):
            part = indexing.select(bits, -1, j) * _i64(1 << (w_in * j)) if j else \
                indexing.select(bits, -1, j)  # (the top part wraps as int64: two's complement)
            total = part if total is None else total + part
        bits = total
        if w_out < 64:  # the unsigned pattern
            bits = ops.bitwise_and(bits, _i64((1 << w_out) - 1))
    return _bits_float(bits, dt) if dt.is_floating_point else _bits_int(bits, dt)


def convert_element_type(operand: Any, new_dtype: Any) -> Tensor:
    """The operand in ``new_dtype`` (XLA's conversion: a float beyond an
    integer type's range saturates, NaN is 0)."""
    return saturating_cast(_t(operand), to_dtype(new_dtype))


class RoundingMethod(enum.IntEnum):
    """``lax.round``'s rounding of halves."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def full(shape: Sequence[int] | int, fill_value: Any, dtype: Any = None) -> Tensor:
    """``lax.full``: without ``dtype``, the fill value's (a Python int is
    JAX's default integer, int32 or int64 with x64; a float its default float)."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    if dtype is None:
        if isinstance(fill_value, Tensor):
            dtype = fill_value.dtype
        elif isinstance(fill_value, bool | np.bool_):
            dtype = bool_
        elif isinstance(fill_value, int):
            dtype = default_int()
        elif isinstance(fill_value, float):
            dtype = default_float()
        elif isinstance(fill_value, np.generic | np.ndarray):
            dtype = to_dtype(np.asarray(fill_value).dtype)
    return creation.full(shape, fill_value, dtype=None if dtype is None else to_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Tensor:
    x = _t(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def iota(dtype: Any, size: int) -> Tensor:
    return creation.arange(size, dtype=to_dtype(dtype))


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Tensor:
    shape = tuple(shape)
    line = iota(dtype, shape[dimension])
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return ops.broadcast_to(ops.reshape(line, tuple(view)), shape)


def broadcast(operand: Any, sizes: Sequence[int]) -> Tensor:
    """``operand`` broadcast to ``sizes + operand.shape`` (new leading dims)."""
    x = _t(operand)
    return ops.broadcast_to(x, (*sizes, *x.shape))


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Tensor:
    x = _t(operand)
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if len(dims) != x.ndim:
        raise TypeError(f"lax.broadcast_in_dim: broadcast_dimensions {dims} must name one "
                        f"output dim per operand dim (operand shape {list(x.shape)})")
    view = [1] * len(shape)
    for d, n in zip(dims, x.shape):
        if n not in (1, shape[d]):
            raise TypeError(f"lax.broadcast_in_dim: operand dim of size {n} cannot go to "
                            f"output dim {d} of size {shape[d]}")
        view[d] = n
    return ops.broadcast_to(ops.reshape(x, tuple(view)), shape)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Tensor:
    x = _t(array)
    ndim = x.ndim + len(dimensions)
    dims = sorted(d % ndim for d in dimensions)
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return ops.reshape(x, tuple(shape))


def squeeze(array: Any, dimensions: Sequence[int]) -> Tensor:
    x = _t(array)
    dims = {d % x.ndim for d in dimensions} if x.ndim else set()
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(f"lax.squeeze: dimension {d} of shape {list(x.shape)} is not 1")
    return ops.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in dims))


def reshape(operand: Any, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Tensor:
    x = _t(operand)
    if dimensions is not None:
        x = ops.permute(x, tuple(dimensions))
    return ops.reshape(x, tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Tensor:
    return ops.permute(_t(operand), tuple(permutation))


def rev(operand: Any, dimensions: Sequence[int]) -> Tensor:
    x = _t(operand)
    return indexing.flip(x, tuple(dimensions)) if len(dimensions) else x


def concatenate(operands: Sequence[Any], dimension: int) -> Tensor:
    return ops.cat([_t(o) for o in operands], dimension)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Tensor:
    x = _t(operand)
    steps = strides or (1,) * x.ndim
    return x[tuple(builtins.slice(a, b, s) for a, b, s in zip(start_indices, limit_indices,
                                                             steps))]


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Tensor:
    x = _t(operand)
    axis %= x.ndim
    n = x.shape[axis]
    start = 0 if start_index is None else start_index % n if start_index < 0 else start_index
    limit = n if limit_index is None else limit_index % n if limit_index < 0 else limit_index
    return x[(builtins.slice(None),) * axis + (builtins.slice(start, limit, stride),)]


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Tensor:
    x = _t(operand)
    axis %= x.ndim
    index = index + x.shape[axis] if index < 0 else index
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _starts(x: Tensor, start_indices: Sequence[Any], sizes: Sequence[int], what: str
            ) -> list[int | Tensor]:
    """Per dim, the start (a negative one counts from the end once) clamped
    so that the window stays inside the operand (lax's rule): a Python int
    for an int start; for a tensor start, the int64 indices of the window
    (``start + arange(size)``): a tensor start is never read on the host
    (under ``pf.compile`` or ``vmap`` its value may change or not be known)."""
    if len(start_indices) != x.ndim or len(sizes) != x.ndim:
        raise TypeError(f"lax.{what}: {len(start_indices)} start indices and {len(sizes)} "
                        f"sizes for an operand of rank {x.ndim} (shape {list(x.shape)})")
    out: list[int | Tensor] = []
    for d, (s, n, k) in enumerate(zip(start_indices, x.shape, sizes)):
        if not 0 <= k <= n:
            raise TypeError(f"lax.{what}: size {k} of dim {d} does not fit the operand's "
                            f"{n}")
        if isinstance(s, int | np.integer):
            out.append(builtins.min(builtins.max(int(s) + (n if s < 0 else 0), 0), n - k))
            continue
        s = _t(s)
        if s.ndim or s.dtype.is_floating_point or s.dtype is bool_:
            raise TypeError(f"lax.{what}: start index {d} must be a scalar integer, got "
                            f"{s.dtype.name}{list(s.shape)}")
        s = s.to(int64)
        first = ops.clamp(where(s < 0, s + n, s), 0, n - k)
        out.append(first + creation.arange(k, dtype=int64))
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]
                  ) -> Tensor:
    """``operand[start:start + size]`` per dim; starts may be tensors, and are
    clamped so that the slice fits (lax's rule)."""
    x = _t(operand)
    starts = _starts(x, list(start_indices), list(slice_sizes), "dynamic_slice")
    x = x[tuple(builtins.slice(s, s + k) if isinstance(s, int) else builtins.slice(None)
                for s, k in zip(starts, slice_sizes))]
    for d, s in enumerate(starts):
        if isinstance(s, Tensor):
            x = indexing.index_select(x, d, s)
    return x


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Tensor:
    """``operand`` with ``update`` written at ``start_indices`` (clamped so
    that it fits, lax's rule); out of place."""
    x, u = _t(operand), _t(update)
    if u.ndim != x.ndim:
        raise TypeError(f"lax.dynamic_update_slice: update of rank {u.ndim} for an operand "
                        f"of rank {x.ndim}")
    starts = _starts(x, list(start_indices), list(u.shape), "dynamic_update_slice")
    if all(isinstance(s, int) for s in starts):
        return x.at[tuple(builtins.slice(s, s + k) for s, k in zip(starts, u.shape))].set(u)
    index = []
    for d, (s, k) in enumerate(zip(starts, u.shape)):
        line = creation.arange(s, s + k, dtype=int64) if isinstance(s, int) else s
        view = [1] * x.ndim
        view[d] = k
        index.append(ops.reshape(line, tuple(view)))
    return x.at[tuple(index)].set(u)


def _in_dim(x: Tensor, index: Any, axis: int) -> list[Any]:
    return [index if d == axis % x.ndim else 0 for d in range(x.ndim)]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int,
                         axis: int = 0) -> Tensor:
    x = _t(operand)
    sizes = [slice_size if d == axis % x.ndim else n for d, n in enumerate(x.shape)]
    return dynamic_slice(x, _in_dim(x, start_index, axis), sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Tensor:
    x = _t(operand)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any,
                                axis: int) -> Tensor:
    x = _t(operand)
    return dynamic_update_slice(x, update, _in_dim(x, start_index, axis))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Tensor:
    x, u = _t(operand), _t(update)
    if u.ndim == x.ndim - 1:
        u = expand_dims(u, (axis,))
    return dynamic_update_slice_in_dim(x, u, index, axis)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]
        ) -> Tensor:
    """lax.pad: per dim (low, high, interior): ``interior`` fill elements
    between neighbours, then ``low``/``high`` at the ends (negative: cut)."""
    x = _t(operand)
    if len(padding_config) != x.ndim:
        raise ValueError(f"lax.pad: {len(padding_config)} padding entries for an operand of "
                         f"rank {x.ndim}")
    fill = _t(padding_value).to(x.dtype)
    if fill.ndim:
        raise TypeError("lax.pad: padding_value must be a scalar")
    for d, (lo, hi, interior) in enumerate(padding_config):
        if interior < 0:
            raise ValueError(f"lax.pad: interior padding must be >= 0, got {interior}")
        n = x.shape[d]
        if interior and n > 1:
            moved = indexing.movedim(x, d, -1)
            gap = ops.broadcast_to(fill, (*moved.shape, interior))
            woven = ops.reshape(ops.cat([ops.unsqueeze(moved, -1), gap], -1),
                                (*moved.shape[:-1], n * (interior + 1)))
            x = indexing.movedim(woven[..., :n + (n - 1) * interior], -1, d)
        for amount, at_end in ((lo, False), (hi, True)):
            size = x.shape[d]
            if amount < 0:
                if -amount > size:
                    raise ValueError(f"lax.pad: cutting {-amount} from dim {d} of size "
                                     f"{size}")
                keep = builtins.slice(0, size + amount) if at_end else \
                    builtins.slice(-amount, size)
                x = x[(builtins.slice(None),) * d + (keep,)]
            elif amount:
                shape = list(x.shape)
                shape[d] = amount
                block = ops.broadcast_to(fill, tuple(shape))
                x = ops.cat([x, block] if at_end else [block, x], d)
    return x


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Tensor:
    """lax.dot_general: ``(((lhs_contract), (rhs_contract)), ((lhs_batch),
    (rhs_batch)))``; the result's dims are the batch dims, then lhs's free
    dims, then rhs's (in order)."""
    del precision
    a, b = _t(lhs), _t(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in v) for v in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"lax.dot_general: contracting {lc}/{rc} and batch {lb}/{rb} "
                        "dimensions must pair up")
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [next(letters) for _ in range(a.ndim)]
    lb_ = [next(letters) for _ in range(b.ndim)]
    for i, j in [*zip(lc, rc), *zip(lb, rb)]:
        if a.shape[i] != b.shape[j]:
            raise TypeError(f"lax.dot_general: lhs dim {i} ({a.shape[i]}) and rhs dim {j} "
                            f"({b.shape[j]}) differ")
        lb_[j] = la[i]
    out = [la[i] for i in lb] + [la[i] for i in range(a.ndim) if i not in lc and i not in lb]
    out += [lb_[j] for j in range(b.ndim) if j not in rc and j not in rb]
    res = ops.einsum(f"{''.join(la)},{''.join(lb_)}->{''.join(out)}", a, b)
    return res if preferred_element_type is None else res.to(to_dtype(preferred_element_type))


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Tensor:
    del precision
    return ops.matmul(_t(lhs), _t(rhs))


def _scan_op(name: str) -> Callable[..., Tensor]:
    def f(operand: Any, axis: int = 0, reverse: bool = False) -> Tensor:
        x = _t(operand)
        if reverse:
            x = indexing.flip(x, (axis,))
        if name == "cumsum":
            out = reductions.cumsum(x, axis)
        elif name == "cumprod":
            out = reductions.cumprod(x, axis)
        elif name == "cumlogsumexp":
            out = reductions.logcumsumexp(x, axis)
        else:
            out = getattr(reductions, name)(x, axis).values
        return indexing.flip(out, (axis,)) if reverse else out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``lax.{name}(operand, axis=0, reverse=False)``."
    return f


cumsum, cumprod, cummax, cummin, cumlogsumexp = (_scan_op(n) for n in (
    "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))


def _reduce(name: str) -> Callable[[Any, Sequence[int]], Tensor]:
    def f(operand: Any, axes: Sequence[int]) -> Tensor:
        x = _t(operand)
        axes = tuple(int(a) % x.ndim for a in axes) if x.ndim else ()
        if not axes:
            return x
        if name == "reduce_sum":  # (lax keeps the dtype: an int32 sum wraps in int32)
            out = ops.sum(x, axes)
            return out if out.dtype is x.dtype or x.dtype is bool_ else out.to(x.dtype)
        if name == "reduce_max":
            return ops.amax(x, axes)
        if name == "reduce_min":
            return ops.amin(x, axes)
        if name == "reduce_prod":
            dtype = x.dtype
            for a in sorted(axes, reverse=True):
                x = reductions.prod(x, a)
            return x if x.dtype is dtype or dtype is bool_ else x.to(dtype)
        if name == "reduce_and":
            return reductions.all(x, axes)
        return reductions.any(x, axes)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``lax.{name}(operand, axes)``."
    return f


reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or = (_reduce(n) for n in (
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or"))


def argmax(operand: Any, axis: int, index_dtype: Any) -> Tensor:
    return ops.argmax(_t(operand), axis).to(to_dtype(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Tensor:
    return ops.argmin(_t(operand), axis).to(to_dtype(index_dtype))


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Ascending along ``dimension``; a sequence of operands is sorted by its
    first ``num_keys`` (lexicographically, stable) and permuted together."""
    del is_stable  # pyflame's sort is always stable
    if isinstance(operand, Tensor | np.ndarray | float | int):
        return reductions.sort(_t(operand), dimension).values
    arrays = [_t(o) for o in operand]
    if not 1 <= num_keys <= len(arrays):
        raise ValueError(f"lax.sort: num_keys={num_keys} for {len(arrays)} operands")
    # a stable sort by each key from the last to the first: lexicographic order
    perm = None
    for key in reversed(arrays[:num_keys]):
        k = key if perm is None else indexing.take_along_dim(key, perm, dimension)
        order = reductions.sort(k, dimension).indices
        perm = order if perm is None else indexing.take_along_dim(perm, order, dimension)
    return tuple(indexing.take_along_dim(a, perm, dimension) for a in arrays)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Tensor, Tensor]:
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Tensor, Tensor]:
    """The ``k`` largest along ``axis``, descending, with int32 indices (lax's)."""
    res = reductions.topk(_t(operand), k, axis)
    return res.values, res.indices.to(int32)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """The inclusive scan of ``fn`` (associative) over ``axis`` of a pytree
    ``elems``: element i is ``fn(... fn(e0, e1) ..., ei)``. Unrolled
    sequentially (n - 1 calls of ``fn``); values are the same for an
    associative ``fn``."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    xs = [_t(v) for v in leaves]
    n = xs[0].shape[axis]
    if any(v.shape[axis] != n for v in xs):
        raise ValueError("lax.associative_scan: the elements' scanned axes differ in length")
    order = range(n - 1, -1, -1) if reverse else range(n)
    acc = None
    outs: list[list[Tensor]] = []
    for i in order:
        part = tree_unflatten(tree, [indexing.select(v, axis, i) for v in xs])
        acc = part if acc is None else fn(acc, part)  # reverse: the scan of the flipped axis
        outs.append(tree_flatten(acc)[0])
    if reverse:
        outs.reverse()
    return tree_unflatten(tree, [stack([o[k] for o in outs], axis) for k in range(len(xs))])


# ---- convolutions and windowed reductions (flax's Conv, ConvTranspose, max/avg_pool) ----

def _conv_specs(dimension_numbers: Any, ndim: int) -> tuple[tuple[int, ...], ...]:
    """lax's ``dimension_numbers`` -> (lhs, rhs, out) permutations to the
    (N, C, *spatial) / (O, I, *spatial) / (N, C, *spatial) orders: None
    (those orders), a ``ConvDimensionNumbers``-like triple of index tuples,
    or a triple of layout strings such as ``("NHWC", "HWIO", "NHWC")``."""
    if dimension_numbers is None:
        ident = tuple(range(ndim))
        return ident, ident, ident
    if len(dimension_numbers) != 3:
        raise TypeError(f"conv_general_dilated: dimension_numbers must be a triple, got "
                        f"{dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        for spec, what in ((lhs, "lhs"), (rhs, "rhs"), (out, "out")):
            if len(spec) != ndim or len(set(spec)) != ndim:
                raise TypeError(f"conv_general_dilated: {what} spec {spec!r} must name each "
                                f"of the {ndim} dimensions once")
        spatial = [c for c in rhs if c not in "OI"]
        if sorted(spatial) != sorted(c for c in lhs if c not in "NC") or \
                sorted(c for c in out if c not in "NC") != sorted(c for c in lhs if c not in "NC"):
            raise TypeError(f"conv_general_dilated: specs {dimension_numbers!r} name different "
                            "spatial dimensions")
        # spatial dims pair up in the order the rhs spec lists them (JAX's rule)
        return (tuple(lhs.index(c) for c in ("N", "C", *spatial)),
                tuple(rhs.index(c) for c in ("O", "I", *spatial)),
                tuple(out.index(c) for c in ("N", "C", *spatial)))
    perms = tuple(tuple(int(d) for d in p) for p in dimension_numbers)
    if any(sorted(p) != list(range(ndim)) for p in perms):
        raise TypeError(f"conv_general_dilated: dimension_numbers {dimension_numbers!r} must "
                        f"be permutations of {ndim} dimensions")
    return perms


def _same_pads(sizes: Sequence[int], windows: Sequence[int], strides: Sequence[int],
               lower: bool) -> list[tuple[int, int]]:
    """lax.padtype_to_pads for 'SAME' (the extra element at the end) and
    'SAME_LOWER' (at the start): the output is ceil(size / stride) long."""
    pads = []
    for n, k, s in zip(sizes, windows, strides):
        total = builtins.max((-(-n // s) - 1) * s + k - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if lower else (small, large))
    return pads


def _window_pads(padding: Any, sizes: Sequence[int], windows: Sequence[int],
                 strides: Sequence[int], what: str) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(sizes)
        if mode in ("SAME", "SAME_LOWER"):
            return _same_pads(sizes, windows, strides, mode == "SAME_LOWER")
        raise ValueError(f"{what}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or pairs, got "
                         f"{padding!r}")
    pads = [tuple(int(v) for v in p) for p in padding]
    if len(pads) != len(sizes) or any(len(p) != 2 for p in pads):
        raise ValueError(f"{what}: padding {padding!r} must give one (low, high) pair per "
                         f"window dimension ({len(sizes)})")
    return [(lo, hi) for lo, hi in pads]


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Tensor:
    """lax.conv_general_dilated: a cross-correlation (as torch's convN) with
    lhs dilation (zeros between input elements: the transposed convolution),
    rhs dilation, negative or 'SAME' padding and any layout; 1 to 3 spatial
    dimensions. ``batch_group_count`` > 1 is refused."""
    del precision
    x, w = _t(lhs), _t(rhs)
    if x.ndim != w.ndim or not 3 <= x.ndim <= 5:
        raise TypeError(f"conv_general_dilated: lhs {list(x.shape)} and rhs {list(w.shape)} "
                        "must have the same rank, with 1 to 3 spatial dimensions")
    if batch_group_count != 1:
        raise NotImplementedError("conv_general_dilated: batch_group_count > 1 is not "
                                  "implemented")
    nsp = x.ndim - 2
    lhs_perm, rhs_perm, out_perm = _conv_specs(dimension_numbers, x.ndim)
    x, w = x.permute(*lhs_perm), w.permute(*rhs_perm)
    strides = tuple(int(s) for s in window_strides)
    lhs_dil = tuple(int(d) for d in (lhs_dilation or (1,) * nsp))
    rhs_dil = tuple(int(d) for d in (rhs_dilation or (1,) * nsp))
    if len(strides) != nsp or len(lhs_dil) != nsp or len(rhs_dil) != nsp:
        raise ValueError(f"conv_general_dilated: window_strides {window_strides}, lhs_dilation "
                         f"{lhs_dilation} and rhs_dilation {rhs_dilation} must each have "
                         f"{nsp} entries")
    windows = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    pads = _window_pads(padding, x.shape[2:], windows, strides, "conv_general_dilated")
    zero = creation.zeros([], dtype=x.dtype)
    x = pad(x, zero, [(0, 0, 0), (0, 0, 0),
                      *[(lo, hi, d - 1) for (lo, hi), d in zip(pads, lhs_dil)]])
    conv = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
    y = conv(x, w, None, strides, 0, rhs_dil, int(feature_group_count))
    y = y.permute(*np.argsort(out_perm).tolist())
    return y if preferred_element_type is None else y.to(to_dtype(preferred_element_type))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
         precision: Any = None, preferred_element_type: Any = None) -> Tensor:
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Tensor:
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(k: int, s: int, padding: Any) -> tuple[int, int]:
    """JAX's ``_conv_transpose_padding``: the padding of the dilated input
    that makes a stride-1 convolution the transpose of a forward convolution
    padded by ``padding`` ('SAME', 'VALID', or a (low, high) pair)."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total, low = k + s - 2 + builtins.max(k - s, 0), k - 1
    else:
        low, high = (k - int(v) - 1 for v in padding)
        total = low + high
    return low, total - low


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Tensor:
    """lax.conv_transpose: the input dilated by the strides, then a stride-1
    convolution. As JAX: the layouts default to TensorFlow's (``NHWC``,
    ``HWIO``); 'SAME'/'VALID' (and, with ``use_consistent_padding``, pairs)
    are the forward convolution's padding, other pairs pad the dilated input;
    ``transpose_kernel`` flips the kernel's spatial axes and swaps its I/O."""
    x, w = _t(lhs), _t(rhs)
    if x.ndim != w.ndim or not 3 <= x.ndim <= 5:
        raise TypeError(f"conv_transpose: lhs {list(x.shape)} and rhs {list(w.shape)} must "
                        "have the same rank, with 1 to 3 spatial dimensions")
    nsp = x.ndim - 2
    if dimension_numbers is None:
        sp = "HWD"[:nsp]
        dimension_numbers = (f"N{sp}C", f"{sp}IO", f"N{sp}C")
    _, rhs_perm, _ = _conv_specs(dimension_numbers, x.ndim)
    dil = tuple(int(d) for d in (rhs_dilation or (1,) * nsp))
    windows = [(w.shape[rhs_perm[2 + i]] - 1) * dil[i] + 1 for i in range(nsp)]
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_dim = [padding] * nsp if isinstance(padding, str) else list(padding)
        pads = [_transpose_pads(k, int(s), p) for k, s, p in zip(windows, strides, per_dim)]
    elif isinstance(padding, str):
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or pairs, got "
                         f"{padding!r}")
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    if transpose_kernel:
        w = indexing.swapdims(rev(w, [rhs_perm[2 + i] for i in range(nsp)]),
                              rhs_perm[0], rhs_perm[1])
    return conv_general_dilated(x, w, (1,) * nsp, pads, tuple(int(s) for s in strides), dil,
                                dimension_numbers, precision=precision,
                                preferred_element_type=preferred_element_type)


def _window_reducer(computation: Any) -> str:
    """The reduction a ``reduce_window``/``reduce`` computation names: lax's
    and jnp's binary ops (the monoids JAX lowers to its own primitives)."""
    for name, fns in (("max", (max, ops.maximum)), ("min", (min, ops.minimum)),
                      ("sum", (add, ops.add)), ("prod", (mul, ops.mul))):
        if any(computation is f for f in fns):
            return name
    raise NotImplementedError(f"reduce_window/reduce: the computation {computation!r} is not "
                              "one of lax.max, lax.min, lax.add, lax.mul (or their jnp names)")


def reduce_window(operand: Any, init_value: Any, computation: Any,
                  window_dimensions: Sequence[int], window_strides: Sequence[int],
                  padding: Any, base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Tensor:
    """lax.reduce_window for max/min/add/mul: the operand (dilated by
    ``base_dilation`` and padded with ``init_value``) cut into windows
    (``window_dilation`` apart inside), each reduced together with
    ``init_value`` (flax's max_pool, avg_pool and sum pooling)."""
    if isinstance(operand, tuple | list):
        raise NotImplementedError("reduce_window: one operand only (no variadic form)")
    x = _t(operand)
    how = _window_reducer(computation)
    nd = x.ndim
    dims = tuple(int(d) for d in window_dimensions)
    strides = tuple(int(s) for s in window_strides)
    base = tuple(int(d) for d in (base_dilation or (1,) * nd))
    wdil = tuple(int(d) for d in (window_dilation or (1,) * nd))
    if not len(dims) == len(strides) == len(base) == len(wdil) == nd:
        raise ValueError(f"reduce_window: window_dimensions {window_dimensions}, strides "
                         f"{window_strides} and dilations must each have {nd} entries for "
                         f"an operand of shape {list(x.shape)}")
    init = _t(init_value).to(x.dtype)
    windows = [(k - 1) * d + 1 for k, d in zip(dims, wdil)]
    dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    pads = _window_pads(padding, dilated, windows, strides, "reduce_window")
    x = pad(x, init, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)])
    for d in range(nd):
        if x.shape[d] < windows[d]:
            raise ValueError(f"reduce_window: the padded operand's dim {d} ({x.shape[d]}) is "
                             f"smaller than its window ({windows[d]})")
        x = x.unfold(d, windows[d], strides[d])  # a new trailing axis per window dim
        if wdil[d] > 1:
            x = x[..., ::wdil[d]]
    red = _reduce_trailing(x, nd, how)
    return red if _is_identity(init_value, how) else _COMBINE[how](red, init)


_IDENTITY = {"max": -np.inf, "min": np.inf, "sum": 0, "prod": 1}


def _is_identity(init_value: Any, how: str) -> bool:
    """``init_value`` is the reduction's identity (so combining with it is a
    no-op); a traced or unknown value is not."""
    if isinstance(init_value, Tensor):
        if init_value.ndim or source(init_value) is not None:
            return False
        init_value = init_value.item()
    try:
        v = float(init_value)
    except (TypeError, ValueError):
        return False
    ident = _IDENTITY[how]
    return v == ident or (how in ("max", "min") and np.isinf(v) and np.isinf(ident)
                          and (v > 0) == (ident > 0))


def _reduce_trailing(x: Tensor, n: int, how: str) -> Tensor:
    """``x``'s last ``n`` axes reduced. max/min select the first extreme
    element in row-major window order, so the gradient goes to it alone,
    as XLA's select-and-scatter does for ``reduce_window`` (an even split
    among ties would differ on the all-zero windows after a ReLU)."""
    lead = x.shape[:x.ndim - n]
    if how in ("sum", "prod"):
        return reduce_sum(x, range(x.ndim - n, x.ndim)) if how == "sum" else \
            reduce_prod(x, range(x.ndim - n, x.ndim))
    flat = ops.reshape(x, (*lead, -1))
    pick = ops.argmax(flat, -1, keepdim=True) if how == "max" else \
        ops.argmin(flat, -1, keepdim=True)
    return indexing.take_along_dim(flat, pick, -1)[..., 0]


_COMBINE = {"max": max, "min": min, "sum": add, "prod": mul}


# ---- more of lax's names: bits, products, splitting, dimension numbers ----

class Precision:
    """lax.Precision's values (accepted and ignored: the reference backend
    computes in the operands' dtype)."""

    DEFAULT, HIGH, HIGHEST = "DEFAULT", "HIGH", "HIGHEST"


class ConvDimensionNumbers(tuple):
    """lax.ConvDimensionNumbers: (lhs_spec, rhs_spec, out_spec) permutations."""

    __slots__ = ()

    def __new__(cls, lhs_spec: Sequence[int], rhs_spec: Sequence[int],
                out_spec: Sequence[int]) -> ConvDimensionNumbers:
        return super().__new__(cls, (tuple(lhs_spec), tuple(rhs_spec), tuple(out_spec)))

    lhs_spec = property(lambda self: self[0])
    rhs_spec = property(lambda self: self[1])
    out_spec = property(lambda self: self[2])


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """The permutations ``conv_general_dilated`` uses for these specs."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"conv_dimension_numbers: lhs rank {len(lhs_shape)} and rhs rank "
                        f"{len(rhs_shape)} differ")
    return ConvDimensionNumbers(*_conv_specs(dimension_numbers, len(lhs_shape)))


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: Any) -> list[tuple[int, int]]:
    return _window_pads(padding, in_shape, window_shape, window_strides, "padtype_to_pads")


def _bitwise(name: str, target: Callable[[Any, Any], Tensor]) -> Callable[[Any, Any], Tensor]:
    def f(x: Any, y: Any) -> Tensor:
        return target(_t(x), _t(y))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``lax.{name}``: elementwise, on integers (and booleans)."
    return f


bitwise_and = _bitwise("bitwise_and", ops.bitwise_and)
bitwise_or = _bitwise("bitwise_or", ops.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", ops.bitwise_xor)
shift_left = _bitwise("shift_left", ops.bitwise_left_shift)
shift_right_arithmetic = _bitwise("shift_right_arithmetic", ops.bitwise_right_shift)


def bitwise_not(x: Any) -> Tensor:
    return ops.bitwise_not(_t(x))


def shift_right_logical(x: Any, y: Any) -> Tensor:
    """``x >> y`` filling with zeros (the bits read as unsigned); a shift
    outside [0, bits) gives 0, as XLA's."""
    a, s = _t(x), _t(y)
    if a.dtype.category != 1:
        raise TypeError(f"shift_right_logical: expects integers, got {a.dtype.name}")
    s = s.to(a.dtype)
    bits = a.dtype.itemsize * 8
    if a.dtype.np.kind == "u":
        return ops.bitwise_right_shift(a, s)
    one = creation.ones([], dtype=a.dtype)
    inside = (s >= 0) & (s < bits)
    s_ok = ops.where(inside, s, creation.zeros_like(s))
    # the arithmetic shift, then the sign-filled high bits cleared
    mask = ops.where(s_ok == 0, -one, ops.bitwise_left_shift(one, bits - s_ok) - one)
    out = ops.bitwise_and(ops.bitwise_right_shift(a, s_ok), mask)
    return ops.where(inside, out, creation.zeros_like(out))


def population_count(x: Any) -> Tensor:
    """The number of set bits of each integer."""
    a = _t(x)
    if a.dtype.category != 1:
        raise TypeError(f"population_count: expects integers, got {a.dtype.name}")
    one = creation.ones([], dtype=a.dtype)
    bits = [ops.bitwise_and(shift_right_logical(a, k), one)
            for k in range(a.dtype.itemsize * 8)]
    return ops.sum(stack(bits), 0).to(a.dtype)


def clz(x: Any) -> Tensor:
    """The number of leading zero bits of each integer (of its dtype's width;
    a negative number has none)."""
    a = _t(x)
    if a.dtype.category != 1:
        raise TypeError(f"clz: expects integers, got {a.dtype.name}")
    width = a.dtype.itemsize * 8
    zero = creation.zeros([], dtype=a.dtype)
    # the bits above position k all zero: one more leading zero per such k
    clear = [ops.eq(shift_right_logical(a, k), zero) for k in range(width)]
    return ops.sum(stack(clear).to(a.dtype), 0).to(a.dtype)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Tensor:
    """``lax.collapse``: dimensions ``[start, stop)`` merged into one."""
    a = _t(operand)
    nd = a.ndim
    lo = start_dimension % nd if nd else 0
    hi = nd if stop_dimension is None else (stop_dimension if stop_dimension >= 0
                                            else stop_dimension + nd)
    shape = tuple(a.shape)
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return ops.reshape(a, (*shape[:lo], size, *shape[hi:]))


_FLOAT_BITS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}
_INT_OF_WIDTH = {2: "int16", 4: "int32", 8: "int64"}


class _ReducePrecision(Function):
    """``reduce_precision``'s derivative, JAX's: the tangent (cotangent)
    reduced the same way."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, exponent_bits: int, mantissa_bits: int) -> Tensor:
        ctx.bits = (exponent_bits, mantissa_bits)
        return _reduce_precision(x, exponent_bits, mantissa_bits)

    @staticmethod
    def jvp(ctx: Any, t: Tensor, *_: Any) -> Tensor:
        return reduce_precision(t, *ctx.bits)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple:
        return reduce_precision(g, *ctx.bits), None, None


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Tensor:
    """``lax.reduce_precision``: each float rounded to ``mantissa_bits``
    (to nearest, ties to even) and to the range of ``exponent_bits`` (larger
    magnitudes to infinity, below the smallest normal to a signed zero),
    in its own dtype, as XLA computes it on the bit pattern; NaN stays NaN.
    Its derivative reduces the tangent the same way, as JAX's."""
    x = _t(operand)
    if x.dtype.name not in _FLOAT_BITS:
        raise TypeError(f"reduce_precision: expects a float, got {x.dtype.name}")
    return _ReducePrecision.apply(x, int(exponent_bits), int(mantissa_bits))


def _reduce_precision(x: Tensor, exponent_bits: int, mantissa_bits: int) -> Tensor:
    name = x.dtype.name
    if name not in _FLOAT_BITS:
        raise TypeError(f"reduce_precision: expects a float, got {name}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits={exponent_bits} must be >= 1 and "
                         f"mantissa_bits={mantissa_bits} >= 0")
    nexp, nmant = _FLOAT_BITS[name]
    idt = to_dtype(_INT_OF_WIDTH[x.dtype.itemsize])
    bits = bitcast_convert_type(x, idt)

    def c(v: int) -> Tensor:  # a constant of the integer type (its bit pattern)
        w = x.dtype.itemsize * 8
        v &= (1 << w) - 1
        return creation.tensor(v - (1 << w) if v >> (w - 1) else v, dtype=idt)
    if mantissa_bits < nmant:
        shift = nmant - mantissa_bits
        last = 1 << shift
        last_bit = shift_right_logical(ops.bitwise_and(bits, c(last)), shift)
        bits = ops.bitwise_and(bits + (last_bit + c((last >> 1) - 1)), c(~(last - 1)))
    if exponent_bits < nexp:
        exp_mask = ((1 << nexp) - 1) << nmant
        bias, reduced_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = ops.bitwise_and(bits, c(exp_mask))
        sign = ops.bitwise_and(bits, c(1 << (x.dtype.itemsize * 8 - 1)))
        bits = ops.where(exponent > c((bias + reduced_bias) << nmant),
                         ops.bitwise_or(sign, c(exp_mask)),
                         ops.where(exponent <= c((bias - reduced_bias) << nmant), sign, bits))
    out = bitcast_convert_type(bits, x.dtype)
    return ops.where(ops.isnan(x), x, out)


def reciprocal(x: Any) -> Tensor:
    return 1 / _t(x)


def nextafter(x1: Any, x2: Any) -> Tensor:
    return composites2.nextafter(_t(x1), _t(x2))


def polygamma(m: Any, x: Any) -> Tensor:
    order = _concrete(m, "polygamma")
    if order != int(order) or order < 0:
        raise ValueError(f"lax.polygamma: m must be a non-negative integer, got {order}")
    return composites2.polygamma(int(order), _t(x))


def zeta(x: Any, q: Any) -> Tensor:
    return special.zeta(_t(x), _t(q))


def igamma(a: Any, x: Any) -> Tensor:
    return special.gammainc(_t(a), _t(x))


def igammac(a: Any, x: Any) -> Tensor:
    return special.gammaincc(_t(a), _t(x))


def bessel_i0e(x: Any) -> Tensor:
    return special.i0e(_t(x))


def bessel_i1e(x: Any) -> Tensor:
    return special.i1e(_t(x))


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Tensor:
    """lax.dot: vector-vector, matrix-vector or matrix-matrix product."""
    del precision, out_sharding
    a, b = _t(lhs), _t(rhs)
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2) or a.shape[-1] != b.shape[0]:
        raise TypeError(f"lax.dot: incompatible shapes for dot: got {list(a.shape)} and "
                        f"{list(b.shape)}")
    res = ops.matmul(a, b)
    return res if preferred_element_type is None else res.to(to_dtype(preferred_element_type))


def tile(operand: Any, multiples: Sequence[int]) -> Tensor:
    x = _t(operand)
    if len(multiples) != x.ndim:
        raise ValueError(f"lax.tile: {len(multiples)} multiples for an operand of rank "
                         f"{x.ndim}")
    return x.repeat(*[int(m) for m in multiples]) if x.ndim else x


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Tensor]:
    """lax.split: consecutive pieces of the given sizes along ``axis``."""
    x = _t(operand)
    axis = int(axis) % x.ndim
    if builtins.sum(int(s) for s in sizes) != x.shape[axis]:
        raise ValueError(f"lax.split: sizes {list(sizes)} must sum to the size of axis "
                         f"{axis} ({x.shape[axis]})")
    out, start = [], 0
    for n in sizes:
        out.append(x.narrow(axis, start, int(n)))
        start += int(n)
    return out


def reduce(operands: Any, init_values: Any, computation: Any, dimensions: Sequence[int]
           ) -> Any:
    """lax.reduce with max/min/add/mul over ``dimensions`` (one operand, or a
    tree of them with a tree of init values)."""
    how = _window_reducer(computation)
    flat, tree = tree_flatten(operands)
    inits, _ = tree_flatten(init_values)
    if len(inits) != len(flat):
        raise ValueError(f"lax.reduce: {len(flat)} operand(s) but {len(inits)} init value(s)")
    outs = []
    for x, init in zip(flat, inits):
        x = _t(x)
        dims = tuple(int(d) % x.ndim for d in dimensions) if x.ndim else ()
        # (reduce_max's derivative splits evenly among ties, as jnp.max's)
        red = {"max": reduce_max, "min": reduce_min, "sum": reduce_sum,
               "prod": reduce_prod}[how](x, dims)
        outs.append(red if _is_identity(init, how) else
                    _COMBINE[how](red, _t(init).to(x.dtype)))
    return tree_unflatten(tree, outs)


def optimization_barrier(operand: Any) -> Any:
    """The operand itself (the reference backend does not reorder across it)."""
    return operand


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*[tuple(int(d) for d in s) for s in shapes]))


# ---- collectives over a named axis: vmap(axis_name=...) and shard_map ----


def _lockstep(example: Callable[..., Any], calls: list[list[Any]], n: int, axis_name: str
              ) -> list[Any]:
    """``example`` on each of ``calls`` at once, in lockstep (one thread each,
    as ``shard_map``'s devices): how ``vmap(axis_name=...)`` runs a function
    whose collectives combine its examples."""
    from .sharding import DeviceMesh, _MeshRun  # (above lax: imported when used)
    return _MeshRun(DeviceMesh(n, axis_name), example, calls).run()


def _run(what: str, axis_name: Any) -> Any:
    """The lockstep run (``vmap``'s examples or ``shard_map``'s devices) that
    owns ``axis_name``; under a ``vmap``'s one-for-all trace, the signal that
    makes the ``vmap`` run per example."""
    if in_vmap_trace():
        raise CollectiveInTrace(what, axis_name, _lockstep)
    from . import sharding  # (above lax: imported when used)
    run = getattr(sharding._DEVICE, "run", None)
    names = axis_name if isinstance(axis_name, tuple | list) else (axis_name,)
    if run is None or any(n not in run.mesh.axis_names for n in names):
        have = () if run is None else run.mesh.axis_names
        raise NameError(f"{what}: unbound axis name {axis_name!r} (the names bound here: "
                        f"{list(have)}; name a vmap's axis with vmap(f, axis_name=...) or "
                        "a pf.shard_map's mesh axes; a collective over an outer vmap's name "
                        "inside an inner vmap that uses its own collectives is not supported)")
    return run


def axis_size(axis_name: Any) -> int:
    """``jax.lax.axis_size``: the number of examples (devices) along the named axes."""
    trace = collective_trace(axis_name, anywhere=True)
    if trace is not None:
        return trace.n
    return int(_run("axis_size", axis_name).mesh.axis_size(axis_name))


def _batched_value(trace: Any, v: Tensor, what: str) -> Tensor:
    """``v`` for every example of the ``vmap`` being traced; a value a custom
    rule computed makes that ``vmap`` run its examples in lockstep."""
    xb = trace.batched(v)
    if xb is None:
        _run(what, trace.axis_name)  # (raises CollectiveInTrace: in a vmap's trace)
    return xb


def _batched_reduce(trace: Any, v: Tensor, op: str, what: str) -> Tensor:
    """A collective under the ``vmap`` trace of its axis: the reduction over
    the batch of ``v``'s batched form (a value every example shares)."""
    xb = _batched_value(trace, v, what)
    if op == "sum":
        r = ops.sum(xb, 0) if v.dtype is not bool_ else reductions.any(xb, 0)
    elif op == "mean":
        r = ops.mean(xb if v.dtype.is_floating_point else xb.to(default_float()), 0)
    else:
        r = (ops.amax if op == "max" else ops.amin)(xb, 0)
    return r.to(v.dtype) if op != "mean" and r.dtype is not v.dtype else r


def _reduce_tree(what: str, x: Any, axis_name: Any, op: str) -> Any:
    from .sharding import all_reduce  # (above lax: imported when used)
    leaves, tree = tree_flatten(x)
    out = []
    trace = collective_trace(axis_name)
    for v in leaves:
        if isinstance(v, Tensor) and trace is not None:
            out.append(_batched_reduce(trace, v, op, what))
        elif isinstance(v, Tensor):
            _run(what, axis_name)
            out.append(all_reduce(v, axis_name, op))
        elif isinstance(v, int | float | np.number | np.ndarray):  # the same on every example
            n = axis_size(axis_name)
            out.append(v * n if op == "sum" else v)
        else:
            raise TypeError(f"{what}: leaves are arrays or numbers, got {type(v).__name__}")
    return tree_unflatten(tree, out)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """``jax.lax.psum``: the sum of ``x`` (a pytree) over the examples of the
    named axis, every example getting it; a Python number is multiplied by
    the axis size (``psum(1, 'i')`` is the size)."""
    if axis_index_groups is not None:
        raise NotImplementedError("psum(axis_index_groups=...) is not supported")
    return _reduce_tree("psum", x, axis_name, "sum")


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """``jax.lax.pmean``: the mean over the named axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmean(axis_index_groups=...) is not supported")
    return _reduce_tree("pmean", x, axis_name, "mean")


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """``jax.lax.pmax``: the maximum over the named axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmax(axis_index_groups=...) is not supported")
    return _reduce_tree("pmax", x, axis_name, "max")


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """``jax.lax.pmin``: the minimum over the named axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmin(axis_index_groups=...) is not supported")
    return _reduce_tree("pmin", x, axis_name, "min")


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """``jax.lax.all_gather``: every example gets all examples' ``x`` stacked
    along a new ``axis`` (concatenated along ``axis`` if ``tiled``)."""
    from .sharding import all_gather as gather  # (above lax: imported when used)
    if axis_index_groups is not None:
        raise NotImplementedError("all_gather(axis_index_groups=...) is not supported")
    leaves, tree = tree_flatten(x)
    trace = collective_trace(axis_name)
    if trace is not None:  # under its vmap's trace: the batched value itself
        outs = []
        for v in leaves:
            xb = _batched_value(trace, v, "all_gather")
            if tiled:
                if v.ndim == 0:
                    raise ValueError("all_gather(tiled=True) of a scalar")
                d = axis % v.ndim
                xb = indexing.movedim(xb, 0, d)
                shape = list(v.shape)
                shape[d] *= trace.n
                outs.append(ops.reshape(xb, tuple(shape)))
            else:
                outs.append(indexing.movedim(xb, 0, axis % (v.ndim + 1)))
        return tree_unflatten(tree, outs)
    _run("all_gather", axis_name)
    return tree_unflatten(tree, [gather(v, axis_name, dim=axis, tiled=tiled) for v in leaves])


def psum_scatter(x: Tensor, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Tensor:
    """``jax.lax.psum_scatter``: the sum over the named axis, example i
    keeping block i of ``scatter_dimension``."""
    from .sharding import reduce_scatter  # (above lax: imported when used)
    if axis_index_groups is not None:
        raise NotImplementedError("psum_scatter(axis_index_groups=...) is not supported")
    _run("psum_scatter", axis_name)
    return reduce_scatter(x, axis_name, dim=scatter_dimension, tiled=tiled)


def ppermute(x: Tensor, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Tensor:
    """``jax.lax.ppermute``: example ``dst`` gets ``x`` of example ``src`` for
    each pair of ``perm``; an example nobody sends to gets zeros."""
    from .sharding import ppermute as permute_  # (above lax: imported when used)
    _run("ppermute", axis_name)
    return permute_(x, axis_name, perm)


def all_to_all(x: Tensor, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Tensor:
    """``jax.lax.all_to_all`` (``tiled=True`` only): blocks of ``split_axis``
    exchanged, concatenated along ``concat_axis`` in example order."""
    from .sharding import all_to_all as exchange  # (above lax: imported when used)
    if axis_index_groups is not None or not tiled:
        raise NotImplementedError("all_to_all: only tiled=True without axis_index_groups is "
                                  "supported")
    _run("all_to_all", axis_name)
    return exchange(x, axis_name, split_axis, concat_axis)


def axis_index(axis_name: Any) -> Tensor:
    """``jax.lax.axis_index``: this example's (device's) index along the named
    axis, an int32 scalar."""
    from .sharding import axis_index as index  # (above lax: imported when used)
    trace = collective_trace(axis_name, anywhere=True)
    if trace is not None:  # under its vmaps' traces: the mapped indices 0..n-1
        return trace.index
    _run("axis_index", axis_name)
    return creation.tensor(index(axis_name), dtype=int32)

