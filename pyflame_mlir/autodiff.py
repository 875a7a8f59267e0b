"""Differentiation in the frontend: JAX's functional API and PyTorch's
imperative one, both recording *one transform node* per differentiation.

A transform node holds a ``FuncGraph`` (the function traced out of the
recorded graph: its arguments, the tensors it captures, its outputs) and
becomes ``pyflame.vjp``/``pyflame.jvp`` on a private ``func.func`` in the IR;
the ``pyflame-autodiff`` pass does the differentiation. Gradients are promise
tensors like any other, so forward, backward and the update of a training
step compile into one graph, cached by structure.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import ContextDecorator, contextmanager
from typing import Any

import numpy as np

from .core import (  # noqa: F401  (the autograd state functions are also autodiff's API)
    GRAD_MODE,
    MUTATIONS,
    AutogradMeta,
    OpNode,
    Subgraph,
    Tensor,
    _meta,
    collect,
    detach,
    is_leaf,
    read_by,
    record,
    requires_grad,
    retain_grad,
    set_grad,
    set_requires_grad,
    source,
    splat_value,
)
from .creation import tensor
from .dialects import OPS, ad
from .dialects.opdef import OpDef, Spec
from .ops import as_tensor_arg, convert, reshape, stack

_CONSTANT = OPS["constant"]
_ALIAS = OPS["reshape"]


# ---- grad mode ----

class _grad_mode(ContextDecorator):  # noqa: N801  (used like a function)
    """Sets this thread's grad mode for a block, or for a function it decorates."""

    __slots__ = ("enabled", "prev")

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def _recreate_cm(self) -> _grad_mode:
        return _grad_mode(self.enabled)  # each decorated call saves its own mode

    def __enter__(self) -> None:
        self.prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self.enabled

    def __exit__(self, *exc: object) -> None:
        GRAD_MODE.enabled = self.prev


def no_grad():
    """Ops recorded inside do not require grad (as ``torch.no_grad``)."""
    return _grad_mode(False)


def enable_grad():
    return _grad_mode(True)


def set_grad_enabled(enabled: bool):
    return _grad_mode(enabled)


def is_grad_enabled() -> bool:
    return GRAD_MODE.enabled


# ---- functions traced out of the graph ----

class FuncGraph:
    """The function from ``args`` to ``outputs`` inside the recorded graph.
    Tensors it reads that are not computed from ``args`` (weights, data,
    values recorded under no_grad, detached tensors) are *captured*. Args and
    captured tensors are the function's parameters (``sub.leaves``);
    ``arg_pos`` says which of them are the args."""

    __slots__ = ("sub", "arg_pos", "_key", "_local_key")

    def __init__(self, args: Sequence[Tensor], outputs: Sequence[Tensor],
                 boundary: Callable[[Tensor], bool] | None = None):
        ids = {id(a) for a in args}
        if len(ids) != len(args):
            raise ValueError("the same tensor is passed twice as a differentiated argument")
        self.sub: Subgraph = collect(outputs, args=args, boundary=boundary or _stopped_lazy,
                                     trace=True)
        self.arg_pos: tuple[int, ...] = tuple(range(len(args)))
        self._key: tuple | None = None
        self._local_key: tuple | None = None

    @classmethod
    def of_leaves(cls, outputs: Sequence[Tensor], boundary: Callable[[Tensor], bool]
                  ) -> FuncGraph:
        """``outputs`` as a function of the autograd leaves they reach (the
        tensors that require grad), found by the same walk that traces it."""
        fn = object.__new__(cls)
        fn.sub = collect(outputs, boundary=boundary, trace=True)
        fn.arg_pos = tuple(i for i, t in enumerate(fn.sub.leaves)
                           if t._ag is not None and t._ag.requires_grad)
        fn._key = fn._local_key = None
        return fn

    @property
    def args(self) -> list[Tensor]:
        leaves = self.sub.leaves
        return [leaves[i] for i in self.arg_pos]

    def output_specs(self) -> list[Spec]:
        out = []
        for r in self.sub.outputs:
            if r < 0:
                t = self.sub.leaves[-1 - r]
                out.append((t.shape, t.dtype))
            else:
                out.append(self.sub.nodes[r >> 16].specs[r & 0xFFFF])
        return out

    def used_args(self) -> set[int]:
        """Indices (into ``args``) of the args the outputs depend on."""
        used = {-1 - r for refs in [*self.sub.refs, self.sub.outputs] for r in refs if r < 0}
        return {k for k, i in enumerate(self.arg_pos) if i in used}

    def local_key(self) -> tuple:
        """Exact within this process and cheap (interned node signatures)."""
        if self._local_key is None:
            self._local_key = self.sub.key(("func", self.arg_pos))
        return self._local_key

    def key(self) -> tuple:
        """Canonical encoding (for the structural hash of the graph using it)."""
        if self._key is None:
            sub = self.sub
            self._key = ("func", self.arg_pos,
                         tuple((t.shape, t.dtype.name) for t in sub.leaves),
                         tuple((n.sig, tuple(r)) for n, r in zip(sub.nodes, sub.refs)),
                         tuple(sub.outputs))
        return self._key


