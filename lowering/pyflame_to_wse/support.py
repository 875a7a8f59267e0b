"""What the CSL backend lowers: f32 tensors, f16 tensors (``HALF_NATIVE`` ops in f16,
the rest in f32 between conversions: ``legalize-for-wse``), bool masks and integer
(index) tensors as exact f32 values, of rank 0-2 (rank >= 3 where ``batched.py`` folds it, or for
data movement), and the ops of ``SUPPORTED``; ``check_supported`` fails first,
with the reason, on the rest."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ...dialects.dtypes import DType, bool_, float16, float32
from ...dialects.fused import CHAINS
from ...dialects.pyflame import OP_CLASSES, FusedOp, PyflameOp, spec_of_type, tensor_type
from ...dialects.wse_target import ARCH, BF16_REFUSED, WSE_FNS
from .batched import WHOLE_RANK_OPS, batch_laid, flatten_rule
from .polynomial import ON_PE


def value_spec(v: SSAValue) -> tuple[tuple[int, ...], DType]:
    """(shape, dtype) of a pyflame value."""
    return spec_of_type(v.type, "value")


class CslUnsupportedError(DiagnosticException):
    """``csl backend: op pyflame.X is not supported (...)``."""


def _unsupported(op: str, why: str) -> CslUnsupportedError:
    return CslUnsupportedError(f"csl backend: op pyflame.{op} is not supported ({why})")


# ---- what is supported ----

# pyflame op -> the wse.map function it lowers to (the target's one record per function)
ELEMENTWISE: dict[str, str] = {f.pyflame_op: f.name for f in WSE_FNS.values()
                               if f.pyflame_op is not None}
# sub-tensors and joins: planned in windows.py (an empty piece is refused)
WINDOWS = ("slice", "split", "pad", "concat")
# embedding lookups and their VJP (indexing.py)
ROW_LOOKUPS = ("gather", "scatter_add")
REDUCTIONS = ("sum", "mean", "max", "min", "argmax", "argmin")
OTHER = ("matmul", "permute", "reshape", "broadcast_to", "constant", "iota", "convert",
         "softmax", "log_softmax", "logsumexp", "gelu_grad", "pow", *WINDOWS, *ROW_LOOKUPS)
# ops legalize-for-wse rewrites into polynomial forms (polynomial.py: CSL has no erf)
ON_PE_POLYNOMIAL = tuple(ON_PE)
# ops the CSL path gets from their decompositions (``legalize-for-wse`` runs
# ``decompose`` on them): they are composed of supported ops
DECOMPOSED = ("softmax", "log_softmax", "logsumexp", "gelu_grad")
SUPPORTED = (frozenset(ELEMENTWISE) | frozenset(REDUCTIONS) | frozenset(OTHER)
             | frozenset(ON_PE_POLYNOMIAL))
WHY_NOT = {
}


# f16 (issue #16): ops computed in f16 on the PE, with the f16 DSD builtins, and data
# movement, which only copies bits (slice, split, pad, concat, reshape, permute, the
# embedding's row lookup; the fabric's gathers, broadcasts and relayouts carry one f16
# per 32-bit wavelet, in its low half). ``legalize-for-wse`` computes every other op with
# an f16 operand in f32 between conversions (``@fh2s``/``@fs2h``): reductions
# accumulate in f32 (an f16 sum of n terms loses log2(n) bits; the matmul takes f16
# tiles and accumulates in f32 itself with ``@fmachs``: ``matmul.py``), and the
# polynomials, <math> calls and divisions run in f32 because their constants and
# ranges are f32's (exp overflows f16 past 11.1; the erf polynomial's coefficients
# would round), then round once to f16.
HALF_NATIVE = frozenset({f.pyflame_op for f in WSE_FNS.values()
                         if f.dsd and not f.mask and f.pyflame_op}
                        | {"convert", "reshape", "permute", "broadcast_to", "constant",
                           "matmul", *WINDOWS, "gather"})


def _dtype_ok(d: DType, op: str = "") -> bool:
    return d.name in ("float32", "bool") or (d.name == "float16" and op in HALF_NATIVE)


def _half_refusal(d: DType) -> str:
    """Why a 16-bit float type is not lowered, per arch (``wse_target.HALF``)."""
    if d.name == "bfloat16":
        return "element type bfloat16: " + "; ".join(
            f"{ARCH[a].title}: {rule}" for a, rule in BF16_REFUSED.items())
    return f"element type {d.name}"


# Integer tensors (class targets, token ids, argmax results) live on the PE as f32
# values, exact below 2**24 (the host refuses larger inputs): only ops that move or
# compare them, never arithmetic that could round, and no float -> integer convert.
INDEX_DTYPES = ("int32", "int64")
INDEX_OPS = frozenset(("constant", "iota", "reshape", "broadcast_to", "eq", "ne", "lt", "le",
                       "gt", "ge", "where", "convert", "argmax", "argmin", *WINDOWS,
                       *ROW_LOOKUPS))
INDEX_EXACT = 1 << 24


def _index_ok(op: PyflameOp, d: DType) -> bool:
    if d.name not in INDEX_DTYPES or op.OPDEF.name not in INDEX_OPS:
        return False
    if op.OPDEF.name == "convert":  # int -> float or bool, never float -> int
        return spec_of_type(op.operands[0].type, "x")[1].name in (*INDEX_DTYPES, "bool")
    return True


def check_supported(fn: func.FuncOp, before_flattening: bool = False) -> None:
    """Raise CslUnsupportedError for the first op the backend cannot lower.
    ``before_flattening``: rank >= 3 passes where ``legalize-for-wse`` may still fold
    it into rank 2 (``batched.py``; it checks again after)."""

    def check(op: Operation) -> None:
        if isinstance(op, func.ReturnOp):
            return
        if isinstance(op, FusedOp):
            for inner in op.body.block.ops:
                check(inner)
            return
        if not isinstance(op, PyflameOp):
            if op.name == "pyflame.yield":
                return
            raise CslUnsupportedError(f"csl backend: op {op.name} is not supported (not a "
                                      "pyflame tensor op; run the autodiff expansion first)")
        name = op.OPDEF.name
        if name in CHAINS:
            return  # expanded into its chain, whose ops are checked there
        if name not in SUPPORTED:
            raise _unsupported(name, WHY_NOT.get(name, "no CSL lowering for it yet"))
        for v in (*op.operands, *op.results):
            shape, d = spec_of_type(v.type, "value")
            if d.name == "float16" and before_flattening:
                continue  # legalize-for-wse computes the ops f16 has no DSD form for in f32
            if not _dtype_ok(d, name) and not _index_ok(op, d):
                raise _unsupported(name, f"{_half_refusal(d)}: the CSL backend computes "
                                         "in f32 and f16 (bool as 0/1 masks; int32/int64 as "
                                         "exact f32 values, only moved and compared)")
            if len(shape) > 2 and name not in WHOLE_RANK_OPS and not (
                    name == "matmul" and batch_laid([spec_of_type(u.type, "value")[0] for u in
                                                     (*op.operands, *op.results)])) and not (
                    before_flattening and (name in (*DECOMPOSED, *ON_PE) or flatten_rule(
                        name, op.OPDEF.family, [shape]))):
                raise _unsupported(name, f"a rank-{len(shape)} tensor {list(shape)}: tensors "
                                         "are placed on the 2-D grid with rank 0 to 2 (batch "
                                         "dims fold into rank 2 only where neighbouring dims "
                                         "are treated alike)")
            if 0 in shape and name in WINDOWS:
                raise _unsupported(name, f"an empty tensor {list(shape)}: every PE tile "
                                         "holds at least one element")
        if name in ROW_LOOKUPS and row_lookup_index(op) is None:
            raise _unsupported(name, "only row lookups are lowered: along dim 0 with an index "
                                     "broadcast from [N, 1] over the columns (embedding)")
        if name == "pow" and _pow_fn(op) is None:
            raise _unsupported(name, "only a constant exponent of 2, 1, 0.5 or -1 is lowered")

    for op in fn.body.block.ops:
        check(op)


class _Fresh:
    """A pyflame-level value the lowering makes up (e.g. the reciprocal of a divisor)."""

    def __init__(self, shape: tuple, mask: bool, half: bool = False):
        self.shape, self.mask, self.half = tuple(shape), mask, half

    @property
    def type(self):  # noqa: ANN201 - quacks like an SSAValue for value_spec
        return tensor_type(self.shape, bool_ if self.mask else float16 if self.half else float32)


def row_lookup_index(op: PyflameOp) -> SSAValue | None:
    """The [N, 1] row indices of a ``gather``/``scatter_add`` along dim 0 whose index
    is them broadcast over the columns (embedding and its VJP); None otherwise."""
    if op.py_attrs()["dim"] != 0:
        return None
    index = op.operands[1]
    shape = spec_of_type(index.type, "index")[0]
    src = index.owner
    if len(shape) == 2 and isinstance(src, OP_CLASSES["broadcast_to"]):
        inner = src.operands[0]
        if spec_of_type(inner.type, "index")[0] == (shape[0], 1):
            return inner
    if len(shape) == 2 and shape[1] == 1 and spec_of_type(op.operands[0].type, "x")[0][1] == 1:
        return index
    return None


def _splat_of_dense(dv: Any) -> float | None:
    """The one value of a constant whose elements are all equal (splat or not)."""
    arr = np.asarray(dv.array)
    if dv.is_splat or (arr.size and np.all(arr == arr.reshape(-1)[0])
                       and not np.isnan(arr.reshape(-1)[0])):
        return float(arr.reshape(-1)[0]) if arr.size else None
    return None


def _splat_value(v: SSAValue) -> float | None:
    op = v.owner
    if isinstance(op, OP_CLASSES["constant"]):
        return _splat_of_dense(op.py_attrs()["value"])
    return None


def _pow_fn(op: PyflameOp) -> str | None:
    e = _splat_value(op.operands[1])
    return {2.0: "square", 1.0: "copy", 0.5: "sqrt", -1.0: "reciprocal"}.get(e) \
        if e is not None else None


