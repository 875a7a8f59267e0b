"""The frontend core: the promise ``Tensor``, recorded ``OpNode``s, ``record``
and ``collect``, graphs and scopes, counters, configuration and grad mode.
Every other frontend module builds on this one; it imports nothing of the
frontend (as JAX's ``core.py``).

Recording an op (``record``) runs the op's shape rule and allocates one
``OpNode`` and its output Tensors: no IR, no hashing. ``collect`` walks the
needed subgraph once and writes the wiring of the cache key (a canonical
encoding of ops, attributes, shapes, dtypes and the wiring, never leaf data).

Two things the core does not know, filled in from above at import time:

* Tensor's operators and op methods (``x + y``, ``x.sum()``): ``ops.py`` sets
  them on the class from the op table (JAX's ``_set_tensor_method``), and
  ``autodiff.py`` sets ``backward``;
* how to compute a promise: the compile driver (``compiler.py``) installs its
  ``evaluate`` with ``install_evaluator``; ``realize`` calls it. That is the
  one registration slot here, so the core never imports the driver.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import struct
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .dialects.data import DenseValue
from .dialects.dtypes import FLOAT, INT, DType, default_float
from .dialects.dtypes import dtype as to_dtype
from .dialects.opdef import OpDef, Spec
from .tensor_str import add_suffixes, format_array

# ---- counters and configuration ----

@dataclass
class Counters:
    """Process-wide counters: tests use them to prove laziness and caching."""

    ops_recorded: int = 0
    evaluations: int = 0  # evaluate() calls that had something to compute
    compiles: int = 0
    executions: int = 0  # compiled graphs run
    ir_builds: int = 0

    def snapshot(self) -> dict[str, int]:
        return dict(self.__dict__)


COUNTERS = Counters()


@dataclass
class Config:
    eager: bool = os.environ.get("PYFLAME_EAGER", "") not in ("", "0")
    backend: str = os.environ.get("PYFLAME_BACKEND", "reference")
    pipeline: str | None = None  # None: the default pipeline of passes/
    optimize: bool = True
    # pf.autograd.set_detect_anomaly: record each op's Python stack (OpNode.trace)
    # and check every backward step for NaN (autodiff.backward)
    anomaly: bool = False


CONFIG = Config()


# How many threads have grad mode disabled now: while none has, ``record``
# knows grad is enabled without reading the thread-local flag.
_GRAD_OFF = [0]
# How many threads are in torch.inference_mode now (``_GradMode.inference``)
_INFER_ON = [0]
_STATE_LOCK = threading.Lock()


class _GradMode(threading.local):
    enabled: bool = True  # per thread, like PyTorch's grad mode

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "enabled":
            if name == "inference":  # (counted as grad-off threads are: ``_INFER_ON``)
                with _STATE_LOCK:
                    was, value = self.inference, bool(value)
                    super().__setattr__(name, value)
                    _INFER_ON[0] += (value and not was) - (was and not value)
                return
            super().__setattr__(name, value)
            return
        with _STATE_LOCK:  # (a thread that ends with grad disabled leaves the count up:
            was = self.enabled  # record then reads the flag, as it would anyway)
            value = bool(value)
            super().__setattr__(name, value)
            if was and not value:
                _GRAD_OFF[0] += 1
            elif value and not was:
                _GRAD_OFF[0] -= 1
    # how many functional transforms (grad, vjp, jvp, jacrev...) are tracing a
    # function on this thread: while one is, a realized tensor keeps its history
    trace_depth: int = 0
    # of those, the ``pf.compile`` traces: they know captured tensors by their
    # history, not by identity, so the views ops read are snapshotted there
    jit_depth: int = 0
    # tensors realized inside a trace that kept their history only because of it
    traced: list | None = None
    # torch.inference_mode is on (grad is then off too): what is made is an
    # inference tensor (``mark_inference``)
    inference: bool = False


GRAD_MODE = _GradMode()


# ---- computing promises (the compile driver's slot) ----

_evaluator: list[Callable[[Sequence[Tensor]], None]] = []


def install_evaluator(evaluate: Callable[[Sequence[Tensor]], None]) -> None:
    """Called once by the compile driver (``compiler.py``) at its import:
    ``realize`` computes promises with ``evaluate`` from then on. A slot
    filled from above instead of an import keeps the core below the driver."""
    _evaluator[:] = [evaluate]


# Observers of a traced call (pf.compile): ``observe("leaf", t, None)`` for a
# tensor made from host data, ``observe("rebind", t, old)`` for an in-place
# update of ``t`` (``old``: the state it replaced), ``observe("feed", t, fn)``
# for a 0-d leaf whose value ``fn()`` recomputes on each call (``host_scalar``),
# ``observe("effect", None, fn)`` for Python state a replay must advance too
# (``replay_effect``), ``observe("guard", None, (holder, key, value))`` for a
# Python value baked into the program (``guard_value``).
OBSERVERS: list[Callable[[str, Tensor | None, Any], None]] = []


def host_scalar(fn: Callable[[], float], dt: DType) -> Tensor:
    """A 0-d leaf holding ``fn()`` (a learning rate, a bias correction). Under
    a ``pf.compile`` trace it is a per-call input of the program: a replay
    calls ``fn`` again instead of baking the traced value in."""
    t = Tensor._leaf(np.asarray(fn(), dtype=dt.np))
    for observe in OBSERVERS:
        observe("feed", t, fn)
    return t


def replay_effect(fn: Callable[[], None]) -> None:
    """Under a ``pf.compile`` trace: ``fn`` (Python bookkeeping the traced call
    just did, e.g. a step counter) runs again on every replay, in call order
    with the ``host_scalar`` inputs. Does nothing outside a trace."""
    for observe in OBSERVERS:
        observe("effect", None, fn)


def guard_value(holder: dict, key: Any) -> None:
    """Under a ``pf.compile`` trace: the program bakes ``holder[key]`` in (a
    momentum, a weight decay), so a replay needs that same object there; when
    it is rebound the call traces again. Does nothing outside a trace."""
    for observe in OBSERVERS:
        observe("guard", None, (holder, key, holder.get(key)))

# Called with the tensors about to be computed: a transform tracing a
# function once for many values (vmap) raises there if they read its placeholders.
REALIZE_GUARDS: list[Callable[[Sequence[Tensor]], None]] = []


def realize(tensors: Sequence[Tensor]) -> None:
    """Compute every lazy tensor in ``tensors`` in one compiled graph (the
    installed ``compiler.evaluate``)."""
    for guard in REALIZE_GUARDS:
        guard(tensors)
    if not _evaluator:
        raise RuntimeError("no compile driver is installed: import pyflame_mlir (its "
                           "compiler module installs one) before evaluating tensors")
    _evaluator[0](tensors)


# ---- graphs and scopes ----

class Graph:
    """A recording scope. Tensors recorded while a graph is current count
    towards it; evaluation works on the recorded DAG whatever graph it is in."""

    _ids = 0

    def __init__(self, name: str | None = None):
        Graph._ids += 1
        self.id = Graph._ids
        self.name = name or f"graph{self.id}"
        self.ops_recorded = 0
        self.evaluations = 0

    def stats(self) -> dict[str, Any]:
        return {"name": self.name, "ops_recorded": self.ops_recorded,
                "evaluations": self.evaluations}

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, ops_recorded={self.ops_recorded})"


GRAPH = Graph("default")


class _ThreadState(threading.local):
    graph: Graph = GRAPH  # every thread starts recording into the default graph


_local = _ThreadState()


def current_graph() -> Graph:
    return _local.graph


def create_graph(name: str | None = None) -> Graph:
    return Graph(name)


# How many ``reuse_graph`` blocks are open, over all threads: while none is,
# every thread records into the default graph (``record`` counts there directly).
_SCOPES = [0]


@contextmanager
def reuse_graph(g: Graph) -> Iterator[Graph]:
    """Record into ``g`` for the duration of the block (this thread only)."""
    prev = _local.graph
    with _STATE_LOCK:
        _SCOPES[0] += 1
    _local.graph = g
    try:
        yield g
    finally:
        _local.graph = prev
        with _STATE_LOCK:
            _SCOPES[0] -= 1


@contextmanager
def graph_scope(name: str | None = None) -> Iterator[Graph]:
    """Record into a fresh graph for the duration of the block."""
    with reuse_graph(Graph(name)) as g:
        yield g


# ---- the promise tensor ----

class Size(tuple):
    """``t.shape`` and ``t.size()``, as PyTorch's ``torch.Size``: a tuple of
    ints (hash and equality a tuple's) whose slices, sums and repeats are Sizes."""

    __slots__ = ()

    def __getitem__(self, i):  # type: ignore[override]
        r = tuple.__getitem__(self, i)
        return Size(r) if type(i) is slice else r

    def __add__(self, other):  # type: ignore[override]
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):  # type: ignore[override]
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"pyflame.Size({list(self)})"


class _Size(int):
    """``t.size`` is the element count (numpy, JAX) and ``t.size()`` /
    ``t.size(dim)`` give the shape (PyTorch): both spellings work."""

    _shape: Size

    def __new__(cls, shape: Size) -> _Size:
        n = 1
        for d in shape:
            n *= d
        self = super().__new__(cls, n)
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None) -> Size | int:
        return self._shape if dim is None else self._shape[dim]


# ``repr(tensor)``'s numpy.array2string options (torch.set_printoptions sets them)
PRINT_OPTIONS: dict[str, Any] = {"precision": 4, "threshold": 1000, "edgeitems": 3}


