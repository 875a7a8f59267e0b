# ruff: noqa: E501  (embedded MLIR lines)
"""Pointer, task-id and queue params (`csl_ext.param`) and task ids as values: a module
(`bus`) takes a pointer to its importer's `[2, 4]f32` array, the id to bind its own
task to and the id of its importer's callback task (given to the PE by the layout as
`@get_local_task_id(12)`); its async @fmovs writes row 1 through the pointer and
activates its task by the param's name (`.activate = fin_id`), which activates the
callback. Checked on WSE-2 and WSE-3 against numpy, printed as the SDK writes it, and
each wrong binding refused with the param named."""

from __future__ import annotations

import io

import numpy as np
import pytest
from _wse_harness import simulate
from pyflame_mlir.lowering.csl_printer import print_csl
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import load_module
from pyflame_mlir.runtime.wse.errors import ArchRuleError, ProgramError

PTR = "!csl.ptr<memref<2x4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>"
TID = "!csl_ext.task_id<local>"

PROGRAM = """
builtin.module {
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    %w = arith.constant 1 : i16
    %h = arith.constant 1 : i16
    %c12 = arith.constant 12 : i16
    %cb_id = csl_ext.task_id_of %c12 : i16 -> !csl_ext.task_id<local>
    %memcpy_init = "csl.const_struct"(%w, %h) <{ssa_fields = ["width", "height"]}> : (i16, i16) -> !csl.comptime_struct
    %memcpy = "csl.import_module"(%memcpy_init) <{module = "<memcpy/get_params>"}> : (!csl.comptime_struct) -> !csl.imported_module
    csl.layout {
      %i0 = arith.constant 0 : i16
      "csl.set_rectangle"(%w, %h) : (i16, i16) -> ()
      %mp = "csl.member_call"(%memcpy, %i0) <{field = "get_params"}> : (!csl.imported_module, i16) -> !csl.comptime_struct
      %tp = "csl.const_struct"(%mp, %cb_id) <{ssa_fields = ["memcpy_params", "cb_id"]}> : (!csl.comptime_struct, !csl_ext.task_id<local>) -> !csl.comptime_struct
      "csl.set_tile_code"(%i0, %i0, %tp) <{file = "pe.csl"}> : (i16, i16, !csl.comptime_struct) -> ()
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "bus"}> ({
    %buf = csl_ext.param "buf" : !csl.ptr<memref<2x4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>
    %fin_id = csl_ext.param "fin_id" : !csl_ext.task_id<local>
    %done = csl_ext.param "done" : !csl_ext.task_id<local>
    csl.func @fill() {
      %arr = csl_ext.deref %buf : !csl.ptr<memref<2x4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>> -> memref<2x4xf32>
      %four = arith.constant 4 : i16
      %d = "csl.get_mem_dsd"(%arr, %four) <{tensor_access = affine_map<(d0) -> (1, d0)>}> : (memref<2x4xf32>, i16) -> !csl<dsd mem1d_dsd>
      %v = arith.constant 7.0 : f32
      "csl.fmovs"(%d, %v) {async = #csl_ext.async<activate @fin_id>} : (!csl<dsd mem1d_dsd>, f32) -> ()
      csl.return
    }
    csl.task @fin() attributes {kind = #csl<task_kind local>} {
      csl_ext.activate_id %done : !csl_ext.task_id<local>
      csl.return
    }
    csl_ext.bind_task @fin, %fin_id : !csl_ext.task_id<local>
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %memcpy_params = "csl.param"() <{param_name = "memcpy_params"}> : () -> !csl.comptime_struct
    %cb_id = csl_ext.param "cb_id" : !csl_ext.task_id<local>
    %sys_mod = "csl.import_module"(%memcpy_params) <{module = "<memcpy/memcpy>"}> : (!csl.comptime_struct) -> !csl.imported_module
    %z = "csl.zeros"() : () -> memref<2x4xf32>
    %zp = "csl.addressof"(%z) : (memref<2x4xf32>) -> !csl.ptr<memref<2x4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>
    %c9 = arith.constant 9 : i16
    %fin_id = csl_ext.task_id_of %c9 : i16 -> !csl_ext.task_id<local>
    %bp = "csl.const_struct"(%zp, %fin_id, %cb_id) <{ssa_fields = ["buf", "fin_id", "done"]}> : (!csl.ptr<memref<2x4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>, !csl_ext.task_id<local>, !csl_ext.task_id<local>) -> !csl.comptime_struct
    %bus = "csl.import_module"(%bp) <{module = "bus.csl"}> : (!csl.comptime_struct) -> !csl.imported_module
    %one = arith.constant 8 : i16
    %zero = arith.constant 0.0 : f32
    %out = "csl.constants"(%one, %zero) : (i16, f32) -> memref<?xf32>
    csl.task @cb() attributes {kind = #csl<task_kind local>} {
      %eight = arith.constant 8 : i16
      %od = "csl.get_mem_dsd"(%out, %eight) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
      %zd = "csl.get_mem_dsd"(%z, %eight) <{tensor_access = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>}> : (memref<2x4xf32>, i16) -> !csl<dsd mem1d_dsd>
      "csl.fmovs"(%od, %zd) : (!csl<dsd mem1d_dsd>, !csl<dsd mem1d_dsd>) -> ()
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    csl_ext.bind_task @cb, %cb_id : !csl_ext.task_id<local>
    csl.func @main() {
      "csl.member_call"(%bus) <{field = "fill"}> : (!csl.imported_module) -> ()
      csl.return
    }
    "csl.export"() <{var_name = @main, type = () -> ()}> : () -> ()
    %out_ptr = "csl.addressof"(%out) : (memref<?xf32>) -> !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>
    "csl.export"(%out_ptr) <{var_name = "out", type = !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
  }) : () -> ()
}
"""


