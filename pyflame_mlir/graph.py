"""Recording and evaluation: OpNodes, graphs and scopes, the compiled-graph cache.

Recording an op (``record``) runs the op's shape rule and allocates one
``OpNode`` and its output Tensors: no IR, no hashing. ``evaluate`` walks the
needed subgraph once, builds the cache key from it (a canonical encoding of
ops, attributes, shapes, dtypes and the wiring, never leaf data), and either
runs the cached executable on the new leaf data or compiles on a miss.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import struct
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .dialects.data import DenseValue
from .dialects.dtypes import DType
from .dialects.opdef import OpDef, Spec

if TYPE_CHECKING:
    from .compiler import CompiledGraph
    from .tensor import Tensor


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


CONFIG = Config()


class _GradMode(threading.local):
    enabled: bool = True  # per thread, like PyTorch's grad mode


GRAD_MODE = _GradMode()


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


@contextmanager
def reuse_graph(g: Graph) -> Iterator[Graph]:
    """Record into ``g`` for the duration of the block (this thread only)."""
    prev = _local.graph
    _local.graph = g
    try:
        yield g
    finally:
        _local.graph = prev


@contextmanager
def graph_scope(name: str | None = None) -> Iterator[Graph]:
    """Record into a fresh graph for the duration of the block."""
    with reuse_graph(Graph(name)) as g:
        yield g


# ---- nodes ----

_next_seq = itertools.count().__next__
_SIG_IDS: dict[tuple, int] = {}  # interned node signatures (see OpNode.sig_id)
_next_sig_id = itertools.count().__next__


class OpNode:
    """One recorded op. ``specs`` holds one (shape, dtype) per result; ``seq``
    orders nodes by creation (ops without operands first), which is always a
    topological order."""

    __slots__ = ("op", "inputs", "attrs", "specs", "seq", "nograd", "_sig", "_sig_id", "keep")

    def __init__(self, op: OpDef, inputs: tuple[Tensor, ...], attrs: dict[str, Any],
                 specs: tuple[Spec, ...]):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.specs = specs
        # creation order is a topological order; ops without operands
        # (constants) need none, and go first wherever they were made, so a
        # constant shared between steps (ops.py) leaves the structure unchanged
        self.seq = _next_seq() if inputs else -1
        self.nograd = not GRAD_MODE.enabled  # recorded under no_grad: a constant for autodiff
        self._sig: tuple | None = None
        self._sig_id: int | None = None
        # weak references to outputs realized whenever this node is computed
        # (``.grad`` tensors: see autodiff.backward)
        self.keep: list[weakref.ref[Tensor]] | None = None

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


Tensor_: Any = None  # the Tensor class, bound by tensor.py once it exists
_MEMO_LIMIT = 4096


def record(op: OpDef, inputs: tuple[Tensor, ...], attrs: dict[str, Any]
           ) -> Tensor | list[Tensor]:
    """Record one op; returns its output promise(s). Shape errors raise here.

    The hot path of the library. Ops with an exact key for their attributes
    (``OpDef.memo_attrs``) memoize their shape rule and interned signature per
    (shapes, dtypes, attributes): the rule is still the only source of truth.
    Constants hit by the identity of their ``DenseValue``, which
    ``splat_value`` interns; a vjp by its traced function's key."""
    memo_attrs = op.memo_attrs
    if memo_attrs is not None:
        if len(inputs) == 2:
            a, b = inputs
            key: tuple = (a.shape, b.shape, a.dtype, b.dtype)
        elif len(inputs) == 1:
            a = inputs[0]
            key = (a.shape, a.dtype)
        else:
            key = tuple([t.shape for t in inputs] + [t.dtype for t in inputs])
        if attrs:
            key = (key, memo_attrs(attrs))
        try:
            hit = op.memo.get(key)
        except TypeError:  # an unhashable attribute value (a list): no memo
            hit, key = None, None
        if hit is None:
            specs = op.check([t.shape for t in inputs], [t.dtype for t in inputs], attrs)
            node = OpNode(op, inputs, attrs, specs)
            if key is not None:
                if len(op.memo) > _MEMO_LIMIT:
                    op.memo.clear()
                op.memo[key] = (specs, node.sig_id)
        else:
            node = OpNode(op, inputs, attrs, hit[0])
            node._sig_id = hit[1]
    else:
        specs = op.check([t.shape for t in inputs], [t.dtype for t in inputs], attrs)
        node = OpNode(op, inputs, attrs, specs)
    COUNTERS.ops_recorded += 1
    _local.graph.ops_recorded += 1
    if op.num_results == 1:
        (shape, dt), = node.specs
        out = Tensor_._promise(node, 0, shape, dt)
        if CONFIG.eager:
            evaluate([out])
        return out
    outs = [Tensor_._promise(node, i, s, d) for i, (s, d) in enumerate(node.specs)]
    if CONFIG.eager:
        evaluate(outs)
    return outs


