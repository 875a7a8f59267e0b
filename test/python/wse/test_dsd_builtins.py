# ruff: noqa: E501  (embedded MLIR lines)
"""Every modeled DSD builtin against an independent numpy oracle.

Oracles compute in a wider type and round once (f64 -> f32, f32 -> f16): for
one add or multiply that is exactly IEEE round-to-nearest of the narrow type,
so equality is exact; fmac rounds the product and then the sum.
"""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import D1, MLIR_TYPE, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import ProgramError, UnsupportedError
from pyflame_mlir.runtime.wse.builtins import BUILTINS

N = 13
NP = {"f32": np.float32, "f16": np.float16}
RNG = np.random.default_rng(0)


def _data(t: str, n: int = N) -> np.ndarray:
    if t in ("f32", "f16"):
        return (RNG.standard_normal(n) * 3).astype(NP[t])
    if t == "u16":
        return RNG.integers(0, 2**16, n).astype(np.uint16)
    return RNG.integers(0, 2**31, n).astype(np.uint32)


def _wide(t: str):
    return np.float64 if t == "f32" else np.float32


def _run(body: str, arrays: dict[str, tuple[str, int]], inputs: dict[str, np.ndarray]):
    sim = run_main(simulate(make_program(body, arrays=arrays)), inputs)
    return sim


BINARY = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply, "fmax": np.maximum}
UNARY = {"fneg": np.negative, "fabs": np.abs, "fmov": lambda a: a}


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("form", ["dsd_dsd", "scalar_dsd", "dsd_scalar"])
def test_binary(t: str, op: str, form: str):
    name = op + ("s" if t == "f32" else "h")
    mt = MLIR_TYPE[t]
    a, b, s = _data(t), _data(t), _data(t, 1)[0]
    srcs = {"dsd_dsd": ("%a_dsd", "%b_dsd", D1, D1),
            "scalar_dsd": ("%s", "%b_dsd", mt, D1),
            "dsd_scalar": ("%a_dsd", "%s", D1, mt)}[form]  # fmt: skip
    body = f"""{dsd("d", N, t)}
      {dsd("a", N, t)}
      {dsd("b", N, t)}
      %s = arith.constant {float(s)!r} : {mt}
      "csl.{name}"(%d_dsd, {srcs[0]}, {srcs[1]}) : ({D1}, {srcs[2]}, {srcs[3]}) -> ()"""
    sim = _run(body, {k: (t, N) for k in "dab"}, {"a": a, "b": b})
    x = {"dsd_dsd": (a, b), "scalar_dsd": (s, b), "dsd_scalar": (a, s)}[form]
    w = _wide(t)
    expected = BINARY[op](np.asarray(x[0], w), np.asarray(x[1], w)).astype(NP[t])
    np.testing.assert_array_equal(array(sim, "d"), np.broadcast_to(expected, (N,)))


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(t: str, op: str):
    name = op + ("s" if t == "f32" else "h")
    a = _data(t)
    body = f"""{dsd("d", N, t)}
      {dsd("a", N, t)}
      "csl.{name}"(%d_dsd, %a_dsd) : ({D1}, {D1}) -> ()"""
    sim = _run(body, {"d": (t, N), "a": (t, N)}, {"a": a})
    np.testing.assert_array_equal(array(sim, "d"), UNARY[op](a))


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_fmov_fill(t: str):
    mt = MLIR_TYPE[t]
    body = f"""{dsd("d", N, t)}
      %v = arith.constant 2.5 : {mt}
      "csl.fmov{"s" if t == "f32" else "h"}"(%d_dsd, %v) : ({D1}, {mt}) -> ()"""
    sim = _run(body, {"d": (t, N)}, {})
    np.testing.assert_array_equal(array(sim, "d"), np.full(N, 2.5, NP[t]))


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_fmac(t: str):
    name, mt = ("fmacs" if t == "f32" else "fmach"), MLIR_TYPE[t]
    a, b, s = _data(t), _data(t), _data(t, 1)[0]
    body = f"""{dsd("d", N, t)}
      {dsd("a", N, t)}
      {dsd("b", N, t)}
      %s = arith.constant {float(s)!r} : {mt}
      "csl.{name}"(%d_dsd, %a_dsd, %b_dsd, %s) : ({D1}, {D1}, {D1}, {mt}) -> ()"""
    sim = _run(body, {k: (t, N) for k in "dab"}, {"a": a, "b": b})
    w = _wide(t)
    product = (b.astype(w) * w(s)).astype(NP[t])
    expected = (a.astype(w) + product.astype(w)).astype(NP[t])
    np.testing.assert_array_equal(array(sim, "d"), expected)