def _csl(text: str) -> str:
    s = io.StringIO()
    print_csl(load_module(text), s)
    return s.getvalue()


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_pointer_and_task_id_params_run(arch: str):
    sim = simulate(PROGRAM, arch=arch)
    sim.launch("main")
    want = np.zeros((2, 4), np.float32)
    want[1, :] = 7.0
    np.testing.assert_array_equal(sim.symbol("out", 0, 0), want.reshape(-1))
    assert sim.pes[(0, 0)].async_cycles > 0


def test_printed_as_the_sdk_writes_them():
    text = _csl(PROGRAM)
    for line in ("param buf : *[2, 4]f32;", "param fin_id : local_task_id;",
                 "-> buf.*[ 1, d0 ]", "@fmovs(d, 7.0, .{ .async = true, .activate = fin_id });",
                 "@activate(done);", "@bind_local_task(fin, fin_id);",
                 "param cb_id : local_task_id;", "@bind_local_task(cb, cb_id);",
                 "@get_local_task_id(9);", "@get_local_task_id(12);"):
        assert line in text, line


def test_a_pointer_param_given_a_number_is_named():
    text = PROGRAM.replace('(%zp, %fin_id, %cb_id) <{ssa_fields = ["buf",', '(%c9, %fin_id, %cb_id) <{ssa_fields = ["buf",').replace(
        f"({PTR}, {TID}, {TID}) -> !csl.comptime_struct", f"(i16, {TID}, {TID}) -> !csl.comptime_struct")
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): @import_module\(\"bus.csl\"\): param 'buf': "
                                           r"a pointer param \(a pointer \*\[2, 4\]f32\) given 9 \(int\)"):
        simulate(text)