def _stopped_lazy(t: Tensor) -> bool:
    """A computed tensor (lazy, or realized with its history) a traced
    function must not trace into (it is captured): detached, an autograd
    leaf, or recorded under no_grad."""
    n = source(t)
    if n is None:
        return False
    ag = t._ag
    return (ag is not None and (ag.requires_grad or ag.detached)) or n.nograd


def _stopped_imperative(t: Tensor) -> bool:
    """Where PyTorch's autograd graph ends: a leaf, a detached tensor, or the
    result of an op that did not require grad (``OpNode.rg``)."""
    n = source(t)
    if n is None:
        return False
    ag = t._ag
    return (ag is not None and (ag.requires_grad or ag.detached)) or not n.rg


@contextmanager
def tracing() -> Iterator[None]:
    """A functional transform traces a function: tensors realized meanwhile
    keep their history (``Tensor._realize``), so looking at a value inside
    the function does not cut the gradient. When the outermost trace ends,
    the histories kept only for it are dropped (the traced functions hold
    what they need), so memory stays bounded."""
    mode = GRAD_MODE
    if mode.trace_depth == 0:
        mode.traced = []
    mode.trace_depth += 1
    try:
        yield
    finally:
        mode.trace_depth -= 1
        if mode.trace_depth == 0:
            for ref in mode.traced:
                t = ref()
                if t is not None and t._hist is not None and not t._hist.rg:
                    t._hist = None
            mode.traced = None


def _transform_rule(mode: str):
    def infer(shapes, dtypes, attrs) -> tuple[Spec, ...]:
        fn: FuncGraph = attrs["fn"]
        outs = fn.output_specs()
        params = fn.sub.leaves  # "wrt" numbers the function's parameters
        if mode == "vjp":
            return tuple(outs + [(params[i].shape, params[i].dtype) for i in attrs["wrt"]])
        return tuple(outs + outs)
    return infer


def _transform_memo_key(attrs: dict[str, Any]) -> tuple:
    """Equal for two traced functions of one structure (in this process)."""
    return attrs["fn"].local_key(), attrs["wrt"]


VJP_OP = OpDef("vjp", "transform", _transform_rule("vjp"), None, None,
               {"fn": "func", "wrt": "ints"}, num_results=None,
               doc="reverse-mode derivative of a traced function",
               memo_attrs=_transform_memo_key)
JVP_OP = OpDef("jvp", "transform", _transform_rule("jvp"), None, None,
               {"fn": "func", "wrt": "ints"}, num_results=None,
               doc="forward-mode derivative of a traced function",
               memo_attrs=_transform_memo_key)


def _check_differentiable(args: Sequence[Tensor], what: str) -> None:
    for i, a in enumerate(args):
        if not a.dtype.is_floating_point:
            raise TypeError(f"{what}: argument {i} has dtype {a.dtype.name}; only "
                            "floating-point tensors can be differentiated")


