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

import functools
import heapq
import itertools
import math
import traceback
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import ContextDecorator, contextmanager
from typing import Any

import numpy as np

from . import saved
from .core import (  # noqa: F401  (the autograd state functions are also autodiff's API)
    CONFIG,
    GRAD_MODE,
    INFERENCE_TENSORS,
    MUTATIONS,
    TRACE_ARGS,
    AutogradMeta,
    Frozen,
    OpNode,
    Subgraph,
    Tensor,
    _meta,
    _next_seq,
    collect,
    detach,
    inputs_as_read,
    is_inference,
    is_leaf,
    number_key,
    raw_version,
    read_by,
    record,
    requires_grad,
    retain_grad,
    set_grad,
    set_requires_grad,
    source,
    splat_value,
)
from .dialects import OPS, ad
from .dialects.opdef import OpDef, Spec
from .ops import as_tensor_arg, convert
from .tree_util import tree_flatten, tree_unflatten

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


def no_grad(orig_func: Callable | None = None):
    """Ops recorded inside do not require grad (as ``torch.no_grad``); also a
    decorator, with or without the call (``@no_grad()``, ``@no_grad``)."""
    return _grad_mode(False) if orig_func is None else _grad_mode(False)(orig_func)


def enable_grad(orig_func: Callable | None = None):
    return _grad_mode(True) if orig_func is None else _grad_mode(True)(orig_func)


class set_grad_enabled(_grad_mode):  # noqa: N801  (torch's name)
    """As torch's: calling it sets the grad mode at once (``set_grad_enabled(False)``
    as a statement); as a context manager, the mode before it comes back at the
    end of the block; as a decorator, around each call."""

    __slots__ = ()

    def __init__(self, enabled: bool):
        super().__init__(bool(enabled))
        self.prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self.enabled

    def __enter__(self) -> None:
        pass  # (set by __init__)

    def __call__(self, func: Any) -> Any:
        GRAD_MODE.enabled = self.prev  # decorating changes nothing until a call
        return super().__call__(func)

    def _recreate_cm(self) -> set_grad_enabled:
        return set_grad_enabled(self.enabled)


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
        reached = _reached_leaves(fn.sub)
        fn.arg_pos = tuple(i for i, t in enumerate(fn.sub.leaves)
                           if t._ag is not None and t._ag.requires_grad
                           and (reached is None or i in reached))
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
        used = _reached_leaves(self.sub)
        if used is None:
            used = {-1 - r for refs in [*self.sub.refs, self.sub.outputs] for r in refs if r < 0}
        return {k for k, i in enumerate(self.arg_pos) if i in used}

    def reaches_args(self) -> list[bool]:
        """Per output, whether it is computed from an arg (those that are not
        have a zero tangent and cotangent: forward mode skips them)."""
        args = {-1 - i for i in self.arg_pos}
        node_reaches = self.nodes_reaching_args()
        return [r in args or (r >= 0 and node_reaches[r >> 16]) for r in self.sub.outputs]

    def nodes_reaching_args(self) -> list[bool]:
        """Per node (in topological order), whether it reads an arg or a node
        that does (PyTorch records no other op in its graph)."""
        args = {-1 - i for i in self.arg_pos}
        node_reaches: list[bool] = []
        for refs in self.sub.refs:
            node_reaches.append(any(r in args or (r >= 0 and node_reaches[r >> 16])
                                    for r in refs))
        return node_reaches

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


def _reached_leaves(sub: Subgraph) -> set[int] | None:
    """The leaves of ``sub`` its outputs depend on as PyTorch's graph does
    (None when every leaf used is: no gradient in it). A gradient made with
    create_graph (a vjp node) depends on the cotangents and on the leaves of
    its function whose values a derivative reads (``_read_leaves``), not on
    the others: in torch's graph of ``(x @ w.T + b).sum()``'s gradient to x
    there is no b, and a second backward leaves ``b.grad`` None, not zeros."""
    nodes = sub.nodes
    for n in nodes:  # (a loop, not any() over a generator: every backward asks)
        if n.op is VJP_OP:
            break
    else:
        return None
    refs = sub.refs
    used: list[set[int] | None] = [None] * len(nodes)
    leaves: set[int] = set()

    def use(r: int) -> None:
        if r < 0:
            leaves.add(-1 - r)
            return
        u = used[r >> 16]
        if u is None:
            u = used[r >> 16] = set()
        u.add(r & 0xFFFF)
    for r in sub.outputs:
        use(r)
    for i in range(len(nodes) - 1, -1, -1):
        u = used[i]
        if u is None:
            continue
        rs = refs[i]
        n = nodes[i]
        if n.op is VJP_OP:
            inner = n.attrs["fn"].sub
            if min(u) >= len(inner.outputs):  # its cotangents only, not f's values
                read, k_leaves = _read_leaves(inner), len(inner.leaves)
                rs = [r for k, r in enumerate(rs) if k >= k_leaves or k in read]
        for r in rs:
            use(r)
    return leaves


def _read_leaves(sub: Subgraph) -> set[int]:
    """The leaves whose values a derivative of ``sub`` reads: those feeding
    (through any ops) an op whose VJP reads a value (not one of the linear
    ops of ``_VALUE_FREE``, whose VJPs read only the cotangent)."""
    nodes, refs = sub.nodes, sub.refs
    marked = [n.op not in _VALUE_FREE for n in nodes]
    todo = [i for i, m in enumerate(marked) if m]
    leaves: set[int] = set()
    while todo:
        for r in refs[todo.pop()]:
            if r < 0:
                leaves.add(-1 - r)
            elif not marked[r >> 16]:
                marked[r >> 16] = True
                todo.append(r >> 16)
    return leaves


_VALUE_FREE = frozenset(OPS[n] for n in (
    "add", "sub", "neg", "convert", "sum", "mean", "cumsum", "reshape", "permute", "slice",
    "broadcast_to", "pad", "concat", "split", "gather", "scatter_add"))


class CustomNode(OpNode):
    """An output of a ``pf.autograd.Function`` (autograd.py): an alias (a no-op
    reshape, so it evaluates and hashes as one) of what ``forward`` returned.
    Differentiation stops here and calls the user's ``backward`` through
    ``ctx`` (``ctx.inputs``, ``ctx.out_nodes``, ``ctx.run_backward``)."""

    __slots__ = ("ctx", "out_index")


def _stopped_lazy(t: Tensor) -> bool:
    """A computed tensor (lazy, or realized with its history) a traced
    function must not trace into (it is captured): detached, an autograd
    leaf, or recorded under no_grad; or where a traced function ends: the
    output of a ``pf.autograd.Function`` (``_Reverse`` goes on from it)."""
    n = source(t)
    if n is None:
        return False
    ag = t._ag
    return (ag is not None and (ag.requires_grad or ag.detached)) or n.nograd or \
        type(n) is CustomNode


def _custom_output(t: Tensor) -> bool:
    """The output of a ``pf.autograd.Function`` gradients flow through: not a
    detached alias of one (it shares the Function's node), nor one made a leaf,
    nor one applied under no_grad (only forward mode goes through that)."""
    n = source(t)
    if type(n) is not CustomNode or n.nograd:
        return False
    ag = t._ag
    return ag is None or not (ag.requires_grad or ag.detached)


def _stopped_forward(t: Tensor) -> bool:
    """``_stopped_lazy`` for forward mode: PyTorch's no_grad does not stop
    forward-mode tangents, so a value recorded under no_grad is traced into,
    and so is a leaf's state an in-place update (under no_grad) computed."""
    n = source(t)
    if n is None:
        return False
    ag = t._ag
    return (ag is not None and ag.detached) or type(n) is CustomNode