def test_a_pointer_param_to_another_element_type_or_shape_is_named():
    ip = PTR.replace("xf32", "xi16")
    i16 = PROGRAM.replace(
        '%c9 = arith.constant 9 : i16',
        f'%c9 = arith.constant 9 : i16\n    %zi = "csl.zeros"() : () -> memref<2x4xi16>\n    %zip = "csl.addressof"(%zi) : (memref<2x4xi16>) -> {ip}').replace(
        '(%zp, %fin_id, %cb_id) <{ssa_fields = ["buf",', '(%zip, %fin_id, %cb_id) <{ssa_fields = ["buf",').replace(
        f"({PTR}, {TID}, {TID}) -> !csl.comptime_struct", f"({ip}, {TID}, {TID}) -> !csl.comptime_struct")
    with pytest.raises(ProgramError, match=r"param 'buf': a pointer param \(a pointer \*\[2, 4\]f32\) "
                                           r"given a pointer to int16 elements"):
        simulate(i16)
    shape = PROGRAM.replace("memref<2x4xf32>", "memref<4x2xf32>").replace(
        "-> memref<4x2xf32>\n      %four", "-> memref<2x4xf32>\n      %four").replace(
        '%buf = csl_ext.param "buf" : !csl.ptr<memref<4x2xf32>', '%buf = csl_ext.param "buf" : !csl.ptr<memref<2x4xf32>').replace(
        '%arr = csl_ext.deref %buf : !csl.ptr<memref<4x2xf32>', '%arr = csl_ext.deref %buf : !csl.ptr<memref<2x4xf32>').replace(
        "(%arr, %four) <{tensor_access = affine_map<(d0) -> (1, d0)>}> : (memref<4x2xf32>",
        "(%arr, %four) <{tensor_access = affine_map<(d0) -> (1, d0)>}> : (memref<2x4xf32>")
    with pytest.raises(ProgramError, match=r"param 'buf': a pointer param \(a pointer \*\[2, 4\]f32\) "
                                           r"given a pointer to an array of shape \[4, 2\]"):
        simulate(shape)


def test_a_task_id_param_given_an_integer_is_named():
    text = PROGRAM.replace('%tp = "csl.const_struct"(%mp, %cb_id)', '%tp = "csl.const_struct"(%mp, %c12)').replace(
        f"(!csl.comptime_struct, {TID}) -> !csl.comptime_struct", "(!csl.comptime_struct, i16) -> !csl.comptime_struct")
    with pytest.raises(ProgramError, match=r"PE \(0, 0\): param 'cb_id': a local_task_id param given 12 "
                                           r"\(int\) \(make one with @get_local_task_id\)"):
        simulate(text)


def test_a_task_id_of_another_kind_is_named():
    text = PROGRAM.replace("%cb_id = csl_ext.task_id_of %c12 : i16 -> !csl_ext.task_id<local>",
                           "%cb_id = csl_ext.task_id_of %c12 : i16 -> !csl_ext.task_id<control>").replace(
        "(!csl.comptime_struct, !csl_ext.task_id<local>) -> !csl.comptime_struct",
        "(!csl.comptime_struct, !csl_ext.task_id<control>) -> !csl.comptime_struct")
    with pytest.raises(ProgramError, match=r"param 'cb_id': a local_task_id param given "
                                           r"@get_control_task_id\(12\)"):
        simulate(text)


def test_binding_a_task_twice_or_to_a_taken_id_is_refused():
    twice = PROGRAM.replace("csl_ext.bind_task @cb, %cb_id : !csl_ext.task_id<local>",
                            "csl_ext.bind_task @cb, %cb_id : !csl_ext.task_id<local>\n    csl_ext.bind_task @cb, %fin_id : !csl_ext.task_id<local>")
    with pytest.raises(ProgramError, match=r"@bind_local_task\(cb, @get_local_task_id\(9\)\) \(at .*\): "
                                           "task 'cb' is already bound"):
        simulate(twice)
    taken = PROGRAM.replace("%c9 = arith.constant 9 : i16", "%c9 = arith.constant 12 : i16")
    with pytest.raises(ProgramError, match=r"two tasks bound to local id 12"):
        simulate(taken)


def test_an_async_target_naming_nothing_is_refused():
    text = PROGRAM.replace("#csl_ext.async<activate @fin_id>", "#csl_ext.async<activate @fin_idd>")
    with pytest.raises(ProgramError, match=r"\.activate = fin_idd \(at .*\): no task-id param or "
                                           "task 'fin_idd' in the module"):
        simulate(text)


