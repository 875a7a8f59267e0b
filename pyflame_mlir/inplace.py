"""In-place updates with PyTorch's semantics, recorded lazily: ``t.add_(x)``,
``t += x``, ``t[idx] = v`` compute the new value as a new promise and rebind
the same tensor object to it (``core.rebind``); ops recorded before read the
old state. Version counters (``t._version``) and PyTorch's errors: a leaf
that requires grad cannot be modified in place while grad is enabled.

At import this module sets the in-place methods on ``Tensor`` (as ``ops.py``
sets the others)."""

from __future__ import annotations

import builtins
import contextlib
import weakref
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from . import core, saved
from .autodiff import enable_grad
from .autograd import keep_history
from .core import (
    GRAD_MODE,
    INFERENCE_TENSORS,
    TRACE_ARGS,
    Aliases,
    AutogradMeta,
    Frozen,
    Tensor,
    ViewOf,
    detach,
    detached_alias,
    frozen,
    geometry,
    is_inference,
    is_trace_arg,
    raw_version,
    record,
    requires_grad,
    snapshot,
    splat_value,
    untracked_views,
)
from .creation import Generator, rand, randint, randn
from .creation import bernoulli as _bernoulli
from .dialects import OPS, ad
from .dialects.dtypes import TORCH_TYPE_NAMES, DType, bool_, can_cast, float64
from .indexing import (
    _put,
    index_add,
    index_copy,
    index_fill,
    index_put,
    is_advanced,
    masked_scatter,
    put,
    scatter,
    scatter_add,
    scatter_reduce,
    setitem_value,
    tril,
    triu,
)
from .ops import (
    as_tensor_arg,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    broadcast_to,
    clamp,
    clone,
    convert,
    div,
    getitem,
    reshape,
    scalar,
    squeeze,
    transpose,
    unsqueeze,
    where,
)
from .saved import note_superseded, note_written_into

_SAVES_RESULTS = ad.SAVES_RESULTS


def rebind(t: Tensor, old: Tensor, start: int, new: Tensor) -> None:
    """``core.rebind``, and the state ``old`` it replaced noted as modified in
    place (``saved``: PyTorch's error when an op saved it for backward)."""
    core.rebind(t, old, start, new)
    n = old._node
    if n is None:
        n = old._hist
    if n is not None and (n.op in _SAVES_RESULTS or saved.tracked()):
        note_superseded(t, old)


def _update(t: Tensor, make: Callable[[Tensor], Any], what: str) -> Tensor:
    """Rebind ``t`` to ``make(old)``, ``old`` holding its current state; a
    view writes the new value back into its root; the root's other live views
    are then recomputed from it."""
    if INFERENCE_TENSORS:
        _check_inference(t)
    ag = t._ag
    if GRAD_MODE.enabled and ((ag is not None and ag.requires_grad) or is_trace_arg(t)):
        raise _leaf_error(t, what)
    info = t._view
    if info is not None and id(t) not in _WRITING:
        core.check_handed(t, what)
        root = core.shared_root(t)
        if root is not None:
            return _update_shared(t, root, make, what)
    if type(info) is ViewOf:
        return _update_view(t, info, make, what)
    old, start = snapshot(t)
    if ag is not None and ag.detached:  # its state carries no gradient
        old._ag = AutogradMeta()
        old._ag.detached = True
    new = _new_value(t, old, make, what)
    if what in _OVERWRITES and GRAD_MODE.enabled and requires_grad(old):
        # PyTorch keeps the edge to the old value (its gradient: zeros), so the
        # ops before stay in the graph (their version checks, a zero .grad)
        new = where(True, new, old)
    keep = _keeps_history_under_no_grad(t, old)
    if keep:
        new = keep_history(old, detach(new), new)
    rebind(t, old, start, new)
    _attach(t, old, new)
    if info is not None:
        if ag is not None and ag.detached is False and type(info) is Aliases \
                and old._ag is not None and old._ag.detached:
            # t (detach_()ed) took a history: its views taken before are recomputed
            # from it (below), but their ``detached`` mark, from then, no longer holds
            for w in info.live():
                if w._view.detached:
                    _STALE_DETACHED[id(w)] = w
        _refresh(t, info, None, keep)
    return t


_WRITING: set[int] = set()  # the tensors ``_update_shared`` is updating


