"""``pyflame`` module -> a flat numpy plan (the reference backend's artifact).

A plan is a list of steps over numbered slots. Each step calls the op's
kernel from the op table; nothing here re-implements an op. Values whose op
accepts ``out=`` get a preallocated buffer, and buffers are shared between
values whose lifetimes do not overlap (views extend the lifetime of the
buffer they look into; a buffer reachable from a result is never reused,
since results are handed to the user).

A ``pyflame.fused`` op becomes one step whose kernel is a ``FusedProgram``
(``dialects.fused``) built from its body: the body's ops, run over
cache-sized chunks with reused scratch, each op still by its own kernel.

A ``pyflame.fused`` op that only sums its operands, some of them zero
paddings used nowhere else (the VJP of a convolution's or pooling's window
slices), becomes one ``PadSum`` step: each padded operand is added into its
region of the result, never materialized at full size.

A ``pyflame.fused`` op that is exactly ``w - s * g`` (or ``+``; ``s`` a scalar
constant: an SGD update) becomes a ``ScaledUpdate`` step, which may write into
``w``'s donated buffer; when ``g`` is a 2-D product used only there (the
in-place idiom after ``p.grad = None``) the product is folded in: one
``GemmUpdate`` step, a BLAS GEMM with beta = 1 (``dialects/blas.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ..dialects.blas import axpy, gemm_acc
from ..dialects.dtypes import DType
from ..dialects.fused import CHAINS, DEFAULT_CHUNK_ELEMS, FusedProgram, ProgramOp, chain_program
from ..dialects.opdef import get_op
from ..dialects.pyflame import (  # type: ignore[attr-defined]  (generated op classes)
    ConstantOp,
    FusedOp,
    PyflameOp,
    YieldOp,
    op_class,
    spec_of_type,
)

# Ops whose kernel may return a view of (an) input instead of new memory.
VIEW_OPS = frozenset(op_class(n) for n in ("reshape", "permute", "broadcast_to", "slice",
                                           "split"))
# Named fused ops whose chain runs as one program built ahead of time.
NAMED_CHAINS = frozenset(get_op(n) for n in CHAINS)
_ADD, _PAD = op_class("add"), op_class("pad")
_MUL, _SUB = op_class("mul"), op_class("sub")
_MATMUL = get_op("matmul")
_PERMUTE = get_op("permute")
# Elements from which an update runs through BLAS (GemmUpdate, ScaledUpdate's
# axpy): the ctypes call costs ~5 us, more than the pass it saves on smaller
# arrays (measured: a (256, 10) GEMM update 10 us, numpy's product and update 6 us)
BLAS_MIN = 32768


class LoweringError(Exception):
    pass


@dataclass
class Step:
    kernel: Any
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: dict[str, Any]
    name: str
    out_buffer: int | None = None  # index into Plan.buffers, for ``out=`` kernels
    # values passed after the inputs, positionally (``ndarray.transpose``'s axes)
    consts: tuple[Any, ...] = ()
    accepts_out: bool = False  # the kernel takes ``out=`` (gets a planned buffer)
    view: bool = False  # the result may be a view of the first input (VIEW_OPS)


@dataclass
class Plan:
    num_slots: int
    arg_slots: list[int]
    arg_specs: list[tuple[tuple[int, ...], DType]]
    steps: list[Step]
    result_slots: list[int]
    result_specs: list[tuple[tuple[int, ...], DType]]
    buffers: list[tuple[tuple[int, ...], np.dtype]] = field(default_factory=list)
    # argument index -> the step that may write its result into that argument's
    # array when the caller donates it (``pf.compile(donate_argnums=...)``)
    donations: dict[int, int] = field(default_factory=dict)

    @property
    def buffer_bytes(self) -> int:
        """Planned buffers plus the scratch fused kernels keep."""
        return sum(int(np.prod(s)) * d.itemsize for s, d in self.buffers) + \
            sum(getattr(st.kernel, "nbytes", 0) for st in self.steps
                if isinstance(st.kernel, FusedProgram))


def find_main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1:
        raise LoweringError(f"expected one func.func in the module, found {len(funcs)}")
    return funcs[0]


def constant_array(op: PyflameOp) -> np.ndarray:
    """A ``pyflame.constant``'s value, made once per plan and read-only (a
    splat as a broadcast view): kernels never write into their inputs, and a
    read-only result is copied before it reaches the user."""
    dv = op.py_attrs()["value"]
    if dv.array.ndim == 0:
        return np.broadcast_to(dv.array, dv.shape)
    a = dv.array.view()
    a.flags.writeable = False
    return a


def fused_program(op: FusedOp, chunk_elems: int = DEFAULT_CHUNK_ELEMS) -> FusedProgram:
    """The kernel of a ``pyflame.fused`` op: its body as a chunked program."""
    if len(op.results) != 1:
        raise LoweringError("reference backend: pyflame.fused must have one result, "
                            f"has {len(op.results)}")
    block = op.body.block
    index: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
    body = [o for o in block.ops if not isinstance(o, YieldOp)]
    constants = []
    for inner in body:
        if isinstance(inner, ConstantOp):
            index[inner.results[0]] = len(block.args) + len(constants)
            constants.append(constant_array(inner))
    steps: list[ProgramOp] = []
    first = len(block.args) + len(constants)
    for inner in body:
        if not isinstance(inner, PyflameOp) or len(inner.results) != 1:
            raise LoweringError(f"reference backend: cannot run {inner.name} inside "
                                "pyflame.fused")
        if isinstance(inner, ConstantOp):
            continue
        shape, d = spec_of_type(inner.results[0].type, "value")
        steps.append(ProgramOp.of(inner.OPDEF, [index[v] for v in inner.operands],
                                  inner.py_attrs(), shape, d.np))
        index[inner.results[0]] = first + len(steps) - 1
    yielded = index.get(op.yield_op.operands[0], -1)
    if yielded < first:
        raise LoweringError("reference backend: pyflame.fused must yield a value its "
                            "body computes")
    del steps[yielded - first + 1:]  # ops after the yielded value are dead
    specs = [spec_of_type(a.type, "argument") for a in block.args]
    return FusedProgram([(s, d.np) for s, d in specs], constants, steps, chunk_elems)


@dataclass(frozen=True)
class PadSum:
    """The sum of same-shaped terms, each either a whole array (region None)
    or a ``pyflame.pad`` input added into the strided region the pad would
    put it in (the rest of the padding is zeros, which add nothing)."""
    regions: tuple[tuple[slice, ...] | None, ...]
    shape: tuple[int, ...]
    dtype: np.dtype

    def __call__(self, *terms: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(self.shape, self.dtype)
        whole = [t for t, r in zip(terms, self.regions) if r is None]
        if whole:
            np.copyto(out, whole[0])
        else:
            out.fill(0)
        for t in whole[1:]:
            np.add(out, t, out=out)
        for t, r in zip(terms, self.regions):
            if r is not None:
                view = out[r]
                np.add(view, t, out=view)
        return out


def _pad_region(op: PyflameOp) -> tuple[slice, ...]:
    """Where ``pyflame.pad`` puts its input in its result (as its kernel)."""
    a = op.py_attrs()
    shape, _ = spec_of_type(op.operands[0].type, "operand")
    return tuple(slice(lo, lo + (d - 1) * (k + 1) + 1 if d else lo, k + 1)
                 for d, lo, k in zip(shape, a["low"], a["interior"]))


def _pad_sum_operands(op: FusedOp) -> list[PyflameOp | None] | None:
    """For a fused op whose body is only a chain of adds of its (same-typed)
    arguments, each used once: per operand, the pad op producing it if that
    pad has no other use (else None). None when the op is not such a sum or
    no operand is an absorbable pad."""
    block = op.body.block
    body = [o for o in block.ops if not isinstance(o, YieldOp)]
    t = op.results[0].type
    if not body or any(not isinstance(o, _ADD) or o.results[0].type != t for o in body) \
            or any(a.type != t or not a.has_one_use() for a in block.args) \
            or op.yield_op.operands[0] is not body[-1].results[0] \
            or any(not o.results[0].has_one_use() for o in body):
        return None
    pads = [v.owner if isinstance(v.owner, _PAD) and v.has_one_use() else None
            for v in op.operands]
    return pads if any(p is not None for p in pads) else None


@dataclass(frozen=True)
class ScaledUpdate:
    """``w - s * g`` (or ``w + s * g``): a fused op whose body is exactly that
    chain with ``s`` a scalar constant (the SGD update ``p -= lr * p.grad``),
    operands and result of one shape and float dtype. Into a separate buffer it
    is the fused op's own program; into ``w``'s own donated buffer (``out is
    w``; ``in_place`` names that operand) one BLAS ``axpy`` pass, or ``s * g``
    into a temporary and the sum in place when BLAS does not take them."""
    program: FusedProgram  # the fused op's own program
    order: tuple[int, int]  # the program's operand positions of ``g`` and ``w``
    scale: np.generic  # ``s``, of the operands' dtype
    sign: int  # -1: ``w - s * g``, 1: ``w + s * g``
    in_place = 1  # the operand (``w``) whose donated buffer may hold the result

    def __call__(self, g: np.ndarray, w: np.ndarray, out: np.ndarray | None = None
                 ) -> np.ndarray:
        if out is not w:
            return self.program(*((g, w) if self.order[0] == 0 else (w, g)), out=out)
        if w.size < BLAS_MIN or not axpy(self.sign * float(self.scale), g, w):
            t = np.multiply(g, self.scale)
            (np.subtract if self.sign < 0 else np.add)(w, t, out=w)
        return w


@dataclass(frozen=True)
class GemmUpdate:
    """``w - s * (a @ b)`` (or ``+``): a ``ScaledUpdate`` whose ``g`` is a 2-D
    product used nowhere else, computed by one GEMM with ``beta = 1`` into the
    result (``w``'s donated buffer, else a copy of ``w``): no full-size ``g``,
    no separate update pass. Without BLAS: the product, the scaling and the
    sum with numpy, rounded as the op chain (``dialects/blas.py``: BLAS rounds
    ``w + alpha * acc`` once)."""
    shape: tuple[int, ...]
    dtype: np.dtype
    scale: np.generic
    sign: int
    in_place = 2  # the operand (``w``) whose donated buffer may hold the result

    def __call__(self, a: np.ndarray, b: np.ndarray, w: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(self.shape, self.dtype)
        if out is not w:
            np.copyto(out, w)
        if not gemm_acc(a, b, out, self.sign * float(self.scale)):
            g = np.matmul(a, b)
            np.multiply(g, self.scale, out=g)
            (np.subtract if self.sign < 0 else np.add)(out, g, out=out)
        return out


def _scaled_update(op: FusedOp) -> tuple[int, int, np.generic, int] | None:
    """For a fused op computing ``w - s * g`` or ``w + s * g`` (``s * g`` or
    ``g * s``; ``s`` a scalar constant in its body; ``g``, ``w`` and the result
    of one shape and float32/float64 dtype, each argument used once): the
    operand positions of ``g`` and ``w``, ``s`` and the sign. Else None."""
    if len(op.results) != 1 or len(op.operands) != 2:
        return None
    block = op.body.block
    body = [o for o in block.ops if not isinstance(o, YieldOp)]
    if len(body) != 3 or not isinstance(body[0], ConstantOp) or not isinstance(body[1], _MUL) \
            or not isinstance(body[2], _SUB | _ADD) \
            or op.yield_op.operands[0] is not body[2].results[0]:
        return None
    t = op.results[0].type
    shape, d = spec_of_type(t, "value")
    if d.np not in (np.dtype(np.float32), np.dtype(np.float64)) \
            or any(a.type != t or not a.has_one_use() for a in block.args) \
            or body[1].results[0].type != t or body[2].results[0].type != t:
        return None
    const, mul, upd = body
    value = const.py_attrs()["value"].array
    if value.ndim != 0 or value.dtype != d.np:
        return None
    c = const.results[0]
    m_ops = list(mul.operands)
    if m_ops.count(c) != 1:
        return None
    g = m_ops[1 - m_ops.index(c)]
    u_ops = list(upd.operands)
    m = mul.results[0]
    if isinstance(upd, _SUB):
        if u_ops[1] is not m:
            return None
        w, sign = u_ops[0], -1
    else:
        if u_ops.count(m) != 1:
            return None
        w, sign = u_ops[1 - u_ops.index(m)], 1
    args = list(block.args)
    if g not in args or w not in args or g is w:
        return None
    return args.index(g), args.index(w), value[()], sign


def _update_gemm(op: FusedOp, g_pos: int) -> PyflameOp | None:
    """The matmul producing operand ``g_pos`` of ``op`` when it can be folded
    into the update: a plain 2-D product of ``op``'s dtype used only there."""
    v = op.operands[g_pos]
    mm = v.owner
    if not isinstance(mm, PyflameOp) or mm.OPDEF is not _MATMUL or not _plain_gemm(mm) \
            or not v.has_one_use() or math.prod(spec_of_type(v.type, "value")[0]) < BLAS_MIN:
        return None
    d = spec_of_type(v.type, "value")[1]
    if any(spec_of_type(x.type, "operand")[1] != d for x in mm.operands):
        return None
    return mm


def _plain_gemm(op: PyflameOp) -> bool:
    """A matrix times a matrix of one dtype of at least 32 bits: the matmul
    kernel is then ``np.matmul`` itself, which takes ``out=`` (half precision
    accumulates in float32 and stacks reshape first: those keep the kernel)."""
    specs = [spec_of_type(v.type, "operand") for v in op.operands]
    return all(len(s) == 2 and d.itemsize >= 4 for s, d in specs)


def lower(module: ModuleOp, preallocate: bool = True,
          chunk_elems: int = DEFAULT_CHUNK_ELEMS) -> Plan:
    fn = find_main(module)
    block = fn.body.block
    slot: dict[SSAValue, int] = {}
    for a in block.args:
        slot[a] = len(slot)
    steps: list[Step] = []
    results: list[SSAValue] = []
    pad_sums = {op: pads for op in block.ops if isinstance(op, FusedOp) and len(op.results) == 1
                and (pads := _pad_sum_operands(op)) is not None}
    absorbed = {p for pads in pad_sums.values() for p in pads if p is not None}
    updates = {op: (u, _update_gemm(op, u[0])) for op in block.ops if isinstance(op, FusedOp)
               and (u := _scaled_update(op)) is not None}
    absorbed |= {mm for _, mm in updates.values() if mm is not None}  # folded into the update
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            results = list(op.operands)
            break
        if op in absorbed:  # added into its region by the PadSum step that reads it
            continue
        if op in pad_sums:
            pads = pad_sums[op]
            shape, d = spec_of_type(op.results[0].type, "value")
            kernel = PadSum(tuple(None if p is None else _pad_region(p) for p in pads),
                            shape, d.np)
            ins = tuple(slot[v if p is None else p.operands[0]]
                        for v, p in zip(op.operands, pads))
            slot[op.results[0]] = len(slot)
            steps.append(Step(kernel, ins, (slot[op.results[0]],), {}, "pad_sum",
                              accepts_out=True))
            continue
        if op in updates:
            (g_pos, w_pos, scale, sign), mm = updates[op]
            slot[op.results[0]] = len(slot)
            w = slot[op.operands[w_pos]]
            if mm is not None:
                shape, d = spec_of_type(op.results[0].type, "value")
                kernel: Any = GemmUpdate(shape, d.np, scale, sign)
                ins = (slot[mm.operands[0]], slot[mm.operands[1]], w)
            else:
                kernel = ScaledUpdate(fused_program(op, chunk_elems), (g_pos, w_pos), scale,
                                      sign)
                ins = (slot[op.operands[g_pos]], w)
            steps.append(Step(kernel, ins, (slot[op.results[0]],), {},
                              "gemm_update" if mm is not None else "scaled_update",
                              accepts_out=True))
            continue
        if isinstance(op, FusedOp):
            program = fused_program(op, chunk_elems)
            for r in op.results:
                slot[r] = len(slot)
            steps.append(Step(program, tuple(slot[v] for v in op.operands),
                              tuple(slot[r] for r in op.results), {}, "fused",
                              accepts_out=True))
            continue
        if not isinstance(op, PyflameOp):
            raise LoweringError(f"reference backend: cannot execute op {op.name}")
        for r in op.results:
            slot[r] = len(slot)
        if isinstance(op, ConstantOp):  # made once, not at every run
            value = constant_array(op)
            steps.append(Step(lambda v=value: v, (), (slot[op.results[0]],), {}, "constant"))
            continue
        if op.OPDEF in NAMED_CHAINS:  # a named chain: its program built now, not per call
            program = chain_program(op.OPDEF.name, [(s, d.np) for s, d in (
                spec_of_type(v.type, "operand") for v in op.operands)], op.py_attrs())
            if program is not None:
                steps.append(Step(program, tuple(slot[v] for v in op.operands),
                                  (slot[op.results[0]],), {}, op.OPDEF.name, accepts_out=True))
                continue
        if op.OPDEF is _PERMUTE and op.py_attrs()["perm"]:
            # the permute kernel's own call (``np.transpose(x, perm)`` is
            # ``x.transpose(perm)`` on an array), without its two Python frames
            steps.append(Step(np.ndarray.transpose, (slot[op.operands[0]],),
                              (slot[op.results[0]],), {}, "permute", view=True,
                              consts=(tuple(op.py_attrs()["perm"]),)))
            continue
        if op.OPDEF is _MATMUL and _plain_gemm(op):  # a planned buffer, not a new array
            steps.append(Step(np.matmul, tuple(slot[v] for v in op.operands),
                              (slot[op.results[0]],), {}, "matmul", accepts_out=True))
            continue
        steps.append(Step(op.OPDEF.kernel, tuple(slot[v] for v in op.operands),
                          tuple(slot[r] for r in op.results), op.py_attrs(),
                          op.OPDEF.name, accepts_out=op.OPDEF.ufunc,
                          view=type(op) in VIEW_OPS))
    plan = Plan(len(slot), [slot[a] for a in block.args],
                [spec_of_type(a.type, "argument") for a in block.args], steps,
                [slot[v] for v in results], [spec_of_type(v.type, "result") for v in results])
    specs = {slot[v]: spec_of_type(v.type, "value") for v in slot}
    if preallocate:
        _plan_buffers(plan, specs)
    _plan_donations(plan, specs)
    return plan


def _lifetimes(plan: Plan) -> tuple[dict[int, int], dict[int, int]]:
    """Per slot, the slot owning its memory (a view's is its input's) and, per
    owner, the last step reading it or a view of it (-1: none)."""
    root = {s: s for s in range(plan.num_slots)}
    last_use = {s: -1 for s in range(plan.num_slots)}
    for i, st in enumerate(plan.steps):
        for s in st.inputs:
            last_use[root[s]] = i
        if st.view:
            for o in st.outputs:
                root[o] = root[st.inputs[0]]
    return root, last_use


def _plan_donations(plan: Plan, specs: dict[int, tuple[tuple[int, ...], DType]]) -> None:
    """Which result each argument's array may hold when donated: a result of
    the argument's shape and dtype made by an ``out=`` step that runs after
    the last read of the argument (or reads it last as a numpy ufunc, which
    handles the overlap), the argument not being returned or viewed by a result."""
    root, last_use = _lifetimes(plan)
    escaping = {root[s] for s in plan.result_slots}
    counts = {s: plan.result_slots.count(s) for s in plan.result_slots}
    taken: set[int] = set()
    for k, a in enumerate(plan.arg_slots):
        if a in escaping:
            continue
        for i, st in enumerate(plan.steps):
            o = st.outputs[0]
            if i in taken or not st.accepts_out or len(st.outputs) != 1 \
                    or counts.get(o) != 1 or root[o] != o or st.out_buffer is not None \
                    or specs[o][0] != specs[a][0] or specs[o][1] != specs[a][1]:
                continue
            if last_use[a] < i or (last_use[a] == i and _may_overwrite(st, a, root)):
                plan.donations[k] = i
                taken.add(i)
                break


def _may_overwrite(st: Step, a: int, root: dict[int, int]) -> bool:
    """Whether step ``st``, reading argument slot ``a`` last, may write its
    result into ``a``'s memory: an elementwise numpy ufunc (numpy handles the
    overlap), or a kernel that names the operand it updates in place
    (``in_place``: ``ScaledUpdate``, ``GemmUpdate``) when ``a`` is that operand
    and no other operand looks into ``a``'s memory."""
    k = st.kernel
    if isinstance(k, np.ufunc):
        return k.signature is None
    pos = getattr(k, "in_place", None)
    return pos is not None and st.inputs[pos] == a and \
        sum(root[s] == a for s in st.inputs) == 1


def _plan_buffers(plan: Plan, specs: dict[int, tuple[tuple[int, ...], DType]]) -> None:
    """Give ``out=`` steps reusable buffers (see the module docstring)."""
    root, last_use = _lifetimes(plan)
    escaping = {root[s] for s in plan.result_slots}
    free: dict[tuple, list[int]] = {}
    dying_at: dict[int, list[tuple[tuple, int]]] = {}
    for i, st in enumerate(plan.steps):
        out = st.outputs[0]
        if st.accepts_out and out not in escaping and last_use[out] > i:
            shape, d = specs[out]
            key = (shape, d.np)
            pool = free.get(key)
            if pool:
                b = pool.pop()
            else:
                b = len(plan.buffers)
                plan.buffers.append((shape, d.np))
            st.out_buffer = b
            dying_at.setdefault(last_use[out], []).append((key, b))
        # a buffer is free again once the step that last reads it has run
        for key, b in dying_at.pop(i, []):
            free.setdefault(key, []).append(b)