def _forward_custom_output(t: Tensor) -> bool:
    """The output of a ``pf.autograd.Function`` tangents flow through (its
    ``jvp``): as ``_custom_output``, under no_grad too."""
    if type(source(t)) is not CustomNode:
        return False
    ag = t._ag
    return ag is None or not (ag.requires_grad or ag.detached)


# the dual tensors of the open forward-AD level (autograd.forward_ad), by the
# id of their alias node: (the node, its tangent). Split points of reverse mode,
# so a gradient's graph reads them (forward over backward finds their tangents)
FORWARD_DUALS: dict[int, tuple[OpNode, Tensor]] = {}


def _split_imperative(t: Tensor) -> bool:
    """Where PyTorch's engine has to stop between two ops: the output of a
    ``pf.autograd.Function``, a non-leaf with gradient hooks or
    ``retain_grad()`` (or a frozen state of one a view op read, ``_hooked_source``),
    and under anomaly detection every computed tensor."""
    n = source(t)
    if n is None or not n.rg:
        return False
    ag = t._ag
    if ag is not None:
        if ag.requires_grad or ag.detached:
            return False
        if ag.hooks or ag.retain:
            return True
    return type(n) is CustomNode or CONFIG.anomaly or \
        (bool(FORWARD_DUALS) and id(n) in FORWARD_DUALS) or \
        (type(t._view) is Frozen and _hooked_source(t) is not None)


def _hooked_source(t: Tensor) -> Tensor | None:
    """The non-leaf with gradient hooks or ``retain_grad()`` that ``t`` is a
    frozen state of (what a view op reads, ``core.frozen``, when the tensor
    had no hook yet: torch runs a hook registered after the use too), while
    that tensor has not changed since."""
    fz = t._view
    if type(fz) is not Frozen:
        return None
    src = fz.source
    ag = src._ag
    if ag is None or ag.requires_grad or ag.detached or not (ag.hooks or ag.retain) or \
            src._version != fz.version or src._mut is not fz.mut:
        return None
    return src


def _stopped_imperative(t: Tensor) -> bool:
    """Where PyTorch's autograd graph ends: a leaf, a detached tensor, or the
    result of an op that did not require grad (``OpNode.rg``); and where a
    stretch of it ends (``_split_imperative``)."""
    n = source(t)
    if n is None:
        return False
    ag = t._ag
    if (ag is not None and (ag.requires_grad or ag.detached)) or not n.rg:
        return True
    if n.freed:
        raise _freed_error(n)
    return _split_imperative(t)


def _freed_error(n: OpNode) -> RuntimeError:
    return RuntimeError(
        f"Trying to backward through the graph a second time (through {n.op.name}), or to "
        "directly access saved tensors after they have already been freed. Specify "
        "retain_graph=True if you need to backward through the graph a second time")


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
            TRACE_ARGS.clear()


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


_SEEDS: dict[tuple, Tensor] = {}


def _shared_seed(t: Tensor, value: int | float) -> Tensor:
    """``_seed_like(t, value)`` for a ``backward()`` whose seed only the one
    vjp node reads (no split point, no create_graph): one constant promise per
    (shape, dtype, exact number), shared by every step as ``ops._scalar_operand``
    is, so a training step records no constant for it. Never handed to the
    user (no hook sees it), never modified; made under no_grad, as each seed
    of a backward without create_graph is."""
    k = (t.shape, t.dtype, number_key(value))
    s = _SEEDS.get(k)
    if s is None:
        if len(_SEEDS) > 256:
            _SEEDS.clear()
        with _grad_mode(False):
            s = _SEEDS[k] = _seed_like(t, value)
    return s


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


# ---- reverse mode through split points (Functions, non-leaf hooks, anomaly) ----

