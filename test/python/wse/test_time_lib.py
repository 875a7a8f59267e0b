# ruff: noqa: E501  (embedded MLIR lines)
"""`<time>`, the SDK's timestamp library: `tsc_size_words` u16 words hold a 48-bit cycle
count, least significant word first; `enable_tsc()` starts the counter and
`get_timestamp(&buf)` writes it (the simulator's global clock)."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import dsd, make_program, simulate

from pyflame_mlir.runtime.wse import ProgramError

D1 = "!csl<dsd mem1d_dsd>"

TIME = """
    %tsc = "csl.import_module"() <{module = "<time>"}> : () -> !csl.imported_module
    %words = "csl.member_access"(%tsc) <{field = "tsc_size_words"}> : (!csl.imported_module) -> i16
    %nu = "csl.mlir.signedness_cast"(%%N) : (i16) -> ui16
    %t0 = "csl.zeros"(%nu) : (ui16) -> memref<?xui16>
    %t1 = "csl.zeros"(%nu) : (ui16) -> memref<?xui16>
    %t0_ptr = "csl.addressof"(%t0) : (memref<?xui16>) -> !csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>
    %t1_ptr = "csl.addressof"(%t1) : (memref<?xui16>) -> !csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>
    "csl.export"(%t0_ptr) <{var_name = "t0", type = !csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
    "csl.export"(%t1_ptr) <{var_name = "t1", type = !csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<ui16, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()"""

ENABLE = '"csl.member_call"(%tsc) <{field = "enable_tsc"}> : (!csl.imported_module) -> ()'


def _stamp(buf: str) -> str:
    return f'"csl.member_call"(%tsc, %{buf}) <{{field = "get_timestamp"}}> : (!csl.imported_module, memref<?xui16>) -> ()'


def _program(body: str, words: str = "%words") -> str:
    return make_program(body, arrays={"a": ("f32", 500), "b": ("f32", 500)},
                        extra=TIME.replace("%%N", words))


def _u48(w: np.ndarray) -> int:
    return int(w[0]) + (int(w[1]) << 16) + (int(w[2]) << 32)


def test_timestamps_count_the_cycles_between_them():
    body = f"""{ENABLE}
      {_stamp("t0")}
      {dsd("a", 500)}
      {dsd("b", 500)}
      "csl.fadds"(%b_dsd, %b_dsd, %a_dsd) : ({D1}, {D1}, {D1}) -> ()
      {_stamp("t1")}"""
    sim = simulate(_program(body))
    sim.launch("main")
    t0, t1 = (_u48(sim.symbol(n, 0, 0)) for n in ("t0", "t1"))
    # the 500-element add runs at one element per cycle between the two stamps
    assert 500 <= t1 - t0 <= 520
    assert t0 > 0


def test_a_timestamp_before_enable_tsc_is_refused():
    sim = simulate(_program(_stamp("t0")))
    with pytest.raises(ProgramError, match=r"get_timestamp\(\) before enable_tsc\(\)"):
        sim.launch("main")


def test_a_timestamp_buffer_of_fewer_than_three_words_is_refused():
    two = '%two = arith.constant 2 : i16'
    text = _program(f"{ENABLE}\n      {_stamp('t0')}", words="%two").replace(
        '%tsc = "csl.import_module"', f'{two}\n    %tsc = "csl.import_module"')
    sim = simulate(text)
    with pytest.raises(ProgramError, match="needs a pointer to 3 u16 words"):
        sim.launch("main")
