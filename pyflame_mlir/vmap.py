"""``pf.vmap`` (JAX's semantics) and the Jacobians built on it.

``vmap(f)`` traces ``f`` once on one example (each mapped argument sliced at
index 0 of its mapped axis: a placeholder whose value is never computed)
and records *one transform node*: ``pyflame.vmap`` of the traced function,
expanded by the ``pyflame-vmap`` pass through each op's batching rule
(``dialects/batching.py``). It composes with itself and with the
differentiation transforms in any order (``vmap(grad(f))`` gives
per-example gradients; ``jacrev`` is ``vmap`` of a VJP, ``jacfwd`` of a JVP).

A value ``f`` computes from a mapped argument where differentiation stops
or follows a custom rule (``lax.stop_gradient``, ``no_grad``, a
``custom_vjp``/``custom_jvp`` or ``autograd.Function``) cannot be carried by
one traced body: then ``f`` runs once per example and the results are
stacked (exact values and derivatives; slower than the batched body).

With ``axis_name``, collectives inside ``f`` see every example. ``lax.psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index`` and
``axis_size`` over the ``vmap``'s own name are batched inside the one
trace: the collective reduces (or gathers) the batched value of its operand
(a ``vmap`` of the function computing it from the mapped arguments, so
gradients flow), a value every example shares (``collective_trace``). The
others (``psum_scatter``, ``ppermute``, ``all_to_all``), and a collective of
a value a custom rule computed, make ``f`` run once per example, all
examples in lockstep (as ``shard_map``'s devices), each collective combining
the examples' values (JAX's batched semantics, exact values and derivatives;
slower than one traced body). A collective over an outer ``vmap``'s name,
or a tuple of nested ``vmap``s' names (``axis_name=('i', 'j')``: their
examples flattened, the first name the most significant), is batched by
each trace in turn, from the innermost out to the outermost named one; a
``vmap`` without a name between them runs per example.

Looking at a value that depends on a mapped argument inside ``f``
(``.item()``, ``.numpy()``, Python control flow on it) raises: the trace
runs once, for all examples. Random tensors created inside ``f`` are drawn
once per call and shared by every example (PyTorch's ``randomness="same"``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from .autodiff import (
    CustomNode,
    FuncGraph,
    _Args,
    _cotangents,
    _Forward,
    _functional_plan,
    _seed_like,
    _split_aux,
    _stopped_lazy,
    tracing,
)
from .autodiff import jvp as autodiff_jvp
from .core import CONFIG, REALIZE_GUARDS, TRACE_ARGS, Tensor, _next_seq, detach, record, source
from .creation import tensor, zeros
from .dialects import OPS
from .dialects.opdef import OpDef, Spec
from .jax_config import canonical_host
from .ops import permute, reshape, stack
from .tree_util import NAMESPACE, tree_flatten, tree_leaves, tree_unflatten

_SLICE, _RESHAPE = OPS["slice"], OPS["reshape"]


class ConcretizationError(RuntimeError):
    """A function traced once for every example looked at a value that
    depends on a mapped argument (JAX's ``ConcretizationTypeError``)."""


class MappedLoopError(ConcretizationError):
    """A ``lax.while_loop`` predicate or ``fori_loop`` bound depends on a
    mapped argument: ``vmap`` then runs the function per example (JAX runs
    each example's loop until it ends)."""


class CollectiveInTrace(MappedLoopError):
    """A collective (``lax.psum``, ...) over ``axis_name`` was called while a
    ``vmap`` traced its function once for all examples: the ``vmap`` of that
    name runs ``f`` per example in lockstep (by ``lockstep(example, calls, n,
    axis_name)``, the collectives' runner: one result per call of
    ``example``), any other one per example."""

    def __init__(self, what: str, axis_name: Any, lockstep: Callable[..., list[Any]]):
        super().__init__(f"{what} over axis {axis_name!r} inside a vmap's trace")
        self.axis_name, self.lockstep = axis_name, lockstep


_TRACES = threading.local()  # .depth: vmap traces under way in this thread


def in_vmap_trace() -> bool:
    """Whether this thread is tracing a ``vmap``'s function once for all examples."""
    return getattr(_TRACES, "depth", 0) > 0


def _names_of(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def _vmap_rule(shapes, dtypes, attrs) -> tuple[Spec, ...]:
    fn: FuncGraph = attrs["fn"]
    n = attrs["axis_size"]
    out = []
    for (shape, d), axis in zip(fn.output_specs(), attrs["out_axes"]):
        out.append((shape if axis < 0 else (*shape[:axis], n, *shape[axis:]), d))
    return tuple(out)


def _vmap_memo_key(attrs: dict[str, Any]) -> tuple:
    return attrs["fn"].local_key(), attrs["in_axes"], attrs["out_axes"], attrs["axis_size"]


VMAP_OP = OpDef("vmap", "transform", _vmap_rule, None, None,
                {"fn": "func", "in_axes": "ints", "out_axes": "ints", "axis_size": "int"},
                num_results=None, doc="a traced function mapped over a batch axis",
                memo_attrs=_vmap_memo_key)


def _axes_per_leaf(prefix: Any, tree: Any, what: str) -> list[int | None]:
    """JAX's axis specs: an int or None for a whole tree, or a tree prefix of
    ``tree`` with an int or None per subtree; one axis per leaf of ``tree``."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_leaves(tree))
    if isinstance(prefix, list) and isinstance(tree, tuple):
        prefix = tuple(prefix)
    spec = optree.tree_structure(prefix, none_is_leaf=True, namespace=NAMESPACE)
    try:
        subtrees = spec.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {prefix!r}: {e}") from None
    axes: list[int | None] = []
    for ax, sub in zip(optree.tree_leaves(prefix, none_is_leaf=True, namespace=NAMESPACE),
                       subtrees):
        if ax is not None and (not isinstance(ax, int) or isinstance(ax, bool)):
            raise TypeError(f"vmap {what} must be ints or None, got {ax!r}")
        axes += [ax] * len(tree_leaves(sub))
    return axes


def _example(x: Tensor, axis: int) -> Tensor:
    """A placeholder for one example: index 0 along ``axis`` (never computed),
    detached, so that a transform inside ``f`` (``grad``) captures it instead
    of tracing into the whole batch."""
    shape = x.shape
    part = record(_SLICE, (x,), {"start": (0,) * len(shape),
                                 "limit": tuple(1 if i == axis else d
                                                for i, d in enumerate(shape)),
                                 "stride": (1,) * len(shape)})
    return detach(record(_RESHAPE, (part,), {"shape": shape[:axis] + shape[axis + 1:]}))


def _reads(t: Tensor, placeholders: set[int]) -> bool:
    """Whether ``t``'s value depends on one of the placeholders (the ids of
    the placeholder tensors and of their nodes)."""
    seen: set[int] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if id(x) in placeholders:
            return True
        n = source(x)
        if n is None or id(n) in seen:
            continue
        if id(n) in placeholders:
            return True
        seen.add(id(n))
        stack += [i for i in n.inputs if isinstance(i, Tensor)]
    return False


def _before(t: Tensor, first: int) -> bool:
    """A value computed before ``f`` was called (an argument of an enclosing
    transform, a closed-over activation) is captured by the traced body, not
    traced into, so enclosing transforms see it read."""
    n = source(t)
    return n is not None and (0 <= n.seq < first or _stopped_lazy(t))


def _inside(t: Tensor, first: int) -> bool:
    n = source(t)
    return n is not None and n.seq >= first


class _NeedsLoop(Exception):
    """A stopped value is an output of a custom rule: vmap runs f per example."""


class _Stopped:
    """The batched values of tensors ``f`` computed from mapped arguments
    where differentiation stops (detached, or recorded under no_grad): each
    is the output of a vmap of the function that computed it (traced out of
    ``f``'s graph up to the placeholders), detached, so the stop holds for a
    transform differentiating the vmap."""

    def __init__(self, placeholders: list[Tensor], mapped: list[tuple[int, Tensor, int]],
                 first: int, ids: set[int], n: int):
        self.placeholders, self.first, self.ids, self.n = placeholders, first, ids, n
        self.by_node = {id(source(p)): (x, ax) for p, (_, x, ax) in zip(placeholders, mapped)}
        self.by_id = {id(p): (x, ax) for p, (_, x, ax) in zip(placeholders, mapped)}
        self.memo: dict[int, Tensor] = {}

    def batched(self, s: Tensor, stop: bool = True) -> Tensor:
        """The batched value of ``s`` (batch axis first), detached unless
        ``stop`` is False (a collective's operand: its gradient flows)."""
        key = id(s) if stop else (id(s), False)
        out = self.memo.get(key)
        if out is not None:
            return out
        node = source(s)
        if type(node) is CustomNode:
            raise _NeedsLoop
        arg = self.by_id.get(id(s)) if not stop else self.by_node.get(id(node))
        if arg is not None:  # a mapped argument (or, stopped, a detached alias of one)
            x, ax = arg
            out = _moved_to_front(x, ax)
            out = detach(out) if stop else out
        else:
            first, ids = self.first, self.ids
            fn = FuncGraph(self.placeholders, [s],
                           boundary=lambda t: t is not s and _before(t, first))
            inputs, in_ax = [], []
            for t in fn.sub.leaves:
                if id(t) in self.by_id:
                    x, ax = self.by_id[id(t)]
                    inputs.append(x)
                    in_ax.append(ax)
                elif id(t) not in ids and _inside(t, first) and _reads(t, ids):
                    inputs.append(self.batched(t))
                    in_ax.append(0)
                else:
                    inputs.append(t)
                    in_ax.append(-1)
            res = record(VMAP_OP, tuple(inputs), {"fn": fn, "in_axes": tuple(in_ax),
                                                  "out_axes": (0,), "axis_size": self.n})
            out = detach(res[0]) if stop else res[0]
        self.memo[key] = out
        return out


class _Trace:
    """One ``vmap(axis_name=...)`` trace under way: its collectives batch
    (``lax.psum`` of a traced value is the sum over the batch of that value's
    batched form, a value every example shares) instead of running the
    examples in lockstep."""

    def __init__(self, axis_name: str, stop: _Stopped, index: Tensor):
        self.axis_name, self.stop, self.index = axis_name, stop, index

    def batched(self, t: Tensor) -> Tensor | None:
        """``t`` for every example, stacked on a new leading axis; None when
        a custom rule computed it (then the examples run in lockstep)."""
        if not _reads(t, self.stop.ids):  # the same for every example
            return stack([t] * self.stop.n)
        try:
            return self.stop.batched(t, stop=False)
        except _NeedsLoop:
            return None


class _Group:
    """The ``vmap`` traces under way that a collective names (one name or a
    tuple of names, JAX's ``axis_name=('i', 'j')``): the examples of all of
    them, flattened in the order the names are given (the first name's index
    the most significant, as JAX's). ``traces``: the traces under way from
    the outermost named one in, ``named[k]`` the position in ``traces`` of
    the k-th name."""

    def __init__(self, axis_name: Any, traces: list[_Trace], named: list[int]):
        self.axis_name, self.traces, self.named = axis_name, traces, named
        self.n = int(np.prod([traces[k].stop.n for k in named], dtype=np.int64))

    @property
    def index(self) -> Tensor:
        """This example's index along the named axes (int32)."""
        idx = None
        for k in self.named:
            t = self.traces[k]
            idx = t.index if idx is None else idx * t.stop.n + t.index
        assert idx is not None
        return idx

    def batched(self, t: Tensor) -> Tensor | None:
        """``t`` for every example of the named axes, stacked on one new
        leading axis (the names' order); None when a custom rule computed it.
        Each trace (innermost first) batches the batched value of the one
        inside it; the axes of traces not named are then indexed at this
        example's position along them."""
        b = t
        for tr in reversed(self.traces):  # (the outermost first in b's axes)
            b = tr.batched(b)
            if b is None:
                return None
        if len(self.traces) == 1:
            return b
        others = [k for k in range(len(self.traces)) if k not in self.named]
        b = permute(b, (*others, *self.named, *range(len(self.traces), b.ndim)))
        if others:
            b = b[tuple(self.traces[k].index for k in others)]
        return reshape(b, (self.n, *t.shape))


def collective_trace(axis_name: Any, anywhere: bool = False) -> _Group | None:
    """The ``vmap`` traces named by ``axis_name`` (a name or a tuple of
    distinct names) when each is under way with every trace inside the
    outermost of them named (their collectives are batched), else None.
    ``anywhere``: any traces under way (``axis_index`` and ``axis_size``
    need no batching)."""
    stack_ = getattr(_TRACES, "named", None)
    names = _names_of(axis_name)
    if not stack_ or not names or not all(isinstance(a, str) for a in names) \
            or len(set(names)) != len(names):
        return None
    found: list[int] = []
    for a in names:  # (an inner vmap's name shadows an outer one's)
        pos = next((i for i in range(len(stack_) - 1, -1, -1)
                    if stack_[i] is not None and stack_[i].axis_name == a), None)
        if pos is None:
            return None
        found.append(pos)
    if anywhere:
        return _Group(axis_name, [stack_[i] for i in found], list(range(len(found))))
    lo = min(found)
    if any(t is None for t in stack_[lo:]):
        return None
    return _Group(axis_name, list(stack_[lo:]), [i - lo for i in found])


def _host_leaves(result: Any) -> Any:
    """``f``'s result with its Python numbers and numpy arrays as arrays of
    JAX's dtypes (a constant output: broadcast along the mapped axis, or
    returned as is under ``out_axes=None``, as JAX's vmap)."""
    leaves, tree = tree_flatten(result)
    if all(isinstance(o, Tensor) for o in leaves):
        return result
    return tree_unflatten(tree, [tensor(canonical_host(o)) if isinstance(
        o, bool | int | float | np.number | np.bool_ | np.ndarray) else o for o in leaves])


def _moved_to_front(x: Tensor, ax: int) -> Tensor:
    if ax == 0:
        return x
    return permute(x, (ax, *(d for d in range(x.ndim) if d != ax)))


def _per_example(f: Callable, leaves: list[Any], treedef: Any,
                 mapped: list[tuple[int, Tensor, int]], n: int, out_axes: Any,
                 out_ax: list[int] | None = None, axis_name: Any = None,
                 lockstep: Callable[..., list[Any]] | None = None) -> Any:
    """``f`` called on each example and the results stacked: how ``vmap`` maps
    a function whose traced body cannot carry its meaning (it computes from a
    mapped argument a value that differentiation must stop at or differentiate
    by a custom rule: one traced body would compute it for example 0 only, and
    differentiate through it; or it loops on a mapped value). Values and
    derivatives are exactly ``f``'s. ``out_ax``: the output axes the trace
    found (-1 where ``out_axes`` is None and the output is not mapped)."""
    per_leaf: list[list[Tensor]] = []
    out_tree = None
    calls = []
    for i in range(n):
        call = list(leaves)
        for k, x, ax in mapped:
            call[k] = x.select(ax, i)
        calls.append(call)
    if lockstep is None:
        results = [_host_leaves(f(*tree_unflatten(treedef, call))) for call in calls]
    else:  # every example at once, in lockstep: collectives combine them

        def example(*call: Any) -> Any:
            return f(*tree_unflatten(treedef, list(call)))
        results = [_host_leaves(r) for r in lockstep(example, calls, n, axis_name)]
    for i, result in enumerate(results):
        outs, tree = tree_flatten(result)
        if out_tree is None:
            out_tree, per_leaf = tree, [[] for _ in outs]
            if out_ax is None:
                out_ax = []
                for k, (o, ax) in enumerate(zip(outs, _axes_per_leaf(out_axes, result,
                                                                      "out_axes"))):
                    if not isinstance(o, Tensor):
                        raise TypeError(f"vmap: f returned a {type(o).__name__} leaf; its "
                                        "outputs must be tensors")
                    if ax is None:
                        out_ax.append(-1)
                        continue
                    if not -(o.ndim + 1) <= ax <= o.ndim:
                        raise ValueError(f"vmap out_axes {ax} is out of bounds for output "
                                         f"leaf {k} of rank {o.ndim}")
                    out_ax.append(ax % (o.ndim + 1))
        elif tree != out_tree:
            raise TypeError(f"vmap: f returned {tree} for example {i} but {out_tree} for "
                            "example 0")
        for k, o in enumerate(outs):
            per_leaf[k].append(o)
    assert out_ax is not None
    for k, (ys, ax) in enumerate(zip(per_leaf, out_ax)):
        if ax < 0 and any(y is not ys[0] for y in ys):  # (a collective's result is one
            raise NotImplementedError(                   # tensor shared by all examples)
                f"vmap: out_axes None for output leaf {k}, which this function (run per "
                "example) computes per example: it must be one value for all examples "
                "(a collective's result, or a value not computed from a mapped argument)")
    return tree_unflatten(out_tree, [ys[0] if ax < 0 else stack(ys, ax)
                                     for ys, ax in zip(per_leaf, out_ax)])


def _batched_outputs(fn: FuncGraph, in_axes: Sequence[int]) -> list[bool]:
    """Per output of ``fn``: whether it depends on a mapped parameter."""
    sub = fn.sub
    leaf = [a >= 0 for a in in_axes]
    node: list[bool] = []

    def batched(r: int) -> bool:
        return leaf[-1 - r] if r < 0 else node[r >> 16]

    for refs in sub.refs:
        node.append(any(batched(r) for r in refs))
    return [batched(r) for r in sub.outputs]


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable:
    """``f`` mapped over an axis of its arguments (JAX's ``vmap``): ``in_axes``
    (an int, None, or a tree prefix of the arguments tuple) names the mapped
    axis of each argument (None: the same for every example; negative axes
    count from the end); ``out_axes`` where each output carries the batch
    axis; ``axis_size`` the batch size when no argument is mapped;
    ``axis_name`` names the mapped axis for the collectives inside ``f``
    (``lax.psum(x, axis_name)``: the sum over the examples, every example
    getting it). Not supported: ``spmd_axis_name`` (it raises)."""
    if spmd_axis_name is not None:
        raise NotImplementedError("vmap(spmd_axis_name=...): pyflame's vmap does not shard "
                                  "its batch over a mesh; use pf.shard_map")
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f"vmap axis_name must be a string, got {axis_name!r}")
    if not isinstance(in_axes, int | tuple | list | dict) and in_axes is not None:
        raise TypeError(f"vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments, got {in_axes!r}")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # JAX maps keyword arguments over their axis 0
            names, n_args = tuple(kwargs), len(args)
            per_arg = tuple(in_axes) if isinstance(in_axes, list | tuple) \
                else (in_axes,) * n_args

            def positional(*a: Any) -> Any:
                return f(*a[:n_args], **dict(zip(names, a[n_args:])))
            return vmap(positional, (*per_arg, *([0] * len(names))), out_axes,
                        axis_name=axis_name, axis_size=axis_size)(*args, *kwargs.values())
        leaves, treedef = tree_flatten(args)
        prefix = in_axes
        if isinstance(in_axes, list | tuple):
            if len(in_axes) != len(args):
                raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                                 f"corresponding to the positional arguments passed to the "
                                 f"function, but got len(in_axes)={len(in_axes)}, "
                                 f"len(args)={len(args)}")
            prefix = tuple(in_axes)
        axes = _axes_per_leaf(prefix, args, "in_axes")
        mapped: list[tuple[int, Tensor, int]] = []  # (leaf index, tensor, axis)
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                continue
            if isinstance(x, np.ndarray):
                x = leaves[i] = tensor(x)
            if not isinstance(x, Tensor) or x.ndim == 0:
                raise ValueError(f"vmap was requested to map its argument along axis {ax}, "
                                 "which implies that its rank should be at least 1, but "
                                 f"argument leaf {i} is "
                                 + (f"a {type(x).__name__}" if not isinstance(x, Tensor)
                                    else "a rank-0 tensor"))
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(f"vmap: axis {ax} is out of bounds for argument leaf {i} of "
                                 f"shape {list(x.shape)} (rank {x.ndim})")
            mapped.append((i, x, ax % x.ndim))
        sizes = {x.shape[ax] for _, x, ax in mapped}
        if len(sizes) > 1:
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                             + "\n".join(f"  argument leaf {i} has shape {list(x.shape)} "
                                         f"and axis {ax} is to be mapped"
                                         for i, x, ax in mapped))
        if sizes:
            n = sizes.pop()
            if axis_size is not None and axis_size != n:
                raise ValueError(f"vmap got axis_size={axis_size} but the mapped axes have "
                                 f"size {n}")
        elif axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes "
                             "(or be given axis_size)")
        else:
            n = axis_size
        try:
            return _trace_and_record(f, leaves, treedef, mapped, n, out_axes, axis_name)
        except CollectiveInTrace as e:
            names = _names_of(e.axis_name)
            if axis_name is not None and set(names) == {axis_name}:
                return _per_example(f, leaves, treedef, mapped, n, out_axes,
                                    axis_name=axis_name, lockstep=e.lockstep)
            if axis_name is not None and axis_name in names and in_vmap_trace():
                raise  # (with an enclosing vmap's name too: one of those runs per example)
            return _per_example(f, leaves, treedef, mapped, n, out_axes)
        except MappedLoopError:
            return _per_example(f, leaves, treedef, mapped, n, out_axes)
    return wrapped


