"""Matmuls of the ``mlir`` backend delegated to BLAS (numpy's bundled OpenBLAS).

``convert-pyflame-to-linalg`` lowers ``matmul`` to a ``linalg.generic``
contraction; after bufferization, ``delegate_matmuls(module)`` recognizes
every such contraction on f32/f64 memrefs, by structure (two inputs, one
output, exactly ``out += lhs * rhs`` in the body, indexing maps of a
(batched, possibly transposed or batch-broadcast) matrix product, static
strides with a unit inner stride) and replaces it with a loop over the batch
of ``cblas_?gemm`` calls (``beta = 1``: the generic accumulates into its
initialized output). Anything else (vectors, integer or half precision
bodies, a producer fused into the body, strides BLAS cannot express) is left
to the loop lowering: a contraction is never half matched.

The symbols are resolved at JIT time from the OpenBLAS shared library that
numpy ships (``blas_library()``); without one, nothing is delegated.
Measured in docs/PERFORMANCE.md (#18): the naive loop nest ran the small MLP
step at a fifth of jax.jit; OpenBLAS's kernels are tuned for this CPU and use
both cores.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# CBLAS enums (cblas.h): C ints
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# Below this many multiply-adds the JITed loop nest is as fast as a BLAS call
# (OpenBLAS's small-matrix path still costs its dispatch): measured, see the docs.
MIN_BLAS_MACS = 4096


@dataclass(frozen=True)
class Blas:
    """numpy's OpenBLAS: its path and the names of its CBLAS ?gemm entry points."""

    path: str
    sgemm: str
    dgemm: str
    int_bits: int  # 64 for ILP64 builds (numpy's ``scipy_openblas64_``), else 32


@functools.cache
def blas_library() -> Blas | None:
    """numpy's bundled OpenBLAS (the Linux wheels' ``numpy.libs``), or None
    (then matmuls stay JITed loops)."""
    libs = Path(np.__file__).parent.parent / "numpy.libs"
    candidates = sorted(p for p in libs.iterdir() if "openblas" in p.name
                        and ".so" in p.name) if libs.is_dir() else []
    for path in candidates:
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            continue
        for prefix, suffix, bits in (("scipy_cblas_", "64_", 64), ("cblas_", "64_", 64),
                                     ("scipy_cblas_", "", 32), ("cblas_", "", 32)):
            s, d = f"{prefix}sgemm{suffix}", f"{prefix}dgemm{suffix}"
            if hasattr(lib, s) and hasattr(lib, d):
                return Blas(str(path), s, d, bits)
    return None


# ---- recognizing a contraction ----

@dataclass(frozen=True)
class Operand:
    """A matrix operand: the memref, its static strides, where its batch dims sit."""

    value: Any
    strides: tuple[int, ...]
    batch: tuple[int | None, ...]  # per loop batch dim: this memref's dim, or None (broadcast)
    trans: bool  # the matrix is stored transposed (column-major) in the last two dims


def _strides(memref_type: Any) -> tuple[int, ...] | None:
    """Static strides of a memref type (identity or strided layout), else None."""
    from mlir import ir

    shape = list(memref_type.shape)
    layout = memref_type.layout
    if isinstance(layout, ir.StridedLayoutAttr):
        strides = list(layout.strides)
        if any(s == ir.ShapedType.get_dynamic_stride_or_offset() for s in strides):
            return None
        return tuple(strides)
    if not isinstance(layout, ir.AffineMapAttr) or \
            layout.value != ir.AffineMap.get_identity(len(shape)):
        return None
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _dims(map_attr: Any) -> list[int | None] | None:
    """Loop dims of a map's results (None for the constant 0 of a size-1
    broadcast dim), or None if a result is anything else."""
    from mlir import ir

    out: list[int | None] = []
    for e in ir.AffineMapAttr(map_attr).value.results:
        if isinstance(e, ir.AffineDimExpr):
            out.append(e.position)
        elif isinstance(e, ir.AffineConstantExpr) and e.value == 0:
            out.append(None)
        else:
            return None
    return out


