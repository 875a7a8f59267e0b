# ruff: noqa: E501  (embedded MLIR lines)
"""Microthreads of asynchronous DSD ops (SDK documentation, "Microthread IDs", and the
tutorial topic-15-wse3-microthreads): on WSE-3 an async op may name its microthread
(``.ut_id = @get_ut_id(n)``, n in 0-7), WSE-2 has no such builtin; by default an op
runs on the queue of its highest-priority fabric operand (destination, src0, src1);
two operations must not use one microthread at the same time."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from _wse_harness import D1, FIXTURES, array, dsd, make_program, simulate
from pyflame_mlir.lowering.csl_printer import print_csl

from pyflame_mlir.runtime.wse import ProgramError, parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError
from pyflame_mlir.runtime.wse.run_host import run_script

UNBLOCK = '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()'
N = 64


def _copies(first: str, second: str, chained: bool = False) -> str:
    """Two async copies a -> b and a -> c (N elements each) with the given async
    attribute bodies; `chained`: the second is issued by the first one's completion
    task instead of right after it. The last one's task unblocks the command stream."""
    second_op = f'"csl.fmovs"(%c_dsd, %a_dsd) {{async = #csl_ext.async<{second}>}} : ({D1}, {D1}) -> ()'
    extra = f"""
    csl.task @second() attributes {{kind = #csl<task_kind local>, id = 10 : ui5}} {{
      {dsd("a", N)}
      {dsd("c", N)}
      {second_op}
      csl.return
    }}
    csl.task @done() attributes {{kind = #csl<task_kind local>, id = 11 : ui5}} {{
      {UNBLOCK}
      csl.return
    }}"""
    body = f"""{dsd("a", N)}
      {dsd("b", N)}
      {dsd("c", N)}
      "csl.fmovs"(%b_dsd, %a_dsd) {{async = #csl_ext.async<{first}>}} : ({D1}, {D1}) -> ()
      {"" if chained else second_op}"""
    return make_program(body, arrays={"a": ("f32", N), "b": ("f32", N), "c": ("f32", N)},
                        extra=extra, unblock=False)


def _run(text: str, arch: str = "wse3"):
    sim = simulate(text, arch=arch)
    a = np.arange(N, dtype=np.float32) - 7
    sim.symbol("a", 0, 0)[:] = a
    sim.launch("main")
    return sim, a


def test_two_ops_on_different_microthreads_run_side_by_side():
    sim, a = _run(_copies("ut 3", "activate local 11 ut 4"))
    np.testing.assert_array_equal(array(sim, "b"), a)
    np.testing.assert_array_equal(array(sim, "c"), a)


def test_two_ops_on_one_microthread_at_once_are_refused():
    with pytest.raises(ProgramError, match=r"while async @fmovs issued at cycle \d+ still "
                       r"uses microthread 3 .*two operations cannot use one microthread"):
        _run(_copies("ut 3", "activate local 11 ut 3"))


def test_one_microthread_reused_after_completion_is_fine():
    sim, a = _run(_copies("activate local 10 ut 3", "activate local 11 ut 3", chained=True))
    np.testing.assert_array_equal(array(sim, "c"), a)


@pytest.mark.parametrize("ut", [8, 15])
def test_a_microthread_id_outside_0_7_is_refused(ut: int):
    with pytest.raises(ArchRuleError, match=rf"@get_ut_id\({ut}\) is outside WSE-3's "
                       "microthread ids 0-7"):
        _run(_copies(f"ut {ut}", "activate local 11"))


def test_wse2_has_no_microthread_ids():
    with pytest.raises(ArchRuleError, match=r"WSE-2 exposes no microthread ids"):
        _run(_copies("ut 3", "activate local 11"), arch="wse2")


# --- the default microthread: the queue of the first fabric operand --------------------

ROUTES = """
      %c1i = arith.constant 1 : i16
      %c1 = "csl.get_color"(%c1i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c1 routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c1 routes <rx = [west], tx = [ramp]> : i16, i16"""


def _two_sends(q1: int, q2: int, ut: str = "") -> str:
    """PE (0, 0) sends a's two halves east with two async @fmovs through output queues
    q1 and q2, back to back; PE (1, 0) receives all N into b."""
    h = N // 2
    body = f"""{dsd("b", N)}
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        %h = arith.constant {h} : i16
        %lo = "csl.get_mem_dsd"(%a, %h) : (memref<?xf32>, i16) -> {D1}
        %hi = "csl.increment_dsd_offset"(%lo, %h) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}
        %out1 = "csl.get_fab_dsd"(%h) <{{fabric_color = 1 : ui5, queue_id = {q1} : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        %out2 = "csl.get_fab_dsd"(%h) <{{fabric_color = 1 : ui5, queue_id = {q2} : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out1, %lo) {{async = #csl_ext.async<{ut}>}} : (!csl<dsd fabout_dsd>, {D1}) -> ()
        "csl.fmovs"(%out2, %hi) {{async = #csl_ext.async<>}} : (!csl<dsd fabout_dsd>, {D1}) -> ()
      }} else {{
        %n = arith.constant {N} : i16
        %in = "csl.get_fab_dsd"(%n) <{{fabric_color = 1 : ui5, queue_id = 3 : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%b_dsd, %in) : ({D1}, !csl<dsd fabin_dsd>) -> ()
      }}"""
    return make_program(body, arrays={"a": ("f32", N), "b": ("f32", N)}, layout=ROUTES,
                        width=2)


