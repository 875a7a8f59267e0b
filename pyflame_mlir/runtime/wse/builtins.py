"""Semantics of the CSL DSD builtins: operand types, one numpy kernel each, FLOPs.

Operand order is CSL's: dest, src0, src1 (, scalar). Every kernel maps whole
operand arrays in one numpy expression, in the op's IEEE type (float32 /
float16), with numpy's round-to-nearest-even after every operation: `fmacs`
rounds the product and then the sum (whether the hardware fuses them is not
publicly documented).

A scalar *pointer* destination (`@fadds(&acc, acc, dsd)`, the idiom of the
public benchmark code) is treated as a fold: every element updates the scalar
in order, so `acc` ends as `acc + dsd[0] + dsd[1] + ...`; `@fmovs(&s, dsd)`
leaves the last element. Both readings are unverified (CSL_NOTES).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
U16, U32 = np.dtype(np.uint16), np.dtype(np.uint32)

Kernel = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Builtin:
    name: str
    dest: np.dtype
    srcs: tuple[np.dtype | None, ...]  # None: take the operand's own type (mixed precision)
    kernel: Kernel
    flops: int  # per element
    family: str  # "f32", "f16", "mixed" or "int": selects the rate in the cycle model
    fold: Callable[[np.ndarray], np.ndarray] | None = None  # sequential reduction form


def _sequential(ufunc: np.ufunc) -> Callable[[np.ndarray], np.ndarray]:
    # ufunc.accumulate runs strictly left to right: the same roundings as a scalar loop
    return lambda xs: ufunc.accumulate(xs)[-1:]


def _neg_sub(xs: np.ndarray) -> np.ndarray:  # acc - x0 - x1 - ... in order
    return np.subtract.accumulate(xs)[-1:]


def _float_family(suffix: str, t: np.dtype, fam: str) -> list[Builtin]:
    return [
        Builtin(f"fadd{suffix}", t, (t, t), np.add, 1, fam, _sequential(np.add)),
        Builtin(f"fsub{suffix}", t, (t, t), np.subtract, 1, fam, _neg_sub),
        Builtin(f"fmul{suffix}", t, (t, t), np.multiply, 1, fam, _sequential(np.multiply)),
        Builtin(f"fmax{suffix}", t, (t, t), np.maximum, 1, fam, _sequential(np.maximum)),
        Builtin(f"fneg{suffix}", t, (t,), np.negative, 0, fam),
        Builtin(f"fabs{suffix}", t, (t,), np.abs, 0, fam),
        Builtin(f"fmov{suffix}", t, (t,), lambda a: a, 0, fam),
        Builtin(f"fmac{suffix}", t, (t, t, t), lambda a, b, s: a + b * s, 2, fam),
    ]


def _clz16(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.uint32)
    return np.where(a == 0, 16, 15 - np.floor(np.log2(np.maximum(a, 1))).astype(np.int64))


def _ctz16(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.int64)
    return np.where(a == 0, 16, np.log2(a & -a).astype(np.int64))


def _popcnt16(a: np.ndarray) -> np.ndarray:
    return np.unpackbits(a.astype(">u2").view(np.uint8)).reshape(-1, 16).sum(1)


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in [
        *_float_family("s", F32, "f32"),
        *_float_family("h", F16, "f16"),
        # mixed precision: sources of either width widen to f32, the result is f32
        Builtin("faddhs", F32, (None, None), np.add, 1, "mixed", _sequential(np.add)),
        Builtin("fmachs", F32, (None, None, None), lambda a, b, s: a + b * s, 2, "mixed"),
        Builtin("fh2s", F32, (F16,), lambda a: a, 0, "mixed"),
        Builtin("fs2h", F16, (F32,), lambda a: a, 0, "mixed"),
        # 16/32-bit integer builtins work on bit patterns
        Builtin("add16", U16, (U16, U16), np.add, 0, "int"),
        Builtin("sub16", U16, (U16, U16), np.subtract, 0, "int"),
        Builtin("and16", U16, (U16, U16), np.bitwise_and, 0, "int"),
        Builtin("or16", U16, (U16, U16), np.bitwise_or, 0, "int"),
        Builtin("xor16", U16, (U16, U16), np.bitwise_xor, 0, "int"),
        Builtin("sll16", U16, (U16, U16), lambda a, n: np.left_shift(a, n & 15), 0, "int"),
        Builtin("slr16", U16, (U16, U16), lambda a, n: np.right_shift(a, n & 15), 0, "int"),
        Builtin(
            "sar16",
            U16,
            (U16, U16),
            lambda a, n: np.right_shift(a.view(np.int16), (n & 15).astype(np.int16)),
            0,
            "int",
        ),
        Builtin("clz", U16, (U16,), _clz16, 0, "int"),
        Builtin("ctz", U16, (U16,), _ctz16, 0, "int"),
        Builtin("popcnt", U16, (U16,), _popcnt16, 0, "int"),
        Builtin("mov16", U16, (U16,), lambda a: a, 0, "int"),
        Builtin("mov32", U32, (U32,), lambda a: a, 0, "int"),
    ]
}

UNMODELED = {
    "addc16": "carry semantics are not publicly documented",
    "fnorms": "normalization semantics are not publicly documented",
    "fnormh": "normalization semantics are not publicly documented",
    "fscales": "scaling semantics are not publicly documented",
    "fscaleh": "scaling semantics are not publicly documented",
    "fs2xp16": "the fixed-point format is not publicly documented",
    "fh2xp16": "the fixed-point format is not publicly documented",
    "xp162fs": "the fixed-point format is not publicly documented",
    "xp162fh": "the fixed-point format is not publicly documented",
}