# ---- the subgraph of some outputs ----

def split_ref(r: int) -> tuple[int, int]:
    """A reference to a value: ``-1 - n`` is leaf n; else node position and result index."""
    return (r, 0) if r < 0 else (r >> 16, r & 0xFFFF)


class Subgraph:
    """The lazy part of the DAG that some outputs need, in topological order."""

    __slots__ = ("nodes", "leaves", "outputs", "wiring", "_refs")

    def __init__(self, nodes: list[OpNode], leaves: list[Tensor], outputs: list[int],
                 wiring: tuple[int, ...]):
        self.nodes = nodes
        self.leaves = leaves  # realized tensors feeding it: the function's arguments
        self.outputs = outputs  # a reference (see split_ref) per requested tensor
        self.wiring = wiring  # per node: its signature id, its input count, its refs
        self._refs: list[list[int]] | None = None

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
            boundary: Callable[[Tensor], bool] | None = None) -> Subgraph:
    """Gather the lazy nodes the tensors need, order them by creation, and
    number the realized leaves by first use. The one pass that numbers the
    inputs also writes the wiring of the cache key.

    For a function traced out of the graph (autodiff), ``args`` become the
    first leaves whatever they are, and tensors for which ``boundary`` holds
    are leaves too (the walk does not go past them)."""
    leaves: list[Tensor] = list(args)
    pos: dict[int, int] = {id(t): -1 - i for i, t in enumerate(leaves)}  # leaves, by id
    cut: set[int] = set(pos)  # lazy tensors that are leaves here (ids)
    seen: dict[OpNode, None] = {}  # nodes hash by identity (tensors overload ==)
    todo = list(tensors)  # tensors whose producers may be needed
    pop, extend = todo.pop, todo.extend
    while todo:
        t = pop()
        m = t._node
        if m is None or (cut and id(t) in cut):
            continue
        if boundary is not None and boundary(t):  # before `seen`: a detached alias
            cut.add(id(t))                         # shares its node with a live tensor
            continue
        if m not in seen:
            seen[m] = None
            extend(m.inputs)
    nodes = sorted(seen, key=_by_seq)
    at = {n: i << 16 for i, n in enumerate(nodes)}
    wiring: list[int] = []
    add = wiring.append
    for n in [*nodes, None]:  # None: the requested tensors, last
        if n is not None:
            sid = n._sig_id
            add(sid if sid is not None else n.sig_id)
            add(len(n.inputs))
            ins = n.inputs
        else:
            outputs_at = len(wiring)
            ins = tensors
        for t in ins:
            m = t._node
            if m is not None and not (cut and id(t) in cut):
                add(at[m] | t._index)
                continue
            lr = pos.get(id(t))  # leaves share the map, under the tensor's id
            if lr is None:
                lr = pos[id(t)] = -1 - len(leaves)
                leaves.append(t)
            add(lr)
    outputs = wiring[outputs_at:]
    del wiring[outputs_at:]
    return Subgraph(nodes, leaves, outputs, tuple(wiring))

_by_seq = operator.attrgetter("seq")


