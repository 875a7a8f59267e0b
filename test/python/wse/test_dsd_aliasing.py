# ruff: noqa: E501  (embedded MLIR lines)
"""A DSD op whose destination overlaps a source at an earlier element (element j
reads what element i < j wrote: `a[i] = a[i-1] + 1`, a stride-0 destination
accumulating over itself) depends on how far the hardware's DSD pipeline reads
ahead of its writes, which is not documented: a ProgramError, where the simulator
used to give the read-everything-first answer. In-place elementwise ops, reads ahead
of the writes and disjoint arrays are unaffected (checked against numpy)."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import D1, array, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ProgramError

A = np.arange(1, 7, dtype=np.float32)


def _dsd(name: str, arr: str, n: int, access: str) -> str:
    return (f"%{name}_n = arith.constant {n} : i16\n"
            f'      %{name} = "csl.get_mem_dsd"(%{arr}, %{name}_n) <{{tensor_access = {access}}}> : (memref<?xf32>, i16) -> {D1}')


def _run(dest: str, src: str, n: int = 5, arrays=("a",)):
    body = f"""{_dsd('d', dest.split(':')[0], n, dest.split(':')[1])}
      {_dsd('s', src.split(':')[0], n, src.split(':')[1])}
      %one = arith.constant 1.0 : f32
      "csl.fadds"(%d, %s, %one) : ({D1}, {D1}, f32) -> ()"""
    sim = run_main(simulate(make_program(body, arrays={k: ("f32", 6) for k in arrays})),
                   {k: A for k in arrays})
    return {k: array(sim, k) for k in arrays}


@pytest.mark.parametrize(("dest", "src"), [
    ("a:affine_map<(d0) -> (d0 + 1)>", "a:affine_map<(d0) -> (d0)>"),  # a[i+1] = a[i] + 1
    ("a:affine_map<(d0) -> (0)>", "a:affine_map<(d0) -> (0)>"),  # stride 0 over itself
    ("a:affine_map<(d0) -> (d0)>", "a:affine_map<(d0) -> (0)>"),  # a[i] = a[0] + 1
])
def test_order_dependent_aliasing_is_refused(dest: str, src: str):
    with pytest.raises(ProgramError, match="@fadds writes memory its source 0 reads at a later"):
        _run(dest, src)


def test_safe_overlaps_and_disjoint_arrays_run():
    # in place
    np.testing.assert_array_equal(_run("a:affine_map<(d0) -> (d0)>", "a:affine_map<(d0) -> (d0)>")["a"],
                                  np.r_[A[:5] + 1, A[5]])
    # a[i] = a[i+1] + 1: every read is ahead of the writes
    np.testing.assert_array_equal(_run("a:affine_map<(d0) -> (d0)>", "a:affine_map<(d0) -> (d0 + 1)>")["a"],
                                  np.r_[A[1:6] + 1, A[5]])
    # a[0] = a[i] + 1: a[0] is read only before it is written, the last write wins
    np.testing.assert_array_equal(_run("a:affine_map<(d0) -> (0)>", "a:affine_map<(d0) -> (d0)>")["a"],
                                  np.r_[A[4] + 1, A[1:]])
    # a stride-0 destination of another array: the last element wins
    out = _run("b:affine_map<(d0) -> (0)>", "a:affine_map<(d0) -> (d0)>", arrays=("a", "b"))
    assert out["b"][0] == A[4] + 1 and (out["b"][1:] == A[1:]).all()


D4 = "!csl<dsd mem4d_dsd>"


@pytest.mark.parametrize("dims", [1, 2])
def test_one_dsd_as_destination_and_source_revisiting_an_address_is_refused(dims: int):
    """`@fadds(acc4, acc4, buf4)` with `acc4 = |i,k| -> acc[k]` (the SDK's 25-pt-stencil
    reduceBuffer) or a stride-0 mem1d_dsd: the same DSD value as destination and source,
    so not elementwise in place: element (i, k) reads what (i - 1, k) wrote. It used to
    pass as in place and keep only the last row's sum, silently."""
    if dims == 1:
        body = f"""{_dsd('d', 'a', 3, 'affine_map<(d0) -> (0)>')}
      {_dsd('s', 'b', 3, 'affine_map<(d0) -> (d0)>')}
      "csl.fadds"(%d, %d, %s) : ({D1}, {D1}, {D1}) -> ()"""
    else:
        body = f"""%two = arith.constant 2 : i16
      %three = arith.constant 3 : i16
      %d = "csl.get_mem_dsd"(%a, %two, %three) <{{tensor_access = affine_map<(d0, d1) -> (d1)>}}> : (memref<?xf32>, i16, i16) -> {D4}
      %s = "csl.get_mem_dsd"(%b, %two, %three) <{{tensor_access = affine_map<(d0, d1) -> (d0 * 3 + d1)>}}> : (memref<?xf32>, i16, i16) -> {D4}
      "csl.fadds"(%d, %d, %s) : ({D4}, {D4}, {D4}) -> ()"""
    with pytest.raises(ProgramError, match="@fadds writes memory its source 0 reads at a later"):
        run_main(simulate(make_program(body, arrays={"a": ("f32", 6), "b": ("f32", 6)})),
                 {"a": A, "b": A})
