"""What the pyflame passes share: a base class that records per-pass
statistics, the rule builder over xDSL (``IRBuilder``: autodiff rules and
decompositions emit IR through it), and small IR helpers (constants, op
counting, dead-op cleanup).

Each pass walks the ops of a block once, in order, and rewrites in place
through xDSL's IR API (use lists are linked lists, so replacing and erasing
are O(1) per use): a pass is linear in the size of the module.

Statistics: while a ``PipelineStatistics`` is active (``collecting``), every
``PyflamePass`` records, under its name (prefixed by the enclosing
``fixed-point`` pass, if any), how many top-level ops there were before and
after it, how long it took, and its own counters (``folded``, ``removed``,
``merged``, ``rewritten``, ``fused``...). Every counter counts a change, so
their sum says whether a pass changed anything; ``fixed-point`` stops on that.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from ..dialects import OPS
from ..dialects.data import DenseValue
from ..dialects.dtypes import DType
from ..dialects.pyflame import (  # type: ignore[attr-defined]  (generated op classes)
    ConstantOp,
    FusedOp,
    PyflameOp,
    attr_from_ir,
    create_op,
    spec_of_type,
)

Spec = tuple[tuple[int, ...], DType]
OpT = TypeVar("OpT", bound=PyflameOp)


# ---- statistics ----

@dataclass
class PassRecord:
    """What one pass (by pipeline position name) did, summed over its runs."""

    name: str
    runs: int = 0
    ops_before: int = 0  # before its first run
    ops_after: int = 0  # after its last run
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "ops_before": self.ops_before,
                "ops_after": self.ops_after, "seconds": self.seconds, **self.counters}


@dataclass
class PipelineStatistics:
    """Per-pass records of one pipeline run, in the order the passes first ran."""

    records: dict[str, PassRecord] = field(default_factory=dict)

    def begin(self, name: str, ops_before: int) -> None:
        """Reserve the pass's place in the order (before the passes it nests)."""
        if name not in self.records:
            self.records[name] = PassRecord(name, ops_before=ops_before)

    def add(self, name: str, ops_before: int, ops_after: int, seconds: float,
            counters: dict[str, int]) -> None:
        self.begin(name, ops_before)
        rec = self.records[name]
        rec.runs += 1
        rec.ops_after = ops_after
        rec.seconds += seconds
        for k, v in counters.items():
            rec.counters[k] = rec.counters.get(k, 0) + v

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {name: rec.as_dict() for name, rec in self.records.items()}

    def total(self, counter: str) -> int:
        return sum(r.counters.get(counter, 0) for r in self.records.values())

    def format(self, times: bool = True) -> str:
        """A table, one line per pass (what ``pyflame-opt --pass-statistics`` prints)."""
        lines = ["===- Pass statistics -==="]
        for rec in self.records.values():
            line = (f"{rec.name:36s} runs {rec.runs:3d}  ops {rec.ops_before:6d} -> "
                    f"{rec.ops_after:6d}")
            if times:
                line += f"  {rec.seconds * 1e3:9.3f} ms"
            extra = ", ".join(f"{k} {v}" for k, v in rec.counters.items())
            lines.append(line + (f"  ({extra})" if extra else ""))
        return "\n".join(lines)


_ACTIVE: ContextVar[PipelineStatistics | None] = ContextVar("pyflame_pass_stats", default=None)
_PREFIX: ContextVar[str] = ContextVar("pyflame_pass_prefix", default="")


@contextlib.contextmanager
def collecting(stats: PipelineStatistics | None = None) -> Iterator[PipelineStatistics]:
    """Record the statistics of every pass run inside the block."""
    stats = stats if stats is not None else PipelineStatistics()
    token = _ACTIVE.set(stats)
    try:
        yield stats
    finally:
        _ACTIVE.reset(token)


@contextlib.contextmanager
def nested(prefix: str) -> Iterator[None]:
    """Passes run inside the block are recorded as ``prefix/name``."""
    token = _PREFIX.set(_PREFIX.get() + prefix + "/")
    try:
        yield
    finally:
        _PREFIX.reset(token)