# ---- the compiled-graph cache ----

class CompileCache:
    """Compiled executables keyed by the canonical encoding of the subgraph.

    The key itself (not its hash) is the dict key, so two graphs share an
    entry only if their encodings are equal; ``stable_hash`` is the blake2b of
    that encoding, identical across processes (used by on-disk caches)."""

    def __init__(self, max_entries: int = 512):
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, CompiledGraph] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> CompiledGraph | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry

    def put(self, key: tuple, entry: CompiledGraph) -> None:
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "entries": len(self._entries),
                    "bytes": sum(e.nbytes for e in self._entries.values())}

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


CACHE = CompileCache()


_PIPELINE_SPECS: dict[tuple, str] = {}


def config_key(backend: str | None = None, optimize: bool | None = None) -> tuple:
    """(backend, pipeline, the backend's own settings): part of every cache key.
    Each setting is read once; the pipeline text is memoized on them (it runs
    at every evaluation), the backend and its token are asked each time."""
    name = backend or CONFIG.backend
    opt = CONFIG.optimize if optimize is None else optimize
    setting = CONFIG.pipeline
    spec_key = (name, setting, opt)
    spec = _PIPELINE_SPECS.get(spec_key)
    if spec is None:
        spec = _PIPELINE_SPECS[spec_key] = _compiler.pipeline_for(name, setting) if opt else ""
    b = _compiler.BACKENDS.get(name)
    token = b.token if b is not None else None
    return (name, spec, token() if token is not None else None)


# ---- evaluation ----

def evaluate(tensors: Sequence[Tensor]) -> None:
    """Compute every lazy tensor in ``tensors`` in one compiled graph.

    Tensors a node ``keep``s (``.grad`` after ``backward()``) are computed
    with it: as in PyTorch they are values once backward has run, a later
    read costs nothing, and no cycle through ``.grad`` keeps old values alive."""
    lazy = [t for t in tensors if t._node is not None]
    if not lazy:
        return
    sub = collect(lazy)
    for i, n in enumerate(sub.nodes):
        if n.keep is not None:
            for ref in n.keep:
                t = ref()
                if t is not None and t._node is n:
                    sub.outputs.append(i << 16 | t._index)
                    lazy.append(t)
    key = sub.key(config_key())
    entry = CACHE.get(key)
    if entry is None:
        entry = _compiler.compile_subgraph(sub, key)
        CACHE.put(key, entry)
    COUNTERS.evaluations += 1
    current_graph().evaluations += 1
    results = entry.run([t._value for t in sub.leaves])
    COUNTERS.executions += 1
    for t, value in zip(lazy, results):
        if t._node is not None:  # the same tensor may be requested twice
            t._realize(value)


def number_key(v: object) -> tuple | None:
    """A key equal only for the same Python number: type and exact bits (so
    0.0 and -0.0, or 1 and True, differ); None for anything else."""
    t = type(v)
    if t is float:
        return (t, struct.pack("<d", v))
    if t is int or t is bool:
        return (t, v)
    return None


_SPLATS: dict[tuple, DenseValue] = {}


def splat_value(v: object, shape: tuple[int, ...], d: DType) -> DenseValue:
    """The value of a constant filled with the number ``v``. Python numbers are
    interned (``number_key``), so recording the same constant again hits
    ``record``'s memo (a scalar in every training step costs no shape rule
    and no hashing)."""
    nk = number_key(v)
    if nk is None:
        return DenseValue(np.asarray(v, dtype=d.np), shape, d)
    k = (d, shape, nk)
    value = _SPLATS.get(k)
    if value is None:
        if len(_SPLATS) > _MEMO_LIMIT:
            _SPLATS.clear()
        value = _SPLATS[k] = DenseValue(np.asarray(v, dtype=d.np), shape, d)
    return value


def constant_value(v: object, d: DType) -> DenseValue:
    return splat_value(v, (), d)


# the compile driver imports this module; its functions are only called later
from . import compiler as _compiler  # noqa: E402
