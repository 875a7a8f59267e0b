"""Counted loops (`scf.for`, CSL's `for (@range(...))`): a step that is not positive
is a ProgramError (a zero step raised Python's ValueError; a negative one ran a loop
scf.for does not have), and a loop that runs past the cycle limit inside one task is
stopped there (the event loop's guard never saw it)."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ProgramError, WseError

LOOP = """%lo = arith.constant LO : i32
      %hi = arith.constant HI : i32
      %st = arith.constant ST : i32
      scf.for %i = %lo to %hi step %st : i32 {
        %ii = arith.index_cast %i : i32 to index
        %v = arith.constant 1.0 : f32
        memref.store %v, %b[%ii] : memref<?xf32>
      }"""


def _loop(lo: int, hi: int, st: int, **kw):
    body = LOOP.replace("LO", str(lo)).replace("HI", str(hi)).replace("ST", str(st))
    return run_main(simulate(make_program(body, arrays={"b": ("f32", 8)}), **kw), {})


@pytest.mark.parametrize("step", [0, -1, -3])
def test_a_step_that_is_not_positive_is_an_error(step: int):
    with pytest.raises(ProgramError, match=f"scf.for with step {step} .*must be positive"):
        _loop(0, 4, step)


def test_a_strided_loop_runs():
    np.testing.assert_array_equal(array(_loop(1, 8, 3), "b"), [0, 1, 0, 0, 1, 0, 0, 1])


@pytest.mark.parametrize(("lo", "step"), [(0, 1), (1, 2)])  # every index odd: still caught
def test_a_loop_past_the_cycle_limit_stops(lo: int, step: int):
    body = LOOP.replace("LO", str(lo)).replace("HI", "2000000000").replace("ST", str(step))
    body = body.replace("memref.store %v, %b[%ii] : memref<?xf32>", "")
    with pytest.raises(WseError, match="still in the loop .* after 100,000 cycles"):
        run_main(simulate(make_program(body, arrays={"b": ("f32", 8)}), max_cycles=1e5), {})