def _update_shared(t: Tensor, root: Tensor, make: Callable[[Tensor], Any], what: str
                   ) -> Tensor:
    """``_update`` of ``t``, the tensor ``root`` sharing memory with a numpy
    array or a view of it: the update reads the array's current values and is
    computed at once and written into the array, as PyTorch writes there (the
    user's array follows). In a ``pf.compile`` trace it stays lazy: the
    compiled call writes the array (``jit``)."""
    if not core.shared_array(root).flags.writeable:
        raise ValueError(f"{what}: the tensor ({list(t.shape)}) shares memory with a read-only "
                         f"numpy array (shape {list(root.shape)}: from_numpy/as_tensor/"
                         "frombuffer/from_dlpack of a read-only buffer); PyTorch's behaviour "
                         "is undefined there. Clone it first, or make the array writeable")
    core.sync_shared(root, True)  # (its state now: the array's values, in a private copy)
    _WRITING.add(id(t))
    try:
        _update(t, make, what)
    finally:
        _WRITING.discard(id(t))
    if core.shared_array(root) is not None:
        if GRAD_MODE.jit_depth:
            core.PENDING_WRITES.append(weakref.ref(root))
        else:
            core.write_back(root)
    return t


def _keeps_history_under_no_grad(t: Tensor, old: Tensor) -> bool:
    """An update under no_grad of a non-leaf with a history: PyTorch changes
    its value and keeps its ``grad_fn`` (``y = x * 2; with no_grad: y.add_(1)``
    differentiates through ``x * 2`` with y's new value); the new value alone,
    recorded under no_grad, would cut that history."""
    if GRAD_MODE.enabled:
        return False
    ag = t._ag
    if ag is not None and (ag.requires_grad or ag.detached):
        return False  # a leaf, or a detached tensor: no history to keep
    if requires_grad(old):
        return True
    return bool(GRAD_MODE.trace_depth) and _reads_trace_arg(old)


def _reads_trace_arg(t: Tensor) -> bool:
    """``t`` is computed (with gradients on) from an argument of a transform
    tracing now: a gradient may flow through it."""
    if not TRACE_ARGS:  # (pf.compile alone traces no argument: no walk)
        return False
    seen: set[int] = set()
    todo = [t]
    while todo:
        x = todo.pop()
        if is_trace_arg(x) or (type(x._view) is Frozen and is_trace_arg(x._view.source)):
            return True  # (a view op reads its parent's state: ``frozen``)
        ag = x._ag
        if ag is not None and (ag.detached or ag.requires_grad):
            continue
        n = x._node or x._hist
        if n is None or n.nograd or id(n) in seen:
            continue
        seen.add(id(n))
        todo += [i for i in n.inputs if isinstance(i, Tensor)]
        ctx = getattr(n, "ctx", None)  # a Function's output: what its forward read
        if ctx is not None:
            todo += [i for i in ctx.inputs if isinstance(i, Tensor)]
    return False


def _attach(t: Tensor, old: Tensor, new: Tensor) -> None:
    """A detached tensor updated in place with a value that may carry a
    gradient has that value's history from now on (PyTorch: ``y =
    x.detach(); y.mul_(w)`` makes y a non-leaf that gradients flow through to
    w, not into x's past: ``old``, its state before, stays detached)."""
    ag = t._ag
    if ag is not None and ag.detached and _may_carry_gradient(new, old, forward=True):
        ag.detached = False  # (under no_grad its value is recorded under no_grad: reverse
        # mode stops there; forward mode, which no_grad does not stop, goes on, as torch's)


def _may_carry_gradient(new: Tensor, old: Tensor, forward: bool = False) -> bool:
    """``new`` requires grad, or a functional transform traces and ``new`` reads
    more than ``old`` and constants (a traced argument may be among what it
    reads). A ``pf.compile`` trace alone does not count: it differentiates
    nothing (``p.data.sub_(lr * p.grad)`` in a compiled step, as uncompiled).
    Under no_grad only a tangent may flow (``forward``: that counts)."""
    if requires_grad(new):
        return True
    if GRAD_MODE.trace_depth <= GRAD_MODE.jit_depth or not (GRAD_MODE.enabled or forward):
        return False
    n = new._node or new._hist  # (eager mode: realized, its history kept in the trace)
    if n is None:
        return False
    return not all(x is old or not (x._node or x._hist or requires_grad(x))
                   or not (x._node or x._hist).inputs for x in n.inputs)


def _check_inference(t: Tensor) -> None:
    """PyTorch's refusal: an inference tensor (made under inference_mode, or
    a view of one) updated in place outside inference_mode."""
    if not GRAD_MODE.inference and is_inference(t):
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")


def _leaf_error(t: Tensor, what: str) -> RuntimeError:
    if is_trace_arg(t):
        return RuntimeError(f"{what}: an argument of a function being transformed (pf.grad, "
                            "vjp, jvp, jacrev, vmap...) is being used in an in-place "
                            "operation: under differentiation it is a leaf that requires grad "
                            "(torch.func refuses it too), and vmap traces f once for the "
                            "whole batch; update a copy (x = x.clone()) instead")
    return RuntimeError(f"{what}: a leaf Variable that requires grad is being used in "
                        "an in-place operation (wrap the update in pf.no_grad())")