def _seed_like(t: Tensor, value: Any) -> Tensor:
    if isinstance(value, int | float):  # a number seeds every element (a 1-element output)
        return record(_CONSTANT, (), {"value": splat_value(value, t.shape, t.dtype)})
    s = as_tensor_arg(value)
    if s.shape != t.shape:
        raise ValueError(f"a seed of shape {list(s.shape)} does not match the output of shape "
                         f"{list(t.shape)}")
    return s if s.dtype is t.dtype else convert(s, t.dtype)


def record_vjp(fn: FuncGraph, wrt: Sequence[int], cotangents: Sequence[Tensor]
               ) -> list[Tensor]:
    """Outputs of ``fn`` then the cotangents of ``fn.args[i]`` for i in ``wrt``."""
    args = fn.args
    _check_differentiable([args[i] for i in wrt], "vjp")
    inputs = (*fn.sub.leaves, *cotangents)
    return record(VJP_OP, inputs, {"fn": fn, "wrt": tuple(fn.arg_pos[i] for i in wrt)})


def record_jvp(fn: FuncGraph, wrt: Sequence[int], tangents: Sequence[Tensor]) -> list[Tensor]:
    """Outputs of ``fn`` then their tangents."""
    args = fn.args
    _check_differentiable([args[i] for i in wrt], "jvp")
    inputs = (*fn.sub.leaves, *tangents)
    return record(JVP_OP, inputs, {"fn": fn, "wrt": tuple(fn.arg_pos[i] for i in wrt)})


# ---- pytrees (tuples, lists, dicts of tensors) ----

def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    if isinstance(tree, tuple | list):
        leaves, defs = [], []
        for x in tree:
            lv, d = tree_flatten(x)
            leaves += lv
            defs.append(d)
        return leaves, (type(tree), defs)
    if isinstance(tree, dict):
        keys = sorted(tree)
        leaves, defs = [], []
        for k in keys:
            lv, d = tree_flatten(tree[k])
            leaves += lv
            defs.append(d)
        return leaves, (dict, (keys, defs))
    if tree is None:
        return [], None
    return [tree], "*"


def tree_unflatten(treedef: Any, leaves: Sequence[Any]) -> Any:
    it = iter(leaves)

    def build(d: Any) -> Any:
        if d == "*":
            return next(it)
        if d is None:
            return None
        kind, sub = d
        if kind is dict:
            keys, defs = sub
            return {k: build(x) for k, x in zip(keys, defs)}
        return kind(build(x) for x in sub)
    return build(treedef)


def _as_primals(values: Sequence[Any]) -> list[Tensor]:
    return [as_tensor_arg(v) for v in values]


def _distinct(ts: list[Tensor]) -> list[Tensor]:
    """The arguments of a traced function: each is a new tensor (an alias, a
    no-op reshape, of the tensor passed), so a repeated argument gets its own
    cotangent, and a value the function closes over is a constant even when
    it is (or was computed from) the tensor passed, as in JAX. The alias is an
    op, so an enclosing transform still traces through it."""
    return [record(_ALIAS, (t,), {"shape": t.shape}) for t in ts]


# ---- the functional API (JAX) ----

def vjp(f: Callable, *primals: Any, has_aux: bool = False):
    """``(out, vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` returns one
    cotangent per primal, shaped like the primals."""
    flat, tree = tree_flatten(primals)
    with tracing():
        flat = _distinct(_as_primals(flat))
        result = f(*tree_unflatten(tree, flat))
        out, aux = result if has_aux else (result, None)
        out_flat, out_tree = tree_flatten(out)
        fn = FuncGraph(flat, out_flat)

    def vjp_fn(cotangents: Any) -> tuple:
        ct_flat, ct_tree = tree_flatten(cotangents)
        if len(ct_flat) != len(out_flat):
            raise ValueError(f"vjp: expected {len(out_flat)} cotangent(s), got {len(ct_flat)}")
        seeds = [_seed_like(o, c) for o, c in zip(out_flat, ct_flat)]
        res = record_vjp(fn, range(len(flat)), seeds)
        return tuple(tree_unflatten(tree, res[len(out_flat):]))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]):
    """``(out, tangent_out)`` of ``f`` at ``primals`` along ``tangents``."""
    flat, tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if len(flat) != len(t_flat):
        raise ValueError(f"jvp: {len(flat)} primal(s) but {len(t_flat)} tangent(s)")
    if t_tree != tree:  # JAX: same count nested differently pairs the wrong leaves
        raise ValueError("jvp: primals and tangents must have the same tree structure")
    with tracing():
        flat = _distinct(_as_primals(flat))
        seeds = [_seed_like(p, t) for p, t in zip(flat, t_flat)]
        out = f(*tree_unflatten(tree, flat))
        out_flat, out_tree = tree_flatten(out)
        fn = FuncGraph(flat, out_flat)
    res = record_jvp(fn, range(len(flat)), seeds)
    return out, tree_unflatten(out_tree, res[len(out_flat):])


