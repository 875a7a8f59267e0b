# ruff: noqa: E501  (embedded MLIR lines)
"""Issue 15, asynchronous DSD ops on a fabric with bounded queues: an async send
streams as the queues on its path have room and completes (firing its task) only
when its last wavelet has left; an async send/send exchange that cannot fit
deadlocks and is reported; async ops read their sources as they run, so a core
that overwrites the source of a running send is seen the way hardware sees it
(and the race is reported)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, simulate

from pyflame_mlir.runtime.wse import CycleModel, DeadlockError
from pyflame_mlir.runtime.wse.errors import AsyncRaceWarning
from pyflame_mlir.runtime.wse.fabric import path_room

UNBLOCK = '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()'

ROUTES = """
      %c1i = arith.constant 1 : i16
      %c1 = "csl.get_color"(%c1i) : (i16) -> !csl.color
      %c2i = arith.constant 2 : i16
      %c2 = "csl.get_color"(%c2i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c1 routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c1 routes <rx = [west], tx = [ramp]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c2 routes <rx = [ramp], tx = [west]> : i16, i16
      csl_ext.set_color_config %i0, %i0, %c2 routes <rx = [east], tx = [ramp]> : i16, i16"""


def _send(color: str, n: int, then: str) -> str:
    return f"""%out{color} = "csl.get_fab_dsd"(%n) <{{fabric_color = {color} : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out{color}, %a_dsd) {{async = #csl_ext.async<{then}>}} : (!csl<dsd fabout_dsd>, {D1}) -> ()"""


def _recv(color: str) -> str:
    return f"""%in{color} = "csl.get_fab_dsd"(%n) <{{fabric_color = {color} : ui5, queue_id = 3 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%b_dsd, %in{color}) : ({D1}, !csl<dsd fabin_dsd>) -> ()"""


def _two_pes(n: int, pe0: str, pe1: str, extra: str = "", arrays: dict | None = None) -> str:
    """PEs (0, 0) and (1, 0) with a[n], b[n] (and `arrays`); `pe0`/`pe1` are their
    bodies of main (which does not unblock the command stream itself)."""
    body = f"""{dsd("a", n)}
      {dsd("b", n)}
      %n = arith.constant {n} : i16
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        {pe0}
      }} else {{
        {pe1}
      }}"""
    return make_program(body, arrays={"a": ("f32", n), "b": ("f32", n), **(arrays or {})},
                        layout=ROUTES, width=2, extra=extra, unblock=False)


def _task(name: str, id: int, body: str) -> str:
    return f"""
    csl.task @{name}() attributes {{kind = #csl<task_kind local>, id = {id} : ui5}} {{
      {body}
      csl.return
    }}"""


def _run(text: str, n: int, **kw):
    sim = simulate(text, **kw)
    a = np.arange(1, n + 1, dtype=np.float32)
    sim.symbol("a", 0, 0)[:] = a
    sim.symbol("a", 1, 0)[:] = -a
    sim.launch("main")
    return sim, a


# --- backpressure ----------------------------------------------------------------------------

RECV_TASK = """
    {extra}
    csl.task @received() attributes {{kind = #csl<task_kind local>, id = 12 : ui5}} {{
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      {b}
      %n = arith.constant {n} : i16
      scf.if %first {{
        {recv2}
      }} else {{
        {recv1}
      }}
      {unblock}
      csl.return
    }}"""


def _exchange_then_receive(n: int) -> str:
    """Each PE sends a with an async op that activates the task receiving b: both
    receives wait for both sends to complete."""
    extra = RECV_TASK.format(extra="", b=dsd("b", n), n=n, recv1=_recv("1"), recv2=_recv("2"),
                             unblock=UNBLOCK)
    then = "activate local 12"
    return _two_pes(n, _send("1", n, then), _send("2", n, then), extra=extra)


def test_async_send_send_exchange_that_does_not_fit_deadlocks_naming_each_async_op():
    n = 64
    with pytest.raises(DeadlockError) as err:
        _run(_exchange_then_receive(n), n)
    msg = str(err.value)
    assert "2 of 2 PEs never unblock" in msg
    assert "colors involved: [1, 2]" in msg
    for pe, color, other in (("(0, 0)", 1, "(1, 0)"), ("(1, 0)", 2, "(0, 0)")):
        line = next(ln for ln in msg.splitlines() if ln.strip().startswith(f"PE {pe}"))
        assert "async @fmovs issued at cycle" in line
        assert f"is held back sending {n} wavelets on color {color}" in line
        assert f"PE {other} does not read them ({n} queued there)" in line


def test_async_send_send_exchange_that_fits_completes():
    n = 4
    assert n <= path_room(CycleModel(), 1)
    sim, a = _run(_exchange_then_receive(n), n)
    np.testing.assert_array_equal(array(sim, "b", (0, 0)), -a)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)


def test_async_sends_overlapping_the_receivers_consumption_run():
    """Each PE sends asynchronously (the op activates the task that unblocks the
    command stream) and receives synchronously at once: the receives drain the sends."""
    n = 64
    extra = _task("sent", 12, UNBLOCK)
    then = "activate local 12"
    text = _two_pes(n, f"{_send('1', n, then)}\n        {_recv('2')}",
                    f"{_send('2', n, then)}\n        {_recv('1')}", extra=extra)
    sim, a = _run(text, n)
    np.testing.assert_array_equal(array(sim, "b", (0, 0)), -a)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)


def _late_receiver(n: int, work: int) -> str:
    """PE 0 sends n words asynchronously (activating the task that unblocks its command
    stream); PE 1 first does `work` elements of local work, then receives."""
    extra = _task("sent", 12, UNBLOCK)
    pe1 = f"""{dsd("w", work)}
        "csl.fnegs"(%w_dsd, %w_dsd) : ({D1}, {D1}) -> ()
        {_recv("1")}
        {UNBLOCK}"""
    return _two_pes(n, _send("1", n, "activate local 12"), pe1, extra=extra,
                    arrays={"w": ("f32", work)})


def test_async_send_completes_when_its_last_wavelet_has_left():
    work = 400
    big, room = 64, path_room(CycleModel(), 1)
    sim, a = _run(_late_receiver(big, work), big)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)
    pe0, pe1 = sim.pes[(0, 0)], sim.pes[(1, 0)]
    # PE 1 starts reading after its local work; the send's task ran after that
    assert pe1.end_t > work
    assert pe0.end_t >= work
    # a send that fits in the queues completes at once, long before the reader
    sim, a = _run(_late_receiver(room, work), room)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)
    assert sim.pes[(0, 0)].end_t < work / 4


