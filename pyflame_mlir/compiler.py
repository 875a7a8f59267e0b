"""The compile driver: recorded subgraph -> ``pyflame`` IR -> passes -> backend.

``evaluate`` looks the subgraph up in the compiled-graph cache (``CACHE``,
keyed by the subgraph's encoding and ``config_key``) and compiles only on a
miss; this module installs it as the core's evaluator at import. Backends
are records in one table (``BACKENDS``).

Compiling only runs on a cache miss. The IR is built directly from the recorded nodes
(no text round trip); the pass pipeline is the same registry
``pyflame-opt -p`` uses; the backend turns the optimized module into an
executable whose ``run(leaf_arrays)`` returns the output arrays.
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .core import (
    CONFIG,
    COUNTERS,
    Subgraph,
    Tensor,
    collect,
    count_ref,
    current_graph,
    install_evaluator,
    split_ref,
)

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

    from .passes.common import PipelineStatistics
    from .runtime.csl_backend import CslExecutable

_log = logging.getLogger(__name__)  # compiles at INFO, hits and pass statistics at DEBUG

# Function-body imports in this module keep xDSL (the IR, passes, lowerings)
# and the optional backends (MAX, the CSL runtime) off the ``import
# pyflame_mlir`` path: they load on the first compile, never on a cache hit.


# ---- backends ----

@dataclass
class Backend:
    name: str
    lower: Callable[[ModuleOp], Any]  # module -> executable with .run and .nbytes
    available: Callable[[], str | None] = lambda: None  # None, or why it is unavailable
    # what executables depend on besides the graph (device, options): in the cache key
    token: Callable[[], Any] | None = None
    # executables keep state between runs (the csl backend's resident parameters): the
    # driver tells them which leaves the outputs write back (``writebacks``) and which
    # outputs were asked for (the rest may stay on the device until read)
    keeps_state: bool = False


# Each backend's functions import its runtime on first use (xDSL, MAX, the
# simulator are heavy or optional); a runtime never imports this driver.

def _reference_lower(module: ModuleOp) -> Any:
    from .lowering.reference import lower
    from .runtime.reference import ReferenceExecutable

    return ReferenceExecutable(lower(module))


def _max_lower(module: ModuleOp) -> Any:
    from .runtime.max_backend import lower_and_compile

    return lower_and_compile(module)


def _max_token() -> Any:
    from .runtime.max_backend import config_token

    return config_token()


def _max_available() -> str | None:
    from .runtime.max_backend import unavailable_reason
    return unavailable_reason()


def _csl_lower(module: ModuleOp) -> Any:
    from .runtime.csl_backend import lower

    return lower(module)


def _mlir_lower(module: ModuleOp) -> Any:  # upstream MLIR + LLVM JIT on the CPU
    from .runtime.mlir_backend import lower_and_compile

    return lower_and_compile(module)


def _mlir_available() -> str | None:
    from .runtime.mlir_backend import unavailable_reason

    return unavailable_reason()


def _mlir_token() -> Any:
    from .runtime.mlir_backend import config_token

    return config_token()


# The backend table: the one place the driver (and pf.set_backend) learns of backends.
BACKENDS: dict[str, Backend] = {
    "reference": Backend("reference", _reference_lower),
    "max": Backend("max", _max_lower, _max_available, _max_token),
    "csl": Backend("csl", _csl_lower, keeps_state=True),
    "mlir": Backend("mlir", _mlir_lower, _mlir_available, _mlir_token),
}


def get_backend(name: str) -> Backend:
    try:
        b = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; available: "
                         f"{', '.join(BACKENDS)}") from None
    why = b.available()
    if why:
        raise RuntimeError(f"backend {name!r} is not available: {why}")
    return b


# ---- pipeline ----

def pipeline_spec(backend: str | None = None) -> str:
    """The pipeline ``evaluate`` runs: the one set by ``pf.set_pipeline``, else
    the default of the backend (fusion only where the lowering has fused kernels)."""
    return pipeline_for(backend or CONFIG.backend, CONFIG.pipeline)


def pipeline_for(backend: str, setting: str | None) -> str:
    """The pipeline a ``pf.set_pipeline`` setting (None: the default) means on ``backend``."""
    from .passes import default_pipeline

    return setting if setting is not None else default_pipeline(backend)


def make_context() -> Context:
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    from .dialects.pyflame import Pyflame

    ctx = Context()
    for d in (Builtin, Func, Pyflame):
        ctx.load_dialect(d)
    return ctx


def run_pipeline(module: ModuleOp, spec: str, ctx: Context | None = None
                 ) -> PipelineStatistics:
    """Run the passes of ``spec`` (a pass list or a pipeline name) on ``module``;
    returns what each pass did (ops before/after, time, its counters)."""
    from .passes.pipeline import run_pipeline as run

    return run(module, spec, ctx or make_context())


# ---- IR build ----

def build_module(sub: Subgraph) -> ModuleOp:
    """One ``func.func @main`` whose arguments are the leaves, in order; each
    differentiated function becomes a private function next to it."""
    from xdsl.dialects.builtin import ModuleOp

    module = ModuleOp([])
    COUNTERS.ir_builds += 1
    module.body.block.add_op(_build_func(sub, "main", module, {}))
    return module


def _build_func(sub: Subgraph, name: str, module: ModuleOp, funcs: dict[int, str],
                private: bool = False) -> Any:
    from xdsl.dialects import func
    from xdsl.ir import Block, Region

    from .dialects.pyflame import JvpOp, VjpOp, VmapOp, create_op, tensor_type

    block = Block(arg_types=[tensor_type(t.shape, t.dtype) for t in sub.leaves])
    results: list[Sequence[Any]] = []

    def value(ref: int) -> Any:
        pos, idx = split_ref(ref)
        return block.args[-1 - pos] if pos < 0 else results[pos][idx]

    for node, refs in zip(sub.nodes, sub.refs):
        operands = [value(r) for r in refs]
        if node.op.family == "transform":
            fn = node.attrs["fn"]
            callee = funcs.get(id(fn))
            if callee is None:  # one private function per traced function
                callee = funcs[id(fn)] = f"{node.op.name}_fn{len(funcs)}"
                module.body.block.add_op(_build_func(fn.sub, callee, module, funcs, True))
            if node.op.name == "vmap":
                op = VmapOp(callee, operands, node.attrs["in_axes"], node.attrs["out_axes"],
                            node.attrs["axis_size"], [tensor_type(s, d) for s, d in node.specs])
            else:
                cls = VjpOp if node.op.name == "vjp" else JvpOp
                n = len(fn.sub.leaves)
                op = cls(callee, operands[:n], operands[n:], node.attrs["wrt"],
                         [tensor_type(s, d) for s, d in node.specs])
        else:
            op = create_op(node.op.name, operands, node.attrs, node.specs)
        block.add_op(op)
        results.append(op.results)
    outs = [value(r) for r in sub.outputs]
    block.add_op(func.ReturnOp(*outs))
    return func.FuncOp(name, ([a.type for a in block.args], [v.type for v in outs]),
                       Region(block), visibility="private" if private else None)


def expand_transforms(module: ModuleOp) -> None:
    """Batch (``pyflame-vmap``, which also expands the vjp/jvp it nests with)
    and differentiate (``pyflame-autodiff``): every backend needs it, so it
    runs whether or not the optimization pipeline does."""
    from .passes.autodiff import PyflameAutodiff, has_transforms
    from .passes.vmap import PyflameVmap, has_vmap

    if has_vmap(module):  # batch (and differentiate around it), innermost first
        PyflameVmap().apply(make_context(), module)
    if has_transforms(module):
        PyflameAutodiff().apply(make_context(), module)


# ---- compile ----

@dataclass
class CompiledGraph:
    executable: Any
    key_hash: str
    backend: str
    pipeline: str
    timings: dict[str, float]
    ops_before: int
    ops_after: int
    nbytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def run(self, args: list, donated: Sequence[int] = ()) -> list:
        """The outputs for ``args``; the arrays at ``donated`` positions may be
        overwritten (reused for an output) by executables that can."""
        checks = self.extra.get("index_checks")
        try:
            out = self.executable.run(args, donated) if donated and getattr(
                self.executable, "can_donate", False) else self.executable.run(args)
        except ValueError as e:  # MAX's own kernels check some indices themselves
            if checks and "out of bounds" in str(e):
                raise IndexError(_backend_index_error(checks, str(e), self.backend)) from e
            raise
        if not checks:
            return out
        from .passes.check_indices import check_message

        n = len(out) - len(checks)
        for entry, count in zip(checks, out[n:]):
            if int(count):
                raise IndexError(check_message(entry, int(count), self.backend))
        return out[:n]


def count_ops(module: ModuleOp) -> int:
    from .dialects.pyflame import PyflameOp, VmapOp, _TransformOp

    return sum(1 for op in module.walk() if isinstance(op, PyflameOp | _TransformOp | VmapOp))


def compile_subgraph(sub: Subgraph, key: tuple,
                     writebacks: tuple[tuple[int, int], ...] = ()) -> CompiledGraph:
    from .passes.pipeline import gc_paused

    with gc_paused():  # linear compile time: see gc_paused
        return _compile_subgraph(sub, key, writebacks)


WRITEBACK_ATTR = "pyflame.writeback"  # module attribute: [[leaf, output], ...] (writebacks)


def set_writebacks(module: ModuleOp, writebacks: tuple[tuple[int, int], ...]) -> None:
    """Record on ``module`` which outputs update which leaves in place (the csl
    lowering keeps that state resident in PE memory)."""
    from xdsl.dialects.builtin import ArrayAttr, IntAttr

    module.attributes[WRITEBACK_ATTR] = ArrayAttr(
        ArrayAttr((IntAttr(j), IntAttr(k))) for j, k in writebacks)


def _compile_subgraph(sub: Subgraph, key: tuple,
                      writebacks: tuple[tuple[int, int], ...] = ()) -> CompiledGraph:
    backend_name, spec, _ = key[0]
    backend = get_backend(backend_name)
    t0 = time.perf_counter()
    module = build_module(sub)
    if writebacks:
        set_writebacks(module, writebacks)
    t1 = time.perf_counter()
    expand_transforms(module)
    from .passes.common import count_ops as count_executed_ops

    before = count_executed_ops(module)  # a pyflame.fused region counts as one op
    checks = _add_index_checks(module) if backend_name not in CHECKED_INDICES else []
    stats = run_pipeline(module, spec)
    t2 = time.perf_counter()
    executable = backend.lower(module)
    t3 = time.perf_counter()
    COUNTERS.compiles += 1
    key_hash = sub.stable_hash(key[0])
    _log_compile(key_hash, backend_name, executable, t1 - t0, t2 - t1, t3 - t2, stats)
    return CompiledGraph(executable, key_hash, backend_name, spec,
                         {"ir_build": t1 - t0, "passes": t2 - t1, "lowering": t3 - t2,
                          "total": t3 - t0}, before, count_executed_ops(module),
                         getattr(executable, "nbytes", 0),
                         {"pass_statistics": stats.as_dict(), "index_checks": checks})


def _backend_index_error(checks: list[str], message: str, backend: str) -> str:
    """An out-of-range index a backend's kernel reported itself: named by the
    checked ops its message mentions (gather, scatter...), else all of them."""
    names = sorted({c.split(":")[0] for c in checks})
    named = [n for n in names if n.split("_")[0] in message] or names
    line = next((ln.strip() for ln in message.splitlines() if "out of bounds" in ln), message)
    return (f"pyflame.{'/'.join(named)}: an index is out of bounds (the {backend} backend "
            f"reported: {line})")


# Backends whose kernels raise on an out-of-range index themselves; the others
# get the ``check-indices`` pass (a wrong read is never returned silently).
CHECKED_INDICES = frozenset({"reference"})


def _add_index_checks(module: ModuleOp) -> list[str]:
    from .passes.check_indices import CheckIndices, index_checks

    CheckIndices().apply(make_context(), module)
    return index_checks(module)


def _log_compile(key_hash: str, backend: str, executable: Any, ir: float, passes: float,
                 lowering: float, stats: PipelineStatistics) -> None:
    """One INFO record per in-memory cache miss; where the backend's executable
    came from (``source``: MAX says ``disk``/``memory``, mlir the library's path)."""
    source = getattr(executable, "source", None)
    origin = ("loaded from the disk cache" if source == "disk" or str(source).endswith(".so")
              else "reused in memory" if source == "memory" else "compiled")
    _log.info("cache miss: graph %s on %s in %.1f ms, %s (IR %.1f ms, passes %.1f ms, "
              "lowering %.1f ms)", key_hash[:16], backend, (ir + passes + lowering) * 1e3,
              origin, ir * 1e3, passes * 1e3, lowering * 1e3)
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("pass statistics of graph %s: %s", key_hash[:16], stats.as_dict())


# ---- the compiled-graph cache ----

class CompileCache:
    """Compiled executables keyed by the canonical encoding of the subgraph.

    The key itself (not its hash) is the dict key, so two graphs share an
    entry only if their encodings are equal; ``stable_hash`` is the blake2b of
    that encoding, identical across processes (used by on-disk caches).

    Least recently used entries go first. A hit only stamps its entry with a
    tick (an ``OrderedDict.move_to_end`` would hash the key and compare it
    again: a 1000-op graph's key costs ~9 us to hash and ~12 us to compare);
    a ``put`` past ``max_entries`` evicts the entry with the oldest tick."""

    def __init__(self, max_entries: int = 512):
        self.max_entries = max_entries
        # key -> [entry, tick of its last use]
        self._entries: dict[tuple, list] = {}
        self._tick = itertools.count().__next__
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> CompiledGraph | None:
        with self._lock:
            slot = self._entries.get(key)
            if slot is None:
                self.misses += 1
                return None
            slot[1] = self._tick()
            self.hits += 1
            return slot[0]

    def put(self, key: tuple, entry: CompiledGraph) -> None:
        with self._lock:
            entries = self._entries
            entries[key] = [entry, self._tick()]
            while len(entries) > self.max_entries:
                del entries[min(entries, key=lambda k: entries[k][1])]

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "entries": len(self._entries),
                    "bytes": sum(e.nbytes for e, _ in self._entries.values())}

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
        spec = _PIPELINE_SPECS[spec_key] = pipeline_for(name, setting) if opt else ""
    b = BACKENDS.get(name)
    token = b.token if b is not None else None
    return (name, spec, token() if token is not None else None)