def _argnums(argnums: int | Sequence[int], n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise ValueError(f"argnums {argnums} out of range for {n} positional arguments")
    return tuple(a % n for a in nums)


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    def wrapped(*args: Any):
        with tracing():
            return _value_and_grad(f, argnums, has_aux, args)
    return wrapped


def _value_and_grad(f: Callable, argnums: int | Sequence[int], has_aux: bool,
                    args: tuple) -> Any:
    nums = _argnums(argnums, len(args))
    args = list(args)
    trees = []
    flat: list[Tensor] = []
    for a in nums:
        leaves, tree = tree_flatten(args[a])
        leaves = _as_primals(leaves)
        trees.append((tree, len(flat), len(leaves)))
        flat += leaves
        args[a] = tree_unflatten(tree, leaves)
    flat = _distinct(flat)
    for a, (tree, start, n) in zip(nums, trees):
        args[a] = tree_unflatten(tree, flat[start:start + n])
    result = f(*args)
    out, aux = result if has_aux else (result, None)
    if not isinstance(out, Tensor) or out.numel() != 1 or \
            not out.dtype.is_floating_point:
        raise TypeError("grad requires f to return a real scalar tensor, got "
                        + (f"shape {list(out.shape)} {out.dtype.name}"
                           if isinstance(out, Tensor) else type(out).__name__))
    fn = FuncGraph(flat, [out])
    res = record_vjp(fn, range(len(flat)), [_seed_like(out, 1.0)])
    grads = [tree_unflatten(tree, res[1 + start:1 + start + n])
             for tree, start, n in trees]
    g = grads[0] if isinstance(argnums, int) else tuple(grads)
    return ((out, aux), g) if has_aux else (out, g)


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    vg = value_and_grad(f, argnums, has_aux)

    def wrapped(*args: Any):
        (value, g) = vg(*args)
        return (g, value[1]) if has_aux else g
    return wrapped


def _one_hot(shape: tuple[int, ...], i: int, like: Tensor) -> Tensor:
    v = np.zeros(shape, dtype=like.dtype.np)
    v.reshape(-1)[i] = 1
    return tensor(v)


def _trace_at(f: Callable, argnums: int, args: tuple) -> tuple[Tensor, Tensor, FuncGraph]:
    """Call ``f`` and trace it as a function of its argument ``argnums``."""
    args_l = list(args)
    a = _argnums(argnums, len(args_l))[0]
    with tracing():
        x = args_l[a] = _distinct(_as_primals([args_l[a]]))[0]
        out = f(*args_l)
        return x, out, FuncGraph([x], [out])


def jacrev(f: Callable, argnums: int = 0):
    """The Jacobian of a single-tensor output w.r.t. one tensor argument, by
    one VJP per output element: shape ``out.shape + x.shape``."""
    def wrapped(*args: Any):
        x, out, fn = _trace_at(f, argnums, args)
        rows = [record_vjp(fn, [0], [_one_hot(out.shape, i, out)])[1]
                for i in range(out.numel())]
        return reshape(stack(rows) if rows else out, out.shape + x.shape)
    return wrapped


def jacfwd(f: Callable, argnums: int = 0):
    """The Jacobian by one JVP per input element: shape ``out.shape + x.shape``."""
    def wrapped(*args: Any):
        x, out, fn = _trace_at(f, argnums, args)
        cols = [record_jvp(fn, [0], [_one_hot(x.shape, j, x)])[1] for j in range(x.numel())]
        return reshape(stack(cols, dim=-1) if cols else out, out.shape + x.shape)
    return wrapped


def hessian(f: Callable, argnums: int = 0):
    return jacfwd(jacrev(f, argnums), argnums)


# ---- the imperative API (PyTorch) ----

def backward(t: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """Accumulate the gradient of ``t`` into the ``.grad`` of the leaves it
    requires grad from. As in PyTorch, the graph is freed unless
    ``retain_graph`` (default: ``create_graph``): a second backward through
    it raises, and a realized tensor of it no longer keeps its history."""
    retained: dict[int, Tensor] = {}

    def stop(x: Tensor) -> bool:  # the walk that traces the loss also finds retain_grad()s
        ag = x._ag
        if ag is not None:
            if ag.requires_grad or ag.detached:
                return True
            if ag.retain:
                retained[id(x)] = x
        n = source(x)
        if not n.rg:  # the graph of ops that required grad ends here
            return True
        if n.freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (through "
                f"{n.op.name}), or to directly access saved tensors after they have "
                "already been freed. Specify retain_graph=True if you need to backward "
                "through the graph a second time")
        return False

    fn = FuncGraph.of_leaves([t], stop)
    _check_versions(fn.sub.nodes)
    if not fn.arg_pos:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn")
    for x in fn.sub.leaves:  # a retained tensor that has become a value since
        ag = x._ag
        if ag is not None and ag.retain and not ag.requires_grad and not ag.detached:
            retained[id(x)] = x
    if gradient is None:
        if math.prod(t.shape) != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs "
                               f"(the tensor has shape {list(t.shape)}); pass gradient=")
        gradient = 1.0
    with _grad_mode(create_graph):
        seed = _seed_like(t, gradient)
        _accumulate(fn.args, record_vjp(fn, range(len(fn.arg_pos)), [seed])[1:])
        if retained:
            targets = list(retained.values())
            _accumulate(targets, record_vjp(FuncGraph(targets, [t], _stopped_imperative),
                                            range(len(targets)), [seed])[1:])
    if not (create_graph if retain_graph is None else retain_graph):
        for n in fn.sub.nodes:
            n.freed = True


def _check_versions(nodes: Sequence[OpNode]) -> None:
    """PyTorch's error: an op of the graph read a tensor that was modified in
    place afterwards (by another op than the update itself)."""
    if not MUTATIONS[0]:
        return
    for n in nodes:
        if n.op in ad.READS_NO_INPUT_VALUES:
            continue
        for x in n.inputs:
            if x._mut is None:
                continue
            _, later = read_by(x, n)
            if later is not None:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been "
                    f"modified by an inplace operation: [{x.dtype.name} "
                    f"{list(x.shape)}], read by {n.op.name}, is at version {x._version}; "
                    f"expected version {later.version - 1} instead")