class _Reverse:
    """Reverse mode that stops at *split points* (``split``): outputs of a
    ``pf.autograd.Function`` (their backward is the user's, called on the
    traced cotangents) and, in the imperative API, non-leaf tensors with
    hooks or ``retain_grad()`` (the gradient is seen, maybe replaced, then
    flows on) and, under anomaly detection, every computed tensor (each op's
    backward is checked for NaN). Each stretch between split points is one
    traced function and one vjp node, so without split points this is the one
    vjp it always was. The stretches are traced when the plan is made, while
    the histories are there (a functional transform drops them after its
    trace); ``run`` differentiates them in reverse creation order, as
    PyTorch's engine runs its nodes.

    ``targets`` are what cotangents are wanted for (None: the autograd leaves
    reached); ``wants(x)`` says whether an input of a Function gets one."""

    def __init__(self, outputs: Sequence[Tensor], targets: Sequence[Tensor] | None,
                 boundary: Callable[[Tensor], bool], split: Callable[[Tensor], bool],
                 wants: Callable[[Tensor], bool], nested_targets: bool = False):
        self.targets = None if targets is None else list(targets)
        self.target_ids = None if targets is None else {id(t) for t in targets}
        # a leaf target's earlier states (read, then updated in place under no_grad)
        # share its meta: their gradients are its gradient (PyTorch: one leaf)
        self.leaf_targets = {id(t._ag): t for t in targets or ()
                             if t._ag is not None and t._ag.requires_grad}
        self.boundary, self.split, self.wants = boundary, split, wants
        self.anomaly = CONFIG.anomaly
        self.nodes: list[OpNode] = []  # every node traced (a backward() frees them)
        # (with targets: their version checks, each with its stretch's outputs)
        self.to_check: list[tuple[FuncGraph, Sequence[Tensor]]] = []
        self.outputs = list(outputs)
        self.direct = [i for i, o in enumerate(outputs) if split(o)]  # seeded directly
        traced = [o for i, o in enumerate(outputs) if i not in self.direct]
        self.root = self._trace(traced, None) if traced else None
        # per split point: (the Function's ctx or the tensor, its continuation:
        # the traced stretch before it and that stretch's outputs, ids routed
        # directly, the order it runs in)
        self.conts: dict[int, tuple[Any, FuncGraph | None, list[Tensor], set[int], int]] = {}
        # per split tensor: its key, order and output index, read now (a realized
        # tensor's history may be dropped when the functional trace ends)
        self.keys: dict[int, tuple[int, int, int]] = {}
        # a Function's outputs that have gradient hooks or retain_grad(), by
        # (key, output index): their gradients go through them before its backward
        self.hooked_outputs: dict[tuple[int, int], Tensor] = {}
        todo = [self.outputs[i] for i in self.direct] + self._split_leaves(self.root)
        # a target that is not a leaf: its gradient is taken, and flows on to the
        # targets before it (PyTorch: autograd.grad(z, [y, x]) with y = f(x))
        self.hooked_targets: dict[int, Tensor] = {}  # non-leaf ones' hooked gradients
        for t in self.targets if nested_targets else ():
            n = source(t)
            if n is not None and id(t) not in self.keys and (
                    not _stopped_imperative(t) or  # (or one with hooks or retain_grad)
                    (_split_imperative(t) and type(n) is not CustomNode)):
                self.keys[id(t)] = (id(t), n.seq, 0)
                cont = self._trace([t], t)
                self.conts[id(t)] = (t, cont, [t], set(), n.seq)
                todo += self._split_leaves(cont)
        while todo:
            t = todo.pop()
            key, seq, obj = self._key(t)
            n = source(t)
            self.keys[id(t)] = (key, seq, n.out_index if type(n) is CustomNode else 0)
            ag = t._ag
            if obj is not t and ag is not None and (ag.hooks or ag.retain):
                self.hooked_outputs[key, n.out_index] = t
            if key in self.conts:
                continue
            if isinstance(obj, Tensor):  # a hooked (or retained, or anomaly-checked) tensor
                cont = self._trace([obj], obj)
                self.conts[key] = (obj, cont, [obj], set(), seq)
            else:
                plain: dict[int, Tensor] = {}
                routed: set[int] = set()
                for x in obj.inputs:
                    if not isinstance(x, Tensor) or not wants(x):
                        continue
                    if self._is_target(x) or split(x):
                        routed.add(id(x))
                        if not self._is_target(x):
                            todo.append(x)
                    else:
                        plain[id(x)] = x
                outs = list(plain.values())
                cont = self._trace(outs, None) if outs else None
                self.conts[key] = (obj, cont, outs, routed, seq)
            todo += self._split_leaves(cont)
        self.unneeded = self._unneeded() if self.target_ids is not None else set()
        for fn, outs in self.to_check:
            self._check_targeted(fn, outs)

    def _check_targeted(self, fn: FuncGraph, outs: Sequence[Tensor]) -> None:
        """The version check of the ops on a path to a target: an op reading no
        argument (a detached value's) is in no graph, and torch's engine does not
        run (nor check) the ops whose gradients reach no input."""
        leaves, keys, unneeded = fn.sub.leaves, self.keys, self.unneeded
        args = {-1 - i for i in fn.arg_pos if self._is_target(leaves[i]) or
                id(leaves[i]) not in keys or keys[id(leaves[i])][0] not in unneeded}
        reach: list[bool] = []
        for refs in fn.sub.refs:
            reach.append(any(r in args or (r >= 0 and reach[r >> 16]) for r in refs))
        _check_versions([n for n, r in zip(fn.sub.nodes, reach) if r], self.target_ids, outs)

    def _unneeded(self) -> set[int]:
        """Keys of the hooked (or retained) tensors whose stretch reaches no
        target: PyTorch's engine runs only the nodes on a path to the inputs
        of ``autograd.grad`` / ``backward(inputs=)``, so their hooks do not run
        and their ``.grad`` stays unset. (A Function's backward is run anyway.)"""
        needed: set[int] = set()
        for key, (obj, cont, *_) in sorted(self.conts.items(), key=lambda e: e[1][-1]):
            if not isinstance(obj, Tensor) or self._is_target(obj):
                needed.add(key)
                continue
            leaves = cont.sub.leaves
            for k in cont.used_args():
                x = leaves[cont.arg_pos[k]]
                if self._is_target(x) or id(x) not in self.keys or \
                        self.keys[id(x)][0] in needed:
                    needed.add(key)
                    break
        return set(self.conts) - needed

    def _is_target(self, x: Tensor) -> bool:
        if self.target_ids is None:
            return x._ag is not None and x._ag.requires_grad
        return id(x) in self.target_ids or self._frozen_target(x) is not None

    def _frozen_target(self, x: Tensor) -> Tensor | None:
        """The target ``x`` is a frozen state of (what a view op read of a
        non-leaf, ``core.frozen``), while that target has not changed since, or
        the leaf target ``x`` is an earlier state of."""
        fz = x._view
        if type(fz) is not Frozen or self.target_ids is None:
            ag = x._ag
            if ag is not None and ag.requires_grad and self.leaf_targets and \
                    id(x) not in self.target_ids:
                return self.leaf_targets.get(id(ag))  # (an earlier state of a leaf target)
            return None
        src = fz.source
        if id(src) not in self.target_ids or src._version != fz.version or \
                src._mut is not fz.mut:
            return None
        return src

    @staticmethod
    def _key(t: Tensor) -> tuple[int, int, Any]:
        n = source(t)
        if type(n) is CustomNode:
            ctx = n.ctx
            return id(ctx), max(m.seq for m in ctx.out_nodes if m is not None), ctx
        src = _hooked_source(t)  # (its frozen states' gradients are its own)
        if src is not None:
            return id(src), n.seq, src
        return id(t), n.seq, t

    def _trace(self, outs: list[Tensor], start: Tensor | None) -> FuncGraph:
        """The function from the targets and the split points it reaches to
        ``outs`` (``start``, a split point itself, is traced into)."""
        b = self.boundary
        if start is not None or self.target_ids is not None:
            boundary = self.boundary

            def b(x: Tensor) -> bool:  # (a frozen state of a target is that target)
                return x is not start and (boundary(x) or self._frozen_target(x) is not None)
        split = self.split
        if self.targets is None:  # the autograd leaves reached, then the split points
            fn = FuncGraph.of_leaves(outs, b)
            fn.arg_pos += tuple(i for i, x in enumerate(fn.sub.leaves)
                                if (x._ag is None or not x._ag.requires_grad) and split(x))
        else:  # (a target traced from: the function to it, from the other targets)
            args = self.targets if start is None else [x for x in self.targets if x is not start]
            fn = FuncGraph(args, outs, b)
            n = len(args)
            fn.arg_pos += tuple(i for i, x in enumerate(fn.sub.leaves) if i >= n and (
                split(x) or self._frozen_target(x) is not None))
        if self.targets is None:
            _check_versions(fn.sub.nodes, None, outs)
        else:  # checked once the stretches reaching no target are known (``_unneeded``)
            self.to_check.append((fn, outs))
        self.nodes += fn.sub.nodes
        return fn

    def _split_leaves(self, fn: FuncGraph | None) -> list[Tensor]:
        if fn is None:
            return []
        leaves = fn.sub.leaves
        return [leaves[i] for i in fn.arg_pos if not self._is_target(leaves[i])]

    def is_plain(self) -> bool:
        """No split point: ``run`` records the one vjp, which alone reads the seeds."""
        return self.root is not None and not self.conts and not self.anomaly and \
            self.targets is None and not self.direct

    def has_targets(self) -> bool:
        return bool(self.direct) or (self.root is not None and bool(self.root.arg_pos))

    def run(self, seeds: Sequence[Tensor]) -> dict[int, list]:
        """``id(target) -> [target, cotangent]`` for the targets reached."""
        got: dict[int, list] = {}
        pend: dict[int, dict[int, Tensor]] = {}
        heap: list[tuple[int, int, int]] = []
        tie = itertools.count()

        def give(t: Tensor, g: Tensor) -> None:
            if self.target_ids is not None and id(t) not in self.target_ids:
                src = self._frozen_target(t)
                t = t if src is None else src
            if self._is_target(t):
                e = got.get(id(t))
                if e is None:
                    got[id(t)] = [t, g]
                else:
                    e[1] = e[1] + g
                if id(t) not in self.keys:
                    return  # (else a non-leaf target: its gradient flows on)
            key, seq, i = self.keys[id(t)]
            cts = pend.get(key)
            if cts is None:
                cts = pend[key] = {}
                heapq.heappush(heap, (-seq, next(tie), key))
            cts[i] = cts[i] + g if i in cts else g

        def differentiate(fn: FuncGraph, seeds: Sequence[Tensor]) -> None:
            n_out = len(fn.sub.outputs)
            res = record_vjp(fn, range(len(fn.arg_pos)), seeds)[n_out:]
            # every leaf of the walk is used; only a target passed in may not be
            used = range(len(res)) if self.targets is None else fn.used_args()
            leaves = fn.sub.leaves
            if self.anomaly:
                _check_nan(fn, [g if k in used else None for k, g in enumerate(res)])
            for k, (i, g) in enumerate(zip(fn.arg_pos, res)):
                if k in used:
                    give(leaves[i], g)

        root = self.root
        if self.is_plain():
            # no split point (the common case): the one vjp, every leaf reached a target
            leaves = root.sub.leaves
            res = record_vjp(root, range(len(root.arg_pos)), seeds)[len(root.sub.outputs):]
            return {id(leaves[i]): [leaves[i], g] for i, g in zip(root.arg_pos, res)}
        if root is not None:
            differentiate(root, [s for i, s in enumerate(seeds) if i not in self.direct])
        for i in self.direct:
            give(self.outputs[i], seeds[i])
        while heap:
            _, _, key = heapq.heappop(heap)
            cts = pend.pop(key)
            obj, cont, outs, routed, _ = self.conts[key]
            if key in self.unneeded:
                continue
            if isinstance(obj, Tensor):  # (a target's hooks run once, on what is returned
                # and flows on to the targets before it, as torch's)
                g = _hooked(obj, cts[0])
                if self._is_target(obj):
                    if g is not cts[0]:  # (autograd.grad returns the gradient before
                        # them, backward(inputs=) stores the one after them)
                        self.hooked_targets[id(obj)] = g
                elif obj._ag is not None and obj._ag.retain:
                    _store_grad(obj, g)
                differentiate(cont, [g])
                continue
            if self.hooked_outputs:
                for i, g in cts.items():
                    out = self.hooked_outputs.get((key, i))
                    if out is not None:
                        g = cts[i] = _hooked(out, g)
                        if out._ag.retain:
                            _store_grad(out, g)
            grads = obj.run_backward([cts.get(i) for i in range(len(obj.out_nodes))])
            if self.anomaly:
                _check_nan_values(f"{obj.name}Backward", grads, obj.trace)
            plain: dict[int, Tensor] = {}
            for x, g in zip(obj.inputs, grads):
                if g is None or not isinstance(x, Tensor) or not self.wants(x):
                    continue
                if id(x) in routed:
                    give(x, g)
                else:
                    plain[id(x)] = plain[id(x)] + g if id(x) in plain else g
            if plain and cont is not None:
                differentiate(cont, [plain.get(id(x)) if id(x) in plain else
                                     _seed_like(x, 0.0) for x in outs])
        return got

    def free(self) -> None:
        """PyTorch's default after a backward: the graph it went through is freed."""
        for n in self.nodes:
            n.freed = True
        for obj, *_ in self.conts.values():
            if not isinstance(obj, Tensor):
                obj.free()


