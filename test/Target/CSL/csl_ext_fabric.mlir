// RUN: pyflame-opt %s -t csl | filecheck %s
// Switch positions in a route, control wavelets (<control>, {}, a control task id),
// data structure registers and a FIFO, as CSL text.

builtin.module {
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    %one = arith.constant 1 : i16
    csl.layout {
      %zero = arith.constant 0 : i16
      "csl.set_rectangle"(%one, %one) : (i16, i16) -> ()
      %c = "csl.get_color"(%one) : (i16) -> !csl.color
      csl_ext.set_color_config %zero, %zero, %c routes <rx = [ramp], tx = [north]> {switches = #csl_ext.switches<pos1 = tx west, pos2 = rx east, current = 2, ring_mode, pop = pop_on_advance>} : i16, i16
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %n = arith.constant 4 : i16
    %one = arith.constant 1 : i16
    %color = "csl.get_color"(%one) : (i16) -> !csl.color
    %ctrl = "csl.import_module"() <{module = "<control>"}> : () -> !csl.imported_module
    %zero = arith.constant 0.0 : f32
    %a = "csl.constants"(%n, %zero) : (i16, f32) -> memref<?xf32>
    %buf = "csl.constants"(%n, %zero) : (i16, f32) -> memref<?xf32>
    %fifo = csl_ext.allocate_fifo %buf : memref<?xf32>
    %dest = csl_ext.get_dsr 2 -> !csl_ext.dsr<dest>
    %src1 = csl_ext.get_dsr 3 -> !csl_ext.dsr<src1>
    %out = csl_ext.get_fab_dsd %n, %color {queue_id = 2 : i3, control = true} : i16 -> !csl<dsd fabout_dsd>
    csl.func @f() {
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
      %none = csl_ext.void
      %id = csl_ext.get_task_id control, 40 : ui6
      %adv = arith.constant 1 : i16
      %t = arith.constant true
      %z = arith.constant 0 : i16
      %p = "csl.member_call"(%ctrl, %adv, %t, %none, %z) <{field = "encode_single_payload"}> : (!csl.imported_module, i16, i1, none, i16) -> ui32
      %q = "csl.member_call"(%ctrl, %adv, %t, %id, %z) <{field = "encode_single_payload"}> : (!csl.imported_module, i16, i1, ui16, i16) -> ui32
      "csl.mov32"(%out, %p) : (!csl<dsd fabout_dsd>, ui32) -> ()
      "csl.mov32"(%out, %q) : (!csl<dsd fabout_dsd>, ui32) -> ()
      csl_ext.load_to_dsr %dest, %a_dsd {async = #csl_ext.async<activate local 9>} : !csl_ext.dsr<dest>, !csl<dsd mem1d_dsd>
      csl_ext.load_to_dsr %src1, %a_dsd : !csl_ext.dsr<src1>, !csl<dsd mem1d_dsd>
      csl_ext.dsd_builtin "fmovs"(%dest, %src1) {async = #csl_ext.async<>} : !csl_ext.dsr<dest>, !csl_ext.dsr<src1>
      csl_ext.dsd_builtin "fmovs"(%fifo, %a_dsd) {async = #csl_ext.async<>} : !csl_ext.fifo, !csl<dsd mem1d_dsd>
      csl_ext.unblock {on_queue} data, 2 : ui5
      csl.return
    }
  }) : () -> ()
}

// CHECK: const fifo = @allocate_fifo(buf);
// CHECK: const dest : dsr_dest = @get_dsr(dsr_dest, 2);
// CHECK: const src1 : dsr_src1 = @get_dsr(dsr_src1, 3);
// CHECK: .control = true,
// CHECK: ctrl.encode_single_payload(1, true, {}, 0);
// CHECK: ctrl.encode_single_payload(1, true, @get_control_task_id(40), 0);
// CHECK: @load_to_dsr(dest, a_dsd, .{ .async = true, .activate = @get_local_task_id(9) });
// CHECK-NEXT: @load_to_dsr(src1, a_dsd);
// CHECK-NEXT: @fmovs(dest, src1, .{ .async = true });
// CHECK-NEXT: @fmovs(fifo, a_dsd, .{ .async = true });
// CHECK-NEXT: @unblock(@get_input_queue(2));
// CHECK: @set_color_config(0, 0, @get_color(1), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ NORTH } }, .switches = .{ .pos1 = .{ .tx = WEST }, .pos2 = .{ .rx = EAST }, .current_switch_pos = 2, .ring_mode = true, .pop_mode = .{ .pop_on_advance = true } } });