# ---- evaluation ----

def evaluate(tensors: Sequence[Tensor]) -> None:
    """Compute every lazy tensor in ``tensors`` in one compiled graph (what
    ``Tensor.numpy()``, ``pf.eval`` and eager mode run, through ``core.realize``).

    Tensors a node ``keep``s (``.grad`` after ``backward()``) are computed
    with it: as in PyTorch they are values once backward has run, a later
    read costs nothing, and no cycle through ``.grad`` keeps old values alive."""
    lazy = [t for t in tensors if t._node is not None]
    if not lazy:
        return
    sub = collect(lazy)
    requested = len(lazy)
    lazy += sub.pending
    for at, n in sub.kept:  # (the walk found them)
        for ref in n.keep:
            t = ref()
            if t is not None and t._node is n and _held_outside(t, at | t._index, sub):
                sub.outputs.append(at | t._index)
                lazy.append(t)
    config = config_key()
    key = sub.key(config)
    backend = BACKENDS.get(config[0])
    stateful = backend is not None and backend.keeps_state
    writebacks = writeback_pairs(sub, lazy) if stateful and sub.pending else ()
    if writebacks:
        key = (*key, writebacks)
    entry = CACHE.get(key)
    if entry is None:
        entry = compile_subgraph(sub, key, writebacks)
        CACHE.put(key, entry)
    elif _log.isEnabledFor(logging.DEBUG):
        _log.debug("cache hit: graph %s on %s", entry.key_hash[:16], entry.backend)
    COUNTERS.evaluations += 1
    current_graph().evaluations += 1
    if stateful:  # outputs past the requested ones may stay on the device until read
        results = entry.executable.run([t._value for t in sub.leaves], requested=requested)
    else:
        args = [t._value for t in sub.leaves]
        for i, v in enumerate(args):
            if type(v) is not np.ndarray:
                args[i] = host_array(v)
        results = entry.run(args)
    COUNTERS.executions += 1
    for t, value in zip(lazy, results):
        if t._node is not None:  # the same tensor may be requested twice
            t._realize(value)