def _is_mul_add(body: Any) -> bool:
    """The body is ``yield out + a * b`` (either operand order of both ops)."""
    ops = list(body.operations)
    if len(ops) != 3 or [o.operation.name for o in ops] != ["arith.mulf", "arith.addf",
                                                            "linalg.yield"]:
        return False
    a, b, c = body.arguments
    mul, add, yld = (o.operation for o in ops)
    if {mul.operands[0], mul.operands[1]} != {a, b} or mul.operands[0] == mul.operands[1]:
        return False
    if {add.operands[0], add.operands[1]} != {c, mul.results[0]}:
        return False
    if add.operands[0] == add.operands[1]:
        return False
    # any fast-math flags are fine: BLAS reassociates the sum anyway
    return yld.operands[0] == add.results[0]


@dataclass(frozen=True)
class Contraction:
    """``out[b.., m, n] += lhs[b.., m, k] * rhs[b.., k, n]`` over memrefs."""

    lhs: Operand
    rhs: Operand
    out: Operand
    batch_sizes: tuple[int, ...]
    m: int
    n: int
    k: int
    dtype: str  # "f32" or "f64"


def _operand(value: Any, dims: list[int | None], mat: tuple[int, int], batch_dims: list[int]
             ) -> Operand | None:
    """``value`` indexed by loop ``dims``; its last two must be ``mat`` (rows, cols) in
    either order, with one unit stride; the others batch dims."""
    from mlir import ir

    t = ir.MemRefType(value.type)
    strides = _strides(t)
    if strides is None or len(dims) < 2:
        return None
    head, tail = dims[:-2], dims[-2:]
    if any(d is not None and d not in batch_dims for d in head) or None in tail:
        return None
    if len({d for d in head if d is not None}) != sum(d is not None for d in head):
        return None
    shape = list(t.shape)
    if tail == [mat[0], mat[1]]:
        trans = False
        rows, cols, row_stride, col_stride = shape[-2], shape[-1], strides[-2], strides[-1]
    elif tail == [mat[1], mat[0]]:
        trans = True
        rows, cols, row_stride, col_stride = shape[-2], shape[-1], strides[-2], strides[-1]
    else:
        return None
    # BLAS: a unit stride along the stored rows, and a leading dimension >= their length
    if col_stride != 1 or row_stride < max(1, cols) or rows < 1:
        return None
    batch = tuple(head.index(d) if d in head else None for d in batch_dims)
    return Operand(value, strides, batch, trans)