def _new_value(t: Tensor, old: Tensor, make: Callable[[Tensor], Any], what: str) -> Tensor:
    """``make(old)`` broadcast and cast to ``t``'s shape and dtype (PyTorch)."""
    new = as_tensor_arg(make(old))
    nag = new._ag
    if nag is not None and nag.requires_grad and new._node is None and GRAD_MODE.enabled:
        # a leaf that requires grad (``buf.copy_(param)``): ``t`` takes its value
        # through an op that reads it, so gradients reach the leaf (rebind copies
        # the value, not the leaf's identity)
        new = clone(new)
    if new.shape != t.shape:
        if new.ndim > t.ndim or broadcast_shape(new.shape, t.shape) != t.shape:
            raise RuntimeError(f"{what}: output with shape {list(t.shape)} doesn't match the "
                               f"broadcast shape {list(new.shape)}")
        new = broadcast_to(new, t.shape)
    if new.dtype is not t.dtype:
        if what not in _ASSIGNMENTS and not can_cast(new.dtype, t.dtype):
            raise RuntimeError(f"{what}: result type {_torch_name(new.dtype)} can't be cast "
                               f"to the desired output type {_torch_name(t.dtype)}")
        new = convert(new, t.dtype)  # PyTorch casts the result to the tensor's dtype
    return new


# in-place ops that write given values or draws (cast to the tensor's dtype, as PyTorch's);
# every other in-place op computes a result that must be castable without loss of kind
_ASSIGNMENTS = frozenset(("fill_", "copy_", "masked_fill_", "setitem", "index_put_",
                          "index_fill_", "random_", "normal_", "uniform_", "exponential_",
                          "log_normal_", "cauchy_", "geometric_", "bernoulli_"))


# in-place ops whose new value does not read the old one
_OVERWRITES = frozenset(("fill_", "copy_", "random_", "normal_", "uniform_", "exponential_",
                         "log_normal_", "cauchy_", "geometric_", "bernoulli_"))


def _torch_name(d: DType) -> str:
    return TORCH_TYPE_NAMES.get(d, d.name)


def _update_view(v: Tensor, info: ViewOf, make: Callable[[Tensor], Any], what: str) -> Tensor:
    """An in-place update of a view: out of place on the view, then written
    back into the root (the root's version goes up: the view shares it)."""
    if INFERENCE_TENSORS:
        _check_inference(v)
    root = info.root
    detached = info.detached or (v._ag is not None and v._ag.detached)
    rag = root._ag
    if GRAD_MODE.enabled and is_trace_arg(root):
        raise _leaf_error(root, f"{what} (on a view of it)")
    if GRAD_MODE.enabled and not detached and rag is not None and rag.requires_grad:
        raise RuntimeError(f"{what}: a view of a leaf Variable that requires grad is being "
                           "used in an in-place operation (wrap the update in pf.no_grad())")
    if _STALE_DETACHED.get(id(v)) is v:
        raise RuntimeError(f"{what}: unsupported: an in-place update of a view taken from a "
                           "detached tensor that has since taken a value that requires grad "
                           "in place (whether the view still stops gradients is not kept); "
                           "take the view again after the update")
    if info.overlaps():
        raise RuntimeError(f"{what}: unsupported operation: more than one element of the "
                           f"written-to tensor (a view of shape {list(v.shape)} of a tensor "
                           f"of shape {list(root.shape)}) refers to a single memory "
                           "location. Please clone() the tensor before performing the "
                           "operation.")
    # written through a detached alias: the root's value changes, its history
    # stays (PyTorch); a leaf has none to keep, a traced tensor has one to keep
    keeps_history = (detached or not GRAD_MODE.enabled) and \
        not (rag is not None and (rag.requires_grad or rag.detached)) and (
            requires_grad(root) or GRAD_MODE.trace_depth > 0)
    old_root, root_start = snapshot(root)
    old, start = snapshot(v)
    if detached and (v._ag is None or v._ag.detached or info.replay is not detached_alias):
        # its state carries no gradient (it shares its node with the root), unless
        # an update gave the alias a history of its own (``_attach``)
        old._ag = AutogradMeta()
        old._ag.detached = True
    if old._value is not None and old._value is old_root._value and old_root._hist is None:
        # the alias holds the root's value itself, a leaf value (``p.data`` of a computed
        # parameter): a frozen state of the root's, so that a graph reading both has one
        # input for it (and a parameter updated through ``p.data`` stays a resident leaf)
        old._view = Frozen(old_root)
    new = _new_value(v, old, make, what)
    if _keeps_history_under_no_grad(v, old):
        new = keep_history(old, detach(new), new)
    if detached and (info.replay is not detached_alias or (rag is not None and rag.requires_grad)
                     ) and _may_carry_gradient(new, old):
        # PyTorch gives the alias a history of its own while it shares storage with
        # the root; here a view of a detached alias, or one of a leaf, writes back
        # into the root without one: refuse rather than drop the gradient
        raise RuntimeError(f"{what}: unsupported: writing a value that requires grad into "
                           "a view of a detached tensor, or into a detached alias of a leaf "
                           "that requires grad (the gradient through it would be lost); "
                           "clone() the detached tensor first")
    if info.multi is not None and GRAD_MODE.enabled and (requires_grad(root)
                                                         or new.requires_grad):
        name, i = info.multi
        raise RuntimeError(f"{what}: Output {i} of {name} is a view and is being modified "
                           "inplace. This view is the output of a function that returns "
                           "multiple views. Such functions do not allow the output views to "
                           "be modified inplace. You should replace the inplace operation by "
                           "an out-of-place one.")
    with untracked_views():
        n = root.numel()
        if info.covers(n):  # all of it: the old root still reaches the graph (PyTorch
            # gives it a zero gradient), and it keeps the old state for earlier readers
            new_root = where(True, reshape(new, root.shape), old_root)
        else:
            new_root = _put(old_root, info.positions(), new)
        if keeps_history:
            new_root = keep_history(old_root, detach(new_root),
                                    None if detached else new_root)
        elif detached and new_root.requires_grad:  # (the root is a leaf: a value for it)
            new_root = detach(new_root)
    # one update of the version counter ``v`` shares (its root's, mostly)
    counter = info.counter
    counted, root_count = raw_version(counter), raw_version(root)
    rebind(root, old_root, root_start, new_root)
    rebind(v, old, start, new)
    note_written_into(root, new)
    _attach(v, old, new)
    if info.replay is detached_alias and v._ag is not None and not v._ag.detached:
        _ATTACHED_ROOTS[id(root)] = root  # an alias of it has a history of its own
    _refresh(root, root._view, v, keeps_history and not GRAD_MODE.enabled)
    root._mut.version = root_count
    root._mut.untracked = counter is not root  # (``x.data``: x's counter is not shared)
    counter._mut.version = counted + 1
    return v


