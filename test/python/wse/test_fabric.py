# ruff: noqa: E501  (embedded MLIR lines)
"""Routing: multicast, hop-by-hop timing, link sharing, route errors, reserved colors/queues."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _wse_harness import D1, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import DeadlockError, ReservedIdError, RouteError
from pyflame_mlir.runtime.wse.fabric import Chunk, Fabric
from pyflame_mlir.runtime.wse.machine import CycleModel

N = 6
_UNIQUE = itertools.count()


def _route(x: int, y: int, color: int, rx: str, tx: str) -> str:
    u = next(_UNIQUE)
    return f"""
      %rx{u} = arith.constant {x} : i16
      %ry{u} = arith.constant {y} : i16
      %rk{u} = arith.constant {color} : i16
      %rc{u} = "csl.get_color"(%rk{u}) : (i16) -> !csl.color
      csl_ext.set_color_config %rx{u}, %ry{u}, %rc{u} routes <rx = [{rx}], tx = [{tx}]> : i16, i16"""


# PE (0, 0) sends a on `color`; every other PE receives it into d (synchronously)
SEND_OR_RECEIVE = f"""{dsd("a", N)}
      {dsd("d", N)}
      %n = arith.constant {N} : i16
      %zero = arith.constant 0 : i16
      %sender = arith.cmpi eq, %px, %zero : i16
      %sender_row = arith.cmpi eq, %py, %zero : i16
      %is_src = arith.andi %sender, %sender_row : i1
      scf.if %is_src {{
        %out = "csl.get_fab_dsd"(%n) <{{fabric_color = COLOR : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out, %a_dsd) {{async = #csl_ext.async<>}} : (!csl<dsd fabout_dsd>, {D1}) -> ()
      }} else {{
        %in = "csl.get_fab_dsd"(%n) <{{fabric_color = COLOR : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%d_dsd, %in) : ({D1}, !csl<dsd fabin_dsd>) -> ()
      }}"""


def _row(routes: str, width: int = 3, color: int = 1, height: int = 1):
    text = make_program(
        SEND_OR_RECEIVE.replace("COLOR", str(color)),
        arrays={"a": ("f32", N), "d": ("f32", N)},
        layout=routes,
        width=width,
        height=height,
    )
    return simulate(text)


A = np.arange(N, dtype=np.float32) + 0.25


def test_multicast_along_a_row_delivers_to_every_pe_in_hop_order():
    routes = _route(0, 0, 1, "ramp", "east") + _route(1, 0, 1, "west", "ramp, east")
    routes += _route(2, 0, 1, "west", "ramp")
    sim = run_main(_row(routes), {"a": A})
    for x in (1, 2):
        np.testing.assert_array_equal(array(sim, "d", (x, 0)), A)
    # one more hop: the farther PE finishes later, by the hop latency
    t1, t2 = sim.pes[(1, 0)].end_t, sim.pes[(2, 0)].end_t
    assert t2 - t1 == pytest.approx(sim.model.hop_latency)
    assert sim.fabric.wavelet_hops == 2 * N


def test_two_dimensional_multicast_tree():
    # (0,0) -> east along row 0; every row-0 PE also sends south down its column
    routes = _route(0, 0, 1, "ramp", "east, south") + _route(1, 0, 1, "west", "ramp, south")
    routes += _route(0, 1, 1, "north", "ramp") + _route(1, 1, 1, "north", "ramp")
    sim = run_main(_row(routes, width=2, height=2), {"a": A})
    for xy in ((1, 0), (0, 1), (1, 1)):
        np.testing.assert_array_equal(array(sim, "d", xy), A)


def test_a_wavelet_with_no_route_is_an_error():
    routes = _route(0, 0, 1, "ramp", "east")  # PE (1, 0) has no route for color 1
    with pytest.raises(RouteError, match=r"reaches PE \(1, 0\) from WEST.*no route for color 1"):
        run_main(_row(routes, width=2), {"a": A})


def test_a_route_that_does_not_accept_the_direction_is_an_error():
    routes = _route(0, 0, 1, "ramp", "east") + _route(1, 0, 1, "north", "ramp")
    with pytest.raises(RouteError, match=r"from WEST, but that router has route rx=\{north\}"):
        run_main(_row(routes, width=2), {"a": A})


def test_sending_without_a_ramp_route_is_an_error():
    with pytest.raises(RouteError, match=r"PE \(0, 0\) from its own core"):
        run_main(_row(_route(1, 0, 1, "west", "ramp"), width=2), {"a": A})


def test_leaving_the_rectangle_is_an_error():
    with pytest.raises(RouteError, match=r"leaves the kernel rectangle at PE \(0, 0\) going WEST"):
        run_main(_row(_route(0, 0, 1, "ramp", "west"), width=2), {"a": A})


def test_color_routed_both_ways_over_a_link_is_rejected():
    routes = _route(0, 0, 1, "ramp", "east") + _route(1, 0, 1, "ramp", "west")
    with pytest.raises(RouteError, match=r"both ways between PE \(0, 0\) and PE \(1, 0\)"):
        _row(routes, width=2)


def test_color_routed_back_where_it_came_from_is_rejected():
    with pytest.raises(RouteError, match="both ways through the PE"):
        _row(_route(1, 0, 1, "west", "west"), width=2)


def test_color_into_and_out_of_the_core_is_rejected():
    with pytest.raises(RouteError, match="both into and out of the core"):
        _row(_route(1, 0, 1, "west, ramp", "ramp, east"), width=3)


@pytest.mark.parametrize("color", [21, 22, 23])
def test_reserved_colors_cannot_be_routed(color: int):
    with pytest.raises(ReservedIdError, match=f"color {color}, reserved"):
        _row(_route(0, 0, color, "ramp", "east"), width=2)


def test_unroutable_color_is_rejected():
    with pytest.raises(RouteError, match="routable colors are 0-23"):
        _row(_route(0, 0, 25, "ramp", "east"), width=2)


def test_fabric_dsd_on_a_reserved_color_is_rejected():
    with pytest.raises(ReservedIdError, match="color 22, reserved"):
        run_main(_row("", width=1, color=22), {"a": A})


def test_wse3_reserves_queues_0_and_1():
    text = make_program(
        '%n = arith.constant 4 : i16\n      %d = "csl.get_fab_dsd"(%n) '
        "<{fabric_color = 3 : ui5, queue_id = 1 : i3}> : (i16) -> !csl<dsd fabin_dsd>"
    )
    run_main(simulate(text, arch="wse2"), {})
    with pytest.raises(ReservedIdError, match="queue 1, reserved for memcpy on WSE-3"):
        run_main(simulate(text, arch="wse3"), {})


def test_receiver_waiting_for_missing_wavelets_is_a_deadlock():
    routes = _route(0, 0, 1, "ramp", "east") + _route(1, 0, 1, "west", "ramp")
    text = make_program(
        f"""{dsd("d", N)}
      %n = arith.constant {N} : i16
      %zero = arith.constant 0 : i16
      %receiver = arith.cmpi ne, %px, %zero : i16
      scf.if %receiver {{
        %in = "csl.get_fab_dsd"(%n) <{{fabric_color = 1 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%d_dsd, %in) : ({D1}, !csl<dsd fabin_dsd>) -> ()
      }}""",
        arrays={"d": ("f32", N)},
        layout=routes,
        width=2,
    )
    with pytest.raises(DeadlockError) as err:
        run_main(simulate(text), {})
    msg = str(err.value)
    assert "1 of 2 PEs never unblock" in msg and "colors involved: [1]" in msg
    assert f"PE (1, 0) ('pe'): launched function 'main' waits for {N} wavelets on color 1" in msg


def test_streams_sharing_a_link_are_serialized():
    fab = Fabric(2, 1, CycleModel())
    for c in (1, 2):
        fab.set_route((0, 0), c, ("ramp",), ("east",))
        fab.set_route((1, 0), c, ("west",), ("ramp",))
    (_, first), = fab.send((0, 0), 1, Chunk(np.zeros(10, np.uint32), 0.0, 1.0))
    (_, second), = fab.send((0, 0), 2, Chunk(np.zeros(10, np.uint32), 0.0, 1.0))
    assert second.t0 - first.t0 == pytest.approx(10.0)