def _held_outside(t: Tensor, ref: int, sub: Subgraph) -> bool:
    """Whether something besides the ops of ``sub`` holds the kept tensor ``t``
    (a ``.grad`` after ``backward()``). One nothing else holds (``p.grad = None``
    after ``p -= lr * p.grad``) is not made an output: its graph can then keep
    its memory in planned buffers (or fold it into its one use); it stays a
    valid promise, so a holder the count misses only recomputes it when read.
    References to ``t``: this frame's, the caller's ``t``, getrefcount's
    argument, and at most one per use of its value by ``sub``'s ops."""
    return sys.getrefcount(t) - 3 > count_ref(sub.wiring, ref)


def writeback_pairs(sub: Subgraph, outputs: Sequence[Tensor]) -> tuple[tuple[int, int], ...]:
    """(leaf, output) for every output that is the in-place update of a leaf (a
    parameter or optimizer state after ``p.sub_(...)``): the state it replaces is
    found by walking the tensor's in-place updates back to a leaf of ``sub``. An
    intermediate state (``p`` between ``p.mul_`` and ``p.add_``) is not paired: only
    the last update of a leaf writes it back."""
    leaf_at = {id(t): j for j, t in enumerate(sub.leaves)}
    found: list[tuple[int, int, Tensor]] = []
    inner: set[int] = set()  # states that a later update replaced within the graph
    for k, t in enumerate(outputs):
        m = t._mut
        while m is not None:
            prev = m.prev if m.prev is not None else m.ref()
            if prev is None:
                break
            j = leaf_at.get(id(prev))
            if j is not None:
                found.append((j, k, t))
                break
            inner.add(id(prev))
            m = prev._mut
    return tuple((j, k) for j, k, t in found if id(t) not in inner)