def test_a_task_named_as_async_target_activates_it():
    text = PROGRAM.replace("#csl_ext.async<activate @fin_id>", "#csl_ext.async<activate @fin>")
    sim = simulate(text)
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[4] == 7.0
    assert ".activate = fin }" in _csl(text)


def test_param_op_types_are_checked():
    with pytest.raises(VerifyException, match=r"param 'x': csl_ext.param is for pointer, task id "
                                              r"and queue params, not f32 \(use csl.param\)"):
        load_module(PROGRAM.replace('%done = csl_ext.param "done" : !csl_ext.task_id<local>',
                                    '%done = csl_ext.param "done" : !csl_ext.task_id<local>\n    %x = csl_ext.param "x" : f32'))
    with pytest.raises(VerifyException, match=r"@get_local_task_id takes an integer"):
        load_module(PROGRAM.replace("%fin_id = csl_ext.task_id_of %c9 : i16 -> !csl_ext.task_id<local>",
                                    "%q = csl_ext.get_queue %c9 : i16 -> !csl_ext.queue<input>\n    %fin_id = csl_ext.task_id_of %q : !csl_ext.queue<input> -> !csl_ext.task_id<local>"))


DATA = """
    %q2 = arith.constant 2 : i16
    %iq = csl_ext.get_queue %q2 : i16 -> !csl_ext.queue<input>
    %dq = csl_ext.task_id_of %iq : !csl_ext.queue<input> -> !csl_ext.task_id<data>
    %c5 = arith.constant 5 : i16
    %col = "csl.get_color"(%c5) : (i16) -> !csl.color
    %dc = csl_ext.task_id_of %col : !csl.color -> !csl_ext.task_id<data>
    csl.task @recv(%v: f32) attributes {kind = #csl<task_kind data>} {
      csl.return
    }
    csl_ext.bind_task @recv, %DID : !csl_ext.task_id<data>
    csl.func @main() {"""


@pytest.mark.parametrize(("arch", "ok", "bad"), [("wse2", "%dc", "%dq"), ("wse3", "%dq", "%dc")])
def test_data_task_ids_come_from_a_color_on_wse2_and_a_queue_on_wse3(arch: str, ok: str, bad: str):
    def with_data(did: str) -> str:
        data = DATA.replace("%DID", did)
        if arch == "wse3":  # its queue bound to a color, as WSE-3 needs
            data = data.replace("    csl.task @recv", "    csl_ext.initialize_queue %col {queue_id = 2 : i3}\n    csl.task @recv")
        return PROGRAM.replace("\n    csl.func @main() {", data, 1)

    sim = simulate(with_data(ok), arch=arch)
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[4] == 7.0
    with pytest.raises(ArchRuleError, match="data task ids come from"):
        simulate(with_data(bad), arch=arch)
    printed = _csl(with_data(ok))
    assert "@get_data_task_id(@get_input_queue(2))" in printed or "@get_data_task_id(@get_color(5))" in printed
    assert "@bind_data_task(recv, " in printed


def test_task_actions_in_the_layout_are_refused():
    text = PROGRAM.replace('"csl.set_rectangle"(%w, %h) : (i16, i16) -> ()',
                           '"csl.set_rectangle"(%w, %h) : (i16, i16) -> ()\n      csl_ext.activate_id %cb_id : !csl_ext.task_id<local>')
    with pytest.raises(ProgramError, match=r"@activate \(at .*\) in the layout: it belongs in a PE program"):
        simulate(text)