# roots a detached alias of which took a value that requires grad in place (by id):
# their views through detached aliases can no longer be recomputed from the root
_ATTACHED_ROOTS: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
# views taken from a detached tensor (``y.detach_(); v = y[0]``) before an update gave
# it a history (by id): their ``ViewOf.detached`` is stale, so updating them raises
_STALE_DETACHED: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()


def _refresh(root: Tensor, aliases: Any, written: Tensor | None, kept: bool = False,
             skip: Collection[int] = ()) -> None:
    """Recompute every live view of ``root`` (but ``written``, which holds its
    new value already, and those whose id is in ``skip``) from the root's new
    state (``kept``: an update under no_grad kept the root's history; views
    taken with grad on keep theirs)."""
    if type(aliases) is not Aliases:
        return
    with untracked_views():
        for w in aliases.live():
            if w is written or id(w) in skip:
                continue
            info = w._view
            r = frozen(root)
            if r.shape != info.root_shape:
                r = reshape(r, info.root_shape)
            if info.detached and info.replay is not detached_alias \
                    and _ATTACHED_ROOTS.get(id(root)) is root:
                # a view of a detached alias that an update gave a history of its own:
                # PyTorch recomputes the view from the alias (with its history); here
                # it would be recomputed from the root, without it
                raise RuntimeError(
                    "unsupported: a view of a detached alias (x.detach()[i]) would be "
                    "recomputed after an in-place update gave the alias a value that "
                    "requires grad (the view would lose that gradient); clone() the "
                    "detached tensor before updating it")
            old, start = snapshot(w)
            wag = w._ag
            if wag is not None and wag.detached:  # its state before carries no gradient
                # either (readers of it hold ``old``, which shares the root's node)
                old._ag = AutogradMeta()
                old._ag.detached = True
            count = raw_version(w)
            n = old._node or old._hist
            if kept and n is not None and not n.nograd and (
                    wag is None or not (wag.detached or wag.requires_grad)):
                # an update under no_grad: the view keeps its history, as the root
                # does (``_keeps_history_under_no_grad``), over the new value
                with enable_grad():
                    new = info.replay(r)
            else:
                new = info.replay(r)
            rebind(w, old, start, new)
            if info.replay is detached_alias and w._ag is not None \
                    and not (w._ag.detached or w._ag.requires_grad):
                # an ``_attach``ed alias: PyTorch keeps its history under the new value
                raise RuntimeError(
                    "unsupported: a tensor was modified in place while a detached alias "
                    "of it (x.detach()) holds a value that requires grad from an in-place "
                    "update of its own (the alias would keep a gradient for a value it no "
                    "longer has); clone() the detached tensor before updating it")
            w._mut.version = count  # (recomputed, not updated: its counter did not change)