def test_fmacs_is_d_equals_a_plus_b_times_s_not_accumulating_into_d():
    a, b = np.ones(N, np.float32), np.full(N, 2.0, np.float32)
    body = f"""{dsd("d", N)}
      {dsd("a", N)}
      {dsd("b", N)}
      %s = arith.constant 3.0 : f32
      "csl.fmacs"(%d_dsd, %a_dsd, %b_dsd, %s) : ({D1}, {D1}, {D1}, f32) -> ()"""
    sim = _run(body, {k: ("f32", N) for k in "dab"}, {"a": a, "b": b, "d": np.full(N, 100, np.float32)})
    np.testing.assert_array_equal(array(sim, "d"), np.full(N, 7.0, np.float32))


def test_mixed_precision_and_conversions():
    h1, h2 = _data("f16"), _data("f16")
    f = _data("f32")
    body = f"""{dsd("d", N)}
      {dsd("e", N)}
      {dsd("g", N, "f16")}
      {dsd("f", N)}
      {dsd("h1", N, "f16")}
      {dsd("h2", N, "f16")}
      %s = arith.constant 0.5 : f16
      "csl.faddhs"(%d_dsd, %f_dsd, %h1_dsd) : ({D1}, {D1}, {D1}) -> ()
      "csl.fmachs"(%e_dsd, %f_dsd, %h1_dsd, %s) : ({D1}, {D1}, {D1}, f16) -> ()
      "csl.fs2h"(%g_dsd, %f_dsd) : ({D1}, {D1}) -> ()
      "csl.fh2s"(%f_dsd, %h2_dsd) : ({D1}, {D1}) -> ()"""
    arrays = {"d": ("f32", N), "e": ("f32", N), "g": ("f16", N), "f": ("f32", N),
              "h1": ("f16", N), "h2": ("f16", N)}  # fmt: skip
    sim = _run(body, arrays, {"f": f, "h1": h1, "h2": h2})
    wide = h1.astype(np.float64)
    np.testing.assert_array_equal(array(sim, "d"), (f.astype(np.float64) + wide).astype(np.float32))
    prod = (wide * 0.5).astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(array(sim, "e"), (f.astype(np.float64) + prod).astype(np.float32))
    np.testing.assert_array_equal(array(sim, "g"), f.astype(np.float16))
    np.testing.assert_array_equal(array(sim, "f"), h2.astype(np.float32))


def test_f16_rounding_is_ieee_half():
    # 2048 + 1 is not representable in f16 (ties to even -> 2048); f32 would keep it
    a, b = np.full(N, 2048, np.float16), np.ones(N, np.float16)
    body = f"""{dsd("d", N, "f16")}
      {dsd("a", N, "f16")}
      {dsd("b", N, "f16")}
      "csl.faddh"(%d_dsd, %a_dsd, %b_dsd) : ({D1}, {D1}, {D1}) -> ()"""
    sim = _run(body, {k: ("f16", N) for k in "dab"}, {"a": a, "b": b})
    assert array(sim, "d")[0] == 2048


@pytest.mark.parametrize("op", ["fadds", "fmaxs", "fsubs", "fmuls", "fmovs"])
def test_scalar_pointer_destination_folds_in_order(op: str):
    a = _data("f32", 6)
    single = "!csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>"
    many = "!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>"
    body = f"""{dsd("a", 6)}
      %out_many = "csl.addressof"(%out) : (memref<?xf32>) -> {many}
      %acc_p = "csl.ptrcast"(%out_many) : ({many}) -> {single}
      %i0 = arith.constant 0 : index
      %acc_v = memref.load %out[%i0] : memref<?xf32>
      """
    if op == "fmovs":
        body += f'"csl.fmovs"(%acc_p, %a_dsd) : ({single}, {D1}) -> ()'
    else:
        body += f'"csl.{op}"(%acc_p, %acc_v, %a_dsd) : ({single}, f32, {D1}) -> ()'
    sim = _run(body, {"a": ("f32", 6), "out": ("f32", 1)}, {"a": a, "out": np.float32([1.5])})
    acc = np.float32(1.5)
    for v in a:
        acc = {"fadds": acc + v, "fmaxs": max(acc, v), "fsubs": acc - v, "fmuls": acc * v,
               "fmovs": v}[op]  # fmt: skip
    assert array(sim, "out")[0] == np.float32(acc)