QUEUES = """
builtin.module {
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    %w = arith.constant 2 : i16
    %h = arith.constant 1 : i16
    %c3 = arith.constant 3 : i16
    %color = "csl.get_color"(%c3) : (i16) -> !csl.color
    %memcpy_init = "csl.const_struct"(%w, %h) <{ssa_fields = ["width", "height"]}> : (i16, i16) -> !csl.comptime_struct
    %memcpy = "csl.import_module"(%memcpy_init) <{module = "<memcpy/get_params>"}> : (!csl.comptime_struct) -> !csl.imported_module
    csl.layout {
      %i0 = arith.constant 0 : i16
      %i1 = arith.constant 1 : i16
      "csl.set_rectangle"(%w, %h) : (i16, i16) -> ()
      scf.for %x = %i0 to %w step %i1 : i16 {
        %mp = "csl.member_call"(%memcpy, %x) <{field = "get_params"}> : (!csl.imported_module, i16) -> !csl.comptime_struct
        %tp = "csl.const_struct"(%mp, %x) <{ssa_fields = ["memcpy_params", "px"]}> : (!csl.comptime_struct, i16) -> !csl.comptime_struct
        "csl.set_tile_code"(%x, %i0, %tp) <{file = "pe.csl"}> : (i16, i16, !csl.comptime_struct) -> ()
      }
      csl_ext.set_color_config %i0, %i0, %color routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %color routes <rx = [west], tx = [ramp]> : i16, i16
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "chan"}> ({
    %channel = "csl.param"() <{param_name = "channel"}> : () -> !csl.color
    %queueId = "csl.param"() <{param_name = "queueId"}> : () -> i16
    %done = csl_ext.param "done" : !csl_ext.task_id<local>
    %buf = csl_ext.param "buf" : !csl.ptr<memref<4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>
    csl.func @send() {
      %n = arith.constant 4 : i16
      %oq = csl_ext.get_queue %queueId : i16 -> !csl_ext.queue<output>
      %fo = csl_ext.get_fab_dsd %n, %channel queue %oq : !csl_ext.queue<output> : i16 -> !csl<dsd fabout_dsd>
      %arr = csl_ext.deref %buf : !csl.ptr<memref<4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>> -> memref<4xf32>
      %md = "csl.get_mem_dsd"(%arr, %n) : (memref<4xf32>, i16) -> !csl<dsd mem1d_dsd>
      "csl.fmovs"(%fo, %md) {async = #csl_ext.async<activate @done>} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      csl.return
    }
    csl.func @recv() {
      %n = arith.constant 4 : i16
      %four = arith.constant 4 : i16
      %q = arith.addi %four, %queueId : i16
      %iq = csl_ext.get_queue %q : i16 -> !csl_ext.queue<input>
      %fi = csl_ext.get_fab_dsd %n, %channel queue %iq : !csl_ext.queue<input> : i16 -> !csl<dsd fabin_dsd>
      %arr = csl_ext.deref %buf : !csl.ptr<memref<4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>> -> memref<4xf32>
      %md = "csl.get_mem_dsd"(%arr, %n) : (memref<4xf32>, i16) -> !csl<dsd mem1d_dsd>
      "csl.fadds"(%md, %md, %fi) {async = #csl_ext.async<activate @done>} : (!csl<dsd mem1d_dsd>, !csl<dsd mem1d_dsd>, !csl<dsd fabin_dsd>) -> ()
      csl.return
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %memcpy_params = "csl.param"() <{param_name = "memcpy_params"}> : () -> !csl.comptime_struct
    %px = "csl.param"() <{param_name = "px"}> : () -> i16
    %sys_mod = "csl.import_module"(%memcpy_params) <{module = "<memcpy/memcpy>"}> : (!csl.comptime_struct) -> !csl.imported_module
    %c3 = arith.constant 3 : i16
    %color = "csl.get_color"(%c3) : (i16) -> !csl.color
    %qid = arith.constant 2 : i16
    %c10 = arith.constant 10 : i16
    %fin = csl_ext.task_id_of %c10 : i16 -> !csl_ext.task_id<local>
    %n = arith.constant 4 : i16
    %x = "csl.zeros"() : () -> memref<4xf32>
    %xp = "csl.addressof"(%x) : (memref<4xf32>) -> !csl.ptr<memref<4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>
    %cp = "csl.const_struct"(%color, %qid, %fin, %xp) <{ssa_fields = ["channel", "queueId", "done", "buf"]}> : (!csl.color, i16, !csl_ext.task_id<local>, !csl.ptr<memref<4xf32>, #csl<ptr_kind single>, #csl<ptr_const var>>) -> !csl.comptime_struct
    %chan = "csl.import_module"(%cp) <{module = "chan.csl"}> : (!csl.comptime_struct) -> !csl.imported_module
    csl_ext.initialize_queue %color {queue_id = 2 : i3, output = true}
    csl_ext.initialize_queue %color {queue_id = 6 : i3}
    csl.task @fin_task() attributes {kind = #csl<task_kind local>} {
      "csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()
      csl.return
    }
    csl_ext.bind_task @fin_task, %fin : !csl_ext.task_id<local>
    csl.func @main() {
      %z = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %z : i16
      scf.if %first {
        "csl.member_call"(%chan) <{field = "send"}> : (!csl.imported_module) -> ()
      } else {
        "csl.member_call"(%chan) <{field = "recv"}> : (!csl.imported_module) -> ()
      }
      csl.return
    }
    "csl.export"() <{var_name = @main, type = () -> ()}> : () -> ()
    %x_ptr = "csl.addressof"(%x) : (memref<4xf32>) -> !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>
    "csl.export"(%x_ptr) <{var_name = "x", type = !csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>}> : (!csl.ptr<f32, #csl<ptr_kind many>, #csl<ptr_const var>>) -> ()
  }) : () -> ()
}
"""


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_queue_values_from_a_param_reach_the_fabric_dsds(arch: str):
    """oned_exch.csl's form: `.output_queue = @get_output_queue(queueId)` and
    `.input_queue = @get_input_queue(4 + queueId)` of a module's u16 param; PE 0 sends its
    x, PE 1 adds it to its own (both through the module's pointer to x)."""
    sim = simulate(QUEUES, arch=arch)
    a, b = np.array([1, 2, 3, 4], np.float32), np.array([10, 20, 30, 40], np.float32)
    sim.symbol("x", 0, 0)[:] = a
    sim.symbol("x", 1, 0)[:] = b
    sim.launch("main")
    np.testing.assert_array_equal(sim.symbol("x", 1, 0), a + b)
    text = _csl(QUEUES)
    assert "const iq : input_queue = @get_input_queue((4 + queueId));" in text
    assert ".input_queue = iq," in text and ".output_queue = oq," in text