def host_array(v: np.ndarray) -> np.ndarray:
    """``v`` on the host: a value a stateful backend left on its device is copied out."""
    if type(v) is not np.ndarray:
        if v is None:
            raise RuntimeError("a tensor this computation reads was donated to a pf.compile'd "
                               "function (donate_argnums) and has been deleted (JAX: 'Array "
                               "has been deleted'): use the function's result instead")
        if hasattr(v, "to_host"):
            return v.to_host()
    return v


install_evaluator(evaluate)  # Tensor.numpy() and eager mode compute through it (core.realize)


# ---- user-facing inspection ----

def _as_list(ts: Any) -> list[Tensor]:
    return list(ts) if isinstance(ts, list | tuple) else [ts]


def _eager_hint() -> str:
    """Why nothing is recorded in eager mode, for the "nothing to compile" errors."""
    return (" (eager mode, PYFLAME_EAGER=1: every op ran when it was recorded; record "
            "the graph lazily with pf.CONFIG.eager = False, or trace a function with "
            "pf.compile(f).lower(*args))") if CONFIG.eager else ""


def to_mlir(tensors: Any, optimize: bool = False, generic: bool = False) -> str:
    """The ``pyflame`` module computing ``tensors`` (after the pipeline if ``optimize``)."""
    from xdsl.printer import Printer

    given = _as_list(tensors)
    for t in given:
        if not isinstance(t, Tensor):
            hint = (" (a function: pf.compile(f).lower(*args) or pf.trace(f, *args) gives "
                    "its IR)" if callable(t) else "")
            raise TypeError(f"to_mlir: expects tensors, got {type(t).__name__}{hint}")
    sub = collect(given)
    if not sub.nodes:
        raise ValueError(f"to_mlir: nothing to compile, every tensor is already realized"
                         f"{_eager_hint()}")
    module = build_module(sub)
    if optimize:
        expand_transforms(module)
        run_pipeline(module, pipeline_spec())
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue() + "\n"