def _check_nan(fn: FuncGraph, grads: Sequence[Tensor | None]) -> None:
    """Anomaly detection: ``fn`` is one op (every tensor is a split point)."""
    if not fn.sub.nodes:
        return
    n = fn.sub.nodes[-1]
    leaves = fn.sub.leaves
    by_input: list[Tensor | None] = [None] * len(n.inputs)
    for i, g in zip(fn.arg_pos, grads):
        for j, x in enumerate(n.inputs):
            if x is leaves[i] and by_input[j] is None:
                by_input[j] = g
    _check_nan_values(GradFn(n).name(), by_input, getattr(n, "trace", None))


def _check_nan_values(name: str, grads: Sequence[Tensor | None], trace: Any) -> None:
    for k, g in enumerate(grads):
        if g is not None and np.isnan(g.numpy()).any():
            where = "".join(traceback.format_list(trace)) if trace else \
                "  (not recorded: the op was recorded before anomaly detection was enabled)\n"
            raise RuntimeError(f"Function '{name}' returned nan values in its {k}th output. "
                               f"Traceback of forward call that caused the error:\n{where}")


def _as_primals(values: Sequence[Any]) -> list[Tensor]:
    return [as_tensor_arg(v) for v in values]


def _distinct(ts: list[Tensor]) -> list[Tensor]:
    """The arguments of a traced function: each is a new tensor (an alias, a
    no-op reshape, of the tensor passed), so a repeated argument gets its own
    cotangent, and a value the function closes over is a constant even when
    it is (or was computed from) the tensor passed, as in JAX. The alias is an
    op, so an enclosing transform still traces through it."""
    out = [record(_ALIAS, (t,), {"shape": t.shape}) for t in ts]
    for a in out:
        TRACE_ARGS[id(a)] = a
    return out


# ---- the functional API (JAX) ----

def vjp(f: Callable, *primals: Any, has_aux: bool = False):
    """``(out, vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` returns one
    cotangent per primal, shaped like the primals. The cotangents must have
    the structure and shapes of ``out`` (JAX raises otherwise, and so do we)."""
    flat, tree = tree_flatten(primals)
    with tracing():
        first = _next_seq()
        flat = _distinct(_as_primals(flat))
        result = f(*tree_unflatten(tree, flat))
        out, aux = _split_aux(result) if has_aux else (result, None)
        out_flat, out_tree = tree_flatten(out)
        plan = _functional_plan(flat, out_flat, first)

    def vjp_fn(cotangents: Any) -> tuple:
        ct_flat, ct_tree = tree_flatten(cotangents)
        if ct_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                            f"structure of primal output {out_tree}.")
        seeds = [_seed_like(o, c) for o, c in zip(out_flat, ct_flat)]
        return tuple(tree_unflatten(tree, _cotangents(plan, flat, seeds)))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False):
    """``(out, tangent_out)`` of ``f`` at ``primals`` along ``tangents``; with
    ``has_aux`` (JAX's), ``f`` returns ``(out, aux)`` and ``(out, tangent_out,
    aux)`` comes back."""
    if has_aux:
        box: list[Any] = []

        def without_aux(*a: Any) -> Any:
            out, aux = f(*a)
            box.append(aux)
            return out
        out, tangent = jvp(without_aux, primals, tangents)
        return out, tangent, box[-1]
    flat, tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if len(flat) != len(t_flat):
        raise ValueError(f"jvp: {len(flat)} primal(s) but {len(t_flat)} tangent(s)")
    if t_tree != tree:  # JAX: same count nested differently pairs the wrong leaves
        raise ValueError("jvp: primals and tangents must have the same tree structure")
    with tracing():
        first = _next_seq()
        flat = _distinct(_as_primals(flat))
        seeds = [_seed_like(p, t) for p, t in zip(flat, t_flat)]
        out = f(*tree_unflatten(tree, flat))
        out_flat, out_tree = tree_flatten(out)
        forward = _Forward(flat, out_flat, first)  # in the trace: while histories are kept
    return out, tree_unflatten(out_tree, forward.run(seeds))