def test_a_queue_value_of_the_wrong_direction_is_refused():
    with pytest.raises(VerifyException, match=r"a fabin_dsd takes an input queue, not "
                                              r"!csl_ext.queue<output>"):
        load_module(QUEUES.replace("%iq = csl_ext.get_queue %q : i16 -> !csl_ext.queue<input>",
                                   "%iq = csl_ext.get_queue %q : i16 -> !csl_ext.queue<output>").replace(
            "queue %iq : !csl_ext.queue<input>", "queue %iq : !csl_ext.queue<output>"))


def test_a_task_id_param_default_is_used_when_the_struct_gives_none():
    """`param done: local_task_id = @get_local_task_id(11);`, the import giving no .done:
    the callback bound to 11 runs."""
    text = PROGRAM.replace(
        '%done = csl_ext.param "done" : !csl_ext.task_id<local>',
        '%d11 = arith.constant 11 : i16\n    %dflt = csl_ext.task_id_of %d11 : i16 -> !csl_ext.task_id<local>\n    %done = csl_ext.param "done" = %dflt : !csl_ext.task_id<local>').replace(
        f'(%zp, %fin_id, %cb_id) <{{ssa_fields = ["buf", "fin_id", "done"]}}> : ({PTR}, {TID}, {TID})',
        f'(%zp, %fin_id) <{{ssa_fields = ["buf", "fin_id"]}}> : ({PTR}, {TID})')
    sim = simulate(text.replace("%c12 = arith.constant 12 : i16", "%c12 = arith.constant 11 : i16"))
    sim.launch("main")
    assert sim.symbol("out", 0, 0)[4] == 7.0
    assert "param done : local_task_id = dflt;" in _csl(text)
    with pytest.raises(ProgramError, match=r"task id 11, bound to no task"):  # cb is on 12
        simulate(text).launch("main")
