# ruff: noqa: E501  (embedded MLIR lines)
"""Issue 15, the simulator's queues: data tasks dispatched from their queue binding
(WSE-3: an input queue, WSE-2: a color), bounded queues with backpressure (a
send/send exchange deadlocks and is reported with each PE's blocked op and the
colors), and wavelets nobody reads reported at the next launch and at stop()."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate
from pyflame_mlir.lowering.csl_printer import print_csl

from pyflame_mlir.runtime.wse import CycleModel, DeadlockError, StaleWaveletError
from pyflame_mlir.runtime.wse.errors import ArchRuleError
from pyflame_mlir.runtime.wse.fabric import path_room
from pyflame_mlir.runtime.wse.program import parse_program

LOOPBACK = """
      %c5i = arith.constant 5 : i16
      %c5 = "csl.get_color"(%c5i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c5 routes <rx = [ramp], tx = [ramp]> : i16, i16"""


def _data_task_program(bind: str) -> str:
    """Main sends a[0:4] to its own core on color 5; a data task sums the wavelets
    into total[0] and unblocks the command stream after the 4th."""
    task_id = "" if bind == "input_queue" else ", id = 5 : ui5"
    binding = 'csl_ext.bind_data_task @on_wavelet {queue_id = 3 : i3}' if bind == "input_queue" else ""
    extra = f"""
    %c5qi = arith.constant 5 : i16
    %c5q = "csl.get_color"(%c5qi) : (i16) -> !csl.color
    csl_ext.initialize_queue %c5q {{queue_id = 3 : i3}}
    csl_ext.initialize_queue %c5q {{queue_id = 2 : i3, output = true}}
    %seen = "csl.variable"() <{{default = 0 : i32}}> : () -> !csl.var<i32>
    {binding}
    csl.task @on_wavelet(%v: f32) attributes {{kind = #csl<task_kind data>{task_id}}} {{
      %z = arith.constant 0 : index
      %old = memref.load %total[%z] : memref<?xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %total[%z] : memref<?xf32>
      %i = "csl.load_var"(%seen) : (!csl.var<i32>) -> i32
      %one = arith.constant 1 : i32
      %i1 = arith.addi %i, %one : i32
      "csl.store_var"(%seen, %i1) : (!csl.var<i32>, i32) -> ()
      %four = arith.constant 4 : i32
      %full = arith.cmpi eq, %i1, %four : i32
      scf.if %full {{
        "csl.member_call"(%sys_mod) <{{field = "unblock_cmd_stream"}}> : (!csl.imported_module) -> ()
      }}
      csl.return
    }}"""
    body = f"""{dsd("a", 4)}
      %n = arith.constant 4 : i16
      %out = "csl.get_fab_dsd"(%n) <{{fabric_color = 5 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
      "csl.fmovs"(%out, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()"""
    return make_program(body, arrays={"a": ("f32", 4), "total": ("f32", 1)}, extra=extra,
                        layout=LOOPBACK, unblock=False)


@pytest.mark.parametrize("arch,bind", [("wse3", "input_queue"), ("wse2", "color")])
def test_data_task_runs_from_its_binding(arch: str, bind: str):
    a = np.float32([3, -1, 4.5, 9])
    sim = run_main(simulate(_data_task_program(bind), arch=arch), {"a": a})
    assert array(sim, "total")[0] == np.float32(a.sum())
    assert sim.pes[(0, 0)].tasks_run == 5  # main + one data task per wavelet


def test_wse3_refuses_a_data_task_bound_to_a_color():
    with pytest.raises(ArchRuleError, match=r"on_wavelet, @get_data_task_id\(@get_color\(5\)\)\).*"
                                            r"WSE-3 data task ids come from an input queue"):
        simulate(_data_task_program("color"), arch="wse3")


def test_wse2_refuses_a_data_task_bound_to_an_input_queue():
    with pytest.raises(ArchRuleError, match=r"@get_input_queue\(3\)\)\) \(at csl.module \"pe\" > op \d+\): "
                                            "WSE-2 data task ids come from a color"):
        simulate(_data_task_program("input_queue"), arch="wse2")


def test_wse3_data_task_on_a_queue_no_color_is_bound_to():
    text = _data_task_program("input_queue").replace("queue_id = 3 : i3", "queue_id = 4 : i3", 1)
    with pytest.raises(Exception, match="bound to input queue 3, which no @initialize_queue"):
        simulate(text, arch="wse3")


def test_data_task_binding_is_printed_per_arch():
    import io

    out = io.StringIO()
    print_csl(parse_program(_data_task_program("input_queue")), out)
    assert "@bind_data_task(on_wavelet, @get_data_task_id(@get_input_queue(3)));" in out.getvalue()
    out = io.StringIO()
    print_csl(parse_program(_data_task_program("color")), out)
    assert "@bind_data_task(on_wavelet, @get_data_task_id(@get_color(5)));" in out.getvalue()


# --- bounded queues ------------------------------------------------------------------------

EXCHANGE_ROUTES = """
      %c1i = arith.constant 1 : i16
      %c1 = "csl.get_color"(%c1i) : (i16) -> !csl.color
      %c2i = arith.constant 2 : i16
      %c2 = "csl.get_color"(%c2i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c1 routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c1 routes <rx = [west], tx = [ramp]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c2 routes <rx = [ramp], tx = [west]> : i16, i16
      csl_ext.set_color_config %i0, %i0, %c2 routes <rx = [east], tx = [ramp]> : i16, i16"""


def _exchange(n: int, recv_first_on_pe1: bool = False) -> str:
    """PEs (0, 0) and (1, 0) swap n words: PE 0 sends on color 1 and PE 1 on
    color 2, each with a synchronous send before its receive (or PE 1 receiving
    first)."""
    send = f"""%out = "csl.get_fab_dsd"(%n) <{{fabric_color = %SEND : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()"""
    recv = f"""%in = "csl.get_fab_dsd"(%n) <{{fabric_color = %RECV : ui5, queue_id = 3 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%b_dsd, %in) : ({D1}, !csl<dsd fabin_dsd>) -> ()"""

    def side(s: str, r: str, recv_first: bool) -> str:
        a, b = send.replace("%SEND", s), recv.replace("%RECV", r)
        return f"{b}\n        {a}" if recv_first else f"{a}\n        {b}"

    body = f"""{dsd("a", n)}
      {dsd("b", n)}
      %n = arith.constant {n} : i16
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        {side("1", "2", False)}
      }} else {{
        {side("2", "1", recv_first_on_pe1)}
      }}"""
    return make_program(body, arrays={"a": ("f32", n), "b": ("f32", n)},
                        layout=EXCHANGE_ROUTES, width=2)


def _run_exchange(text: str, **kw):
    sim = simulate(text, **kw)
    a0 = np.arange(1, 65, dtype=np.float32)
    sim.symbol("a", 0, 0)[:] = a0[: sim.symbol("a", 0, 0).size]
    sim.symbol("a", 1, 0)[:] = -a0[: sim.symbol("a", 1, 0).size]
    sim.launch("main")
    return sim


def test_send_send_exchange_of_64_words_deadlocks_with_each_blocked_op():
    with pytest.raises(DeadlockError) as err:
        _run_exchange(_exchange(64))
    msg = str(err.value)
    assert "2 of 2 PEs never unblock" in msg
    assert "colors involved: [1, 2]" in msg
    for pe, color in (("(0, 0)", 1), ("(1, 0)", 2)):
        line = next(ln for ln in msg.splitlines() if ln.strip().startswith(f"PE {pe}"))
        assert "is blocked (at csl.module \"pe\" > csl.func @main > scf.if > op " in line
        assert f"sending 64 wavelets on color {color}" in line
        assert "the queues on the way are full" in line


def test_small_exchange_fits_in_the_queues_and_completes():
    n = 4  # <= path_room(1 hop): both sends fit on the way, both receives then run
    assert n <= path_room(CycleModel(), 1)
    sim = _run_exchange(_exchange(n))
    np.testing.assert_array_equal(array(sim, "b", (0, 0)), -np.arange(1, n + 1, dtype=np.float32))
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), np.arange(1, n + 1, dtype=np.float32))


def test_queue_depth_is_a_cost_model_parameter():
    n = 16
    with pytest.raises(DeadlockError):
        _run_exchange(_exchange(n))
    deep = dataclasses.replace(CycleModel(), input_queue_depth=n)
    sim = _run_exchange(_exchange(n), model=deep)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), np.arange(1, n + 1, dtype=np.float32))


def test_exchange_with_one_side_receiving_first_completes():
    n = 64
    sim = _run_exchange(_exchange(n, recv_first_on_pe1=True))
    np.testing.assert_array_equal(array(sim, "b", (0, 0)), -np.arange(1, n + 1, dtype=np.float32))
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), np.arange(1, n + 1, dtype=np.float32))
    # the sender waited for its receiver: PE 0 finishes no earlier than PE 1's receive
    pe0, pe1 = sim.pes[(0, 0)], sim.pes[(1, 0)]
    assert pe0.stall > 0 and pe0.end_t >= pe1.end_t - pe1.busy


# --- wavelets nobody reads ----------------------------------------------------------------


def _unread(n: int = 3) -> str:
    routes = """
      %c1i = arith.constant 1 : i16
      %c1 = "csl.get_color"(%c1i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c1 routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c1 routes <rx = [west], tx = [ramp]> : i16, i16"""
    body = f"""{dsd("a", n)}
      %n = arith.constant {n} : i16
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        %out = "csl.get_fab_dsd"(%n) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()
      }}"""
    return make_program(body, arrays={"a": ("f32", n)}, layout=routes, width=2)


def test_unread_wavelets_are_reported_at_the_next_launch():
    sim = simulate(_unread())
    sim.launch("main")  # completes: the 3 wavelets fit in the queues
    with pytest.raises(StaleWaveletError, match=r"at the launch of 'main'.*color 1 \(PE \(1, 0\): 3\)"):
        sim.launch("main")


def test_unread_wavelets_are_reported_at_stop():
    from pyflame_mlir.runtime.wse.sdkruntime import SdkRuntime

    rt = SdkRuntime.for_module(parse_program(_unread()))
    rt.load()
    rt.run()
    rt.launch("main")
    with pytest.raises(StaleWaveletError, match=r"at stop\(\).*color 1 \(PE \(1, 0\): 3\)"):
        rt.stop()


def test_a_send_still_blocked_at_stop_is_a_deadlock():
    """The command stream was unblocked first, then a send of more than the queues
    hold to a PE that never reads: no launch waits for it, stop() reports it."""
    from pyflame_mlir.runtime.wse.sdkruntime import SdkRuntime

    n = 32
    text = _unread(n).replace(
        '"csl.fmovs"(%out, %a_dsd)',
        '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()\n'
        '        "csl.fmovs"(%out, %a_dsd)')
    rt = SdkRuntime.for_module(parse_program(text))
    rt.load()
    rt.run()
    rt.launch("main")
    with pytest.raises(DeadlockError, match=r"(?s)at stop\(\).*PE \(0, 0\).*is blocked \(at .*\) "
                                            rf"sending {n} wavelets on color 1"):
        rt.stop()