def _trace_and_record(f: Callable, leaves: list[Any], treedef: Any,
                      mapped: list[tuple[int, Tensor, int]], n: int, out_axes: Any,
                      axis_name: str | None = None) -> Any:
    eager = CONFIG.eager
    CONFIG.eager = False  # the body is traced, not run (the vmap node runs it)
    ids: set[int] = set()

    def guard(tensors: Sequence[Tensor]) -> None:
        for t in tensors:
            if _reads(t, ids):
                raise ConcretizationError(
                    f"vmap: f looked at the value of a tensor of shape {list(t.shape)} "
                    "that depends on a mapped argument (.item(), .numpy(), print or "
                    "Python control flow on it); under vmap the function is traced "
                    "once for all examples, so its values are not available")
    REALIZE_GUARDS.append(guard)
    _TRACES.depth = getattr(_TRACES, "depth", 0) + 1
    named = _TRACES.__dict__.setdefault("named", [])
    named.append(None)  # (this trace's collectives: set once its placeholders exist)
    try:
        with tracing():
            first = _next_seq()  # ops recorded from here on are f's body
            call = list(leaves)
            placeholders = []
            traced = mapped  # (and, with an axis name, the examples' indices)
            for i, x, ax in mapped:
                call[i] = _example(x, ax)
                placeholders.append(call[i])
            ids.update(id(p) for p in placeholders)
            for p in placeholders:  # an in-place update of one raises (inplace.py)
                TRACE_ARGS[id(p)] = p
            # and their nodes: a detached alias of a placeholder (stop_gradient
            # of a mapped argument) shares its node, not its identity
            ids.update(id(source(p)) for p in placeholders)
            if axis_name is not None:  # lax.axis_index: one more mapped input, 0..n-1
                index = tensor(np.arange(n, dtype=np.int32))
                index_p = _example(index, 0)
                placeholders.append(index_p)
                traced = [*mapped, (-1, index, 0)]
                ids.update((id(index_p), id(source(index_p))))
                named[-1] = _Trace(axis_name, _Stopped(placeholders, traced, first, ids, n),
                                   index_p)
            result = _host_leaves(f(*tree_unflatten(treedef, call)))
            outs, out_tree = tree_flatten(result)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise TypeError(f"vmap: f returned a {type(o).__name__} leaf; its "
                                    "outputs must be tensors")
            fn = FuncGraph(placeholders, outs, boundary=lambda t: _before(t, first))
            # a value f computed from a mapped argument where differentiation
            # stops (stop_gradient, no_grad, a custom_vjp/custom_jvp's or an
            # autograd.Function's forward and residuals) is not traced into
            stopped = {id(t) for t in fn.sub.leaves
                       if id(t) not in ids and _inside(t, first) and _reads(t, ids)}
            # each mapped by a vmap of its own (detached: the stop holds); an
            # output of a custom rule cannot be (its rule would be lost): then
            # f runs per example
            stop = _Stopped(placeholders, traced, first, ids, n)
            try:
                batched_stop = {i: stop.batched(t) for t in fn.sub.leaves
                                if (i := id(t)) in stopped}
            except _NeedsLoop:
                batched_stop = None
    finally:
        CONFIG.eager = eager
        REALIZE_GUARDS.remove(guard)
        _TRACES.depth -= 1
        named.pop()
    axis_of = {id(p): ax for p, (_, _, ax) in zip(placeholders, traced)}
    batch_of = {id(p): x for p, (_, x, _) in zip(placeholders, traced)}
    inputs, in_ax = [], []
    for t in fn.sub.leaves:
        if batched_stop is not None and id(t) in batched_stop:
            inputs.append(batched_stop[id(t)])
            in_ax.append(0)
            continue
        inputs.append(batch_of.get(id(t), t))
        in_ax.append(0 if id(t) in stopped else axis_of.get(id(t), -1))
    batched = _batched_outputs(fn, in_ax)
    out_ax: list[int] = []
    for k, (o, ax) in enumerate(zip(outs, _axes_per_leaf(out_axes, result, "out_axes"))):
        if ax is None:
            if batched[k]:
                raise ValueError(f"vmap has mapped output (leaf {k}, shape {list(o.shape)} "
                                 "per example) but out_axes is None")
            out_ax.append(-1)
            continue
        if not -(o.ndim + 1) <= ax <= o.ndim:
            raise ValueError(f"vmap out_axes {ax} is out of bounds for output leaf {k} of "
                             f"rank {o.ndim} (the batched output has rank {o.ndim + 1})")
        out_ax.append(ax % (o.ndim + 1))
    if not outs:
        return tree_unflatten(out_tree, [])
    if batched_stop is None:
        return _per_example(f, leaves, treedef, mapped, n, out_axes, out_ax)
    if not inputs:  # nothing mapped reaches f's values: each output, n times
        return tree_unflatten(out_tree, [o if ax < 0 else stack([o] * n, ax)
                                         for o, ax in zip(outs, out_ax)])
    res = record(VMAP_OP, tuple(inputs), {"fn": fn, "in_axes": tuple(in_ax),
                                          "out_axes": tuple(out_ax), "axis_size": n})
    return tree_unflatten(out_tree, res)