class Tensor:
    """A lazy tensor. Either a *promise* (``_node`` is the op that will make
    it) or *realized* (``_value`` holds a numpy array and it is a leaf for
    evaluation). A realized tensor that a gradient may still need to go
    through keeps the op that made it in ``_hist`` (its *provenance*):
    evaluation never looks at it, tracing a function (autodiff) walks it."""

    # ``_view``: a ``ViewOf`` for a view, an ``Aliases`` for a tensor views were taken of;
    # ``_cell``: the state cell the ops that read the current state hold (or None)
    __slots__ = ("shape", "dtype", "_node", "_index", "_value", "_ag", "_hist", "_mut",
                 "_view", "_cell", "__weakref__")
    __array_priority__ = 1000  # numpy defers to our reflected operators

    shape: Size  # (set once, by _promise, _leaf, record: the shape rules' memo holds Sizes)
    dtype: DType

    @classmethod
    def _promise(cls, node: OpNode, index: int, shape: tuple[int, ...], dt: DType) -> Tensor:
        t = object.__new__(cls)
        if type(shape) is not Size:
            shape = Size(shape)
        t.shape, t.dtype, t._node, t._index, t._value, t._ag = shape, dt, node, index, None, None
        t._hist = t._mut = t._view = t._cell = None
        return t

    @classmethod
    def _leaf(cls, value: np.ndarray, dt: DType | None = None) -> Tensor:
        """A realized tensor of ``value`` (``dt``: its dtype, when known)."""
        t = object.__new__(cls)
        t.shape, t.dtype = Size(value.shape), to_dtype(value.dtype) if dt is None else dt
        t._node, t._index, t._value, t._ag, t._hist, t._mut = None, 0, value, None, None, None
        t._view = t._cell = None
        if OBSERVERS:
            for observe in OBSERVERS:
                observe("leaf", t, None)
        if _INFER_ON[0] and GRAD_MODE.inference:
            mark_inference((t,))
        return t

    def _realize(self, value: np.ndarray) -> None:
        if value.shape != self.shape or (value.dtype is not self.dtype.np
                                         and value.dtype != self.dtype.np):
            raise AssertionError(f"internal error: executor produced {value.shape} "
                                 f"{value.dtype} for {self.shape} {self.dtype.name}")
        node = self._node
        self._value = value
        self._node = None  # a leaf for evaluation from now on
        # Keep the history while something may differentiate through it: the
        # tensor requires grad (backward), or a transform is tracing (grad of
        # a function that prints). Otherwise drop it: memory stays bounded.
        if node.rg:
            if not node.freed:
                self._hist = node
        else:  # (no_grad included: it does not stop forward mode)
            mode = GRAD_MODE
            if mode.trace_depth:
                self._hist = node
                mode.traced.append(weakref.ref(self))

    # ---- metadata (never evaluates) ----
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> _Size:
        return _Size(self.shape)

    def numel(self) -> int:
        return int(self.size)

    def dim(self) -> int:
        return len(self.shape)

    @property
    def is_lazy(self) -> bool:
        return self._node is not None

    # ---- materialization ----
    def eval(self) -> Tensor:
        realize([self])
        return self

    def numpy(self) -> np.ndarray:
        """Its value. Called from outside pyflame, as ``torch.Tensor.numpy``:
        the array shares memory with the tensor from then on (``hand_out``)."""
        if outside_pyflame(sys._getframe(1)):
            return hand_out(self)
        return self._read()

    def _read(self) -> np.ndarray:
        # every value read (item, tolist, float, bool, np.asarray: all come here)
        # is reported to the REALIZE_GUARDS, a computed value or not (pf.compile
        # must not replay a program that read its argument's value)
        if self._view is not None:
            sync_state(self)  # (memory shared with numpy: its current values)
        if self._node is not None or REALIZE_GUARDS:
            realize([self])
        v = self._value
        if type(v) is not np.ndarray:
            if v is None:
                raise RuntimeError(deleted_message(self))
            if hasattr(v, "to_host"):
                return v.to_host()  # a value the csl backend keeps on the device: copied out
        return v

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if not copy and (dtype is None or np.dtype(dtype) == self.dtype.np) \
                and outside_pyflame(sys._getframe(1)):
            return hand_out(self)  # ``np.asarray(t)``: shares memory, as PyTorch's
        v = self._read()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def item(self) -> float | int | bool:
        if self.numel() != 1:
            raise ValueError(f"item(): a Tensor with {self.numel()} elements cannot be "
                             "converted to a Python scalar")
        return self._read().reshape(-1)[0].item()

    def tolist(self) -> Any:
        return self._read().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.category != 1 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is "
                               "ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        # torch's layout and number format (tensor_str); torch's suffixes: the
        # size of an empty non-1-d tensor, a dtype other than the default float,
        # int64 and bool (an empty tensor's unless it is the default float)
        value = self._read()
        body = format_array(value, self.dtype.is_floating_point, PRINT_OPTIONS, len("tensor("))
        suffixes = [f"size={tuple(self.shape)}"] if not value.size and self.ndim != 1 else []
        if self.dtype is not default_float() and (
                not value.size or self.dtype.name not in ("int64", "bool")):
            suffixes.append(f"dtype=pyflame.{self.dtype.name}")
        if self.requires_grad:  # as PyTorch prints them
            fn = self.grad_fn  # (installed by autodiff)
            suffixes.append(f"grad_fn=<{fn.name()}>" if fn is not None else "requires_grad=True")
        return add_suffixes(f"tensor({body}", suffixes, len("tensor("), PRINT_OPTIONS)

    __str__ = __repr__
    __hash__ = object.__hash__

    # ---- autograd state (PyTorch semantics; the transforms are in autodiff.py) ----
    @property
    def requires_grad(self) -> bool:
        return requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        set_requires_grad(self, flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and INFERENCE_TENSORS:
            _check_not_inference(self)
        ag = self._ag
        if self._node is None and self._hist is None and \
                (ag is None or (not ag.detached and ag.prior is None)) \
                and requires_grad and self._cell is None \
                and self.dtype.is_floating_point:  # a value: always a leaf (read by no op)
            if ag is None:
                ag = self._ag = AutogradMeta()
            ag.requires_grad = True
            return self
        set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return is_leaf(self)

    @property
    def grad(self) -> Tensor | None:
        ag = self._ag
        return None if ag is None else ag.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        set_grad(self, value)

    def retain_grad(self) -> None:
        retain_grad(self)

    @property
    def retains_grad(self) -> bool:
        """``retain_grad()`` was called on this non-leaf (PyTorch)."""
        ag = self._ag
        return ag is not None and ag.retain

    def detach(self) -> Tensor:
        return detach(self)

    def detach_(self) -> Tensor:
        """Detach in place (PyTorch): this tensor becomes a leaf that does
        not require grad; gradients stop at it."""
        if type(self._view) is ViewOf:
            raise RuntimeError("detach_(): Can't detach views in-place. Use detach() instead "
                               "(this tensor is a view of another one)")
        cell = self._cell
        if cell is not None:  # the ops recorded before keep its history (PyTorch: their
            cell[0] = snapshot(self)[0]  # graph has its edge): they read a state with it
            self._cell = None
            MUTATIONS[0] += 1
        meta = _meta(self)
        meta.detached, meta.requires_grad = True, False
        self._hist = None
        return self

    # ops.py sets the operators (``+``, ``@``, ``==``, ``[]``...), the op methods
    # (``x.sum()``, ``x.T``, ``x.astype``...) and autodiff.py ``backward``
    def __pos__(self) -> Tensor:
        return self

    @property
    def _version(self) -> int:
        """How many times it was modified in place (PyTorch's version counter,
        shared by a view and its base)."""
        v = self._view
        if type(v) is ViewOf:
            self = v.counter
        elif type(v) is Frozen:
            return v.source._version
        m = self._mut
        return 0 if m is None else m.version

    @property
    def _base(self) -> Tensor | None:
        """The tensor this one is a view of (PyTorch's ``_base``), else None."""
        v = self._view
        return v.root if type(v) is ViewOf else None


# ---- in-place updates: a tensor rebound to a new promise ----

# A *state cell* is what the ops that read one state of a tensor hold: a
# dict, empty while the tensor still has that state; the first in-place update
# after them puts the replaced state (the ``snapshot``) in it under key 0.
# So a lazy op keeps the state it read alive however often the tensor is
# updated and evaluated later, and a state nobody reads is freed with its
# readers. (A dict, not a class or a list: it is made on the recording hot
# path, and an empty dict is not tracked by the cyclic GC, which every
# recorded op's objects otherwise cost a share of.)
StateCell = dict


def state_cells(inputs: Sequence[Tensor]) -> tuple[StateCell, ...]:
    """The cells of the current states of ``inputs`` (made on first read)."""
    cells = []
    for t in inputs:
        c = t._cell
        if c is None:
            c = t._cell = {}
        cells.append(c)
    return tuple(cells)


class Mutation:
    """A tensor's last in-place update. Ops recorded before it (``seq`` below
    ``Mutation.seq``) read the state it replaced: ``prev``, kept strongly for
    the last update and weakly for older ones (memory stays bounded); the ops
    that read a state hold it themselves (their state cells)."""

    # ``untracked``: made through an alias not sharing the version counter
    # (``x.data``): PyTorch's saved-tensor check does not see it
    __slots__ = ("seq", "prev", "ref", "version", "start", "untracked")

    def __init__(self, seq: int, prev: Tensor, version: int, start: int):
        self.untracked = False
        self.seq = seq
        self.prev: Tensor | None = prev
        self.ref = weakref.ref(prev)
        self.version = version
        self.start = start  # ops recorded after it and before ``seq`` compute the update


MUTATIONS = [0]  # in-place updates so far: collect resolves states only once there was one


def snapshot(t: Tensor) -> tuple[Tensor, int]:
    """A new tensor object holding ``t``'s current state (no autograd meta),
    and the creation order the ops computing its update come after."""
    old = object.__new__(Tensor)
    old.shape, old.dtype, old._node, old._index, old._value = \
        t.shape, t.dtype, t._node, t._index, t._value
    old._ag, old._hist, old._mut, old._view, old._cell = None, t._hist, t._mut, None, None
    ag = t._ag
    if ag is not None and ag.requires_grad:  # a leaf's older state is the same autograd
        old._ag = ag  # leaf (PyTorch: one tensor): a graph that read it still reaches .grad
    return old, _next_seq()


def raw_version(t: Tensor) -> int:
    """``t``'s own count of in-place updates (``_version`` is its counter's)."""
    m = t._mut
    return 0 if m is None else m.version


def rebind(t: Tensor, old: Tensor, start: int, new: Tensor) -> None:
    """Make ``t`` (the same object) hold ``new``'s promise or value, ``old``
    being its ``snapshot`` (which ``new`` is computed from, by ops recorded
    after ``start``); ops recorded
    before keep reading the old state (``StateCell``)."""
    # older states: weakly (see Mutation); kept strongly while a transform traces
    m = old._mut
    if m is not None and not GRAD_MODE.trace_depth:
        while m is not None and m.prev is not None:
            prev, m.prev = m.prev, None
            m = prev._mut
    version = 1 if t._mut is None else t._mut.version + 1
    t._mut = Mutation(_next_seq(), old, version, start)
    cell = t._cell
    if cell is not None:  # the ops recorded since the last update read ``old`` from now on
        cell[0] = old
        t._cell = None
    t._node, t._index, t._value, t._hist = new._node, new._index, new._value, new._hist
    MUTATIONS[0] += 1
    if OBSERVERS:
        for observe in OBSERVERS:
            observe("rebind", t, old)


def read_by(t: Tensor, n: OpNode) -> tuple[Tensor, Mutation | None]:
    """The state of ``t`` the op ``n`` reads, and the first in-place update of
    ``t`` recorded after ``n`` unless ``n`` computes that update itself: a
    value ``n`` may have saved for backward was modified since (PyTorch raises)."""
    fz = t._view
    if type(fz) is Frozen:  # its source's version counter moved on since
        if fz.source._version != fz.version:
            return t, Mutation(n.seq, t, fz.version + 1, n.seq)
        if fz.source._mut is not fz.mut:  # modified through ``.data``, uncounted
            later = Mutation(n.seq, t, fz.version + 1, n.seq)
            later.untracked = True
            return t, later
        return t, None
    first = None
    m = t._mut
    while m is not None and m.seq > n.seq:
        first = m
        prev = m.prev
        if prev is None:
            prev = m.ref()
        if prev is None:
            break
        t = prev
        m = t._mut
    if first is not None and first.start < n.seq:
        first = None
    return t, first


# ---- donated tensors (pf.compile's donate_argnums) ----

class Deleted:
    """The ``_view`` of a tensor whose buffer was donated (JAX's deleted
    array): it has no value and no op; recording an op on it, reading it or
    evaluating something that reads it raises."""

    __slots__ = ()


DELETED = Deleted()


def delete(t: Tensor) -> None:
    """Mark ``t`` deleted (its buffer was donated): its shape and dtype stay."""
    t._node, t._value, t._hist, t._view = None, None, None, DELETED


def deleted_message(t: Tensor) -> str:
    return (f"this tensor ({list(t.shape)}, {t.dtype.name}) was donated to a pf.compile'd "
            "function (donate_argnums) and has been deleted (JAX: 'Array has been "
            "deleted'): use the function's result instead")


# ---- autograd state on tensors ----

_AUTOGRAD_USED = False  # an AutogradMeta was made (see OpNode.__init__)

# the arguments of the functional transforms tracing now (by id; autodiff's
# ``_distinct`` adds them, the outermost trace's end clears them): updating one
# in place is PyTorch's error (torch.func's inputs are leaves that require grad)
TRACE_ARGS: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()


def is_trace_arg(t: Tensor) -> bool:
    return bool(TRACE_ARGS) and TRACE_ARGS.get(id(t)) is t


class AutogradMeta:
    __slots__ = ("requires_grad", "grad", "retain", "detached", "hooks", "post_hooks", "prior")

    def __init__(self) -> None:
        global _AUTOGRAD_USED
        _AUTOGRAD_USED = True  # requires_grad can only be set on a meta
        self.requires_grad = False  # set by the user: a leaf of autograd
        self.grad: Tensor | None = None
        self.retain = False  # retain_grad() on a non-leaf
        self.detached = False  # made by detach(): gradients never flow through it
        # register_hook / register_post_accumulate_grad_hook (leaves)
        self.hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
        self.post_hooks: dict[int, Callable[[Tensor], None]] | None = None
        # requires_grad_(False) on a leaf ops had read: the meta those ops still
        # hold (set_requires_grad), taken back by requires_grad_(True)
        self.prior: AutogradMeta | None = None


def _meta(t: Tensor) -> AutogradMeta:
    if t._ag is None:
        t._ag = AutogradMeta()
    return t._ag


def source(t: Tensor) -> OpNode | None:
    """The op that made ``t``: its promise, or the history a realized tensor
    kept (None for a leaf)."""
    n = t._node
    return t._hist if n is None else n


def requires_grad(t: Tensor) -> bool:
    """PyTorch's flag: a leaf the user marked, or the result of an op recorded
    with grad enabled from an input that required grad (``OpNode.rg``, set at
    record time, so asking is O(1) and a realized tensor answers the same).
    An integer or bool result (``w > 0``, ``w.argmax()``, ``w.long()``) never
    requires grad, as PyTorch's."""
    ag = t._ag
    if ag is not None:
        if ag.requires_grad:  # also a detached alias made a leaf (x.detach().requires_grad_())
            return True
        if ag.detached:
            return False
    n = t._node
    if n is None:
        n = t._hist
    return n is not None and n.rg and t.dtype.is_floating_point


def is_leaf(t: Tensor) -> bool:
    return (t._ag is not None and t._ag.requires_grad) or not requires_grad(t)


def _check_not_inference(t: Tensor) -> None:
    if not GRAD_MODE.inference and is_inference(t):
        raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")


def set_requires_grad(t: Tensor, flag: bool) -> None:
    if flag and INFERENCE_TENSORS:
        _check_not_inference(t)
    if flag and not t.dtype.is_floating_point:
        raise RuntimeError(f"only tensors of floating point dtype can require gradients, "
                           f"got {t.dtype.name}")
    if not is_leaf(t):
        raise RuntimeError("you can only change requires_grad flags of leaf tensors; use "
                           "t.detach().requires_grad_() for a new leaf")
    cell = t._cell
    if flag and cell is not None and not (t._ag is not None and t._ag.requires_grad):
        # ops recorded before read a constant (PyTorch recorded no edge to it): they
        # read a snapshot without autograd meta from now on, as after an update
        cell[0] = snapshot(t)[0]
        t._cell = None
        MUTATIONS[0] += 1
    ag = t._ag
    if flag and ag is not None and ag.prior is not None and not ag.requires_grad:
        # the leaf it was before requires_grad_(False): the graphs recorded then
        # accumulate into its .grad again (PyTorch), what they gave meanwhile dropped
        prior = t._ag = ag.prior
        prior.grad, prior.retain, prior.detached = ag.grad, ag.retain, ag.detached
        prior.hooks, prior.post_hooks = ag.hooks, ag.post_hooks
        return
    if not flag and ag is not None and ag.requires_grad:
        # PyTorch: the graphs recorded keep their edge to the leaf (its gradient is
        # then computed and dropped): the ops recorded before read a state with the
        # old meta, which still requires grad; t goes on with a copy that does not
        if cell is not None:
            cell[0] = snapshot(t)[0]
            t._cell = None
            MUTATIONS[0] += 1
        new = t._ag = AutogradMeta()
        new.grad, new.retain, new.detached = ag.grad, ag.retain, ag.detached
        new.hooks, new.post_hooks, new.prior = ag.hooks, ag.post_hooks, ag
        ag.grad = None  # (t.grad does not change: the dropped gradient goes to the old meta)
        return
    _meta(t).requires_grad = flag


def set_grad(t: Tensor, value: Tensor | None) -> None:
    if value is not None and value.shape != t.shape:
        raise RuntimeError(f"assigned grad has shape {list(value.shape)}, the tensor "
                           f"{list(t.shape)}")
    _meta(t).grad = value


def retain_grad(t: Tensor) -> None:
    if not requires_grad(t):
        raise RuntimeError("can't retain_grad on a tensor that does not require grad")
    if not is_leaf(t):
        _meta(t).retain = True


def detach(t: Tensor) -> Tensor:
    """A tensor with ``t``'s value that gradients do not flow through; a view
    of ``t`` (PyTorch: it shares the storage, so in-place updates of either
    are seen by the other)."""
    v = t._view
    if type(v) is Aliases and v.share is not None:
        sync_shared(t, True)  # (the alias takes its value: never the numpy array itself)
    out = as_view(t, detached_alias(t), detached_alias, *geometry(t))
    if type(out._view) is ViewOf:  # writes into t keep t's history (inplace.py), also
        out._view.detached = True  # once an update gives the alias a history of its own
    return out


def detached_alias(t: Tensor) -> Tensor:
    if t._node is None:
        out = Tensor._leaf(t._value)
    else:
        out = Tensor._promise(t._node, t._index, t.shape, t.dtype)
    _meta(out).detached = True
    return out


# ---- nodes ----

_next_seq = itertools.count().__next__
_new = object.__new__
_SIG_IDS: dict[tuple, int] = {}  # interned node signatures (see OpNode.sig_id)
_next_sig_id = itertools.count().__next__


def _inputs_require_grad(inputs: Sequence[Tensor]) -> bool:
    """An input requires grad (``requires_grad``, inlined: the recording hot path)."""
    for t in inputs:
        ag = t._ag
        if ag is None or not ag.detached:
            if ag is not None and ag.requires_grad:
                return True
            n = t._node or t._hist  # an OpNode is always true
            if n is not None and n.rg and t.dtype.category == FLOAT:
                return True  # (an integer result, w > 0, never requires grad)
        elif ag.requires_grad:  # a detached alias made a leaf
            return True
    return False


class OpNode:
    """One recorded op. ``specs`` holds one (shape, dtype) per result; ``seq``
    orders nodes by creation (ops without operands first), which is always a
    topological order."""

    # ``trace``: the Python stack that recorded it, set only under anomaly detection
    # ``_c0``/``_c1``: the state cells of the inputs (see ``cells``), without a
    # tuple per node for one or two inputs (one object less per op to make,
    # free and scan in the cyclic GC)
    # ``_at``: its position while ``_collect_plain`` numbers a subgraph (see there)
    __slots__ = ("op", "inputs", "_c0", "_c1", "attrs", "specs", "seq", "nograd", "rg",
                 "freed", "_sig", "_sig_id", "keep", "trace", "_at")

    def __init__(self, op: OpDef, inputs: tuple[Tensor, ...], attrs: dict[str, Any],
                 specs: tuple[Spec, ...], frames: int = 3):
        # ``frames``: the recording frames on top of the stack, this one included
        # (anomaly detection's ``trace`` leaves them out)
        self.op = op
        self.inputs = inputs
        self.cells = state_cells(inputs)
        self.attrs = attrs
        self.specs = specs
        # creation order is a topological order; ops without operands
        # (constants) need none, and go first wherever they were made, so a
        # constant shared between steps (ops.py) leaves the structure unchanged
        self.seq = _next_seq() if inputs else -1
        # ``_sig``/``_sig_id``: see sig_id; ``keep``: weak references to outputs
        # realized whenever this node is computed (``.grad``: autodiff.backward)
        self._sig = self._sig_id = self.keep = self._at = None
        self.freed = False  # a backward() went through it without retain_graph
        if not GRAD_MODE.enabled:
            self.nograd = True  # recorded under no_grad: a constant for autodiff
            self.rg = False
            return
        self.nograd = False
        # its results require grad (PyTorch's flag, propagated at record time):
        # grad is enabled and an input requires grad. Only a tensor with
        # autograd meta starts a graph that requires grad: until one was made,
        # no input can (a process that never uses autograd skips the loop).
        self.rg = rg = _AUTOGRAD_USED and _inputs_require_grad(inputs)
        if CONFIG.anomaly and (rg or GRAD_MODE.trace_depth):
            # only what a backward goes through needs its stack (or what a
            # transform may differentiate); without the op's recording frames
            self.trace = traceback.extract_stack()[:-frames]

    @property
    def cells(self) -> tuple[StateCell, ...]:
        """The state cells of the inputs (one per input), as ``state_cells``
        made them when the node was recorded."""
        c0 = self._c0
        if type(c0) is dict:
            c1 = self._c1
            return (c0,) if c1 is None else (c0, c1)
        return () if c0 is None else c0

    @cells.setter
    def cells(self, cells: tuple[StateCell, ...]) -> None:
        n = len(cells)
        if n == 2:
            self._c0, self._c1 = cells
        elif n == 1:
            self._c0, self._c1 = cells[0], None
        else:  # (a tuple only for none or more than two)
            self._c0, self._c1 = (tuple(cells) if n else None), None

    def reads_older_state(self) -> bool:
        """An input was modified in place after the node was recorded (the node
        reads the state it replaced: ``inputs_as_read``)."""
        c0 = self._c0  # (a cell holds the state it replaced: not empty)
        if type(c0) is dict:
            return bool(c0) or bool(self._c1)
        return c0 is not None and any(c0)

    def _signature(self, local: bool) -> tuple:
        op = self.op
        if op.plain_attrs:
            attrs = tuple(self.attrs.items())
        else:
            kinds = op.attrs
            attrs = tuple((k, _canon(kinds[k], v, local)) for k, v in self.attrs.items())
        return (op.name, attrs, tuple((s, d.name) for s, d in self.specs))

    @property
    def sig(self) -> tuple:
        """Canonical encoding of everything but the wiring, the same in every
        process. Floats by their bits (``0.0`` vs ``-0.0``), constants by their
        bytes, dtypes by name, traced functions by their full encoding."""
        if self._sig is None:
            self._sig = self._signature(False)
        return self._sig

    @property
    def sig_id(self) -> int:
        """A small int standing for the signature in this process, so cache
        keys are flat tuples of ints that hash fast. Ids are never reused.
        A traced function is encoded by its own flat key (ints), not by the
        full signatures of its nodes: cheap, and as exact within a process."""
        if self._sig_id is None:
            local = self._signature(True) if "func" in self.op.attrs.values() else self.sig
            sid = _SIG_IDS.get(local)
            if sid is None:
                if len(_SIG_IDS) > 200_000:
                    _SIG_IDS.clear()  # old ids simply stop matching: a miss, never a wrong hit
                sid = _SIG_IDS[local] = _next_sig_id()
            self._sig_id = sid
        return self._sig_id


def _canon(kind: str, v: Any, local: bool = False) -> Any:
    if kind == "float":
        return float(v).hex()
    if kind == "func" and local:
        return v.local_key()
    if kind in ("dense", "func"):
        return v.key()
    if kind == "dtype":
        return v.name
    return v


_MEMO_LIMIT = 4096


class _NoAttrs(dict):
    """The attributes of an op that has none: ``NO_ATTRS``, one shared empty
    dict (no dict made and kept per recorded op), read-only."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("NO_ATTRS (the attributes of an op without any) is shared and "
                        "read-only: copy it (dict(attrs)) to change it")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = \
        __ior__ = _read_only


NO_ATTRS: dict[str, Any] = _NoAttrs()


def record(op: OpDef, inputs: tuple[Tensor, ...], attrs: dict[str, Any]
           ) -> Tensor | list[Tensor]:
    """Record one op; returns its output promise(s). Shape errors raise here.

    The hot path of the library. Ops with an exact key for their attributes
    (``OpDef.memo_attrs``) memoize their shape rule and interned signature per
    (shapes, dtypes, attributes): the rule is still the only source of truth.
    Constants hit by the identity of their ``DenseValue``, which
    ``splat_value`` interns; a vjp by its traced function's key.

    A memo hit builds the node and its promise here (``OpNode.__init__`` and
    ``Tensor._promise`` inlined: a frame each is a good part of an op's cost)."""
    n = len(inputs)
    if n == 2:
        a, b = inputs
        if a._view is not None or b._view is not None:
            a, b = inputs = _read_views(op, inputs)
        key: tuple = (a.shape, b.shape, a.dtype, b.dtype)
    elif n == 1:
        a = inputs[0]
        if a._view is not None:
            inputs = _read_views(op, inputs)
            a = inputs[0]
        key = (a.shape, a.dtype)
    else:
        for t in inputs:
            if t._view is not None:
                inputs = _read_views(op, inputs)
                break
        key = tuple([t.shape for t in inputs] + [t.dtype for t in inputs])
    memo_attrs = op.memo_attrs
    if memo_attrs is None:
        return _record_slow(op, inputs, attrs, None)
    if attrs:
        key = (key, memo_attrs(attrs))
    try:
        hit = op.memo.get(key)
    except TypeError:  # an unhashable attribute value (a list): no memo
        return _record_slow(op, inputs, attrs, None)
    if hit is None or CONFIG.anomaly:  # (anomaly: OpNode.__init__ takes the stack)
        return _record_slow(op, inputs, attrs, key)
    specs, sid, shape, dt = hit
    node = _new(OpNode)
    node.op, node.inputs, node.attrs, node.specs, node._sig_id = op, inputs, attrs, specs, sid
    # the state cells (``state_cells``) and the creation order (see OpNode.__init__)
    if n == 2:
        ca = a._cell
        if ca is None:
            ca = a._cell = {}
        cb = b._cell  # read after a's: ``x * x`` has one cell
        if cb is None:
            cb = b._cell = {}
        node._c0, node._c1 = ca, cb
        node.seq = _next_seq()
    elif n == 1:
        ca = a._cell
        if ca is None:
            ca = a._cell = {}
        node._c0, node._c1 = ca, None
        node.seq = _next_seq()
    else:
        node.cells = state_cells(inputs)
        node.seq = _next_seq() if inputs else -1
    node._sig = node.keep = node._at = None
    node.freed = False
    if not _GRAD_OFF[0] or GRAD_MODE.enabled:
        node.nograd = False
        node.rg = _AUTOGRAD_USED and _inputs_require_grad(inputs)
    else:
        node.nograd, node.rg = True, False
        if _INFER_ON[0] and GRAD_MODE.inference:
            return _inference_results(node, specs, shape)
    COUNTERS.ops_recorded += 1
    if _SCOPES[0]:
        _local.graph.ops_recorded += 1
    else:  # no thread records into a graph of its own: all go to the default one
        GRAPH.ops_recorded += 1
    if shape is None:  # several results
        outs = [Tensor._promise(node, i, s, d) for i, (s, d) in enumerate(specs)]
        if CONFIG.eager:
            realize(outs)
        return outs
    out = _new(Tensor)
    out.shape, out.dtype, out._node, out._index, out._value, out._ag = \
        shape, dt, node, 0, None, None
    out._hist = out._mut = out._view = out._cell = None
    if CONFIG.eager:
        realize([out])
    return out


def _inference_results(node: OpNode, specs: tuple[Spec, ...], shape: tuple[int, ...] | None
                       ) -> Tensor | list[Tensor]:
    """``record``'s results under inference_mode: inference tensors."""
    COUNTERS.ops_recorded += 1
    _local.graph.ops_recorded += 1
    outs = [Tensor._promise(node, i, s, d) for i, (s, d) in enumerate(specs)]
    mark_inference(outs)
    if CONFIG.eager:
        realize(outs)
    return outs if shape is None else outs[0]


# ---- inference tensors (torch.inference_mode) ----

# id -> a weak reference to each tensor made under inference_mode (alive)
INFERENCE_TENSORS: dict[int, weakref.ref] = {}


def mark_inference(tensors: Sequence[Tensor]) -> None:
    for t in tensors:
        k = id(t)
        INFERENCE_TENSORS[k] = weakref.ref(t, lambda _, k=k: INFERENCE_TENSORS.pop(k, None))


def is_inference(t: Tensor) -> bool:
    """``t`` was made under inference_mode, or is a view (a detached alias
    too) of such a tensor, as PyTorch's ``is_inference()``."""
    if not INFERENCE_TENSORS:
        return False
    while True:
        r = INFERENCE_TENSORS.get(id(t))
        if r is not None and r() is t:
            return True
        v = t._view
        if type(v) is ViewOf:
            t = v.root
        elif type(v) is Frozen:
            t = v.source
        else:
            return False


def _read_views(op: OpDef, inputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """An op reading views or tensors with views reads their states of now
    (``frozen``); reading a donated tensor raises."""
    for x in inputs:
        if x._view is DELETED:
            raise RuntimeError(f"pyflame.{op.name}: {deleted_message(x)}")
    return tuple([x if x._view is None else _read_state(x) for x in inputs])


def _read_state(x: Tensor) -> Tensor:
    """The tensor an op reads for ``x`` (its ``_view`` set): ``frozen(x)``; a
    tensor sharing memory with numpy (or a view of one) takes the array's
    current values first (``sync_state``), and one with no views is read as
    itself, as a tensor with no views is."""
    v = x._view
    if type(v) is Aliases:
        if v.share is not None:
            sync_shared(x, True)
            v = x._view
            if v is None or not v.refs:
                return x
    elif type(v) is ViewOf:
        r = v.root._view
        if type(r) is Aliases and r.share is not None:
            sync_shared(v.root, True)
    return frozen(x)


def _record_slow(op: OpDef, inputs: tuple[Tensor, ...], attrs: dict[str, Any],
                 key: tuple | None) -> Tensor | list[Tensor]:
    """``record`` past its memo: the shape rule runs (and fills the memo under
    ``key``, unless None), ``OpNode.__init__`` builds the node."""
    specs = tuple([(Size(s), d) for s, d in
                   op.check([t.shape for t in inputs], [t.dtype for t in inputs], attrs)])
    node = OpNode(op, inputs, attrs, specs, 4)  # (the op's function, record, this, __init__)
    single = op.num_results == 1
    if key is not None:
        memo = op.memo
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        # (specs, signature id, and the result's shape and dtype: None for a list)
        memo[key] = (specs, node.sig_id, *(specs[0] if single else (None, None)))
    COUNTERS.ops_recorded += 1
    _local.graph.ops_recorded += 1
    if single:
        (shape, dt), = specs
        out = Tensor._promise(node, 0, shape, dt)
        if node.nograd and _INFER_ON[0] and GRAD_MODE.inference:
            mark_inference((out,))
        if CONFIG.eager:
            realize([out])
        return out
    outs = [Tensor._promise(node, i, s, d) for i, (s, d) in enumerate(specs)]
    if node.nograd and _INFER_ON[0] and GRAD_MODE.inference:
        mark_inference(outs)
    if CONFIG.eager:
        realize(outs)
    return outs


# ---- the subgraph of some outputs ----

def split_ref(r: int) -> tuple[int, int]:
    """A reference to a value: ``-1 - n`` is leaf n; else node position and result index."""
    return (r, 0) if r < 0 else (r >> 16, r & 0xFFFF)


class Subgraph:
    """The lazy part of the DAG that some outputs need, in topological order."""

    __slots__ = ("nodes", "leaves", "outputs", "wiring", "_refs", "pending", "kept")

    def __init__(self, nodes: list[OpNode], leaves: list[Tensor], outputs: list[int],
                 wiring: tuple[int, ...], pending: list[Tensor] | None = None,
                 kept: list[tuple[int, OpNode]] | None = None):
        self.nodes = nodes
        self.leaves = leaves  # realized tensors feeding it: the function's arguments
        self.outputs = outputs  # a reference (see split_ref) per requested tensor
        self.wiring = wiring  # per node: its signature id, its input count, its refs
        self._refs: list[list[int]] | None = None
        # lazy tensors modified in place that the graph computes anyway: they
        # are outputs too (after the requested ones), so a parameter updated
        # with ``p -= lr * p.grad`` becomes a value with the next step's graph
        self.pending = pending or []
        # (reference of result 0, node) of the nodes with outputs to ``keep``
        # (found by an evaluation's walk: see compiler.evaluate)
        self.kept = kept or []

    @property
    def refs(self) -> list[list[int]]:
        """Per node, a reference (see split_ref) per input (read off the wiring:
        only a compile and a traced function need them as lists)."""
        if self._refs is None:
            refs, w, i = [], self.wiring, 0
            for _ in self.nodes:
                n = w[i + 1]
                refs.append(list(w[i + 2:i + 2 + n]))
                i += 2 + n
            self._refs = refs
        return self._refs

    def key(self, config: tuple) -> tuple:
        """The cache key: flat, fast to hash, and equal only for equal encodings."""
        return (config, tuple([(t.shape, t.dtype) for t in self.leaves]), self.wiring,
                tuple(self.outputs))

    def stable_hash(self, config: tuple) -> str:
        """blake2b of the canonical encoding with full signatures: the same in
        every process (the key of on-disk caches)."""
        enc = (config, tuple((t.shape, t.dtype.name) for t in self.leaves),
               tuple((n.sig, tuple(r)) for n, r in zip(self.nodes, self.refs)),
               tuple(self.outputs))
        return hashlib.blake2b(repr(enc).encode(), digest_size=20).hexdigest()


def collect(tensors: Sequence[Tensor], args: Sequence[Tensor] = (),
            boundary: Callable[[Tensor], bool] | None = None,
            trace: bool = False) -> Subgraph:
    """Gather the lazy nodes the tensors need, order them by creation, and
    number the realized leaves by first use. The one pass that numbers the
    inputs also writes the wiring of the cache key.

    For a function traced out of the graph (autodiff, ``trace``), the walk
    also goes through the history realized tensors kept (``Tensor._hist``),
    ``args`` become the first leaves whatever they are, and tensors for which
    ``boundary`` holds are leaves too (the walk does not go past them).
    Evaluation (``trace`` false) treats every realized tensor as a leaf
    (``_collect_plain``, the hot path: its own loop)."""
    if not trace:
        if args or boundary is not None:
            raise ValueError("collect: args and boundary are for a traced function "
                             "(trace=True)")
        return _collect_plain(tensors)
    if _NATIVE is not None:  # (None: this walk runs, and raises where it must)
        sub = _NATIVE.collect_traced(tensors, args, boundary)
        if sub is not None:
            return sub
    leaves: list[Tensor] = list(args)
    pos: dict[int, int] = {id(t): -1 - i for i, t in enumerate(leaves)}  # leaves, by id
    cut: set[int] = set(pos)  # lazy tensors that are leaves here (ids)
    seen: dict[OpNode, None] = {}  # nodes hash by identity (tensors overload ==)
    todo = list(tensors)  # tensors whose producers may be needed
    pop, extend = todo.pop, todo.extend
    mutated = MUTATIONS[0] != 0  # then an op's input may be an older state of a tensor
    older: dict[OpNode, list[Tensor]] = {}  # a node's inputs that are older states
    while todo:  # the walk goes through histories
        t = pop()
        m = t._node
        if m is None:
            m = t._hist
            if m is None:
                continue
        if cut and id(t) in cut:
            continue
        if boundary is not None and boundary(t):  # before `seen`: a detached alias
            cut.add(id(t))                         # shares its node with a live tensor
            continue
        if m not in seen:
            seen[m] = None
            ins = m.inputs
            if mutated and m.reads_older_state():
                ins = older[m] = inputs_as_read(m)
            extend(ins)
    nodes = sorted(seen, key=_by_seq)
    at = {n: i << 16 for i, n in enumerate(nodes)}
    wiring: list[int] = []
    add = wiring.append
    for n in [*nodes, None]:  # None: the requested tensors, last
        if n is not None:
            sid = n._sig_id
            add(sid if sid is not None else n.sig_id)
            add(len(n.inputs))
            ins = older.get(n, n.inputs) if older else n.inputs
        else:
            outputs_at = len(wiring)
            ins = tensors
        for t in ins:
            m = t._node
            if m is None:
                m = t._hist
            if m is not None and not (cut and id(t) in cut):
                add(at[m] | t._index)
                continue
            if type(t._view) is Frozen and t._value is not None \
                    and t._view.source._value is t._value:
                t = t._view.source  # a snapshot of a value that has not changed since:
                # one program input, not one per op that read it
            lr = pos.get(id(t))  # leaves share the map, under the tensor's id
            if lr is None:
                lr = pos[id(t)] = -1 - len(leaves)
                leaves.append(t)
            add(lr)
    outputs = wiring[outputs_at:]
    del wiring[outputs_at:]
    return Subgraph(nodes, leaves, outputs, tuple(wiring))

_by_seq = operator.attrgetter("seq")


# ``_collect_plain`` numbers the nodes of a subgraph in their ``_at`` slot (a
# dict keyed by node cost a good part of the walk): one numbering at a time,
# over all threads (under the GIL they would take turns anyway).
_COLLECT_LOCK = threading.Lock()
_COLLECTING = [0]  # the thread numbering nodes now (0: none)


def _collect_plain(tensors: Sequence[Tensor]) -> Subgraph:
    """``collect`` for an evaluation (no ``trace``, ``args`` or ``boundary``):
    the same walk and the same result, without the branches only a traced
    function needs (every evaluation runs it, so it is worth its own loop).
    The native walk (``_native.collect``: it numbers nodes in a table of its
    own, so needs no lock) returns None where this one must run (it raises)."""
    if _NATIVE is not None:
        sub = _NATIVE.collect(tensors)
        if sub is not None:
            return sub
    me = threading.get_ident()
    if _COLLECTING[0] == me:  # (nothing it calls collects: a signature is computed
        # from the node's own attributes) a second numbering would clobber the first
        raise RuntimeError("internal error: collect re-entered while numbering a subgraph")
    with _COLLECT_LOCK:
        _COLLECTING[0] = me
        try:
            return _collect_numbered(tensors)
        finally:
            _COLLECTING[0] = 0


def _collect_numbered(tensors: Sequence[Tensor]) -> Subgraph:
    """``_collect_plain``'s walk (under its lock). A node reached is marked with
    this walk's ``stamp`` in its ``_at``, then holds its position there."""
    leaves: list[Tensor] = []
    pos: dict[int, int] = {}  # leaves, by id
    stamp = object()  # (on the nodes reached so far, in their ``_at``)
    seen: list[OpNode] = []
    mark = seen.append
    todo = list(tensors)
    pop, extend = todo.pop, todo.extend
    older: dict[OpNode, list[Tensor]] = {}  # a node's inputs that are older states
    pending: list[Tensor] = []
    if MUTATIONS[0]:  # an op's input may be an older state of a tensor
        while todo:
            t = pop()
            m = t._node
            if m is None or m._at is stamp:
                continue
            mu = t._mut
            if mu is not None and mu is not _FROZEN:
                pending.append(t)  # a lazy tensor modified in place: see Subgraph.pending
            m._at = stamp
            mark(m)
            ins = m.inputs
            c0 = m._c0  # (OpNode.reads_older_state, inlined)
            if type(c0) is dict:
                old = bool(c0) or bool(m._c1)
            else:
                old = c0 is not None and any(c0)
            if old:
                older[m] = read = inputs_as_read(m)
                extend(read)
                # an op reads an older state of a parameter (an autograd leaf)
                # updated in place: the lazy update is computed with this
                # graph (``pending``), as PyTorch's step has run by now
                extend([x for x in ins if x._node is not None and x._mut is not None
                        and x._ag is not None and x._ag.requires_grad])
            else:
                extend(ins)
    else:
        while todo:
            t = pop()
            m = t._node
            if m is not None and m._at is not stamp:
                m._at = stamp
                mark(m)
                extend(m.inputs)
    seen.sort(key=_by_seq)
    nodes = seen
    wiring: list[int] = []
    add = wiring.append
    get_older = older.get
    kept: list[tuple[int, OpNode]] = []
    # one loop numbers the nodes and writes their wiring: in creation order a
    # node's producers come first, so they are numbered when it is written (a
    # producer not numbered yet would still hold ``stamp``: ``|`` would raise)
    at = -0x10000
    for n in nodes:
        n._at = at = at + 0x10000
        sid = n._sig_id
        add(sid if sid is not None else n.sig_id)
        ins = n.inputs
        add(len(ins))
        if n.keep is not None:
            kept.append((at, n))
        if older:
            ins = get_older(n, ins)
        for t in ins:
            m = t._node
            if m is not None:
                add(m._at | t._index)
                continue
            fz = t._view
            if type(fz) is Frozen and t._value is not None and fz.source._value is t._value:
                t = fz.source  # a snapshot of a value that has not changed since:
                # one program input, not one per op that read it
            lr = pos.get(id(t))
            if lr is None:
                lr = pos[id(t)] = -1 - len(leaves)
                leaves.append(t)
            add(lr)
    outputs: list[int] = []
    for t in [*tensors, *pending] if pending else tensors:  # the requested tensors, last
        m = t._node
        if m is not None:
            outputs.append(m._at | t._index)
            continue
        fz = t._view
        if type(fz) is Frozen and t._value is not None and fz.source._value is t._value:
            t = fz.source
        lr = pos.get(id(t))
        if lr is None:
            lr = pos[id(t)] = -1 - len(leaves)
            leaves.append(t)
        outputs.append(lr)
    return Subgraph(nodes, leaves, outputs, tuple(wiring), pending, kept)


def inputs_as_read(n: OpNode) -> tuple[Tensor, ...] | list[Tensor]:
    """``n``'s inputs in the state they had when ``n`` was recorded."""
    if n.reads_older_state():
        return [c[0] if c else x for x, c in zip(n.inputs, n.cells)]
    return n.inputs


def number_key(v: object) -> tuple | None:
    """A key equal only for the same Python number: type and exact bits (so
    0.0 and -0.0, or 1 and True, differ); None for anything else."""
    t = type(v)
    if t is float:
        return (t, _PACK_DOUBLE(v))
    if t is int or t is bool:
        return (t, v)
    return None


_PACK_DOUBLE = struct.Struct("<d").pack  # (precompiled: number_key runs ~5 times a step)


_SPLATS: dict[tuple, DenseValue] = {}


def splat_value(v: object, shape: tuple[int, ...], d: DType) -> DenseValue:
    """The value of a constant filled with the number ``v``. Python numbers are
    interned (``number_key``), so recording the same constant again hits
    ``record``'s memo (a scalar in every training step costs no shape rule
    and no hashing)."""
    nk = number_key(v)
    if nk is None:
        return DenseValue(number_array(v, d), shape, d)
    k = (d, shape, nk)
    value = _SPLATS.get(k)
    if value is None:
        if len(_SPLATS) > _MEMO_LIMIT:
            _SPLATS.clear()
        value = _SPLATS[k] = DenseValue(number_array(v, d), shape, d)
    return value


def number_array(v: object, d: DType) -> np.ndarray:
    """Python numbers as an array of ``d``, with PyTorch's overflow check for
    integer types (``checked_convert``): floats must lie in the type's range
    (NaN never does); ints too, except that an unsigned type also takes the
    negatives down to ``-max`` (two's complement: ``full(2, -2, uint8)`` is 254)."""
    a = np.asarray(v)
    if d.category == INT and a.size and a.dtype.kind in "iufO":
        info = np.iinfo(d.np)
        low = -int(info.max) if info.min == 0 and a.dtype.kind != "f" else int(info.min)
        try:
            bad = bool(np.isnan(a).any()) if a.dtype.kind == "f" else False
            bad = bad or a.min() < low or a.max() > info.max
        except TypeError:  # (Python ints past 64 bits: an object array)
            bad = True
        if bad:
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow "
                               f"(got {a.min() if a.ndim else a})")
    return a.astype(d.np)


def constant_value(v: object, d: DType) -> DenseValue:
    return splat_value(v, (), d)



# ---- views: PyTorch's aliasing, functionalized ----
#
# A view (``x[0]``, ``x.t()``, ``x.view(-1)``, ``x.detach()``...) is a tensor of
# its own whose ``_view`` says what it aliases: its *root* (the tensor owning
# the storage; never a view itself), how to recompute it from the root
# (``replay``: the view ops, recorded again) and where its elements are in the
# root's flat storage (PyTorch's strided geometry). An in-place update of a
# view becomes an out-of-place op and a write-back into the root
# (``inplace.py``); after any in-place update of a root, its live views are
# recomputed from it. Values are never shared: the aliasing is all here.

class ViewOf:
    """What makes a tensor a view: ``root``, its shape when the view was
    taken (``replay`` starts from it), and the geometry: ``sizes``,
    ``strides`` (in elements; 0 where a dimension is broadcast) and
    ``offset`` of its elements in the root's flat storage."""

    # ``counter``: the tensor whose version counter it shares (PyTorch keeps
    # one per tensor and its views, apart from storage): the tensor it was
    # taken from, mostly its root; itself for ``x.data``; x after ``x.data = y``
    # ``multi``: (function name, output index) for an output of a function
    # returning several views (split, unbind): autograd forbids updating it in place
    # ``detached``: taken from a detached alias (``x.detach()[0]``): no autograd
    __slots__ = ("root", "root_shape", "replay", "sizes", "strides", "offset", "counter",
                 "multi", "detached")

    def __init__(self, root: Tensor, replay: Callable[[Tensor], Tensor],
                 sizes: tuple[int, ...], strides: tuple[int, ...], offset: int,
                 counter: Tensor):
        self.root = root
        self.counter = counter
        self.multi: tuple[str, int] | None = None
        self.detached = False
        self.root_shape = root.shape
        self.replay = replay
        self.sizes, self.strides, self.offset = sizes, strides, offset

    def positions(self) -> np.ndarray:
        """The flat position in the root of each element (in the view's shape)."""
        pos = np.full((1,) * len(self.sizes), self.offset, dtype=np.int64)
        for k, (n, s) in enumerate(zip(self.sizes, self.strides)):
            shape = [1] * len(self.sizes)
            shape[k] = n
            pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
        return np.broadcast_to(pos, self.sizes)

    def overlaps(self) -> bool:
        """Two of its elements are one element of the root (``expand``)."""
        return any(s == 0 and n > 1 for n, s in zip(self.sizes, self.strides))

    def covers(self, n: int) -> bool:
        """Its elements are the root's ``n`` elements in storage order."""
        return self.offset == 0 and _numel(self.sizes) == n and all(
            s == c for d, s, c in zip(self.sizes, self.strides, contiguous_strides(self.sizes))
            if d != 1)


class Aliases:
    """A root's live views (weakly: a view no one holds is not updated), and
    ``share``: the numpy array it shares memory with (``share``), or None."""

    __slots__ = ("refs", "kept", "share", "synced", "handed")

    def __init__(self) -> None:
        self.refs: list[weakref.ref[Tensor]] = []
        self.kept = 16
        self.share: np.ndarray | None = None
        self.synced: np.ndarray | None = None  # the value ``share`` was equal to, last looked
        # read-only arrays ``.numpy()`` handed out for views of it while it was lazy
        self.handed: list[weakref.ref[np.ndarray]] | None = None

    def add(self, v: Tensor) -> None:
        refs = self.refs
        refs.append(weakref.ref(v))
        if len(refs) > 2 * self.kept:  # drop the dead: bounded in a loop taking views
            refs[:] = [r for r in refs if r() is not None]
            self.kept = max(16, len(refs))

    def live(self) -> list[Tensor]:
        out = [t for t in (r() for r in self.refs) if t is not None]
        self.refs = [weakref.ref(t) for t in out]
        return out


def _numel(sizes: Sequence[int]) -> int:
    n = 1
    for d in sizes:
        n *= d
    return n


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    s = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = s
        s *= max(shape[i], 1)
    return tuple(strides)


_TRACK_VIEWS = [True]  # off while the view machinery records its own ops


@contextmanager
def untracked_views() -> Iterator[None]:
    """Ops recorded in the block make no views (replays and write-backs)."""
    prev = _TRACK_VIEWS[0]
    _TRACK_VIEWS[0] = False
    try:
        yield
    finally:
        _TRACK_VIEWS[0] = prev


def is_contiguous(t: Tensor) -> bool:
    """Its elements are in row-major order in storage (PyTorch's
    ``is_contiguous``): always, but for some views."""
    v = t._view
    if type(v) is not ViewOf:
        return True
    return all(s == c for d, s, c in zip(v.sizes, v.strides, contiguous_strides(v.sizes))
               if d != 1)


def geometry(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``t``'s sizes, strides and offset in its root's storage."""
    v = t._view
    if type(v) is ViewOf:
        return v.sizes, v.strides, v.offset
    return t.shape, contiguous_strides(t.shape), 0


def as_view(parent: Tensor, out: Tensor, replay: Callable[[Tensor], Tensor],
            sizes: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Tensor:
    """Make ``out`` (just computed from ``parent`` by a view op, which
    ``replay`` records again on a new ``parent``) a view of ``parent``'s root
    with the given geometry."""
    if out is parent or not _TRACK_VIEWS[0]:
        return out
    pv = parent._view
    if type(pv) is ViewOf:
        root, base, counter = pv.root, pv.replay, pv.counter

        def full(r: Tensor) -> Tensor:
            return replay(base(r))
    else:
        root, full, counter = parent, replay, parent
        if pv is None:
            pv = parent._view = Aliases()
    aliases = root._view
    assert type(aliases) is Aliases
    aliases.add(out)
    out._view = info = ViewOf(root, full, tuple(sizes), tuple(strides), offset, counter)
    if type(pv) is ViewOf:
        info.multi, info.detached = pv.multi, pv.detached
    ag = parent._ag
    if ag is not None and ag.detached:
        info.detached = True
    node = out._node
    if node is not None and node is not parent._node:  # (a detached alias shares the
        # parent's own node: it reads nothing) the view reads the parent's state of now,
        # held by the graph (so no in-place update of the parent, later, leaves it to the cell)
        state = frozen(parent)
        if state is not parent:
            node.inputs = tuple(state if x is parent else x for x in node.inputs)
            node.cells = state_cells(node.inputs)
    return out


class Frozen:
    """The ``_view`` of a ``frozen`` state: the tensor it was taken from and
    that tensor's version then (PyTorch's saved-tensor check)."""

    __slots__ = ("source", "version", "mut")

    def __init__(self, source: Tensor):
        self.source = source
        self.version = source._version
        self.mut = source._mut  # its state's update then (``.data`` ones count no version)


_FROZEN = Mutation(-1, Tensor._leaf(np.zeros(())), 0, -1)  # (no state before it)


def mark_multi_output(views: list[Tensor], name: str | None) -> list[Tensor]:
    """The views are the outputs of one function (``split``, ``unbind``;
    None: they are not, e.g. ``tensor_split``'s)."""
    for i, v in enumerate(views):
        if type(v._view) is ViewOf:
            v._view.multi = None if name is None else (name, i)
    return views


def frozen(t: Tensor) -> Tensor:
    """A tensor holding ``t``'s current state, for ops to read whatever
    happens to ``t`` later (a view is recomputed after each in-place update
    of its root: the ops that read it before must still find its old state).
    ``t`` itself where its identity matters: it has autograd meta (gradients
    accumulate on it, hooks), or a functional transform is tracing (it knows
    the tensors of its function by identity). A ``pf.compile`` trace alone
    does not count: a view read by an op there and recomputed later (an
    optimizer step updating weights read through ``.t()``) must leave that
    op its state, as outside any trace."""
    ag = t._ag
    if (ag is not None and (ag.requires_grad or ag.retain or ag.hooks or ag.post_hooks)) \
            or GRAD_MODE.trace_depth > GRAD_MODE.jit_depth or type(t._view) is Frozen:
        return t
    s = object.__new__(Tensor)
    s.shape, s.dtype, s._node, s._index, s._value = t.shape, t.dtype, t._node, t._index, t._value
    s._ag, s._hist, s._mut, s._view, s._cell = None, t._hist, _FROZEN, Frozen(t), None
    if ag is not None:  # detached
        s._ag = AutogradMeta()
        s._ag.detached = ag.detached
    return s


# ---- memory shared with numpy (``from_numpy``, ``.numpy()``, ``np.asarray``, DLPack) ----
# A root tensor sharing memory with a numpy array the user holds has an
# ``Aliases`` as ``_view`` (none of its own views needed) whose ``share`` is the
# array: so ``record`` (and ``_native.record``) take their path for views,
# where ``_read_state`` is, and the hot path checks nothing more. The array is
# the truth of the tensor's current state; ``_value`` is either the array
# itself (no op read this state lazily) or a private copy equal to the array
# as it was when pf last looked (one *write epoch*): the first lazy reader of
# an epoch takes that copy, and every reader of the epoch reads the tensor
# itself (one graph leaf, as an unshared tensor). A numpy write pf cannot see
# is found when pf next looks (an op recorded reading the tensor, a value
# read, an in-place update, a compiled call): the array differs from the copy,
# and the tensor takes a new state (as an in-place update: the ops recorded
# before keep the old one). In-place updates through pf are computed at once
# and written into the array (``write_back``).

# functions that only forward their arguments (torch_api's keyword spellings,
# creation's requires_grad=): the caller that counts is theirs
_FORWARDERS = frozenset({"accept_torch_names.<locals>.call", "accept_numpy_names.<locals>.call",
                         "_requires_grad_option.<locals>.wrapped"})


def outside_pyflame(frame: Any) -> bool:
    """The calling frame (past forwarding wrappers) is not pyflame's own code:
    pyflame reads values and makes tensors of arrays it owns and never writes
    them later, so only a user's ``from_numpy``/``.numpy()`` shares memory."""
    while frame is not None and frame.f_code.co_qualname in _FORWARDERS:
        frame = frame.f_back
    name = "" if frame is None else frame.f_globals.get("__name__", "")
    return not (name == "pyflame_mlir" or name.startswith("pyflame_mlir."))


def share(t: Tensor, buf: np.ndarray) -> Tensor:
    """Mark the realized root ``t`` as sharing memory with ``buf`` (an array
    of its shape and dtype, which ``t``'s value equals)."""
    v = t._view
    if v is None:
        v = t._view = Aliases()
    elif type(v) is not Aliases:
        raise AssertionError("internal error: only a root tensor shares memory with numpy")
    v.share, v.synced = buf, t._value
    return t


def unshare(t: Tensor, keep: bool = False) -> None:
    """``t`` shares memory with no array from now on (its value is its own:
    a copy of the array when it was the array, unless ``keep``: no one else
    holds the array any more)."""
    v = t._view
    if type(v) is Aliases and v.share is not None:
        if t._value is v.share and not keep:
            t._value = v.share.copy()  # (the user's array stays the user's)
        v.share = v.synced = None
        if not v.refs:
            t._view = None  # an ordinary tensor again: the fast paths


def shared_root(t: Tensor) -> Tensor | None:
    """The tensor sharing memory with a numpy array that ``t`` is or is a view of."""
    v = t._view
    if type(v) is ViewOf:
        t = v.root
        v = t._view
    return t if type(v) is Aliases and v.share is not None else None


def check_handed(t: Tensor, what: str) -> None:
    """Before an in-place update of ``t`` (a root or a view): raise while an
    array ``.numpy()`` handed out for a view of its lazy root lives (it would
    not follow the update, as PyTorch's does)."""
    v = t._view
    if type(v) is ViewOf:
        v = v.root._view
    if type(v) is Aliases and v.handed:
        v.handed = [r for r in v.handed if r() is not None]
        if v.handed:
            raise NotImplementedError(
                f"{what}: .numpy() handed out an array of a view of this tensor (or of its "
                "root) before the root was computed; it is read-only and would not follow "
                "this update as PyTorch's does. Drop that array first, or call .numpy() "
                "after computing the root (root.numpy() or pf.eval(root))")


def shared_array(t: Tensor) -> np.ndarray | None:
    """The array the root ``t`` shares memory with, or None."""
    v = t._view
    return v.share if type(v) is Aliases else None


def _held(buf: np.ndarray, ours: int) -> bool:
    """Someone but pf (``ours`` references) may write ``buf``: it is a view of
    another array (always counted held), or referenced elsewhere (the user's
    variable, a numpy view of it, a DLPack consumer: conservative)."""
    # (getrefcount: its argument, and the caller's ``buf``)
    return buf.base is not None or sys.getrefcount(buf) > ours + 2


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` and ``b`` hold the same bits (a written -0.0 or NaN payload counts)."""
    k = a.dtype.itemsize
    if k in (1, 2, 4, 8) and b.dtype.itemsize == k:
        u = np.dtype(f"u{k}")
        return bool(np.array_equal(a.view(u), b.view(u)))
    return a.tobytes() == b.tobytes()


def sync_shared(t: Tensor, private: bool) -> None:
    """``t`` (a root sharing memory with numpy) takes the array's current
    values: if numpy wrote it since pf last looked, a new state (the ops
    recorded before keep theirs, views are recomputed). ``private``: its value
    becomes a copy (an op is about to read it lazily: the epoch's one copy).
    An array no one but pf holds any more ends the sharing."""
    al = t._view
    buf = al.share
    v = t._value
    if t._node is not None or v is None:  # (an update pending in a compiled trace; donated)
        return
    if v is not al.synced:  # pf updated it since without writing the array (a compiled
        write_back(t)  # trace's lazy update): pf's state is the truth
        v = t._value
    # pf's references: the Aliases' two, this ``buf``; ``_value``'s and ``v`` when the same
    if v is buf:
        if not _held(buf, 5):
            unshare(t, True)
        elif private:
            t._value = al.synced = buf.copy()  # (no op read this state lazily: no new state)
        return
    held = _held(buf, 2)
    if not _same_bits(v, buf):
        _numpy_wrote(t, buf.copy() if held else buf)
        al.synced = t._value
    if not held:
        unshare(t, True)


def sync_state(t: Tensor) -> None:
    """``sync_shared`` for ``t`` or its root, when shared (a value read)."""
    v = t._view
    if type(v) is ViewOf:
        t = v.root
        v = t._view
    if type(v) is Aliases and v.share is not None:
        sync_shared(t, True)


def _numpy_wrote(t: Tensor, value: np.ndarray) -> None:
    """``t``'s array was written by numpy: ``t`` holds ``value`` (its new
    values) from now on, as after an in-place update that PyTorch's version
    counter does not see; its live views are recomputed from it."""
    old, start = snapshot(t)
    version = raw_version(t)
    new = object.__new__(Tensor)
    new._node, new._index, new._value, new._hist = None, 0, value, None
    rebind(t, old, start, new)
    t._mut.version, t._mut.untracked = version, True
    with untracked_views():
        for w in t._view.live():
            info = w._view
            if info.root_shape != t.shape:
                raise NotImplementedError(
                    f"a view of a tensor sharing memory with numpy, taken at shape "
                    f"{list(info.root_shape)}, after the tensor's shape changed to "
                    f"{list(t.shape)} and numpy wrote the array: take the view again")
            wold, wstart = snapshot(w)
            count = raw_version(w)
            rebind(w, wold, wstart, info.replay(frozen(t)))
            w._mut.version, w._mut.untracked = count, True


def write_back(root: Tensor) -> None:
    """After an in-place update of the shared ``root`` (or of a view of it):
    its new state, computed now, is written into its array (PyTorch writes
    there: the user's array follows). Its value stays a private copy, equal
    to the array: the epoch's copy."""
    al = root._view
    if root._node is not None:
        realize([root])
    v = root._value
    al.synced = v
    if v is al.share:
        return
    if type(v) is not np.ndarray and hasattr(v, "to_host"):
        v = v.to_host()  # (a value the csl backend keeps on the device)
    np.copyto(al.share, v)


# the shared tensors updated in place lazily in a ``pf.compile`` trace (``jit``
# writes their arrays after the traced call: ``flush_pending``)
PENDING_WRITES: list[weakref.ref[Tensor]] = []


def flush_pending() -> None:
    """Write the arrays of the shared tensors a traced call updated in place."""
    while PENDING_WRITES:
        t = PENDING_WRITES.pop()()
        if t is not None and type(t._view) is Aliases and t._view.share is not None:
            write_back(t)


def _numpy_view(rb: np.ndarray, info: ViewOf) -> np.ndarray:
    """The numpy view of ``rb`` (a root's array, any strides) holding the
    elements of the view ``info`` (its geometry is in the root's row-major
    flat storage)."""
    sizes = tuple(info.sizes)
    pos = info.positions()
    if pos.size == 0:
        return np.empty(sizes, rb.dtype)  # (no element to share)

    def address(flat: Any) -> Any:  # byte offsets in rb of root flat positions
        if not rb.ndim:
            return np.zeros_like(flat, dtype=np.int64)  # (a 0-d root: its one element)
        idx = np.unravel_index(flat, rb.shape)
        return sum((i * st for i, st in zip(idx, rb.strides)), np.int64(0))

    base = int(address(info.offset))
    steps = [int(address(info.offset + st)) - base if n > 1 else 0
             for n, st in zip(sizes, info.strides)]
    grid = np.zeros(sizes, np.int64) + base
    for k, (n, b) in enumerate(zip(sizes, steps)):
        shape = [1] * len(sizes)
        shape[k] = n
        grid = grid + (np.arange(n, dtype=np.int64) * b).reshape(shape)
    if not np.array_equal(grid, address(pos)):
        raise NotImplementedError(
            f"numpy() of a view ({list(sizes)}) of a tensor sharing memory with a numpy array "
            f"of strides {list(rb.strides)}: its elements are at no fixed strides in that "
            "array (a reshape across them); use .clone().numpy() (a copy)")
    # a view (not a scalar copy) starting at the first element
    first = rb[tuple(slice(int(i), int(i) + 1) for i in np.unravel_index(info.offset, rb.shape))
               ] if rb.ndim else rb[...]
    return np.lib.stride_tricks.as_strided(first, sizes, steps)


def hand_out(t: Tensor) -> np.ndarray:
    """``t.numpy()`` called by the user: an array sharing memory with ``t``
    from now on, as PyTorch's (in-place updates of ``t`` write into it; numpy
    writes into it are seen by what pf records after them). The value itself
    when nothing else may read it (no copy), else a copy of it; for a view, a
    numpy view of its root's array."""
    info = t._view
    if type(info) is ViewOf:
        root = info.root
        if root._node is not None and shared_array(root) is None \
                and not (info.replay is detached_alias and t.shape == root.shape):
            # the root is not computed: the view's values alone, read-only (computing
            # the root to share its memory would cost an evaluation the user did not
            # ask for); an in-place update of the root while it lives raises. (A
            # detached alias, ``x.detach()``/``x.data``, is the root's value: the root
            # is computed with it and shared, the logging idiom ``w.detach().numpy()``.)
            arr = t._read().view()
            arr.flags.writeable = False
            al = root._view
            if al.handed is None:
                al.handed = []
            al.handed = [r for r in al.handed if r() is not None] + [weakref.ref(arr)]
            return arr
        rb = hand_out(root)
        if t._node is not None or REALIZE_GUARDS:
            realize([t])
        return _numpy_view(rb, info)
    if type(info) is Aliases and info.share is not None:
        buf = info.share
        if t._node is not None:  # (an in-place update pending in a compiled trace)
            write_back(t)
        elif REALIZE_GUARDS:
            realize([t])
        return buf
    v = t._read()
    if type(v) is not np.ndarray:
        return v
    # the value itself when only ``t`` holds it and no op recorded may still read it
    # (held by: ``_value``, ``v``, getrefcount's argument)
    if t._cell is None and v.base is None and v.flags.writeable and v.flags.owndata \
            and sys.getrefcount(v) <= 3:
        buf = v
    else:  # another tensor, a graph or a plan may read it: the user's own copy
        buf = np.array(v, copy=True)
    share(t, buf)
    return buf


def reshape_strides(sizes: Sequence[int], strides: Sequence[int], shape: Sequence[int]
                    ) -> tuple[int, ...] | None:
    """The strides of ``shape`` viewing elements of geometry (sizes, strides)
    in order, or None if no strides can (PyTorch's ``computeStride``: then
    ``view`` raises and ``reshape`` copies)."""
    if not sizes:
        return (1,) * len(shape)
    if _numel(sizes) == 0:
        return contiguous_strides(shape)
    new = [0] * len(shape)
    view_d = len(shape) - 1
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[d]
        if d == 0 or (sizes[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


# ---- the native hot paths ----
#
# ``_native.c`` (a C extension built at install; ``setup.py``) does the
# semantics-free bookkeeping of ``record``'s memo hit and ``_collect_plain``'s
# walk, with the same results, nodes and cache keys; it calls the Python
# ``record`` above for everything else (a miss, views, eager mode, anomaly
# detection, several results). Without it, or with PYFLAME_NO_NATIVE=1 (read
# once, here), the Python paths run.

def _load_native() -> Any:
    if os.environ.get("PYFLAME_NO_NATIVE", "") not in ("", "0"):
        return None
    try:
        from . import _native
    except ImportError:
        return None
    if getattr(_native, "API", None) != _NATIVE_API:
        import warnings

        warnings.warn(f"pyflame_mlir._native is a stale build (API {getattr(_native, 'API', '?')}"
                      f", this core.py needs {_NATIVE_API}): the pure-Python paths run; "
                      "rebuild it with pip install -e . (make)", RuntimeWarning, stacklevel=2)
        return None
    return _native


_NATIVE_API = 2  # _native.c's API_VERSION: raised when the C side's contract changes


_NATIVE = _load_native()
python_record = record  # the pure-Python recorder (the native one falls back to it)
if _NATIVE is not None:
    _NATIVE.configure(
        Tensor=Tensor, OpNode=OpNode, AutogradMeta=AutogradMeta, Frozen=Frozen, DType=DType,
        Subgraph=Subgraph, core_globals=globals(), counters=COUNTERS, graph=GRAPH,
        config=CONFIG, grad_off=_GRAD_OFF, scopes=_SCOPES, mutations=MUTATIONS, local=_local,
        grad_mode=GRAD_MODE, seq=_next_seq.__self__, fallback=python_record,
        frozen_mut=_FROZEN, float_category=FLOAT)
    record = _NATIVE.record  # noqa: F811 (the same function, its hot path in C)


def tensor_method(fn: Callable[..., Any], op: OpDef, categories: Sequence[int]
                  ) -> Callable[..., Any]:
    """The Tensor method (an operator, ``x.tanh()``) for ``fn``, the Python
    wrapper of the elementwise ``op``: ``fn`` itself, or with the C extension
    a native method that records ``op`` on Tensor operands of one dtype whose
    category is in ``categories`` -- the case where ``fn`` records ``op`` on its
    operands as they are -- and calls ``fn`` for everything else."""
    if _NATIVE is None:
        return fn
    m = _NATIVE.method(fn, op, NO_ATTRS, op.num_inputs, tuple(categories))
    m.__name__, m.__qualname__, m.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    m.__module__, m.__wrapped__ = fn.__module__, fn
    return m


def count_ref(wiring: tuple[int, ...], ref: int) -> int:
    """``wiring.count(ref)`` (natively: comparing machine ints)."""
    return wiring.count(ref) if _NATIVE is None else _NATIVE.count_ref(wiring, ref)


def native_enabled() -> bool:
    """Whether the C hot paths (``_native.c``) run in this process."""
    return _NATIVE is not None