def match(op: Any) -> Contraction | None:
    """The contraction ``op`` computes, if BLAS can do it exactly."""
    from mlir import ir

    if op.name != "linalg.generic":
        return None
    operands = list(op.operands)
    if len(operands) != 3 or len(op.results) != 0:  # on memrefs: no results
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in operands):
        return None
    el = {str(v.type.element_type) for v in operands}
    if len(el) != 1 or (dtype := el.pop()) not in ("f32", "f64"):
        return None
    seg = op.attributes["operandSegmentSizes"]
    if list(ir.DenseI32ArrayAttr(seg)) != [2, 1]:
        return None
    iters = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    reductions = [i for i, s in enumerate(iters) if "reduction" in s]
    if len(reductions) != 1 or len(iters) - 1 != sum("parallel" in s for s in iters):
        return None
    maps = [_dims(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if any(m is None for m in maps):
        return None
    a_dims, b_dims, o_dims = maps  # type: ignore[misc]
    k = reductions[0]
    # the output indexed by every parallel loop dim once (batch.., m, n)
    if len(o_dims) < 2 or len(o_dims) != len(iters) - 1 or None in o_dims or k in o_dims \
            or len(set(o_dims)) != len(o_dims):
        return None
    m_dim, n_dim = o_dims[-2], o_dims[-1]
    batch_dims = o_dims[:-2]
    if not _is_mul_add(op.regions[0].blocks[0]):
        return None
    lhs = _operand(operands[0], a_dims, (m_dim, k), batch_dims)
    rhs = _operand(operands[1], b_dims, (k, n_dim), batch_dims)
    out = _operand(operands[2], o_dims, (m_dim, n_dim), batch_dims)
    if lhs is None or rhs is None or out is None or out.trans:
        return None
    ot = ir.MemRefType(operands[2].type)
    shape = list(ot.shape)
    lt = list(ir.MemRefType(operands[0].type).shape)
    kk = lt[-1] if not lhs.trans else lt[-2]
    if any(s == ir.ShapedType.get_dynamic_size() for s in shape + lt):
        return None
    m, n = shape[-2], shape[-1]
    if m * n * kk < MIN_BLAS_MACS:
        return None
    return Contraction(lhs, rhs, out, tuple(shape[:-2]), m, n, kk, dtype)


# ---- emitting the calls ----

def _declare(module: Any, name: str, dtype: str, int_bits: int) -> None:
    from mlir import ir
    from mlir.dialects import func

    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == name:
            return
    i32, ii = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(int_bits)
    f = ir.F32Type.get() if dtype == "f32" else ir.F64Type.get()
    ptr = ir.Type.parse("!llvm.ptr")
    ftype = ir.FunctionType.get([i32, i32, i32, ii, ii, ii, f, ptr, ii, ptr, ii, f, ptr, ii], [])
    with ir.InsertionPoint.at_block_begin(module.body):
        func.FuncOp(name, ftype, visibility="private")


def _emit(c: Contraction, blas: Blas, op: Any) -> None:
    """Insert the batch loop nest of gemm calls before ``op``, then erase ``op``."""
    from mlir import ir
    from mlir.dialects import arith, func, llvm, memref, scf

    index = ir.IndexType.get()
    i32, ii = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(blas.int_bits)
    i64 = ir.IntegerType.get_signless(64)
    f = ir.F32Type.get() if c.dtype == "f32" else ir.F64Type.get()
    size = 4 if c.dtype == "f32" else 8
    ptr = ir.Type.parse("!llvm.ptr")
    operands = (c.lhs, c.rhs, c.out)

    def const(v: int, t: Any = index) -> Any:
        return arith.constant(t, v)

    def call(ivs: list[Any], starts: list[tuple[Any, Any]]) -> None:
        ptrs = []
        for o, (addr, elems) in zip(operands, starts):
            for iv, dim in zip(ivs, o.batch):
                if dim is not None and o.strides[dim] != 0:
                    elems = arith.addi(elems, arith.muli(iv, const(o.strides[dim])))
            byte = arith.addi(addr, arith.muli(elems, const(size)))
            ptrs.append(llvm.inttoptr(ptr, arith.index_cast(i64, byte)))
        one = arith.constant(f, 1.0)
        func.CallOp([], ir.FlatSymbolRefAttr.get(blas.sgemm if c.dtype == "f32" else blas.dgemm), [
            const(_ROW_MAJOR, i32), const(_TRANS if c.lhs.trans else _NO_TRANS, i32),
            const(_TRANS if c.rhs.trans else _NO_TRANS, i32),
            const(c.m, ii), const(c.n, ii), const(c.k, ii), one,
            ptrs[0], const(c.lhs.strides[-2], ii), ptrs[1], const(c.rhs.strides[-2], ii),
            one, ptrs[2], const(c.out.strides[-2], ii)])

    def nest(depth: int, ivs: list[Any], starts: list[tuple[Any, Any]]) -> None:
        if depth == len(c.batch_sizes):
            call(ivs, starts)
            return
        loop = scf.ForOp(const(0), const(c.batch_sizes[depth]), const(1))
        with ir.InsertionPoint(loop.body):
            nest(depth + 1, [*ivs, loop.induction_variable], starts)
            scf.YieldOp([])

    with ir.InsertionPoint(op), op.location:
        # (aligned base address, offset in elements) of each memref
        starts = [(memref.extract_aligned_pointer_as_index(o.value),
                   memref.ExtractStridedMetadataOp(o.value).results[1]) for o in operands]
        nest(0, [], starts)
    op.erase()


def delegate_matmuls(module: Any) -> int:
    """Replace the BLAS-able contractions of ``module`` (bufferized, MLIR
    bindings) by gemm calls; returns how many. No-op without numpy's OpenBLAS."""
    blas = blas_library()
    if blas is None:
        return 0
    found: list[tuple[Any, Contraction]] = []

    def visit(op: Any) -> Any:
        from mlir import ir

        c = match(op)
        if c is not None:
            found.append((op, c))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op, c in found:
        _declare(module, blas.sgemm if c.dtype == "f32" else blas.dgemm, c.dtype,
                 blas.int_bits)
        _emit(c, blas, op)
    return len(found)


def main() -> None:
    """``python -m pyflame_mlir.runtime.mlir_blas < bufferized.mlir``: print the
    module with its BLAS-able contractions delegated (for lit tests)."""
    import sys

    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        mod = ir.Module.parse(sys.stdin.read())
        delegate_matmuls(mod)
        print(mod)


if __name__ == "__main__":
    main()