def refresh_views(root: Tensor, aliases: Any, skip: Collection[int] = ()) -> None:
    """``root``'s live views (but those whose id is in ``skip``) recomputed from
    its new state: for a compiled replay that rebound ``root`` (``jit``)."""
    _refresh(root, aliases, None, skip=skip)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def add_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    if type(other) is Tensor and alpha == 1 and self._view is None and other.dtype is self.dtype \
            and other.shape == self.shape and self.dtype is not bool_:
        return _update_same(self, _ADD, other, "add_")
    return _update(self, lambda o: o + (other if alpha == 1 else other * alpha), "add_")


def sub_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    if type(other) is Tensor and alpha == 1 and self._view is None and other.dtype is self.dtype \
            and other.shape == self.shape and self.dtype is not bool_:
        return _update_same(self, _SUB, other, "sub_")
    return _update(self, lambda o: o - (other if alpha == 1 else other * alpha), "sub_")


_ADD, _SUB = OPS["add"], OPS["sub"]


def _update_same(t: Tensor, op: Any, other: Tensor, what: str) -> Tensor:
    """``_update(t, lambda o: op(o, other), what)`` for a tensor that is no
    view and has none, and an operand of its shape and dtype (``p -= lr * g``
    in a training step): the result needs no broadcast or cast, so the op is
    recorded directly (what ``ops``' wrapper records for two tensors of one
    non-bool dtype)."""
    if INFERENCE_TENSORS:
        _check_inference(t)
    ag = t._ag
    if GRAD_MODE.enabled and ((ag is not None and ag.requires_grad) or is_trace_arg(t)):
        raise _leaf_error(t, what)
    old, start = snapshot(t)
    if ag is not None and ag.detached:  # its state carries no gradient
        old._ag = AutogradMeta()
        old._ag.detached = True
    new = record(op, (old, other), {})
    if (ag is None or not (ag.requires_grad or ag.detached)) and \
            _keeps_history_under_no_grad(t, old):  # (a leaf keeps none: no call)
        new = keep_history(old, detach(new), new)
    core.rebind(t, old, start, new)  # (``rebind``, inlined: the training step's path)
    n = old._node or old._hist
    if n is not None and (n.op in _SAVES_RESULTS or saved.tracked()):
        note_superseded(t, old)
    _attach(t, old, new)
    return t


def mul_(self: Tensor, other: Any) -> Tensor:
    return _update(self, lambda o: o * other, "mul_")


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is None:
        return _update(self, lambda o: o / other, "div_")
    return _update(self, lambda o: div(o, other, rounding_mode=rounding_mode), "div_")


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return _update(self, lambda o: value, "fill_")
    return _update(self, lambda o: record(OPS["constant"], (), {"value": splat_value(
        value, self.shape, self.dtype)}), "fill_")


def copy_(self: Tensor, src: Any) -> Tensor:
    return _update(self, lambda o: src, "copy_")


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return _update(self, lambda o: clamp(o, min, max), "clamp_")