def _argnums(argnums: int | Sequence[int], n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise ValueError(f"argnums {argnums} out of range for {n} positional arguments")
    return tuple(a % n for a in nums)


class _Args:
    """The differentiated arguments of a call (``argnums``, each a pytree),
    flattened into one list of traced tensors (``flat``), and back."""

    def __init__(self, args: tuple, argnums: int | Sequence[int]):
        self.single = isinstance(argnums, int)
        self.nums = _argnums(argnums, len(args))
        self.trees: list[tuple[Any, int, int]] = []  # per argnum: structure, start, count
        flat: list[Tensor] = []
        for a in self.nums:
            leaves, tree = tree_flatten(args[a])
            self.trees.append((tree, len(flat), len(leaves)))
            flat += _as_primals(leaves)
        self.flat = _distinct(flat)
        call = list(args)
        for a, part in zip(self.nums, self.split(self.flat)):
            call[a] = part
        self.call = call  # the arguments to call ``f`` with

    def split(self, per_leaf: Sequence[Any]) -> list[Any]:
        """One value per flat leaf -> one pytree per argnum."""
        return [tree_unflatten(tree, per_leaf[start:start + n])
                for tree, start, n in self.trees]

    def like_argnums(self, per_leaf: Sequence[Any]) -> Any:
        """As JAX returns gradients: the argument's tree, or a tuple of them."""
        parts = self.split(per_leaf)
        return parts[0] if self.single else tuple(parts)


def _split_aux(result: Any) -> tuple[Any, Any]:
    """``(output, aux)`` of a ``has_aux`` function, or JAX's error."""
    if not (isinstance(result, tuple | list) and len(result) == 2):
        raise TypeError(f"has_aux=True requires the function to return a pair (output, aux), "
                        f"got {type(result).__name__}"
                        + (f" of length {len(result)}" if isinstance(result, tuple | list)
                           else ""))
    return result[0], result[1]


# JAX's float0: the dtype of an integer argument's gradient (no values, zero bytes)
float0 = np.dtype([("float0", np.void, 0)])


def _is_int_leaf(leaf: Any) -> bool:
    dt = leaf.dtype if isinstance(leaf, Tensor) else np.asarray(leaf).dtype
    return not getattr(dt, "is_floating_point", np.issubdtype(dt, np.inexact))


def _float0_grads(f: Callable, argnums: int | Sequence[int], has_aux: bool,
                  args: tuple) -> Any:
    """JAX's ``allow_int=True``: ``f`` differentiated in its float leaves only,
    each integer (or bool) leaf's gradient a numpy array of zeros of dtype
    ``float0`` and the leaf's shape."""
    nums = _argnums(argnums, len(args))
    parts = []  # per argnum: structure, leaves, the float leaves' positions
    for a in nums:
        leaves, tree = tree_flatten(args[a])
        parts.append((tree, leaves, [k for k, x in enumerate(leaves) if not _is_int_leaf(x)]))

    def on_floats(*call: Any) -> Any:
        full = list(call)
        for a, (tree, leaves, pos) in zip(nums, parts):
            merged = list(leaves)
            for k, v in zip(pos, call[a]):
                merged[k] = v
            full[a] = tree_unflatten(tree, merged)
        return f(*full)
    call = list(args)
    for a, (_, leaves, pos) in zip(nums, parts):
        call[a] = [leaves[k] for k in pos]
    value, g = _value_and_grad(on_floats, tuple(nums), has_aux, tuple(call))
    out = []
    for (tree, leaves, pos), ga in zip(parts, g):
        merged = [np.zeros(tuple(getattr(x, "shape", np.shape(x))), float0) for x in leaves]
        for k, v in zip(pos, ga):
            merged[k] = v
        out.append(tree_unflatten(tree, merged))
    return value, (out[0] if isinstance(argnums, int) else tuple(out))


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False):
    if holomorphic:
        raise NotImplementedError("grad(holomorphic=True): pyflame has no complex dtypes")

    def wrapped(*args: Any, **kwargs: Any):  # keyword arguments: passed, not differentiated
        if allow_int and any(_is_int_leaf(x) for i in _argnums(argnums, len(args))
                             for x in tree_flatten(args[i])[0]):
            with tracing():
                return _float0_grads(functools.partial(f, **kwargs) if kwargs else f,
                                     argnums, has_aux, args)
        with tracing():
            return _value_and_grad(functools.partial(f, **kwargs) if kwargs else f, argnums,
                                   has_aux, args)
    return wrapped


def _value_and_grad(f: Callable, argnums: int | Sequence[int], has_aux: bool,
                    args: tuple) -> Any:
    first = _next_seq()
    xs = _Args(args, argnums)
    result = f(*xs.call)
    out, aux = _split_aux(result) if has_aux else (result, None)
    if not isinstance(out, Tensor) or out.numel() != 1 or \
            not out.dtype.is_floating_point:
        raise TypeError("grad requires f to return a real scalar tensor, got "
                        + (f"shape {list(out.shape)} {out.dtype.name}"
                           if isinstance(out, Tensor) else type(out).__name__))
    res = _cotangents(_functional_plan(xs.flat, [out], first), xs.flat,
                      [_seed_like(out, 1.0)])
    g = xs.like_argnums(res)
    return ((out, aux), g) if has_aux else (out, g)


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False):
    vg = value_and_grad(f, argnums, has_aux, holomorphic, allow_int)

    def wrapped(*args: Any, **kwargs: Any):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapped


def _functional_plan(args: list[Tensor], outs: list[Tensor], first: int = -1) -> _Reverse:
    """Reverse mode of a traced function (JAX's transforms: every float
    argument is differentiated; a ``pf.autograd.Function`` calls its backward;
    under anomaly detection each op's backward is checked for NaN). ``first``:
    see ``captured_before``."""
    if CONFIG.anomaly:
        return _Reverse(outs, args, captured_before(first, _stopped_functional_anomaly),
                        _split_functional_anomaly, _is_float)
    return _Reverse(outs, args, captured_before(first, _stopped_lazy), _custom_output,
                    _is_float)


def captured_before(first: int, stopped: Callable[[Tensor], bool] = _stopped_lazy
                    ) -> Callable[[Tensor], bool]:
    """The boundary of a function a transform traces from the call that began
    at sequence number ``first``: besides ``stopped`` tensors, every value
    computed before the call (an enclosing transform's argument, an
    activation) is captured, not traced into its history, so the transform's
    node reads it and an enclosing transform differentiates through it
    (``grad`` of a function whose inner ``grad`` closes over the outer
    argument). ``first`` -1: ``stopped`` alone."""
    if first < 0:
        return stopped

    def boundary(t: Tensor) -> bool:
        if stopped(t):
            return True
        n = source(t)
        return n is not None and 0 <= n.seq < first
    return boundary


def _stopped_functional_anomaly(t: Tensor) -> bool:
    return _stopped_lazy(t) or _split_functional_anomaly(t)


def _split_functional_anomaly(t: Tensor) -> bool:
    """Anomaly detection in a functional transform: every tensor computed in
    the trace is a split point (one op per stretch, as ``_split_imperative``)."""
    n = source(t)  # (a constant has no backward to check)
    return n is not None and bool(n.inputs) and (_custom_output(t) or not _stopped_lazy(t))


def _is_float(t: Tensor) -> bool:
    return t.dtype.is_floating_point


def _cotangents(plan: _Reverse, args: list[Tensor], seeds: list[Tensor]) -> list[Tensor]:
    """One cotangent per argument (zeros for an argument the outputs do not use)."""
    got = plan.run(seeds)
    return [got[id(a)][1] if id(a) in got else _seed_like(a, 0.0) for a in args]


