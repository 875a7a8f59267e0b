# ruff: noqa: E501  (embedded MLIR lines)
"""cslc's rule that a DSD's lengths are u16 (CSL_NOTES, "DSD fields"): a mem1d DSD
(a stride-0 one can be longer than its array), a fabric DSD's extent and a mem4d
loop longer than 65535, or negative, is refused with the rule named; 65535 itself
is accepted."""

from __future__ import annotations

import pytest
from _wse_harness import D1, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ArchRuleError

MEM = f"""%n = arith.constant N : i32
      %b_dsd = "csl.get_mem_dsd"(%b, %n) <{{tensor_access = affine_map<(d0) -> (0)>}}> : (memref<?xf32>, i32) -> {D1}"""
FAB = """%n = arith.constant N : i32
      %c = arith.constant 3 : i16
      %col = "csl.get_color"(%c) : (i16) -> !csl.color
      %o = csl_ext.get_fab_dsd %n, %col {queue_id = 2 : i3} : i32 -> !csl<dsd KIND>"""
MEM4 = """%n = arith.constant N : i32
      %one = arith.constant 1 : i32
      %b_dsd = "csl.get_mem_dsd"(%b, %one, %n) <{tensor_access = affine_map<(d0, d1) -> (0)>}> : (memref<?xf32>, i32, i32) -> !csl<dsd mem4d_dsd>"""


def _run(body: str) -> None:
    run_main(simulate(make_program(body, arrays={"b": ("f32", 1)})), {})


@pytest.mark.parametrize(("body", "kind"), [(MEM, "mem1d_dsd"), (FAB.replace("KIND", "fabout_dsd"), "fabout_dsd"),
                                            (FAB.replace("KIND", "fabin_dsd"), "fabin_dsd"), (MEM4, "mem4d_dsd")])
@pytest.mark.parametrize("n", [65536, 70000, -1])
def test_a_dsd_length_beyond_u16_is_refused(body: str, kind: str, n: int):
    with pytest.raises(ArchRuleError, match=f"{kind} length {n} does not fit the DSD's u16 length"):
        _run(body.replace("N : i32", f"{n} : i32", 1))


@pytest.mark.parametrize("body", [MEM, FAB.replace("KIND", "fabout_dsd"), MEM4])
def test_the_largest_u16_length_is_accepted(body: str):
    _run(body.replace("N : i32", "65535 : i32", 1))