@dataclass
class CompileReport:
    """What ``pf.compile_graph`` returns."""

    key: str
    backend: str
    pipeline: str
    cached: bool
    timings: dict[str, float]
    ops_before: int
    ops_after: int
    num_inputs: int
    num_outputs: int
    # per pass, in pipeline order: runs, ops_before, ops_after, seconds and the
    # pass's own counters (folded, removed, merged, rewritten, fused, ...)
    pass_statistics: dict[str, dict[str, Any]] = field(default_factory=dict)
    # issue 17: the collectives of the partitioned programs in this graph, one
    # step's worth (dialects/sharding.py: CollectiveCost; see note_traffic)
    collectives: tuple = ()

    @property
    def collective_bytes(self) -> int:
        """Bytes the graph's collectives move per run, summed over the devices."""
        return sum(c.total_bytes for c in self.collectives)

    def __str__(self) -> str:
        t = self.timings
        head = (f"compiled {self.key[:12]} for {self.backend} "
                f"({'cache hit' if self.cached else 'cache miss'}): "
                f"{self.ops_before} -> {self.ops_after} ops, "
                f"IR build {t['ir_build'] * 1e3:.2f} ms, passes {t['passes'] * 1e3:.2f} ms, "
                f"lowering {t['lowering'] * 1e3:.2f} ms")
        lines = [head]
        for name, rec in self.pass_statistics.items():
            counters = ", ".join(f"{k} {v}" for k, v in rec.items()
                                 if k not in ("runs", "ops_before", "ops_after", "seconds")
                                 and v)
            lines.append(f"  {name}: {rec['ops_before']} -> {rec['ops_after']} ops"
                         + (f" ({counters})" if counters else ""))
        return "\n".join(lines)