INT_OPS = {
    "add16": lambda a, b: a + b, "sub16": lambda a, b: a - b, "and16": np.bitwise_and,
    "or16": np.bitwise_or, "xor16": np.bitwise_xor,
    "sll16": lambda a, b: a << (b & 15), "slr16": lambda a, b: a >> (b & 15),
    "sar16": lambda a, b: (a.view(np.int16) >> (b & 15).astype(np.int16)).view(np.uint16),
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(INT_OPS))
def test_int16_binary(op: str):
    a, b = _data("u16"), _data("u16")
    # arith has no unsigned constants, so the arrays are i16; the ops see bit patterns
    body = f"""{dsd("d", N, "i16")}
      {dsd("a", N, "i16")}
      {dsd("b", N, "i16")}
      "csl.{op}"(%d_dsd, %a_dsd, %b_dsd) : ({D1}, {D1}, {D1}) -> ()"""
    inputs = {"a": a.view(np.int16), "b": b.view(np.int16)}
    sim = _run(body, {k: ("i16", N) for k in "dab"}, inputs)
    expected = INT_OPS[op](a.astype(np.uint16), b.astype(np.uint16)).astype(np.uint16)
    np.testing.assert_array_equal(array(sim, "d").view(np.uint16), expected)


def test_int16_bit_counts_and_moves():
    a = np.array([0, 1, 2, 0x8000, 0xFFFF, 12, 0x0F00, 7, 0, 1, 2, 3, 4], np.uint16)
    w = _data("u32")
    body = f"""{dsd("c", N, "i16")}
      {dsd("z", N, "i16")}
      {dsd("p", N, "i16")}
      {dsd("m", N, "i16")}
      {dsd("a", N, "i16")}
      {dsd("w", N, "i32")}
      {dsd("v", N, "i32")}
      "csl.clz"(%c_dsd, %a_dsd) : ({D1}, {D1}) -> ()
      "csl.ctz"(%z_dsd, %a_dsd) : ({D1}, {D1}) -> ()
      "csl.popcnt"(%p_dsd, %a_dsd) : ({D1}, {D1}) -> ()
      "csl.mov16"(%m_dsd, %a_dsd) : ({D1}, {D1}) -> ()
      "csl.mov32"(%v_dsd, %w_dsd) : ({D1}, {D1}) -> ()"""
    arrays = {k: ("i16", N) for k in "czpma"} | {"w": ("i32", N), "v": ("i32", N)}
    sim = _run(body, arrays, {"a": a.view(np.int16), "w": w.view(np.int32)})
    bits = [format(int(v), "016b") for v in a]
    np.testing.assert_array_equal(array(sim, "c"), [16 - len(b.lstrip("0")) if "1" in b else 16 for b in bits])
    np.testing.assert_array_equal(array(sim, "z"), [len(b) - len(b.rstrip("0")) if "1" in b else 16 for b in bits])
    np.testing.assert_array_equal(array(sim, "p"), [b.count("1") for b in bits])
    np.testing.assert_array_equal(array(sim, "m").view(np.uint16), a)
    np.testing.assert_array_equal(array(sim, "v").view(np.uint32), w)


def test_every_modeled_builtin_is_tested_here():
    tested = {o + s for o in [*BINARY, *UNARY, "fmac"] for s in "sh"}
    tested |= {"faddhs", "fmachs", "fs2h", "fh2s", *INT_OPS, "clz", "ctz", "popcnt", "mov16", "mov32"}
    assert set(BUILTINS) == tested


def test_unmodeled_builtin_is_a_clear_error():
    body = f"""{dsd("d", N)}
      {dsd("a", N)}
      "csl.fs2xp16"(%d_dsd, %a_dsd) : ({D1}, {D1}) -> ()"""
    with pytest.raises(UnsupportedError, match="fs2xp16.*not publicly documented"):
        _run(body, {"d": ("f32", N), "a": ("f32", N)}, {})


def test_length_mismatch_is_an_error():
    body = f"""{dsd("d", N)}
      {dsd("a", N - 1)}
      "csl.fnegs"(%d_dsd, %a_dsd) : ({D1}, {D1}) -> ()"""
    with pytest.raises(ProgramError, match="different lengths"):
        _run(body, {"d": ("f32", N), "a": ("f32", N)}, {})
