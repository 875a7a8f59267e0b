"""Program-level behaviour: params, control flow, scalar numerics, unsupported ops."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import array, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import DeadlockError, ProgramError, UnsupportedError


def test_scalar_loops_and_arith_follow_c_semantics():
    body = """
      %lb = arith.constant 0 : index
      %ub = arith.constant 5 : index
      %st = arith.constant 1 : index
      %z = arith.constant 0.0 : f32
      %acc = scf.for %i = %lb to %ub step %st iter_args(%a = %z) -> (f32) {
        %i32 = arith.index_cast %i : index to i32
        %m7 = arith.constant -7 : i32
        %q = arith.divsi %m7, %i32 : i32
        %r = arith.remsi %m7, %i32 : i32
        %two = arith.constant 2 : i32
        %odd = arith.remsi %i32, %two : i32
        %zero = arith.constant 0 : i32
        %is_odd = arith.cmpi ne, %odd, %zero : i32
        %qf = arith.sitofp %q : i32 to f32
        %rf = arith.sitofp %r : i32 to f32
        %pick = arith.select %is_odd, %qf, %rf : f32
        memref.store %pick, %out[%i] : memref<?xf32>
        %next = arith.addf %a, %pick : f32
        scf.yield %next : f32
      }
      %last = arith.constant 5 : index
      memref.store %acc, %out[%last] : memref<?xf32>"""
    # i = 0 divides by zero: guard by starting the check at 1
    body = body.replace("%lb = arith.constant 0 : index", "%lb = arith.constant 1 : index")
    sim = run_main(simulate(make_program(body, arrays={"out": ("f32", 6)})), {})
    q = [int(-7 / i) for i in range(1, 5)]  # C truncates toward zero
    r = [-7 - i * qi for i, qi in zip(range(1, 5), q)]
    want = [q[k] if (k + 1) % 2 else r[k] for k in range(4)]
    np.testing.assert_array_equal(array(sim, "out")[1:5], want)
    assert array(sim, "out")[5] == sum(want)


def test_integer_arithmetic_wraps_at_its_width():
    body = """
      %big = arith.constant 32767 : i16
      %one = arith.constant 1 : i16
      %w = arith.addi %big, %one : i16
      %f = arith.sitofp %w : i16 to f32
      %i0 = arith.constant 0 : index
      memref.store %f, %out[%i0] : memref<?xf32>"""
    sim = run_main(simulate(make_program(body, arrays={"out": ("f32", 1)})), {})
    assert array(sim, "out")[0] == -32768


def test_unknown_layout_param_is_rejected():
    text = make_program(arrays={"out": ("f32", 1)})
    with pytest.raises(ProgramError, match="--params names unknown layout param"):
        simulate(text, params={"nope": 3})


def test_program_param_without_value_is_an_error():
    text = make_program(extra='%q = "csl.param"() <{param_name = "q"}> : () -> i16')
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): param 'q' of 'pe' gets no value"):
        simulate(text)


def test_an_unmodeled_op_is_rejected_by_name():
    body = """
      %a = arith.constant 1.0 : f32
      %b = arith.negf %a : f32"""
    with pytest.raises(UnsupportedError, match="does not model op arith.negf"):
        run_main(simulate(make_program(body)), {})


def test_function_that_never_unblocks_is_a_deadlock():
    with pytest.raises(DeadlockError, match="unblock_cmd_stream\\(\\) never ran"):
        run_main(simulate(make_program("", unblock=False)), {})