def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    return _update(self, lambda o: where(mask, value, o), "masked_fill_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    return _update(self, lambda o: randn(*o.shape, dtype=o.dtype, generator=generator) * std
                   + mean, "normal_")


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    return _update(self, lambda o: rand(*o.shape, dtype=o.dtype, generator=generator) * (b - a)
                   + a, "uniform_")


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``. Basic indexes (ints, slices, None, Ellipsis):
    ``where(region, value placed by padding, t)``, differentiable in both;
    advanced ones: ``indexing.setitem_value`` (a scatter at host positions).
    A Python number is made a constant of ``t``'s dtype (as PyTorch casts it;
    not one of the default dtype first: ``x[0] = 0.3`` in float64 is 0.3)."""
    if type(value) in (bool, int, float):
        value = scalar(value, self.dtype)
    if is_advanced(index):
        _update(self, lambda o: setitem_value(o, index, value), "setitem")
        return
    probe = np.zeros(self.shape, dtype=bool)
    try:
        probe[index] = True
    except (IndexError, TypeError) as e:
        raise IndexError(f"t[{index!r}] = ...: {e}") from None
    getitem(Tensor._leaf(np.zeros(self.shape, dtype=np.float32)), index)  # same checks
    region = Tensor._leaf(probe)
    if not self.ndim:  # (a 0-d tensor: all of it)
        _update(self, lambda o: where(region, value, o), "setitem")
        return
    items = np.nonzero(probe)
    if not items[0].size:  # nothing written; PyTorch still counts an update
        _update(self, lambda o: o, "setitem")
        return
    lo = [int(i.min()) for i in items]
    hi = [int(i.max()) for i in items]
    strides = []
    for i in items:
        u = np.unique(i)
        strides.append(int(u[1] - u[0]) if len(u) > 1 else 1)
    counts = [(b - a) // k + 1 for a, b, k in zip(lo, hi, strides)]
    v = as_tensor_arg(value)
    sel_shape = getitem(Tensor._leaf(np.zeros(self.shape, dtype=np.float32)), index).shape
    if v.shape != sel_shape:
        v = broadcast_to(v, sel_shape)
    v = reshape(v, tuple(counts))
    if v.dtype is not self.dtype:
        v = convert(v, self.dtype)
    placed = v
    if lo != [0] * self.ndim or counts != list(self.shape) or \
            builtins.any(k != 1 for k in strides):
        placed = _record_pad(v, lo, [s - 1 - b for s, b in zip(self.shape, hi)],
                             [k - 1 for k in strides])
    _update(self, lambda o: where(region, placed, o), "setitem")


def _record_pad(v: Tensor, low: list[int], high: list[int], interior: list[int]) -> Tensor:
    return record(OPS["pad"], (v,), {"low": tuple(low), "high": tuple(high),
                                     "interior": tuple(interior)})


# ---- in-place changes of shape (PyTorch's ``squeeze_``, ``t_``...) and ``.data`` ----

def _reshape_in_place(t: Tensor, make: Callable[[Tensor], Tensor], what: str,
                      keeps_order: bool) -> Tensor:
    """Give ``t`` the shape (and, for a view, the geometry) of the view
    ``make(t)``. Its data does not change; its version counter counts one (PyTorch)."""
    if INFERENCE_TENSORS:
        _check_inference(t)
    info = t._view
    ag = t._ag
    if GRAD_MODE.enabled and ((ag is not None and ag.requires_grad) or is_trace_arg(t)):
        raise _leaf_error(t, what)  # (PyTorch: an in-place op on a leaf, as any)
    if GRAD_MODE.enabled and type(info) is ViewOf and not info.detached and \
            not (ag is not None and ag.detached) and info.root._ag is not None and \
            info.root._ag.requires_grad:
        raise RuntimeError(f"{what}: a view of a leaf Variable that requires grad is being "
                           "used in an in-place operation (wrap the update in pf.no_grad())")
    # under no_grad a tensor with a history keeps it (PyTorch: a view op changes no
    # value; recorded under no_grad here, it would cut the gradient through t)
    keep = _keeps_history_under_no_grad(t, t)
    if type(info) is ViewOf:
        with enable_grad() if keep else contextlib.nullcontext():
            new = make(t)  # a view of the same root, with its geometry
        new_info = new._view
    else:
        if type(info) is Aliases and not keeps_order and info.live():
            raise NotImplementedError(f"{what} of a tensor that has live views (a "
                                      f"{list(t.shape)} tensor): take the views afterwards, "
                                      "or use the out-of-place form")
        with untracked_views(), enable_grad() if keep else contextlib.nullcontext():
            new = make(t)
        new_info = info
    if new is t:
        return t
    core.check_handed(t, what)
    if core.shared_root(t) is not None:
        raise NotImplementedError(f"{what} of a tensor sharing memory with a numpy array (a "
                                  f"{list(t.shape)} tensor, or a view of one): use the "
                                  "out-of-place form (a view of it shares the memory too), "
                                  "or clone() first")
    old, start = snapshot(t)
    rebind(t, old, start, new)
    t.shape, t._view = new.shape, new_info
    if type(new_info) is ViewOf and new_info.counter is not t:
        t._mut.version -= 1
        _bump(new_info.counter)  # the version counter is shared: PyTorch counts one
    return t


def _bump(t: Tensor) -> None:
    old, start = snapshot(t)
    rebind(t, old, start, old)
    note_superseded(t, t)  # (its state is still the op's result, at a new version)


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    return _reshape_in_place(self, lambda o: squeeze(o, dim), "squeeze_", True)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return _reshape_in_place(self, lambda o: unsqueeze(o, dim), "unsqueeze_", True)


def t_(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _reshape_in_place(self, lambda o: transpose(o, 0, 1) if o.ndim == 2 else o, "t_",
                             self.ndim < 2)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _reshape_in_place(self, lambda o: transpose(o, dim0, dim1), "transpose_",
                             self.ndim < 2)


def _get_data(self: Tensor) -> Tensor:
    """``x.data``: ``x`` detached, sharing its storage (a view) but not its
    version counter (PyTorch: why ``.data`` escapes the saved-tensor check)."""
    d = detach(self)
    if type(d._view) is ViewOf:
        d._view.counter = d
    return d


def _set_data(self: Tensor, value: Tensor) -> None:
    """``x.data = y``: ``x`` keeps its autograd state (a parameter stays the
    same leaf) and from now on shares ``y``'s storage; views taken of ``x``
    before keep the old one. Its version counter is its own (PyTorch's)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"x.data = ...: assigned data must be a Tensor, got "
                        f"{type(value).__name__}")
    core.unshare(self)  # (its memory is ``value``'s from now on)
    info = self._view
    old, start = snapshot(self)
    if type(info) is Aliases:  # the old views stay views of the old state
        old._view = info
        for w in info.live():
            w._view.root = old
    elif type(info) is ViewOf:  # no longer a view of its old root
        aliases = info.root._view
        aliases.refs = [r for r in aliases.refs if r() is not self]
    version = self._version
    if _hands_over(self, value):
        # ``x`` stays a root holding ``y``'s state (no op), and ``y`` becomes what
        # ``x.data`` is, a detached alias of ``x`` with its own version counter: the
        # same sharing, but a parameter assigned new data stays a leaf of its own
        # (the graph updates it in place, a stateful backend keeps it resident)
        self._view = None
        core.rebind(self, old, start, detached_alias(value))
        self._mut.untracked = True  # (as below: not counted)
        self.shape, self.dtype = value.shape, value.dtype
        self._mut.version = version
        if value._ag is None:
            value._ag = AutogradMeta()
        value._ag.detached = True
        aliases = self._view = Aliases()
        aliases.add(value)
        value._view = alias = ViewOf(self, detached_alias, *geometry(self), value)
        alias.detached = True
        return
    new = _copy_without_history(value)
    vi = value._view
    if type(vi) is ViewOf:
        root, base = vi.root, vi.replay

        def replay(r: Tensor) -> Tensor:
            return _copy_without_history(base(r))
    else:
        root, replay = value, _copy_without_history
        if vi is None:
            value._view = Aliases()
    sizes, strides, offset = geometry(value)
    self._view = None
    core.rebind(self, old, start, new)
    self._mut.untracked = True  # (not counted: PyTorch's ops that saved x read the new data)
    self.shape, self.dtype = new.shape, new.dtype
    self._view = ViewOf(root, replay, sizes, strides, offset, self)
    root._view.add(self)
    self._mut.version = version