def _hooked(x: Tensor, g: Tensor) -> Tensor:
    """``g`` through ``x``'s gradient hooks (each may return a replacement)."""
    ag = x._ag
    if ag is not None and ag.hooks:
        for hook in list(ag.hooks.values()):
            new = hook(g)
            if new is not None:
                if not isinstance(new, Tensor) or new.shape != g.shape:
                    raise RuntimeError(f"a gradient hook returned "
                                       f"{getattr(new, 'shape', type(new).__name__)}, "
                                       f"expected a tensor of shape {list(g.shape)}")
                g = new
    return g


def _accumulate(targets: Sequence[Tensor], grads: Sequence[Tensor]) -> None:
    """``.grad += g``; the new ``.grad`` is realized whenever its node is computed."""
    for x, g in zip(targets, grads):
        g = _hooked(x, g)
        ag = _meta(x)
        ag.grad = g = g if ag.grad is None else ag.grad + g
        node = g._node
        if node is not None:
            if node.keep is None:
                node.keep = []
            node.keep.append(weakref.ref(g))
        if ag.post_hooks:
            for hook in list(ag.post_hooks.values()):
                hook(x)


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` unregisters the hook."""

    _ids = 0

    def __init__(self, table: dict[int, Callable]):
        RemovableHandle._ids += 1
        self.id = RemovableHandle._ids
        self._table = table

    def remove(self) -> None:
        self._table.pop(self.id, None)


def _register(t: Tensor, hook: Callable, post: bool) -> RemovableHandle:
    if not requires_grad(t):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    if not is_leaf(t):
        raise NotImplementedError(
            "hooks on non-leaf tensors are not supported yet (they would have to change "
            "the gradient flowing on to the inputs); register it on a leaf")
    ag = _meta(t)
    table = ag.post_hooks if post else ag.hooks
    if table is None:
        table = {}
        if post:
            ag.post_hooks = table
        else:
            ag.hooks = table
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """PyTorch's ``Tensor.register_hook`` (leaves): ``hook(grad)`` runs on
    each gradient computed for ``t`` before it is accumulated into ``.grad``
    (or returned by ``pf.autograd.grad``); a tensor it returns replaces it."""
    return _register(t, hook, False)


def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], None]
                                       ) -> RemovableHandle:
    """``hook(t)`` runs after a gradient was accumulated into ``t.grad``."""
    return _register(t, hook, True)


class GradFn:
    """``t.grad_fn`` for inspection (PyTorch): the op that made ``t`` in the
    graph of ops that require grad. ``name()`` is PyTorch's spelling
    (``MulBackward0``); ``next_functions`` pairs per input: its ``grad_fn``,
    an ``AccumulateGrad`` for a leaf that requires grad, or None."""

    __slots__ = ("node",)

    def __init__(self, node: OpNode):
        self.node = node

    def name(self) -> str:
        op = "".join(w.capitalize() for w in self.node.op.name.split("_"))
        return f"{op}Backward0"

    @property
    def next_functions(self) -> tuple:
        return tuple((grad_fn(x) if source(x) is not None else
                      (AccumulateGrad(x) if requires_grad(x) else None), 0)
                     for x in self.node.inputs)

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class AccumulateGrad:
    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    next_functions: tuple = ()

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def grad_fn(t: Tensor) -> GradFn | None:
    ag = t._ag
    if ag is not None and (ag.requires_grad or ag.detached):
        return None
    n = source(t)
    return GradFn(n) if n is not None and n.rg else None


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
                  create_graph: bool = False, allow_unused: bool = False) -> tuple:
    """Gradients of ``outputs`` w.r.t. ``inputs`` only; ``.grad`` is untouched."""
    outs, _ = tree_flatten(outputs)
    ins, _ = tree_flatten(inputs)
    if grad_outputs is None:
        for o in outs:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
        seeds_in: list[Any] = [1.0] * len(outs)
    else:
        seeds_in, _ = tree_flatten(grad_outputs)
    for i, x in enumerate(ins):
        if not requires_grad(x):
            raise RuntimeError(f"one of the differentiated tensors (input {i}) does not "
                               "require grad")
    if not any(requires_grad(o) for o in outs):
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn")
    with _grad_mode(create_graph):
        fn = FuncGraph(ins, outs, _stopped_imperative)
        _check_versions(fn.sub.nodes)
        used = fn.used_args()
        if not allow_unused and len(used) != len(ins):
            missing = sorted(set(range(len(ins))) - used)
            raise RuntimeError(f"input(s) {missing} were not used to compute the outputs "
                               "(pass allow_unused=True)")
        seeds = [_seed_like(o, s) for o, s in zip(outs, seeds_in)]
        grads = record_vjp(fn, range(len(ins)), seeds)[len(outs):]
        grads = [_hooked(x, g) for x, g in zip(ins, grads)]
    return tuple(g if i in used else None for i, g in enumerate(grads))


def _tensor_backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
                     create_graph: bool = False) -> None:
    """``t.backward()`` (PyTorch)."""
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


Tensor.backward = _tensor_backward  # methods of core's Tensor, defined here (see core.py)
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.grad_fn = property(grad_fn)