def compile_graph(tensors: Any, optimize: bool = True) -> CompileReport:
    """Compile (or find in the cache) without running; a later evaluation hits."""
    ts = _as_list(tensors)
    sub = collect(ts)
    if not sub.nodes:
        raise ValueError(f"compile_graph: nothing to compile, every tensor is realized"
                         f"{_eager_hint()}")
    key = sub.key(config_key(optimize=optimize))
    entry = CACHE.get(key)
    cached = entry is not None
    if entry is None:
        entry = compile_subgraph(sub, key)
        CACHE.put(key, entry)
    return CompileReport(entry.key_hash, entry.backend, entry.pipeline, cached,
                         dict(entry.timings), entry.ops_before, entry.ops_after,
                         len(sub.leaves), len(ts),
                         dict(entry.extra.get("pass_statistics", {})), _traffic(sub))


# issue 17: the collectives of partitioned programs (pyflame_mlir/sharding.py:
# partition notes them), by a program's output (weakly: a dead output's entry
# is dropped): its forward collectives, the backward's (counted when the graph
# also computes the gradient of one of ``inputs``) and the inputs.
_TRAFFIC: dict[int, tuple[weakref.ref, tuple, tuple, tuple]] = {}


def note_traffic(output: Tensor, forward: Sequence, backward: Sequence,
                 inputs: Sequence[Tensor]) -> None:
    key = id(output)
    _TRAFFIC[key] = (weakref.ref(output, lambda _: _TRAFFIC.pop(key, None)), tuple(forward),
                     tuple(backward), tuple(weakref.ref(t) for t in inputs))


def _traffic(sub: Subgraph) -> tuple:
    nodes = {id(n): n for n in sub.nodes}
    out: list = []
    for ref, forward, backward, inputs in list(_TRAFFIC.values()):
        t = ref()
        if t is None or t._node is None or nodes.get(id(t._node)) is not t._node:
            continue
        out += forward
        grads = [p.grad for r in inputs if (p := r()) is not None and p.grad is not None]
        if any(nodes.get(id(g._node)) is g._node for g in grads if g._node is not None):
            out += backward
    return tuple(out)


def structural_hash(tensors: Any, optimize: bool | None = None) -> str:
    return collect(_as_list(tensors)).stable_hash(config_key(optimize=optimize))


def _fmt_attr(v: Any) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(map(str, v)) + "]"
    if hasattr(v, "short"):
        return v.short
    return repr(v) if isinstance(v, str) else str(v)