def set_(self: Tensor, source: Tensor | None = None, *args: Any, **kwargs: Any) -> Tensor:
    """PyTorch's ``set_(source)``: ``self`` shares ``source``'s storage (and
    takes its shape) from now on, as ``self.data = source``, but counted as an
    in-place update; ``set_()`` makes it empty. Views taken before keep the
    old storage. PyTorch cannot differentiate it (``derivative for set_ is not
    implemented``): refused here where it records a graph, at the call."""
    if args or kwargs:
        raise NotImplementedError("set_(source, storage_offset, size, stride) and set_ of a "
                                  "storage: only set_(tensor) and set_() are supported")
    if INFERENCE_TENSORS:
        _check_inference(self)
    ag = self._ag
    if GRAD_MODE.enabled and ((ag is not None and ag.requires_grad) or is_trace_arg(self)):
        raise _leaf_error(self, "set_")
    if source is None:
        source = Tensor._leaf(np.empty((0,), dtype=self.dtype.np), self.dtype)
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be a Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {source.dtype.name} to a tensor of "
                           f"type {self.dtype.name}")
    if GRAD_MODE.enabled and (requires_grad(self) or requires_grad(source)):
        raise RuntimeError("set_: derivative for set_ is not implemented (PyTorch records it "
                           "and fails at the backward); call it under no_grad, or assign "
                           "x.data = source")
    version = self._version
    _set_data(self, source)
    self._mut.untracked = False  # (an in-place update that counts, unlike .data's)
    self._mut.version = version + 1
    return self


def _hands_over(x: Tensor, y: Tensor) -> bool:
    """Can ``x.data = y`` make ``y`` the view (of ``x``) rather than ``x`` one of
    ``y``? ``y``, not ``x``, is no view and has none live, carries no gradient
    (a detached alias has no history to keep), and no transform traces it."""
    if y is x or GRAD_MODE.trace_depth or is_trace_arg(y) or requires_grad(y):
        return False
    v = y._view
    return v is None or (type(v) is Aliases and not v.live())


def _copy_without_history(x: Tensor) -> Tensor:
    enabled = GRAD_MODE.enabled
    GRAD_MODE.enabled = False  # the data carries no gradient history
    try:
        return clone(x)
    finally:
        GRAD_MODE.enabled = enabled


def _iop(name: str):
    method = {"add": add_, "sub": sub_, "mul": mul_, "div": div_}[name]

    def iop(self: Tensor, other: Any) -> Tensor:
        return method(self, other)
    iop.__name__ = f"__i{name}__"
    return iop


for _f in (add_, sub_, mul_, div_, zero_, fill_, copy_, clamp_, masked_fill_, normal_,
           uniform_, squeeze_, unsqueeze_, t_, transpose_, set_):
    setattr(Tensor, _f.__name__, _f)
Tensor.data = property(_get_data, _set_data)  # type: ignore[attr-defined]
Tensor.__setitem__ = setitem
Tensor.__iadd__ = _iop("add")
Tensor.__isub__ = _iop("sub")
Tensor.__imul__ = _iop("mul")
Tensor.__itruediv__ = _iop("div")


