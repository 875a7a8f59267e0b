"""Array sizes a PE cannot have: a negative size is a ProgramError (at module level
it made an empty array and moved the SRAM allocator back over the arrays before it,
so later globals aliased earlier ones; in a function it raised numpy's ValueError),
and a function-local array larger than what the SRAM has beside the globals is an
SramOverflowError (it ran, on a stack of any size)."""

from __future__ import annotations

import pytest
from _wse_harness import make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ProgramError, SramOverflowError

ARRAY = """%n = arith.constant N : i16
    %z = arith.constant 0.0 : f32
    %a = "csl.constants"(%n, %z) : (i16, f32) -> memref<?xf32>"""


def _run(n: int, where: str):
    decl = ARRAY.replace("N :", f"{n} :")
    text = make_program(decl) if where == "function" else make_program("", extra=decl)
    return run_main(simulate(text), {})


@pytest.mark.parametrize("where", ["module", "function"])
def test_a_negative_array_size_is_an_error(where: str):
    with pytest.raises(ProgramError, match=r"array 'a' of shape \[-1\]: a negative size"):
        _run(-1, where)


def test_a_function_local_array_larger_than_the_sram_is_refused():
    with pytest.raises(SramOverflowError, match="function-local array 'a' of 80000 bytes"):
        _run(20000, "function")


@pytest.mark.parametrize("where", ["module", "function"])
def test_sizes_that_fit_run(where: str):
    _run(0, where)
    _run(1000, where)