def run_pass(p: ModulePass, ctx: Context, module: ModuleOp) -> int:
    """Run one pass, recording it when statistics are collected. Returns its
    number of changes: the sum of a PyflamePass's counters, or for a foreign
    pass 1 if it changed the op count (the best it can say) else 0."""
    stats = _ACTIVE.get()
    if isinstance(p, PyflamePass):
        if stats is None:
            return sum(p.run(ctx, module).values())
        name = _PREFIX.get() + p.name
        before = count_ops(module)
        stats.begin(name, before)
        t0 = time.perf_counter()
        counters = p.run(ctx, module)
        stats.add(name, before, count_ops(module), time.perf_counter() - t0, counters)
        return sum(counters.values())
    before = count_ops(module)
    t0 = time.perf_counter()
    p.apply(ctx, module)
    after = count_ops(module)
    if stats is not None:
        stats.add(_PREFIX.get() + p.name, before, after, time.perf_counter() - t0, {})
    return int(before != after)


class PyflamePass(ModulePass):
    """A pass that reports what it changed. Subclasses are frozen dataclasses
    (their fields are the pass options) and implement ``run``."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        """Transform ``module``; return counters of the changes made."""
        raise NotImplementedError

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pass(self, ctx, op)


# ---- the rule builder ----

class IRBuilder:
    """The builder interface of ``dialects/ad.py`` over xDSL: ``b.op(name,
    *values, **attrs)`` checks the op's shape rule, creates it and hands it to
    ``emit`` (``block.add_op`` to append, ``ops.append`` to collect for a
    rewriter). Autodiff rules and decompositions both build IR with it."""

    def __init__(self, emit: Callable[[Operation], Any]):
        self.emit = emit

    def shape(self, v: SSAValue) -> tuple[int, ...]:
        return spec_of_type(v.type, "value")[0]

    def dtype(self, v: SSAValue) -> Any:
        return spec_of_type(v.type, "value")[1]

    def op(self, name: str, *inputs: SSAValue, **attrs: Any) -> Any:
        opdef = OPS[name]
        specs = opdef.check([self.shape(v) for v in inputs], [self.dtype(v) for v in inputs],
                            attrs)
        new = create_op(name, inputs, attrs, specs)
        self.emit(new)
        return new.results[0] if opdef.num_results == 1 else list(new.results)

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        d = self.dtype(like)
        return self.op("constant", value=DenseValue(np.asarray(value, dtype=d.np), (), d))

    def __getattr__(self, name: str) -> Any:
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)


# ---- IR helpers ----

def blocks_of(root: Operation) -> Iterator[Block]:
    """Every block under ``root``, outer blocks before the blocks nested in them."""
    stack = [root]
    while stack:
        op = stack.pop()
        for region in op.regions:
            for block in region.blocks:
                yield block
                for inner in block.ops:
                    if inner.regions:
                        stack.append(inner)


_IS_TERMINATOR: dict[type, bool] = {}


def count_ops(module: Operation) -> int:
    """Ops the program executes: the non-terminator ops of function bodies,
    a ``pyflame.fused`` counting as one (its body is not counted)."""
    n = 0
    stack = [module]
    terminator = _IS_TERMINATOR
    while stack:
        op = stack.pop()
        for region in op.regions:
            for block in region.blocks:
                inner = block.first_op
                while inner is not None:
                    cls = type(inner)
                    if cls is func.FuncOp or cls is ModuleOp:
                        stack.append(inner)
                    else:
                        is_term = terminator.get(cls)
                        if is_term is None:
                            is_term = terminator[cls] = cls.has_trait(IsTerminator)
                        if not is_term:
                            n += 1
                            if inner.regions and cls is not FusedOp:
                                stack.append(inner)
                    inner = inner.next_op
    return n


def is_pure(op: Operation) -> bool:
    """Ops that may be erased when unused and merged when equal."""
    if isinstance(op, PyflameOp | FusedOp):
        return True
    return would_be_trivially_dead(op)


def erase_if_dead(op: Operation) -> int:
    """Erase ``op`` if it is pure and unused, then any producer that became
    dead with it (iteratively). Returns the number of ops erased."""
    erased = 0
    work = [op]
    while work:
        cur = work.pop()
        if cur.parent is None or any(r.first_use is not None for r in cur.results) \
                or not is_pure(cur):
            continue
        producers = [v.owner for v in cur.operands if isinstance(v.owner, Operation)]
        block = cur.parent
        block.erase_op(cur)
        erased += 1
        work.extend(producers)
    return erased


def replace_op(op: Operation, values: Sequence[SSAValue]) -> int:
    """Replace every use of ``op``'s results by ``values`` and erase what died
    (``op`` and its dead producers). Returns the number of ops erased."""
    for r, v in zip(op.results, values, strict=True):
        if r is not v:
            r.replace_all_uses_with(v)
    return erase_if_dead(op)


def defining(value: SSAValue, cls: type[OpT]) -> OpT | None:
    """The op defining ``value`` if it is of the op class ``cls`` (``NegOp``)."""
    owner = value.owner
    return owner if isinstance(owner, cls) else None


def spec(value: SSAValue) -> Spec:
    return spec_of_type(value.type, "value")


def attr(op: PyflameOp, name: str) -> Any:
    """One attribute of a pyflame op as its Python value (``py_attrs`` decodes all)."""
    kind = op.OPDEF.attrs[name]
    a = op.attributes.get(name)
    if a is None and kind.startswith("opt_"):
        return None
    return attr_from_ir(kind, name, a)  # type: ignore[arg-type]


def dense_value(op: PyflameOp) -> DenseValue:
    """The value of a ``pyflame.constant``."""
    return attr(op, "value")


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The data of ``value`` if a ``pyflame.constant`` defines it (a read-only
    array of the value's shape; a splat is a broadcast view), else None."""
    op = defining(value, ConstantOp)
    if op is None:
        return None
    dv = dense_value(op)
    if dv.array.ndim == 0 and dv.shape:
        return np.broadcast_to(dv.array, dv.shape)
    return dv.array