# --- async ops read their sources as they run -------------------------------------------------


def _overwrite_during_send(n: int, index: int) -> str:
    """PE 0 sends a asynchronously, then the core stores 1000 into a[index]."""
    extra = _task("sent", 12, UNBLOCK)
    pe0 = f"""{_send('1', n, 'activate local 12')}
        %idx = arith.constant {index} : index
        %new = arith.constant 1000.0 : f32
        memref.store %new, %a[%idx] : memref<?xf32>"""
    pe1 = f"""{_recv("1")}
        {UNBLOCK}"""
    return _two_pes(n, pe0, pe1, extra=extra)


def test_core_overwriting_the_source_of_a_running_send_is_seen_by_later_elements():
    """The send reads element i about i cycles after it starts; the store lands a few
    cycles after the issue: element 60 goes out with the new value (the "read at
    issue" answer would be the old one), element 0 had left with the old value."""
    n = 64
    with pytest.warns(AsyncRaceWarning, match=r"PE \(0, 0\): the core wrote element\(s\) 60 of source 0 "
                                               r"of async @fmovs issued at cycle \d+ before the op read"):
        sim, a = _run(_overwrite_during_send(n, 60), n)
    want = a.copy()
    want[60] = 1000.0
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), want)
    assert len(sim.pes[(0, 0)].races) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # element 0 was read before the store: no race
        sim, a = _run(_overwrite_during_send(n, 0), n)
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)
    assert sim.pes[(0, 0)].races == []


def test_async_op_waiting_for_wavelets_reads_memory_when_they_arrive():
    """PE 0 issues d = in + c asynchronously; its wavelets arrive at once, but the
    core then works for a long time and only then overwrites c: hardware's op had
    read c long before, so d uses the old c (the simulator runs the op later in
    its own order and must undo the core's write for it)."""
    n, work = 8, 300
    c_old = np.float32(7.0)
    extra = _task("done", 12, UNBLOCK)
    pe0 = f"""{dsd("c", n)}
        {dsd("d", n)}
        {dsd("w", work)}
        %inop = "csl.get_fab_dsd"(%n) <{{fabric_color = 2 : ui5, queue_id = 3 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fadds"(%d_dsd, %inop, %c_dsd) {{async = #csl_ext.async<activate local 12>}} : ({D1}, !csl<dsd fabin_dsd>, {D1}) -> ()
        "csl.fnegs"(%w_dsd, %w_dsd) : ({D1}, {D1}) -> ()
        %idx = arith.constant 3 : index
        %new = arith.constant 1000.0 : f32
        memref.store %new, %c[%idx] : memref<?xf32>"""
    pe1 = f"""{_send('2', n, '')}
        {UNBLOCK}"""
    text = _two_pes(n, pe0, pe1, extra=extra,
                    arrays={"c": ("f32", n), "d": ("f32", n), "w": ("f32", work)})
    sim = simulate(text)
    a = np.arange(1, n + 1, dtype=np.float32)
    sim.symbol("a", 1, 0)[:] = a
    sim.symbol("c", 0, 0)[:] = c_old
    # PE 0 runs first (in the simulator's order), so the op runs after the core's store
    with pytest.warns(AsyncRaceWarning, match="it saw the old values"):
        sim.launch("main")
    np.testing.assert_array_equal(array(sim, "d", (0, 0)), a + c_old)
    assert array(sim, "c", (0, 0))[3] == 1000.0