class _Forward:
    """Forward mode of a traced function from ``args`` to ``outs``, through
    the ``jvp`` of the ``pf.autograd.Function``s it calls (PyTorch's forward
    AD): a Function's outputs are where the traced function stops; their
    tangents come from the Function's ``jvp`` on the tangents of its inputs
    (themselves traced from ``args``), and enter the jvp of the rest as
    further arguments. A value recorded under no_grad is such a stop too:
    PyTorch's no_grad does not stop forward mode, so its tangent is traced
    (``split_no_grad``), but it is recorded under no_grad, a constant to an
    enclosing reverse mode (the value and its tangent both, as torch's). Traced
    while the histories are there; ``run`` records the jvps for given tangents
    of ``args``."""

    def __init__(self, args: list[Tensor], outs: list[Tensor], first: int = -1,
                 stopped: Callable[[Tensor], bool] = _stopped_forward,
                 split_no_grad: bool = True):
        base = captured_before(first, stopped)

        def boundary(t: Tensor) -> bool:
            return base(t) or (split_no_grad and _no_grad_value(t))
        self.fn = fn = FuncGraph(args, outs, boundary)
        # per stop reached: (a Function's ctx, its output index, under no_grad) or
        # (None, the forward mode of the no_grad value, 0)
        self.customs: list[tuple[Any, Any, int]] = []
        # per Function: its tensor inputs' sources (an arg's position, or an
        # index into the outputs of ``inputs``, the traced function to them)
        self.inner: dict[int, tuple[list[tuple[int, bool, int]], _Forward | None]] = {}
        leaves = fn.sub.leaves
        found = []
        arg_ids = {id(a): i for i, a in enumerate(args)}
        for i, t in enumerate(leaves):
            if i < len(args) or not _forward_custom_output(t):
                if i >= len(args) and split_no_grad and _no_grad_value(t) and not base(t):
                    value = _Forward(args, [t], first, stopped, False)
                    if value.fn.reaches_args()[0]:
                        found.append(i)
                        self.customs.append((None, value, 0))
                continue
            n = source(t)
            ctx = n.ctx
            if not ctx.has_jvp:
                raise NotImplementedError(
                    f"forward-mode AD (jvp, jacfwd, hessian) reached the output of the "
                    f"pf.autograd.Function {ctx.name}: You must implement the jvp function "
                    "for custom autograd.Function to use it with forward mode AD.")
            found.append(i)
            self.customs.append((ctx, n.out_index, n.nograd))
            if id(ctx) in self.inner:
                continue
            sources: list[tuple[int, bool, int]] = []  # (input position, is an arg, index)
            computed: list[Tensor] = []
            for k, x in enumerate(ctx.inputs):
                if not isinstance(x, Tensor) or not x.dtype.is_floating_point:
                    continue
                if id(x) in arg_ids:
                    sources.append((k, True, arg_ids[id(x)]))
                elif stopped(x) and not _forward_custom_output(x):
                    continue  # captured (detached, a leaf): no tangent, as torch's
                else:
                    sources.append((k, False, len(computed)))
                    computed.append(x)
            inner = _Forward(args, computed, first, stopped, split_no_grad) if computed \
                else None
            if inner is not None:  # computed without the args: no tangent either
                reached = inner.fn.reaches_args()
                sources = [s for s in sources if s[1] or reached[s[2]]]
            self.inner[id(ctx)] = (sources, inner)
        fn.arg_pos += tuple(found)

    def run(self, tangents: Sequence[Tensor]) -> list[Tensor]:
        """The tangents of ``outs``."""
        by_ctx: dict[int, list[Tensor]] = {}
        extra = []
        for ctx, k, nograd in self.customs:
            if ctx is None:  # a value recorded under no_grad: its tangent too
                with _grad_mode(False):
                    extra.append(k.run(tangents)[0])
                continue
            out = by_ctx.get(id(ctx))
            if out is None:
                sources, inner = self.inner[id(ctx)]
                computed = inner.run(tangents) if inner is not None else []
                per_input: list[Tensor | None] = [None] * len(ctx.inputs)
                for pos, is_arg, j in sources:
                    per_input[pos] = tangents[j] if is_arg else computed[j]
                # no input with a tangent: torch calls no jvp (its outputs have none)
                with _grad_mode(GRAD_MODE.enabled and not nograd):
                    out = by_ctx[id(ctx)] = ctx.run_jvp(per_input) if sources else [
                        None if spec is None else record(OPS["constant"], (), {
                            "value": splat_value(0, spec[0], spec[1])})
                        for spec in ctx._out_specs]
            extra.append(out[k])
        fn = self.fn
        res = record_jvp(fn, range(len(fn.arg_pos)), [*tangents, *extra])
        return res[len(fn.sub.outputs):]


def _no_grad_value(t: Tensor) -> bool:
    """A value computed under no_grad from other values (not a constant, not
    a Function's output, not detached or a leaf)."""
    n = source(t)
    if n is None or not n.nograd or type(n) is CustomNode or not n.inputs:
        return False
    ag = t._ag
    return ag is None or not ag.detached


# ---- the imperative API (PyTorch) ----

