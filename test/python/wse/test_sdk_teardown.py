# ruff: noqa: E501  (embedded MLIR lines)
"""Teardown and run-time routing (the SDK's allreduce library's machinery, in small):
a color configured `.teardown = true` holds what reaches its router until the PE's
`tile_config.teardown.exit`; `color_config.reset_routes` gives a router a new route at
run time; the teardown command runs the PE's handler; what never gets on is reported
with the router and the reason; the ops' verifier rules and their CSL."""

from __future__ import annotations

import io

import numpy as np
import pytest
from _wse_harness import make_program, simulate
from pyflame_mlir.lowering.csl_printer import print_csl
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.errors import StaleWaveletError

TC = '%tc = "csl.import_module"() <{module = "<tile_config>"}> : () -> !csl.imported_module'


def _row(recv_extra: str, layout_attrs: str = "{teardown}") -> str:
    """PE 0 sends 3 words east on color 1; PE 1 reads them into `got` after
    `recv_extra` (its run-time routing)."""
    body = f"""%zero = arith.constant 0 : i16
      %three = arith.constant 3 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
          %x_dsd = "csl.get_mem_dsd"(%x, %three) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
          %out = csl_ext.get_fab_dsd %three, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabout_dsd>
          "csl.fmovs"(%out, %x_dsd) {{async = #csl_ext.async<>}} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      }} else {{
          %got_dsd = "csl.get_mem_dsd"(%got, %three) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
          %in = csl_ext.get_fab_dsd %three, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabin_dsd>
          "csl.fmovs"(%got_dsd, %in) {{async = #csl_ext.async<>}} : (!csl<dsd mem1d_dsd>, !csl<dsd fabin_dsd>) -> ()
          {recv_extra}
      }}"""
    layout = f"""
      %x0 = arith.constant 0 : i16
      %x1 = arith.constant 1 : i16
      %y0 = arith.constant 0 : i16
      %k1 = arith.constant 1 : i16
      %col = "csl.get_color"(%k1) : (i16) -> !csl.color
      csl_ext.set_color_config %x0, %y0, %col routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %x1, %y0, %col routes <rx = [west], tx = [ramp]> {layout_attrs} : i16, i16"""
    return make_program(body, arrays={"x": ("f32", 3), "got": ("f32", 3)}, extra=TC,
                        layout=layout, width=2)


def _run(text: str) -> np.ndarray:
    sim = simulate(text)
    sim.symbol("x", 0, 0)[:] = [1.0, 2.0, 3.0]
    sim.launch("main")
    sim.stop()
    return sim.symbol("got", 1, 0)


def test_a_torn_down_router_holds_the_wavelets_until_teardown_exit():
    np.testing.assert_array_equal(
        _run(_row('csl_ext.tile_config "teardown_exit" %tc, %col')), [1.0, 2.0, 3.0])


def test_wavelets_a_torn_down_router_never_lets_on_are_reported():
    with pytest.raises(StaleWaveletError, match=r"color 1 .*held at the router of PE \(1, 0\): "
                                                r"1 stream\(s\) from PE\(s\) \[\(0, 0\)\], as the "
                                                "color is torn down there"):
        _run(_row(""))


def test_a_route_reset_at_run_time():
    # PE 1's router starts with a route that does not take WEST; the PE resets it
    text = _row('csl_ext.tile_config "reset_routes" %tc, %col {routes = #csl_ext.routes<rx = [west], tx = [ramp]>}',
                "{teardown}").replace("<rx = [west], tx = [ramp]> {teardown} : i16, i16",
                                      "<rx = [north], tx = [ramp]> {teardown} : i16, i16")
    text = text.replace('{routes = #csl_ext.routes<rx = [west], tx = [ramp]>}',
                        '{routes = #csl_ext.routes<rx = [west], tx = [ramp]>}\n          csl_ext.tile_config "teardown_exit" %tc, %col')
    np.testing.assert_array_equal(_run(text), [1.0, 2.0, 3.0])


def test_tile_config_prints_as_csl():
    buf = io.StringIO()
    print_csl(parse_program(_row('csl_ext.tile_config "teardown_exit" %tc, %col\n'
                                 '          csl_ext.tile_config "set_rx_switch_pos1" %tc, %col {port = "ramp"}')), buf)
    text = buf.getvalue()
    assert "tc.teardown.exit(@get_color(1));" in text
    assert "tc.switch_config.set_rx_switch_pos1(@get_color(1), RAMP);" in text
    assert ".routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } }, .teardown = true });" in text


@pytest.mark.parametrize(("line", "match"), [
    ('csl_ext.tile_config "reset" %tc, %col', "<tile_config> call 'reset' is not one of"),
    ('csl_ext.tile_config "teardown_exit" %tc, %col {routes = #csl_ext.routes<rx = [west], tx = [ramp]>}',
     "'routes' goes with reset_routes only"),
    ('csl_ext.tile_config "reset_routes" %tc, %col {routes = #csl_ext.routes<rx = [west, north], tx = [ramp]>}',
     "reset_routes takes one rx port"),
    ('csl_ext.tile_config "set_rx_switch_pos1" %tc, %col {port = "up"}', "unknown port 'up'"),
    ('csl_ext.tile_config "set_rx_switch_pos1" %tc, %col', "'port' goes with set_rx_switch_pos1 only"),
])
def test_tile_config_rules(line: str, match: str):
    with pytest.raises(VerifyException, match=match):
        parse_program(_row(line))