# ---- the in-place forms of the indexing setters (pyflame_mlir/indexing.py) ----

def _in_place(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return _update(self, lambda o: fn(o, *args, **kwargs), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {fn.__name__} (PyTorch's ``Tensor.{name}``)."
    return method


for _fn in (index_put, index_add, index_copy, index_fill, scatter, scatter_add, scatter_reduce,
            masked_scatter, tril, triu, put):
    setattr(Tensor, f"{_fn.__name__}_", _in_place(_fn, f"{_fn.__name__}_"))


# ---- issue 14 (s10-surface14): the bitwise in-place forms (``x <<= 2``, ``x &= m``) ----

def _bitwise_in_place(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        return _update(self, lambda o: fn(o, other), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {fn.__name__} (PyTorch's ``Tensor.{name}``)."
    return method


for _fn, _dunder in ((bitwise_left_shift, "ilshift"), (bitwise_right_shift, "irshift"),
                     (bitwise_and, "iand"), (bitwise_or, "ior"), (bitwise_xor, "ixor")):
    setattr(Tensor, f"{_fn.__name__}_", _bitwise_in_place(_fn, f"{_fn.__name__}_"))
    setattr(Tensor, f"__{_dunder}__", _bitwise_in_place(_fn, f"__{_dunder}__"))


# ---- issue 14 (s10-surface14): torch's other in-place samplers and fills ----

def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None
                 ) -> Tensor:
    """Exponential draws of rate ``lambd`` (``-log1p(-u) / lambd``)."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _update(self, lambda o: -(-rand(*o.shape, dtype=o.dtype, generator=generator))
                   .log1p() / lambd, "exponential_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _update(self, lambda o: (randn(*o.shape, dtype=o.dtype, generator=generator) * std
                                    + mean).exp(), "log_normal_")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    return _update(self, lambda o: ((rand(*o.shape, dtype=o.dtype, generator=generator) - 0.5)
                                    * np.pi).tan() * sigma + median, "cauchy_")


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Trials to the first success (1, 2, ...) with success probability ``p``."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    def make(o: Tensor) -> Tensor:
        u = rand(*o.shape, dtype=float64, generator=generator)
        return ((-u).log1p() / float(np.log1p(-p))).floor() + 1
    return _update(self, make, "geometric_")


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``p`` (a number or a tensor broadcast to self), else 0."""
    def make(o: Tensor) -> Tensor:
        probs = broadcast_to(convert(as_tensor_arg(p), float64), o.shape)
        return rand(*o.shape, dtype=float64, generator=generator) < probs
    return _update(self, make, "bernoulli_")


def random_(self: Tensor, *args: int, generator: Generator | None = None, **kwargs: Any
            ) -> Tensor:
    """``random_(to)`` / ``random_(from, to)``: integers in [from, to); with
    no bounds, [0, 2^mantissa] for floats and [0, max] for integers (torch)."""
    lo, hi = kwargs.pop("from", None), kwargs.pop("to", None)
    if kwargs:
        raise TypeError(f"random_: unexpected arguments {sorted(kwargs)}")
    if len(args) == 2:
        lo, hi = args
    elif len(args) == 1:
        lo, hi = (0, args[0]) if lo is None else (lo, args[0])
    lo = 0 if lo is None else lo
    if hi is None:
        dt = self.dtype
        hi = 2 ** (np.finfo(dt.np).nmant + 1) + 1 if dt.is_floating_point else \
            (2 if dt.is_bool else int(np.iinfo(dt.np).max))
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                           f">= to={hi}")
    return _update(self, lambda o: randint(lo, hi, o.shape, generator=generator), "random_")


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """torch's rule: the main diagonal of a 2-d tensor (every ``n + 1``-th
    row again when ``wrap`` and it is tall), of an n-d one with equal dims."""
    shape = self.shape
    if len(shape) < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    mask = np.zeros(shape, dtype=bool)
    if len(shape) == 2:
        m, n = shape
        flat = mask.reshape(-1)
        step = n + 1
        limit = m * n if wrap and m > n else min(m, n) * n
        flat[0:limit:step] = True
    else:
        idx = np.arange(shape[0])
        mask[(idx,) * len(shape)] = True
    keep = Tensor._leaf(mask)
    value = scalar(fill_value, self.dtype) if type(fill_value) in (bool, int, float) else \
        convert(as_tensor_arg(fill_value), self.dtype)
    return _update(self, lambda o: where(keep, value, o), "fill_diagonal_")


for _f in (exponential_, log_normal_, cauchy_, geometric_, bernoulli_, random_, fill_diagonal_):
    setattr(Tensor, _f.__name__, _f)
Tensor.swapaxes_ = Tensor.swapdims_ = transpose_  # type: ignore[attr-defined]
Tensor.bernoulli = _bernoulli  # type: ignore[attr-defined]
