"""`arith` on a PE: C semantics at the type's width, as the printed CSL computes it.

Integers are Python ints wrapped to their width (division truncates toward
zero, as in C), floats numpy scalars of their IEEE type. The op set is the one
xDSL's CSL printer can print.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith, csl
from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.ir import Operation

from ..errors import ProgramError, UnsupportedError
from ..interpreter import Functions
from ..values import attr_value, int_info, np_dtype, scalar, wrap

ARITH = Functions("arith")


@ARITH.impl(arith.ConstantOp)
def _constant(op: arith.ConstantOp):
    res, value = op.result, attr_value(op.value)
    if isinstance(value, np.ndarray):  # mutable: a fresh copy per execution
        def run_array(ctx, env):
            env[res] = value.copy()

        return run_array

    def run(ctx, env):
        env[res] = value

    return run


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ProgramError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_rem(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


_INT_BINOPS: dict[type[Operation], tuple[Callable[[int, int], int], bool]] = {
    arith.AddiOp: (operator.add, False),
    arith.SubiOp: (operator.sub, False),
    arith.MuliOp: (operator.mul, False),
    arith.DivSIOp: (_c_div, False),
    arith.DivUIOp: (_c_div, True),
    arith.RemSIOp: (_c_rem, False),
    arith.RemUIOp: (_c_rem, True),
    arith.ShLIOp: (operator.lshift, False),
    arith.AndIOp: (operator.and_, False),
    arith.OrIOp: (operator.or_, False),
    arith.XOrIOp: (operator.xor, False),
    arith.ShRUIOp: (operator.rshift, True),  # logical: the bits read unsigned
}


@ARITH.impl(arith.ShRSIOp)
def _shrsi(op: arith.ShRSIOp):
    """Arithmetic right shift: the bits read as a signed integer of the width."""
    bits, signed = int_info(op.result.type)
    lhs, rhs, res = op.lhs, op.rhs, op.result

    def run(ctx, env):
        env[res] = wrap(wrap(env[lhs], bits, True) >> env[rhs], bits, signed)

    return run


@ARITH.impl(*_INT_BINOPS)
def _int_binop(op):
    fn, unsigned = _INT_BINOPS[op.__class__]
    bits, signed = int_info(op.result.type)
    lhs, rhs, res = op.lhs, op.rhs, op.result
    mask = (1 << bits) - 1

    def run(ctx, env):
        a, b = env[lhs], env[rhs]
        if unsigned:
            a, b = a & mask, b & mask
        env[res] = wrap(fn(a, b), bits, signed)

    return run


_FLOAT_BINOPS = {
    arith.AddfOp: operator.add,
    arith.SubfOp: operator.sub,
    arith.MulfOp: operator.mul,
    arith.DivfOp: operator.truediv,
}


@ARITH.impl(*_FLOAT_BINOPS)
def _float_binop(op):
    t = np_dtype(op.result.type).type
    fn = _FLOAT_BINOPS[op.__class__]
    lhs, rhs, res = op.lhs, op.rhs, op.result

    def run(ctx, env):
        env[res] = t(fn(t(env[lhs]), t(env[rhs])))

    return run


_CMP = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}  # fmt: skip


@ARITH.impl(arith.CmpiOp)
def _cmpi(op: arith.CmpiOp):
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    cmp, lhs, rhs, res = _CMP[pred[-2:]], op.lhs, op.rhs, op.result
    if pred[0] == "u":
        mask = (1 << int_info(op.lhs.type)[0]) - 1

        def run_unsigned(ctx, env):
            env[res] = int(cmp(env[lhs] & mask, env[rhs] & mask))

        return run_unsigned

    def run(ctx, env):
        env[res] = int(cmp(env[lhs], env[rhs]))

    return run


@ARITH.impl(arith.CmpfOp)
def _cmpf(op: arith.CmpfOp):
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if pred in ("ord", "uno"):  # CSL has no NaN test for these to print to
        raise UnsupportedError(f"arith.cmpf {pred} has no CSL form (xDSL cannot print it)")
    if pred in ("ueq", "ugt", "uge", "ult", "ule"):
        # xDSL prints u<op> and o<op> as the same CSL operator: at NaN one of them must be
        # wrong, and IEEE operators (as in Zig, CSL's model) are false there, like o<op>
        raise UnsupportedError(
            f"arith.cmpf {pred} has no CSL form: xDSL prints it as the same operator as "
            f"o{pred[1:]}, so the printed program and the simulator would disagree at NaN "
            "(une, printed as !=, is true at NaN in both)"
        )
    lhs, rhs, res = op.lhs, op.rhs, op.result
    if pred in ("true", "false"):
        value = int(pred == "true")

        def run_const(ctx, env):
            env[res] = value

        return run_const
    cmp, unordered_is = _CMP[pred[1:]], pred[0] == "u"

    def run(ctx, env):
        a, b = env[lhs], env[rhs]
        if np.isnan(a) or np.isnan(b):
            env[res] = int(unordered_is)
        else:
            env[res] = int(bool(cmp(a, b)))

    return run


@ARITH.impl(arith.SelectOp)
def _select(op: arith.SelectOp):
    cond, lhs, rhs, res = op.cond, op.lhs, op.rhs, op.result

    def run(ctx, env):
        env[res] = env[lhs] if env[cond] else env[rhs]

    return run


@ARITH.impl(
    arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp, arith.SIToFPOp, arith.FPToSIOp,
    arith.ExtFOp, arith.TruncFOp, arith.ExtUIOp, csl.SignednessCastOp,
)  # fmt: skip
def _cast(op):
    """`@as(T, x)`: to a float type rounds, to an integer type truncates then wraps."""
    src, res, to = op.operands[0], op.results[0], op.results[0].type
    if isinstance(to, Float32Type | Float16Type):
        t = np_dtype(to).type
        if isinstance(op, arith.ExtUIOp):
            src_mask = (1 << int_info(src.type)[0]) - 1

            def run_float_unsigned(ctx, env):
                env[res] = t(env[src] & src_mask)

            return run_float_unsigned

        def run_float(ctx, env):
            env[res] = t(env[src])

        return run_float
    bits, signed = int_info(to)
    mask = (1 << int_info(src.type)[0]) - 1 if isinstance(op, arith.ExtUIOp) else -1
    if isinstance(op, arith.ExtSIOp):  # the source's top bit extends, whatever its type
        src_bits = int_info(src.type)[0]

        def run_sign_extend(ctx, env):
            env[res] = wrap(wrap(int(env[src]), src_bits, True), bits, signed)

        return run_sign_extend

    def run(ctx, env):
        v = env[src]
        iv = int(np.trunc(v)) if isinstance(v, np.floating) else int(v)
        env[res] = wrap(iv & mask, bits, signed)

    return run


@ARITH.impl(arith.BitcastOp)
def _bitcast(op: arith.BitcastOp):
    """`@bitcast(T, x)`: the same bits read as the other type."""
    src, res = op.input, op.result
    src_t, res_t = np_dtype(op.input.type), np_dtype(op.result.type)

    def run(ctx, env):
        env[res] = scalar(np.array(env[src], src_t).view(res_t)[()])

    return run