def splat_scalar(arr: np.ndarray) -> np.generic | None:
    """The one element of an array whose elements are all bitwise equal (so
    ``-0.0`` differs from ``0.0`` and NaN payloads count), else None."""
    if arr.size == 0:
        return None
    flat = arr.reshape(-1)
    first = flat[0]
    if flat.size == 1 or arr.strides == (0,) * arr.ndim:
        return first
    bits = np.ascontiguousarray(flat).view(f"u{arr.dtype.itemsize}")
    return first if bool((bits == bits[0]).all()) else None


def make_constant(array: np.ndarray, spec_: Spec, before: Operation) -> SSAValue:
    """Insert a ``pyflame.constant`` of ``spec_`` before ``before``: a splat
    when every element is equal, else the full literal."""
    shape, d = spec_
    arr = np.asarray(array, dtype=d.np)
    one = splat_scalar(arr) if arr.shape == tuple(shape) else None
    if one is not None or arr.ndim == 0:
        dv = DenseValue(np.asarray(one if one is not None else arr, dtype=d.np), shape, d)
    else:
        dv = DenseValue(np.ascontiguousarray(arr), shape, d)
    new = create_op("constant", [], {"value": dv}, [(tuple(shape), d)])
    insert_before(new, before)
    return new.results[0]


def insert_before(new: Operation, before: Operation) -> None:
    block = before.parent
    assert block is not None
    block.insert_op_before(new, before)


def new_op(name: str, operands: Sequence[SSAValue], attrs: dict[str, Any],
           specs: Sequence[Spec], before: Operation) -> PyflameOp:
    """Create the pyflame op ``name`` and insert it before ``before``."""
    op = create_op(name, operands, attrs, specs)
    insert_before(op, before)
    return op
