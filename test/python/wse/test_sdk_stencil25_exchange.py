# ruff: noqa: E501  (embedded MLIR lines)
"""The 25-pt-stencil benchmark's one-dimensional exchange (oned_exch.csl with the routes
of routes.csl, one direction: EAST, on a 1 x width row; not the whole benchmark): every
PE sends its chunk, then ctrl0 (switches.csl's firstSwitchCommands: advance its own
router, the next one and the one pattern - 1 ahead) and ctrl1 (its own router again);
the routers' switch positions (pattern-first PEs start sending, pattern-last ones as
terminals, always_pop, ring mode) let each PE receive the chunks of itself and the
pattern - 1 PEs before it, one after the other, which it scales by its constants into
its buffer (@fmuls from the fabric through a 4-d DSD). Checked against numpy for
patterns 3-5 (each sender's chunk lands in the slot of its position in the pattern);
this needs positions that inherit from the one before (pos3 = rx WEST after
pos2 = tx RAMP is a terminal), and leaves nothing parked or unread."""

from __future__ import annotations

import numpy as np
import pytest
from _wse_harness import make_program, simulate

from pyflame_mlir.runtime.wse.fabric import SWITCH_ADV, ctrl_word

D4 = "!csl<dsd mem4d_dsd>"


def _s32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def _route(x: int, width: int, pattern: int) -> tuple[str, str, str]:
    """routes.csl's computeRoute(EAST, ...) for PE x: (rx, tx, switches)."""
    first, last = x == 0, x == width - 1
    patt_first, patt_last = x % pattern == 0, x % pattern == pattern - 1
    tx = "[east, ramp]" if not last else "[ramp]"
    if first:
        return "[ramp]", "[east, ramp]", "pos1 = tx ramp, current = 0, ring_mode, pop = always_pop"
    if x < pattern - 1:  # notNeedsPos3
        return "[west]", tx, "pos1 = rx ramp, pos2 = tx ramp, current = 0, ring_mode, pop = always_pop"
    current = 1 if patt_first else 3 if patt_last else 0
    return "[west]", tx, (f"pos1 = rx ramp, pos2 = tx ramp, pos3 = rx west, current = {current}, "
                          "ring_mode, pop = always_pop")


def _program(width: int, pattern: int, chunk: int) -> str:
    cmds = [0] * 8
    cmds[0] = cmds[1] = cmds[pattern - 1] = SWITCH_ADV
    ctrl0, ctrl1 = ctrl_word(cmds), ctrl_word([SWITCH_ADV])
    # recvMode() and send(): senderCount = min(pattern, peId + 1) chunks come in
    body = f"""%P = arith.constant {pattern} : i16
      %C = arith.constant {chunk} : i16
      %one = arith.constant 1 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %px1 = arith.addi %px, %one : i16
      %lt = arith.cmpi slt, %P, %px1 : i16
      %senders = arith.select %lt, %P, %px1 : i16
      %ext = arith.muli %senders, %C : i16
      %buf4 = "csl.get_mem_dsd"(%buf, %senders, %C) <{{tensor_access = affine_map<(d0, d1) -> (d0 * {chunk} + d1)>}}> : (memref<?xf32>, i16, i16) -> {D4}
      %cst4 = "csl.get_mem_dsd"(%consts, %senders, %C) <{{tensor_access = affine_map<(d0, d1) -> (d0)>}}> : (memref<?xf32>, i16, i16) -> {D4}
      %fin = csl_ext.get_fab_dsd %ext, %col {{queue_id = 4 : i3}} : i16 -> !csl<dsd fabin_dsd>
      "csl.fmuls"(%buf4, %fin, %cst4) {{async = #csl_ext.async<>}} : ({D4}, !csl<dsd fabin_dsd>, {D4}) -> ()
      %zd = "csl.get_mem_dsd"(%z, %C) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
      %fout = csl_ext.get_fab_dsd %C, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabout_dsd>
      "csl.fmovs"(%fout, %zd) {{async = #csl_ext.async<activate local 10>}} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()"""
    tasks = []
    for tid, buf, then in ((10, "ctrl0", "<activate local 11>"), (11, "ctrl1", "<>")):
        tasks.append(f"""
    csl.task @fin{tid}() attributes {{kind = #csl<task_kind local>, id = {tid} : ui5}} {{
      %one = arith.constant 1 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %co = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3, control = true}} : i16 -> !csl<dsd fabout_dsd>
      %cd = "csl.get_mem_dsd"(%{buf}, %one) : (memref<?xui32>, i16) -> !csl<dsd mem1d_dsd>
      "csl.mov32"(%co, %cd) {{async = #csl_ext.async{then}}} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      csl.return
    }}""")
    extra = f"""
    %k1e = arith.constant 1 : i16
    %ctrl0s = arith.constant {_s32(ctrl0)} : i32
    %ctrl0w = "csl.mlir.signedness_cast"(%ctrl0s) : (i32) -> ui32
    %ctrl0 = "csl.constants"(%k1e, %ctrl0w) : (i16, ui32) -> memref<?xui32>
    %ctrl1s = arith.constant {_s32(ctrl1)} : i32
    %ctrl1w = "csl.mlir.signedness_cast"(%ctrl1s) : (i32) -> ui32
    %ctrl1 = "csl.constants"(%k1e, %ctrl1w) : (i16, ui32) -> memref<?xui32>""" + "".join(tasks)
    layout = ["""
      %y0 = arith.constant 0 : i16
      %k1 = arith.constant 1 : i16
      %col = "csl.get_color"(%k1) : (i16) -> !csl.color"""]
    for x in range(width):
        rx, tx, sw = _route(x, width, pattern)
        layout.append(f"""      %x{x} = arith.constant {x} : i16
      csl_ext.set_color_config %x{x}, %y0, %col routes <rx = {rx}, tx = {tx}> {{switches = #csl_ext.switches<{sw}>}} : i16, i16""")
    return make_program(body, arrays={"buf": ("f32", pattern * chunk), "consts": ("f32", pattern),
                                      "z": ("f32", chunk)},
                        extra=extra, layout="\n".join(layout), width=width)


@pytest.mark.parametrize(("width", "pattern", "chunk"), [(5, 3, 2), (7, 3, 2), (6, 4, 1), (8, 5, 3)])
def test_each_pe_receives_the_pattern_window_before_it(width: int, pattern: int, chunk: int):
    sim = simulate(_program(width, pattern, chunk))
    consts = (10.0 ** np.arange(pattern)).astype(np.float32)
    z = np.array([[x + 1 + 0.125 * j for j in range(chunk)] for x in range(width)], np.float32)
    for x in range(width):
        sim.symbol("consts", x, 0)[:] = consts
        sim.symbol("z", x, 0)[:] = z[x]
    sim.launch("main")
    sim.stop()  # nothing left parked at a router or unread
    for x in range(width):
        got = sim.symbol("buf", x, 0).reshape(pattern, chunk)
        senders = range(max(0, x - pattern + 1), x + 1)
        expect = np.zeros((pattern, chunk), np.float32)
        for s in senders:  # a sender's chunk fills the slot of its place in the pattern
            slot = s % pattern
            expect[slot] = consts[slot] * z[s]
        np.testing.assert_array_equal(got[:len(senders)], expect[:len(senders)], err_msg=f"PE {x}")
