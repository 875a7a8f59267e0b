# ruff: noqa: E501  (embedded MLIR lines)
"""Fabric switches and control wavelets: the SDK tutorials topic-06-switches and
topic-07-switches-entrypt (control tasks) run unchanged through their host scripts on
WSE-2 and WSE-3, the printed `.switches`, the verifier's rules, the rules of control
wavelets reaching a core, and the simulator's refusals of what it does not model
(other commands); per-hop command lists with their pop modes, and several senders
passing one switch in the order it lets them on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import make_program, simulate
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import (
    ArchRuleError,
    ProgramError,
    StaleWaveletError,
    UnsupportedError,
)
from pyflame_mlir.runtime.wse.fabric import CTRL_CMD_SHIFT, CTRL_FILTER_BIT, ctrl_word
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_switches_tutorial_runs_unchanged(arch: str, tmp_path: Path):
    out = compile_program(FIXTURES / f"switches_{arch}.mlir", tmp_path / "sw", {}, arch)
    (report,) = run_script(FIXTURES / "switches_run.py", ["--name", str(out)], quiet=True)
    assert report.arch == arch
    assert report.wavelet_hops == 8  # four control wavelets and four data wavelets, one hop each
    layout = (out / "layout.csl").read_text()
    assert (".switches = .{ .pos1 = .{ .tx = WEST }, .pos2 = .{ .tx = EAST }, "
            ".pos3 = .{ .tx = SOUTH }, .current_switch_pos = 1, .ring_mode = true }") in layout
    send = (out / "send.csl").read_text()
    assert "ctrl.encode_single_payload(ctrl.opcode.SWITCH_ADV, true, {}, 0)" in send
    assert ".control = true," in send


# PE (1, 0) of a 1x3 row sends on color 1: `steps` is a list of ("data", word) or
# ("ctrl", payload); PEs 0 and 2 keep what they receive, in order, in `got`
def _row(switches: str, steps: list[tuple[str, int]], west: int = 0, east: int = 0) -> object:
    sends = []
    for i, (kind, word) in enumerate(steps):
        dsd = "%ctrl" if kind == "ctrl" else "%data"
        sends.append(f"""%w{i}s = arith.constant {word} : i32
          %w{i} = "csl.mlir.signedness_cast"(%w{i}s) : (i32) -> ui32
          "csl.mov32"({dsd}, %w{i}) : (!csl<dsd fabout_dsd>, ui32) -> ()""")
    body = f"""%s1 = arith.constant 1 : i16
      %is1 = arith.cmpi eq, %px, %s1 : i16
      scf.if %is1 {{
          %one = arith.constant 1 : i16
          %c1 = arith.constant 1 : i16
          %col = "csl.get_color"(%c1) : (i16) -> !csl.color
          %ctrl = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3, control = true}} : i16 -> !csl<dsd fabout_dsd>
          %data = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabout_dsd>
          {chr(10).join(sends)}
      }} else {{
          %nw = arith.constant {west} : i16
          %ne = arith.constant {east} : i16
          %z = arith.constant 0 : i16
          %is_w = arith.cmpi eq, %px, %z : i16
          %n = arith.select %is_w, %nw, %ne : i16
          %c1 = arith.constant 1 : i16
          %col = "csl.get_color"(%c1) : (i16) -> !csl.color
          %in = csl_ext.get_fab_dsd %n, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabin_dsd>
          %got_dsd = "csl.get_mem_dsd"(%got, %n) : (memref<?xi32>, i16) -> !csl<dsd mem1d_dsd>
          "csl.mov32"(%got_dsd, %in) {{async = #csl_ext.async<>}} : (!csl<dsd mem1d_dsd>, !csl<dsd fabin_dsd>) -> ()
      }}"""
    routes = f"""
      %x0 = arith.constant 0 : i16
      %x1 = arith.constant 1 : i16
      %x2 = arith.constant 2 : i16
      %y0 = arith.constant 0 : i16
      %k1 = arith.constant 1 : i16
      %col = "csl.get_color"(%k1) : (i16) -> !csl.color
      csl_ext.set_color_config %x1, %y0, %col routes <rx = [ramp], tx = [east]> {{switches = {switches}}} : i16, i16
      csl_ext.set_color_config %x0, %y0, %col routes <rx = [east], tx = [ramp]> : i16, i16
      csl_ext.set_color_config %x2, %y0, %col routes <rx = [west], tx = [ramp]> : i16, i16"""
    return simulate(make_program(body, arrays={"got": ("i32", 8)}, layout=routes, width=3))


ADV = 1 << CTRL_CMD_SHIFT | 1 << CTRL_FILTER_BIT  # advance, kept from the cores


def test_a_control_wavelet_takes_the_current_route_then_advances_the_switch():
    sim = _row("#csl_ext.switches<pos1 = tx west, ring_mode>",
               [("data", 10), ("ctrl", ADV), ("data", 11), ("ctrl", ADV), ("data", 12)],
               west=1, east=2)
    sim.launch("main")
    # east (pos 0), the control wavelet east too, then west (pos 1), then east again (ring)
    np.testing.assert_array_equal(sim.symbol("got", 2, 0)[:2], [10, 12])
    np.testing.assert_array_equal(sim.symbol("got", 0, 0)[:1], [11])


def test_a_no_op_control_wavelet_leaves_the_switch():
    sim = _row("#csl_ext.switches<pos1 = tx west, ring_mode>",
               [("ctrl", 1 << CTRL_FILTER_BIT), ("data", 7)], east=1)
    sim.launch("main")
    assert sim.symbol("got", 2, 0)[0] == 7


def test_advancing_past_the_last_position_without_ring_mode_is_refused():
    sim = _row("#csl_ext.switches<pos1 = tx west>", [("ctrl", ADV), ("ctrl", ADV)])
    with pytest.raises(UnsupportedError, match="past its last position \\(1\\) without .ring_mode"):
        sim.launch("main")


@pytest.mark.parametrize(("pop", "cmds", "west"), [
    # no_pop: the switch reads command 0 (a no-op); the next router reads it too
    ("no_pop", [0, 1], []),
    # always_pop: the sender's router pops its no-op; the receiver's command 1 is ignored
    ("always_pop", [0, 1], []),
    # pop_on_advance: it pops only when it advanced
    ("pop_on_advance", [1, 0], [11]),
    ("always_pop", [1, 0], [11]),
])
def test_per_hop_commands_and_pop_modes(pop: str, cmds: list[int], west: list[int]):
    sim = _row(f"#csl_ext.switches<pos1 = tx west, ring_mode, pop = {pop}>",
               [("data", 10), ("ctrl", ctrl_word(cmds)), ("data", 11)],
               west=len(west), east=1 if west else 2)
    sim.launch("main")
    got_east = [10, 11] if not west else [10]
    np.testing.assert_array_equal(sim.symbol("got", 0, 0)[:len(west)], west)
    # the control wavelet itself never reaches a core: every command's filter bit is set
    np.testing.assert_array_equal(sim.symbol("got", 2, 0)[:len(got_east)], got_east)


def test_the_sdk_teardown_payload():
    assert ctrl_word([3]) == 0x9DF9249  # as the SDK's allreduce library quotes it


def test_other_switch_commands_are_refused():
    sim = _row("#csl_ext.switches<pos1 = tx west, ring_mode>",
               [("ctrl", 2 << CTRL_CMD_SHIFT | 1 << CTRL_FILTER_BIT)])
    with pytest.raises(UnsupportedError, match=r"switch command 2 \(command 0\) is not modeled"):
        sim.launch("main")


def test_a_control_wavelet_for_a_core_whose_color_is_blocked_is_an_error():
    # PE (2, 0) reads its color with a fabin DSD, binds no data task and never unblocks it
    sim = _row("#csl_ext.switches<pos1 = tx west, ring_mode>", [("ctrl", 1 << CTRL_CMD_SHIFT)])
    with pytest.raises(ProgramError, match=r"PE \(2, 0\).*control wavelet on color 1 is never taken.*@unblock"):
        sim.launch("main")


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_switches_entrypoint_tutorial_runs_unchanged(arch: str, tmp_path: Path):
    # topic-07: control wavelets for the cores run control task 40 with their data
    out = compile_program(FIXTURES / f"switches_entrypt_{arch}.mlir", tmp_path / "swe", {}, arch)
    (report,) = run_script(FIXTURES / "switches_entrypt_run.py", ["--name", str(out)], quiet=True)
    assert report.wavelet_hops == 4
    send = (out / "send.csl").read_text()
    assert ("ctrl.encode_single_payload(ctrl.opcode.SWITCH_ADV, false, "
            "@get_control_task_id(40), 2);") in send
    recv = (out / "recv.csl").read_text()
    assert "@bind_control_task(recv_ctrl_task, @get_control_task_id(40));" in recv
    assert ("@unblock(@get_input_queue(2));" if arch == "wse3"
            else "@unblock(@get_data_task_id(@get_color(0)));") in recv


def _entrypt(tmp_path: Path, arch: str, edit) -> None:
    text = edit((FIXTURES / f"switches_entrypt_{arch}.mlir").read_text())
    src = tmp_path / "p.mlir"
    src.write_text(text)
    out = compile_program(src, tmp_path / "o", {}, arch)
    run_script(FIXTURES / "switches_entrypt_run.py", ["--name", str(out)], quiet=True)


def test_a_color_not_unblocked_keeps_control_wavelets_from_the_core(tmp_path: Path):
    with pytest.raises(ProgramError, match=r"control wavelet on color 0 is never taken"):
        _entrypt(tmp_path, "wse2", lambda t: t.replace("    csl_ext.unblock data, 0 : ui5\n", ""))


def test_unblocking_a_color_on_wse3_is_an_arch_rule(tmp_path: Path):
    # WSE-3 data ids are input queues: @unblock(rx_iq), not the color
    with pytest.raises(ArchRuleError, match=r"WSE-3 data task ids come from an input queue"):
        _entrypt(tmp_path, "wse3", lambda t: t.replace("csl_ext.unblock {on_queue} data, 2",
                                                         "csl_ext.unblock data, 2"))


def test_a_control_wavelet_for_an_unbound_control_task_is_an_error(tmp_path: Path):
    with pytest.raises(ProgramError, match=r"activates control task id 41, bound to no task"):
        _entrypt(tmp_path, "wse2", lambda t: t.replace("get_task_id control, 40", "get_task_id control, 41"))


@pytest.mark.parametrize(("switches", "match"), [
    ("#csl_ext.switches<current = 2, pos1 = tx west>", "current_switch_pos 2 names a position that is not set"),
    ("#csl_ext.switches<pos1 = tx up>", "unknown port 'up'"),
    ("#csl_ext.switches<pos1 = both west>", "sets rx or tx"),
    ("#csl_ext.switches<pos1 = tx west, pop = sometimes>", "pop mode 'sometimes'"),
])
def test_switch_verifier_rules(switches: str, match: str):
    with pytest.raises(VerifyException, match=match):
        _row(switches, [])


def test_a_control_fabin_dsd_is_rejected():
    body = """%n = arith.constant 1 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %in = csl_ext.get_fab_dsd %n, %col {queue_id = 2 : i3, control = true} : i16 -> !csl<dsd fabin_dsd>"""
    with pytest.raises(VerifyException, match=r"\.control = true makes a fabout_dsd"):
        parse_program(make_program(body))


def _two_senders(ctrl: bool) -> object:
    # PEs 0 and 2 both send to PE 1, whose switch takes WEST (position 0) or EAST (1);
    # PE 0 follows its word with a control wavelet advancing the switch it reaches
    adv = ctrl_word([1])  # a router without .switches ignores it and does not pop it
    ctrl_send = f"""%is0 = arith.cmpi eq, %px, %z : i16
          scf.if %is0 {{
            %ctrl = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3, control = true}} : i16 -> !csl<dsd fabout_dsd>
            %cs = arith.constant {adv} : i32
            %c = "csl.mlir.signedness_cast"(%cs) : (i32) -> ui32
            "csl.mov32"(%ctrl, %c) : (!csl<dsd fabout_dsd>, ui32) -> ()
          }}""" if ctrl else ""
    body = f"""%one = arith.constant 1 : i16
      %two = arith.constant 2 : i16
      %z = arith.constant 0 : i16
      %c1 = arith.constant 1 : i16
      %col = "csl.get_color"(%c1) : (i16) -> !csl.color
      %mid = arith.cmpi eq, %px, %one : i16
      scf.if %mid {{
          %in = csl_ext.get_fab_dsd %two, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabin_dsd>
          %got_dsd = "csl.get_mem_dsd"(%got, %two) : (memref<?xi32>, i16) -> !csl<dsd mem1d_dsd>
          "csl.mov32"(%got_dsd, %in) {{async = #csl_ext.async<>}} : (!csl<dsd mem1d_dsd>, !csl<dsd fabin_dsd>) -> ()
      }} else {{
          %data = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabout_dsd>
          %ws = arith.index_cast %px : i16 to index
          %wi = arith.index_cast %ws : index to i32
          %w = "csl.mlir.signedness_cast"(%wi) : (i32) -> ui32
          "csl.mov32"(%data, %w) : (!csl<dsd fabout_dsd>, ui32) -> ()
          {ctrl_send}
      }}"""
    routes = """
      %x0 = arith.constant 0 : i16
      %x1 = arith.constant 1 : i16
      %x2 = arith.constant 2 : i16
      %y0 = arith.constant 0 : i16
      %k1 = arith.constant 1 : i16
      %col = "csl.get_color"(%k1) : (i16) -> !csl.color
      csl_ext.set_color_config %x1, %y0, %col routes <rx = [west], tx = [ramp]> {switches = #csl_ext.switches<pos1 = rx east, ring_mode, pop = always_pop>} : i16, i16
      csl_ext.set_color_config %x0, %y0, %col routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %x2, %y0, %col routes <rx = [ramp], tx = [west]> : i16, i16"""
    return simulate(make_program(body, arrays={"got": ("i32", 2)}, layout=routes, width=3))


def test_several_senders_pass_a_switch_in_the_order_it_lets_them_on():
    sim = _two_senders(ctrl=True)
    sim.launch("main")
    # PE 2's word waits at PE 1's router until PE 0's control wavelet moves the switch
    np.testing.assert_array_equal(sim.symbol("got", 1, 0), [0, 2])


def test_wavelets_a_switch_never_lets_on_are_reported():
    sim = _two_senders(ctrl=False)
    with pytest.raises(StaleWaveletError, match=r"held at the router of PE \(1, 0\): 1 stream\(s\) from PE\(s\) \[\(2, 0\)\], as its route \(rx=\{west\} tx=\{ramp\}\) and switch positions do not take them from EAST"):
        sim.launch("main")
        sim.stop()
