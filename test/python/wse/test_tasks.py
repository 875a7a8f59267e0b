# ruff: noqa: E501  (embedded MLIR lines)
"""Task states: activation, blocking, run-to-completion, async completion, data tasks."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import DeadlockError, ProgramError, ReservedIdError

UNBLOCK = '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()'

# log[next++] = v, for checking the order in which code runs
RECORD = """
    %next = "csl.variable"() <{default = 0 : i32}> : () -> !csl.var<i32>
    csl.func @record(%v: f32) {
      %i = "csl.load_var"(%next) : (!csl.var<i32>) -> i32
      %idx = arith.index_cast %i : i32 to index
      memref.store %v, %log[%idx] : memref<?xf32>
      %one = arith.constant 1 : i32
      %i1 = arith.addi %i, %one : i32
      "csl.store_var"(%next, %i1) : (!csl.var<i32>, i32) -> ()
      csl.return
    }
"""


def _task(name: str, id: int, body: str, kind: str = "local") -> str:
    return f"""
    csl.task @{name}() attributes {{kind = #csl<task_kind {kind}>, id = {id} : ui5}} {{
      {body}
      csl.return
    }}"""


def _rec(v: float) -> str:
    return f"""%r{int(v)} = arith.constant {v} : f32
      "csl.call"(%r{int(v)}) <{{callee = @record}}> : (f32) -> ()"""


def _log(body: str, extra: str) -> np.ndarray:
    text = make_program(body, arrays={"log": ("f32", 4)}, extra=RECORD + extra, unblock=False)
    return array(run_main(simulate(text), {}), "log")


def test_activated_task_runs_after_the_current_one_completes():
    extra = _task("t", 12, f"{_rec(2.0)}\n      {UNBLOCK}")
    log = _log(f"csl.activate local, 12 : ui5\n      {_rec(1.0)}", extra)
    np.testing.assert_array_equal(log[:2], [1, 2])


def test_earlier_activation_runs_first():
    extra = _task("a", 12, _rec(2.0)) + _task("b", 13, f"{_rec(3.0)}\n      {UNBLOCK}")
    log = _log("csl.activate local, 12 : ui5\n      csl.activate local, 13 : ui5", extra)
    np.testing.assert_array_equal(log[:2], [2, 3])


def test_blocked_task_waits_for_unblock_even_when_activated():
    # t12 is activated first but blocked; t13 runs, unblocks it, then t12 runs
    extra = _task("t12", 12, f"{_rec(2.0)}\n      {UNBLOCK}") + _task(
        "t13", 13, f"{_rec(1.0)}\n      csl_ext.unblock local, 12 : ui5"
    )
    body = "csl_ext.block local, 12 : ui5\n      csl.activate local, 12 : ui5\n      csl.activate local, 13 : ui5"
    np.testing.assert_array_equal(_log(body, extra)[:2], [1, 2])


def test_a_task_that_stays_blocked_deadlocks_with_a_report():
    extra = _task("stuck", 12, UNBLOCK)
    text = make_program(
        "csl_ext.block local, 12 : ui5\n      csl.activate local, 12 : ui5",
        extra=extra,
        unblock=False,
    )
    with pytest.raises(DeadlockError, match=r"PE \(0, 0\).*task 'stuck' \(local 12\) is blocked"):
        run_main(simulate(text), {})


def test_async_op_activates_its_task_when_done():
    extra = _task(
        "done", 12,
        f"""{dsd("e", 8)}
      {dsd("d", 8)}
      "csl.fmovs"(%e_dsd, %d_dsd) : ({D1}, {D1}) -> ()
      {UNBLOCK}""",
    )  # fmt: skip
    body = f"""{dsd("d", 8)}
      {dsd("a", 8)}
      "csl.fnegs"(%d_dsd, %a_dsd) {{async = #csl_ext.async<activate local 12>}} : ({D1}, {D1}) -> ()"""
    a = np.arange(8, dtype=np.float32)
    text = make_program(body, arrays={k: ("f32", 8) for k in "ade"}, extra=extra, unblock=False)
    sim = run_main(simulate(text), {"a": a})
    np.testing.assert_array_equal(array(sim, "e"), -a)
    assert sim.pes[(0, 0)].async_cycles > 0


def test_data_task_runs_once_per_wavelet_with_the_wavelet_as_argument():
    # PE (0, 0) routes color 5 from its core back to its core
    layout = """
      %c5i = arith.constant 5 : i16
      %c5 = "csl.get_color"(%c5i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c5 routes <rx = [ramp], tx = [ramp]> : i16, i16"""
    extra = RECORD + """
    csl.task @on_wavelet(%v: f32) attributes {kind = #csl<task_kind data>, id = 5 : ui5} {
      "csl.call"(%v) <{callee = @record}> : (f32) -> ()
      %i = "csl.load_var"(%next) : (!csl.var<i32>) -> i32
      %four = arith.constant 4 : i32
      %full = arith.cmpi eq, %i, %four : i32
      scf.if %full {
        "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      }
      csl.return
    }"""
    body = f"""{dsd("a", 4)}
      %n = arith.constant 4 : i16
      %out = "csl.get_fab_dsd"(%n) <{{fabric_color = 5 : ui5, queue_id = 1 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
      "csl.fmovs"(%out, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()"""
    a = np.float32([3, -1, 4.5, 9])
    text = make_program(body, arrays={"a": ("f32", 4), "log": ("f32", 4)}, extra=extra,
                        layout=layout, unblock=False)  # fmt: skip
    sim = run_main(simulate(text), {"a": a})
    np.testing.assert_array_equal(array(sim, "log"), a)
    assert sim.pes[(0, 0)].tasks_run == 5  # main + one task per wavelet


@pytest.mark.parametrize("id", [21, 22, 23, 27, 31])
def test_reserved_task_ids_are_rejected(id: int):
    text = make_program("", extra=_task("t", id, ""))
    with pytest.raises(ReservedIdError, match=f"id {id}, reserved"):
        simulate(text)


def test_activating_an_unbound_task_id_is_an_error():
    with pytest.raises(ProgramError, match="local task id 14, bound to no task"):
        run_main(simulate(make_program("csl.activate local, 14 : ui5")), {})


def test_a_task_that_reactivates_itself_forever_hits_the_cycle_guard():
    from pyflame_mlir.runtime.wse import WseError

    text = make_program("csl.activate local, 12 : ui5", extra=_task("spin", 12, "csl.activate local, 12 : ui5"))
    with pytest.raises(WseError, match="still busy after 10,000 cycles"):
        run_main(simulate(text, max_cycles=1e4), {})