def backward(t: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradient of ``t`` into the ``.grad`` of the leaves it
    requires grad from (only of ``inputs``, leaves or not, when given). As in
    PyTorch, the graph is freed unless ``retain_graph`` (default:
    ``create_graph``): a second backward through it raises, and a realized
    tensor of it no longer keeps its history."""
    if inputs is not None:
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not targets:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        if gradient is None:
            if math.prod(t.shape) != 1:
                raise _implicit_seed_error(t)
            gradient = 1.0
        grads = autograd_grad([t], targets, [gradient], retain_graph=retain_graph,
                              create_graph=create_graph, allow_unused=True,
                              _hook_non_leaves=True)
        used = [(x, g) for x, g in zip(targets, grads) if g is not None]
        # (autograd_grad ran their hooks: once, as torch's)
        _accumulate([x for x, _ in used], [g for _, g in used], not create_graph, hooks=False)
        return

    def stop(x: Tensor) -> bool:  # _stopped_imperative, inlined: once per traced tensor
        ag = x._ag
        if ag is not None and (ag.requires_grad or ag.detached):
            return True
        n = x._node or x._hist
        if not n.rg:  # the graph of ops that required grad ends here
            return True
        if n.freed:
            raise _freed_error(n)
        return type(n) is CustomNode or CONFIG.anomaly or \
            (ag is not None and bool(ag.hooks or ag.retain)) or \
            (bool(FORWARD_DUALS) and id(n) in FORWARD_DUALS) or \
            (type(x._view) is Frozen and _hooked_source(x) is not None)

    if not requires_grad(t):
        raise _no_grad_fn_error()
    if not create_graph and (gradient is None or type(gradient) in (float, int)) \
            and not CONFIG.anomaly and _plain_backward(t, gradient, retain_graph, stop):
        return
    plan = _Reverse([t], None, stop, _split_imperative, requires_grad)
    if not plan.has_targets():
        raise _no_grad_fn_error()
    if gradient is None:
        if math.prod(t.shape) != 1:
            raise _implicit_seed_error(t)
        gradient = 1.0
    with _grad_mode(create_graph):
        plain = not create_graph and type(gradient) in (float, int) and plan.is_plain()
        got = plan.run([_shared_seed(t, gradient) if plain else _seed_like(t, gradient)])
        _accumulate([x for x, _ in got.values()], [g for _, g in got.values()],
                    not create_graph)
    if not (create_graph if retain_graph is None else retain_graph):
        plan.free()


def _plain_backward(t: Tensor, gradient: float | int | None, retain_graph: bool | None,
                    stop: Callable[[Tensor], bool]) -> bool:
    """``backward()`` of a training step: no split point (no
    ``pf.autograd.Function``, no hook or ``retain_grad`` on a non-leaf, no
    anomaly detection), a number or no seed, no ``create_graph``. Does what
    ``_Reverse`` does for one traced stretch (one vjp node) without its
    bookkeeping; False, having done nothing, when the graph has a split point
    (the general path then runs)."""
    if _split_imperative(t):
        return False
    fn = FuncGraph.of_leaves([t], stop)
    leaves = fn.sub.leaves
    for x in leaves:
        ag = x._ag
        if (ag is None or not ag.requires_grad) and \
                (x._node is not None or x._hist is not None) and _split_imperative(x):
            return False  # a stretch ends at a split point: _Reverse's business
        # (a leaf made by no op, the data x and y of a step, is none: no call)
    _check_versions(fn.sub.nodes, None, (t,))
    arg_pos = fn.arg_pos
    if not arg_pos:
        raise _no_grad_fn_error()
    if gradient is None:
        if math.prod(t.shape) != 1:
            raise _implicit_seed_error(t)
        gradient = 1.0
    targets = [leaves[i] for i in arg_pos]
    _check_differentiable(targets, "vjp")
    # record_vjp: the seed only the vjp reads (``_shared_seed``)
    inputs, attrs = (*leaves, _shared_seed(t, gradient)), {"fn": fn, "wrt": arg_pos}
    metas = [x._ag for x in targets]
    if not CONFIG.eager and GRAD_MODE.enabled and _first_grads(metas):
        # A training step (no .grad yet, no hook, each leaf once: a leaf updated
        # in place and read in both states has two states sharing one meta,
        # whose gradients _store_grad sums): nothing here runs user code or
        # records another op, so the vjp is recorded with grad mode as it is and
        # then marked as recorded under no_grad (what OpNode.__init__ does with
        # grad off), without switching the thread's grad mode (1.7 us).
        outs = record(VJP_OP, inputs, attrs)
        node = outs[0]._node
        node.nograd, node.rg = True, False
        for x, g in zip(targets, outs[len(fn.sub.outputs):]):
            _store_grad(x, g, True)  # a first gradient: no hook, nothing to sum
    else:
        mode = GRAD_MODE
        enabled, mode.enabled = mode.enabled, False
        try:
            grads = record(VJP_OP, inputs, attrs)[len(fn.sub.outputs):]
            _accumulate(targets, grads, True)
        finally:
            mode.enabled = enabled
    if not retain_graph:  # (None: create_graph's default, False here)
        for n in fn.sub.nodes:
            n.freed = True
    return True


def _first_grads(metas: list[AutogradMeta]) -> bool:
    """Each meta once, with no ``.grad`` yet and no hook (``_plain_backward``'s
    training step; a loop, not a set and a generator: it runs every step)."""
    seen: set[int] = set()
    for ag in metas:
        if ag.grad is not None or ag.hooks or ag.post_hooks or id(ag) in seen:
            return False
        seen.add(id(ag))
    return True


def _check_versions(nodes: Sequence[OpNode], target_ids: set[int] | None,
                    outs: Sequence[Tensor] = ()) -> None:
    """PyTorch's error: an op of the graph (the ops computing ``outs``) read
    a tensor that was modified in place afterwards (by another op than the
    update itself), or its result, saved by torch, was."""
    if not MUTATIONS[0] and not INFERENCE_TENSORS:
        return
    exempt: set[int] = set()
    if saved.has_composites():  # one torch op recorded as several: checked as that op
        for n in nodes:
            c = saved.composite_of(n)
            if c is not None:
                exempt |= c.nodes
                _check_composite(c)
    if saved.has_superseded():
        _check_results(nodes, outs)
    inf = bool(INFERENCE_TENSORS)
    no_reads, nondiff = ad.READS_NO_INPUT_VALUES, ad.NONDIFF  # (locals: the step's hot loop)
    for n in nodes:
        op = n.op
        if op in no_reads or op in nondiff or id(n) in exempt:
            continue  # (a comparison's mask, s > 0, then s.masked_fill_(...): torch saves no s)
        ins, seq = n.inputs, n.seq
        for i, x in enumerate(ins):
            m = x._mut
            if (m is None or (m.seq < seq and type(x._view) is not Frozen)) and \
                    not (inf and is_inference(x)):
                continue  # (read_by's answer: no update of x since n read it)
            inference = inf and is_inference(x)
            if (n.op is _MUL or n.op is _MATMUL) and len(ins) == 2 and \
                    _is_constant(inputs_as_read(n)[1 - i], target_ids):
                continue  # x * 2 keeps only the 2 for backward (PyTorch saves no x); the
                # other factor as mul read it (x * x then x.fill_(c): x is constant now);
                # data @ w the same (torch saves a matmul operand only for the other's grad)
            if n.op is _DIV and i == 0 and _is_constant(inputs_as_read(n)[1], target_ids):
                continue  # x / 2: the same (PyTorch saves the divisor only)
            if n.op is _DIV and i == 1 and _is_number(inputs_as_read(n)[0]):
                continue  # 2 / x: PyTorch's rtruediv is reciprocal(x) * 2, which saves
                # its result, not x (pf's VJP reads x as div read it: the same number)
            if inference:
                raise _inference_saved_error()
            _, later = read_by(x, n)
            if later is not None and later.untracked:
                raise RuntimeError(
                    f"a value saved for backward ([{x.dtype.name} {list(x.shape)}], read by "
                    f"{n.op.name}) was modified in place, or given new data, through .data "
                    "afterwards: PyTorch "
                    "does not check this and differentiates with the new value; this "
                    "library does not do that. Modify it through .detach() under no_grad "
                    "before the op reads it, or clone it")
            if later is not None:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been "
                    f"modified by an inplace operation: [{x.dtype.name} "
                    f"{list(x.shape)}], read by {n.op.name}, is at version {x._version}; "
                    f"expected version {later.version - 1} instead")


_MUL, _DIV, _MATMUL, _POW = OPS["mul"], OPS["div"], OPS["matmul"], OPS["pow"]


def _inference_saved_error() -> RuntimeError:
    return RuntimeError("Inference tensors cannot be saved for backward. Please do not use "
                        "Tensors created in inference mode in computation tracked by "
                        "autograd. To work around this, you can make a clone to get a normal "
                        "tensor and use it in autograd.")


def _check_composite(c: saved.Composite) -> None:
    """A composite's arguments that torch's op saves, modified since (its own
    ops' reads are not checked: ``_check_versions``), or made under inference_mode."""
    for x in c.saved:
        if INFERENCE_TENSORS and is_inference(x):
            raise _inference_saved_error()
        _, later = read_by(x, c.node)
        if later is not None:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been "
                f"modified by an inplace operation: [{x.dtype.name} {list(x.shape)}], read "
                f"by {c.op}, is at version {x._version}; expected version "
                f"{later.version - 1} instead")


def _check_results(nodes: Sequence[OpNode], outs: Sequence[Tensor]) -> None:
    """PyTorch's error for a saved result: an op of the graph whose result
    torch saves for backward (``ad.SAVES_RESULTS``; a composite's when it
    says so) had that result modified in place afterwards
    (``y = x.exp(); y.add_(1)``)."""
    ids = {id(n) for n in nodes}
    for states in itertools.chain((outs,), map(inputs_as_read, nodes)):
        for s in states:
            sup = saved.superseded(s)
            if sup is None and type(s._view) is Frozen:  # (what an op read of a tensor
                base = s._view.source  # with views: its state then, as a frozen copy)
                if source(base) is source(s):
                    sup = saved.superseded(base)
            if sup is None:
                continue
            src = source(s)
            if src is None or id(src) not in ids or not _saves_result(src, s._index):
                continue
            c = saved.composite_of(src)
            name = c.op if c is not None else src.op.name
            if sup[1]:
                raise RuntimeError(
                    f"a result saved for backward ([{s.dtype.name} {list(s.shape)}], output "
                    f"{s._index} of {name}) was modified in place through .data afterwards: "
                    "PyTorch does not check this and differentiates with the new value; "
                    "this library does not do that. Modify a clone, or modify it before "
                    "the backward graph is recorded")
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been "
                f"modified by an inplace operation: [{s.dtype.name} {list(s.shape)}], "
                f"which is output {s._index} of {name}, is at version {sup[0]}; expected "
                f"version {raw_version(s)} instead")