WEST = """
      %c2i = arith.constant 2 : i16
      %c2 = "csl.get_color"(%c2i) : (i16) -> !csl.color
      csl_ext.set_color_config %i1, %i0, %c2 routes <rx = [ramp], tx = [west]> : i16, i16
      csl_ext.set_color_config %i0, %i0, %c2 routes <rx = [east], tx = [ramp]> : i16, i16"""


@pytest.mark.parametrize(("q1", "q2", "ok"), [(3, 3, False), (3, 5, True)])
def test_receives_waiting_for_wavelets_are_checked_when_they_complete(q1: int, q2: int, ok: bool):
    # PE (0, 0) runs first and issues two async receives before any wavelet is there;
    # PE (1, 0) then sends N: the first receive completes only after the second was
    # issued, so on one queue (one microthread on WSE-2) they overlapped
    h = N // 2
    body = f"""%zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        %h = arith.constant {h} : i16
        %lo = "csl.get_mem_dsd"(%b, %h) : (memref<?xf32>, i16) -> {D1}
        %hi = "csl.increment_dsd_offset"(%lo, %h) <{{elem_type = f32}}> : ({D1}, i16) -> {D1}
        %in1 = "csl.get_fab_dsd"(%h) <{{fabric_color = 2 : ui5, queue_id = {q1} : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        %in2 = "csl.get_fab_dsd"(%h) <{{fabric_color = 2 : ui5, queue_id = {q2} : i3}}> : (i16) -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%lo, %in1) {{async = #csl_ext.async<>}} : ({D1}, !csl<dsd fabin_dsd>) -> ()
        "csl.fmovs"(%hi, %in2) {{async = #csl_ext.async<>}} : ({D1}, !csl<dsd fabin_dsd>) -> ()
      }} else {{
        {dsd("a", N)}
        %n = arith.constant {N} : i16
        %out = "csl.get_fab_dsd"(%n) <{{fabric_color = 2 : ui5, queue_id = 2 : i3}}> : (i16) -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%out, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()
      }}"""
    sim = simulate(make_program(body, arrays={"a": ("f32", N), "b": ("f32", N)},
                                layout=WEST, width=2), arch="wse2")
    a = np.arange(N, dtype=np.float32) + 1
    sim.symbol("a", 1, 0)[:] = a
    if ok:
        sim.launch("main")
        np.testing.assert_array_equal(array(sim, "b"), a)
    else:
        with pytest.raises(ProgramError, match="still uses microthread 3"):
            sim.launch("main")


def test_wse2_sends_on_two_queues_are_two_microthreads():
    sim = simulate(_two_sends(2, 4), arch="wse2")
    a = np.arange(N, dtype=np.float32)
    sim.symbol("a", 0, 0)[:] = a
    sim.launch("main")
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)


def test_wse2_sends_on_one_queue_at_once_share_its_microthread_and_are_refused():
    sim = simulate(_two_sends(2, 2), arch="wse2")
    with pytest.raises(ProgramError, match="still uses microthread 2"):
        sim.launch("main")


# --- the transcribed SDK tutorial, its printed CSL ------------------------------------------


@pytest.mark.parametrize("M", [10, 300])
def test_sdk_topic_15_runs_unchanged(M: int, tmp_path: Path):
    out = compile_program(FIXTURES / "microthreads_wse3.mlir", tmp_path / "mt", dict(M=M), "wse3")
    (r,) = run_script(FIXTURES / "microthreads_run.py", ["--name", str(out)], quiet=True)
    assert r.arch == "wse3"
    assert r.total_cycles > M  # M wavelets cross one link, one per cycle
    text = (out / "left_pe.csl").read_text()
    assert (".{ .async = true, .activate = @get_local_task_id(9), "
            ".ut_id = @get_ut_id(4) }") in text


def test_sdk_topic_15_is_refused_on_wse2(tmp_path: Path):
    out = compile_program(FIXTURES / "microthreads_wse3.mlir", tmp_path / "mt", dict(M=10), "wse2")
    with pytest.raises(ArchRuleError, match="WSE-2 exposes no microthread ids"):
        run_script(FIXTURES / "microthreads_run.py", ["--name", str(out)], quiet=True)


def test_async_attribute_with_a_microthread_round_trips():
    text = (FIXTURES / "microthreads_wse3.mlir").read_text()
    module = parse_program(text)
    again = parse_program(str(module))
    assert "#csl_ext.async<activate local 9 ut 4>" in str(again)
    buf = io.StringIO()
    print_csl(again, buf)
    assert ".ut_id = @get_ut_id(5)" in buf.getvalue()
    only_ut = parse_program(text.replace("activate local 9 ut 5", "ut 5"))
    assert "#csl_ext.async<ut 5>" in str(only_ut)
