"""An element load or store outside its array (`a[i - 1]` with i = 0, `a[n]`) is a
ProgramError naming the op and the index. numpy wrapped a negative index to the
array's end, so `a[-1]` read the last element: a silently wrong answer."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ProgramError

LOAD = """%i = arith.constant I : index
      %v = memref.load %b[%i] : memref<?xf32>
      %z = arith.constant 0 : index
      memref.store %v, %b[%z] : memref<?xf32>"""
STORE = """%i = arith.constant I : index
      %v = arith.constant 9.0 : f32
      memref.store %v, %b[%i] : memref<?xf32>"""
B = np.arange(4, dtype=np.float32)


def _run(body: str, i: int):
    return run_main(simulate(make_program(body.replace("I :", f"{i} :"),
                                          arrays={"b": ("f32", 4)})), {"b": B})


@pytest.mark.parametrize(("body", "op"), [(LOAD, "memref.load"), (STORE, "memref.store")])
@pytest.mark.parametrize("i", [-1, -4, 4, 100])
def test_out_of_bounds_element_access_is_an_error(body: str, op: str, i: int):
    with pytest.raises(ProgramError, match=rf"{op} of element \[{i}\] of a \[4\] array"):
        _run(body, i)


def test_in_bounds_access_works():
    np.testing.assert_array_equal(array(_run(LOAD, 3), "b"), [3, 1, 2, 3])
    np.testing.assert_array_equal(array(_run(STORE, 3), "b"), [0, 1, 2, 9])