def _saves_result(n: OpNode, index: int) -> bool:
    """PyTorch saves output ``index`` of ``n`` for its backward."""
    c = saved.composite_of(n)
    if c is not None:
        return c.result
    outs = ad.SAVES_RESULTS.get(n.op)
    if outs is None or index not in outs:
        return False
    return n.op is not _POW or not _is_number(inputs_as_read(n)[1])  # (x ** 2 saves x only)


def _is_number(t: Tensor) -> bool:
    """``t`` is a Python number made an operand (a 0-d ``constant`` op)."""
    n = source(t)
    return n is not None and n.op.name == "constant" and not t.shape


def _no_grad_fn_error() -> RuntimeError:
    return RuntimeError("element 0 of tensors does not require grad and does not have a "
                        "grad_fn")


def _implicit_seed_error(t: Tensor) -> RuntimeError:
    return RuntimeError(f"grad can be implicitly created only for scalar outputs (the "
                        f"tensor has shape {list(t.shape)}); pass gradient=")


def _is_constant(t: Tensor, target_ids: set[int] | None) -> bool:
    """No gradient flows to ``t``: in backward(), it does not require grad; in
    a transform (``target_ids``: its arguments), it is a number (``constant``)
    or a value that is not an argument and has no history."""
    if target_ids is None:
        return not requires_grad(t)
    n = source(t)
    return id(t) not in target_ids if n is None else n.op.name == "constant"


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


def _accumulate(targets: Sequence[Tensor], grads: Sequence[Tensor], in_place: bool,
                hooks: bool = True) -> None:
    """``.grad += g``; the new ``.grad`` is realized whenever its node is computed.
    A leaf the graph read in two states (read, updated in place under no_grad,
    read again) is one leaf to PyTorch: its gradients are summed first, so its
    hooks run once, on the sum (the post hooks get its current state)."""
    by_leaf: dict[int, list] = {}
    for x, g in zip(targets, grads):
        ag = x._ag
        e = by_leaf.get(id(x) if ag is None else id(ag))
        if e is None:
            by_leaf[id(x) if ag is None else id(ag)] = [x, g]
            continue
        if raw_version(x) > raw_version(e[0]):
            e[0] = x
        e[1] = e[1] + g
    for x, g in by_leaf.values():
        ag = _store_grad(x, _hooked(x, g) if hooks else g, in_place)
        if ag.post_hooks:
            for hook in list(ag.post_hooks.values()):
                if hook(x) is not None:  # a returned gradient would be ignored: torch raises
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _store_grad(x: Tensor, g: Tensor, in_place: bool = False) -> AutogradMeta:
    """``x.grad = g``, or the sum with the ``.grad`` there. Without
    ``create_graph`` a leaf's ``.grad`` is summed in place, as PyTorch's
    AccumulateGrad: a reference taken to ``p.grad`` earlier sees the sum."""
    ag = _meta(x)
    old = ag.grad
    if old is None:
        if in_place and FORWARD_DUALS:  # torch's AccumulateGrad stores a first gradient
            g = detach(g)  # without its forward-AD tangent (a sum into .grad keeps it)
        ag.grad = g
    elif in_place and old.shape == g.shape:
        with _grad_mode(False):
            g = old.add_(g)
    else:
        ag.grad = g = old + g
    node = g._node
    if node is not None:
        if node.keep is None:
            node.keep = []
        node.keep.append(weakref.ref(g))
    return ag


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
    if post and not is_leaf(t):
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
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
    """PyTorch's ``Tensor.register_hook``: ``hook(grad)`` runs on each
    gradient computed for ``t`` before it is accumulated into ``.grad`` (or
    returned by ``pf.autograd.grad``) or, for a non-leaf, before it flows on
    to the inputs (``_Reverse`` splits there); a tensor it returns replaces it."""
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
        if type(self.node) is CustomNode:
            return f"{self.node.ctx.name}Backward"
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
    while type(n) is CustomNode and n.ctx.history_of is not None:  # (autograd.KeepHistory)
        n = source(n.ctx.history_of)
    return GradFn(n) if n is not None and n.rg and t.dtype.is_floating_point else None


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
                  retain_graph: bool | None = None, create_graph: bool = False,
                  allow_unused: bool | None = None, is_grads_batched: bool = False,
                  materialize_grads: bool = False, *, _hook_non_leaves: bool = False
                  ) -> tuple:
    """Gradients of ``outputs`` w.r.t. ``inputs`` only; ``.grad`` is untouched.
    An unused input's gradient is None with ``allow_unused``, zeros with
    ``materialize_grads`` (which implies it), else an error (PyTorch)."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched=True is not supported; "
                                  "use pf.vmap over pf.vjp")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    allow_unused = bool(allow_unused) or materialize_grads
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
        raise _no_grad_fn_error()
    with _grad_mode(create_graph):
        plan = _Reverse(outs, ins, _stopped_imperative, _split_imperative, requires_grad, True)
        _refuse_inputs_inside_gradients(plan.nodes, ins)
        got = plan.run([_seed_like(o, s) for o, s in zip(outs, seeds_in)])
        if not allow_unused and len(got) != len(ins):
            missing = [i for i, x in enumerate(ins) if id(x) not in got]
            raise RuntimeError(f"input(s) {missing} were not used to compute the outputs "
                               "(pass allow_unused=True)")
        # a leaf's hooks run before its gradient is taken, a non-leaf's after (torch)
        grads = [None if id(x) not in got else _hooked(x, got[id(x)][1])
                 if x._ag is not None and x._ag.requires_grad
                 else plan.hooked_targets.get(id(x), got[id(x)][1]) if _hook_non_leaves
                 else got[id(x)][1] for x in ins]
    if not (create_graph if retain_graph is None else retain_graph):  # PyTorch's default
        plan.free()
    if materialize_grads:
        grads = [g if g is not None else _zeros_of(x) for x, g in zip(ins, grads)]
    return tuple(grads)


def _refuse_inputs_inside_gradients(nodes: Sequence[OpNode], ins: Sequence[Tensor]) -> None:
    """A non-leaf input that a gradient made with create_graph computed from
    inside (``h`` in ``g = grad(f(h), x, create_graph=True)``, then
    ``grad(g.sum(), h)``): torch differentiates its backward graph's use of h;
    here h is inside that gradient's function, not one of its inputs, so its
    gradient through it would be missing: refuse rather than give None or a
    part of it."""
    inner = {id(source(x)): i for i, x in enumerate(ins) if source(x) is not None}
    if not inner:
        return
    todo = [n for n in nodes if n.op is VJP_OP or n.op is JVP_OP]
    seen: set[int] = set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for m in n.attrs["fn"].sub.nodes:
            if id(m) in inner:
                raise NotImplementedError(
                    f"autograd.grad: input {inner[id(m)]} (a non-leaf tensor of shape "
                    f"{list(ins[inner[id(m)]].shape)}) was used inside a gradient computed "
                    "with create_graph=True; the gradient through that gradient's use of it "
                    "is not supported (differentiate with respect to a leaf, or detach it "
                    "and make it a leaf with requires_grad_())")
            if m.op is VJP_OP or m.op is JVP_OP:
                todo.append(m)


def _zeros_of(x: Tensor) -> Tensor:
    return record(OPS["constant"], (), {"value": splat_value(0, x.shape, x.dtype)})


def _tensor_backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Any = None) -> None:
    """``t.backward()`` (PyTorch)."""
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph,
             inputs=inputs)


Tensor.backward = _tensor_backward  # methods of core's Tensor, defined here (see core.py)
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.grad_fn = property(grad_fn)