def format_graph(tensors: Any) -> str:
    """The recorded subgraph, one line per leaf and op (see ``print_graph``)."""
    ts = _as_list(tensors)
    sub = collect(ts)
    names: dict[int, str] = {}
    lines = ["Graph:"]
    counter = 0

    def fresh() -> str:
        nonlocal counter
        counter += 1
        return f"%{counter - 1}"

    def name_of(ref: int) -> str:
        if ref not in names:  # a leaf
            leaf = sub.leaves[-1 - ref]
            names[ref] = fresh()
            lines.append(f"  {names[ref]} = input({_fmt_attr(leaf.shape)}, {leaf.dtype.short})")
        return names[ref]

    for i in range(len(sub.leaves)):  # the function's arguments first
        name_of(-1 - i)
    for pos, (node, refs) in enumerate(zip(sub.nodes, sub.refs)):
        args = [name_of(r) for r in refs]
        outs = []
        for i in range(len(node.specs)):
            names[pos << 16 | i] = fresh()
            outs.append(names[pos << 16 | i])
        shapes = ", ".join(_fmt_attr(s) + ("" if d.name == "float32" else f" {d.short}")
                           for s, d in node.specs)
        if node.op.name == "constant":
            (s, d), = node.specs
            lines.append(f"  {outs[0]} = constant({_fmt_attr(s)}, {d.short})")
            continue
        attrs = [f"{k}={_fmt_attr(v)}" for k, v in node.attrs.items() if v is not None]
        lines.append(f"  {', '.join(outs)} = {node.op.name}({', '.join(args + attrs)}) "
                     f"-> {shapes}")
    outs = [name_of(r) for r in sub.outputs]
    lines.append(f"  outputs: [{', '.join(outs)}]")
    return "\n".join(lines)


def print_graph(tensors: Any, file: Any = None) -> None:
    """``format_graph`` printed to ``file`` (a text stream; default stdout)."""
    print(format_graph(tensors), file=file)


def get_graph_stats(tensors: Any) -> dict[str, int]:
    """Size of the lazy subgraph behind ``tensors``: leaves + ops, and the bytes
    of every value in it (leaves included)."""
    sub = collect(_as_list(tensors))
    nbytes = sum(t._value.nbytes for t in sub.leaves)
    for node in sub.nodes:
        for shape, d in node.specs:
            n = 1
            for x in shape:
                n *= x
            nbytes += n * d.itemsize
    return {"num_nodes": len(sub.nodes) + len(sub.leaves), "num_ops": len(sub.nodes),
            "num_inputs": len(sub.leaves), "estimated_memory_bytes": nbytes}


# ---- export ----

def export_csl(tensors: Any, out_dir: str | Path | None = None,
               grid: tuple[int, int] | None = None, arch: str | None = None,
               sdk_version: int | None = None) -> tuple[Path, CslExecutable]:
    """Compile the lazy ``tensors`` for the csl backend (the same IR, autodiff
    expansion and pipeline ``evaluate`` uses) and write the SDK project to
    ``out_dir`` (default: the csl cache, a directory named by the program's
    key), the graph's current input data included as ``in_<i>.npy``.
    ``sdk_version`` (1 or 2; default: the backend's, 2) picks the SDK idioms.
    A training step (the loss after ``opt.step()``) exports with its in-place
    updates written back on the PEs: ``run.py --steps N`` keeps the state resident.
    Returns the directory and the executable (``run`` it, or its ``describe()``).
    The frontend half of the export; ``csl_backend.export_module`` writes it."""
    from .runtime.csl_backend import export_module

    ts = _as_list(tensors)
    sub = collect(ts)
    if not sub.nodes:
        raise ValueError(f"export: nothing to compile, every tensor is already realized"
                         f"{_eager_hint()}")
    module = build_module(sub)
    writebacks = writeback_pairs(sub, [*ts, *sub.pending])
    if writebacks:
        set_writebacks(module, writebacks)
    expand_transforms(module)
    run_pipeline(module, pipeline_spec("csl"))
    leaves = [np.asarray(host_array(t._value)) for t in sub.leaves]
    return export_module(module, leaves, out_dir, grid=grid, arch=arch,
                         sdk_version=sdk_version, requested=len(ts))