# ---- Jacobians: vmap of a VJP (rows) or of a JVP (columns) ----

def _basis(t: Tensor) -> Tensor:
    """The standard basis of ``t``'s space: ``numel`` tensors of its shape, stacked."""
    k = t.numel()
    return tensor(np.eye(k, dtype=t.dtype.np).reshape((k, *t.shape)))


def _mapped(pull: Callable[[Tensor], list[Tensor]], basis: Tensor) -> list[Tensor]:
    """``vmap(pull)(basis)``; under anomaly detection one call per basis row
    instead, since its checks look at each backward op's values (a vmapped
    function is traced once for all rows: its values are not there)."""
    if not CONFIG.anomaly:
        return vmap(pull)(basis)
    rows = [pull(basis[i]) for i in range(basis.shape[0])]
    return [stack([r[m] for r in rows]) for m in range(len(rows[0]))]


def _jacobian(f: Callable, argnums: int | Sequence[int], has_aux: bool, reverse: bool):
    """JAX's jacrev/jacfwd over pytrees: per output leaf, the input's
    structure (``argnums``) with a Jacobian ``out.shape + x.shape`` per input
    leaf, nested in the output's structure. Reverse mode maps one VJP over the
    basis of each output, forward mode one JVP over the basis of each input."""
    def wrapped(*args: Any):
        with tracing():
            first = _next_seq()
            xs = _Args(args, argnums)
            result = f(*xs.call)
            out, aux = _split_aux(result) if has_aux else (result, None)
            outs, out_tree = tree_flatten(out)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise TypeError(f"{'jacrev' if reverse else 'jacfwd'}: f returned a "
                                    f"{type(o).__name__} leaf; its outputs must be tensors")
            if reverse:
                plan = _functional_plan(xs.flat, outs, first)
            else:
                forward = _Forward(xs.flat, outs, first)  # through Functions' own jvp
        flat = xs.flat
        # blocks[k][m]: d outs[k] / d flat[m], of shape outs[k].shape + flat[m].shape
        blocks: list[list[Tensor | None]] = [[None for _ in flat] for _ in outs]
        if reverse:
            for k, o in enumerate(outs):
                if o.numel() == 0 or not flat:
                    continue

                def pull(seed: Tensor, k: int = k) -> list[Tensor]:
                    seeds = [seed if j == k else _seed_like(p, 0.0) for j, p in enumerate(outs)]
                    return _cotangents(plan, flat, seeds)
                for m, ct in enumerate(_mapped(pull, _basis(o))):
                    blocks[k][m] = reshape(ct, o.shape + flat[m].shape)
        else:
            for m, x in enumerate(flat):
                if x.numel() == 0 or not outs:
                    continue

                def push(tangent: Tensor, m: int = m) -> list[Tensor]:
                    tangents = [tangent if q == m else _seed_like(p, 0.0)
                                for q, p in enumerate(flat)]
                    return forward.run(tangents)
                for k, tan in enumerate(vmap(push, out_axes=-1)(_basis(x))):
                    blocks[k][m] = reshape(tan, outs[k].shape + x.shape)
        jac = []
        for k, o in enumerate(outs):
            per_leaf = [blk if blk is not None else zeros(list(o.shape + x.shape), dtype=o.dtype)
                        for blk, x in zip(blocks[k], flat)]
            jac.append(xs.like_argnums(per_leaf))
        j = tree_unflatten(out_tree, jac)
        return (j, aux) if has_aux else j
    return wrapped


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by reverse mode (JAX's ``jacrev``, pytrees in and out):
    ``vmap`` of a VJP over the basis of each output."""
    return _jacobian(f, argnums, has_aux, True)


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by forward mode (JAX's ``jacfwd``, pytrees in and out):
    ``vmap`` of a JVP over the basis of each input."""
    return _jacobian(f, argnums, has_aux, False)


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


def jacobian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False, allow_int: bool = False):
    """``jax.jacobian``: ``jacrev``."""
    if holomorphic or allow_int:
        raise NotImplementedError("jacobian: holomorphic and allow_int are not supported "
                                  "(no complex dtypes; integer inputs have no derivative)")
    return jacrev(f, argnums, has_aux)


def linearize(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``jax.linearize``: ``(f(*primals), f_jvp)`` (and ``aux`` with
    ``has_aux``), ``f_jvp(*tangents)`` the JVP at ``primals``. Each call of
    ``f_jvp`` records the forward-mode trace again (its values are the same:
    the recording is lazy, nothing is computed twice unless evaluated)."""
    if has_aux:
        out, aux = f(*primals)
    else:
        out, aux = f(*primals), None

    def main(*xs: Any) -> Any:
        return f(*xs)[0] if has_aux else f(*xs)

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: f_jvp takes {len(primals)} tangents (one per "
                            f"primal), got {len(tangents)}")
        return autodiff_jvp(main, primals, tangents)[1]
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)
