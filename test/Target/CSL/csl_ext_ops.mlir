// RUN: pyflame-opt %s -t csl | filecheck %s
// Every csl_ext op, the async attribute, and a literal-color csl.get_fab_dsd
// (xDSL 0.74 alone prints its color as "3 : ui5" and its queue ids 4-7 as negative).

builtin.module {
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %n = arith.constant 8 : i16
    %c = arith.constant 3 : i16
    %color = "csl.get_color"(%c) : (i16) -> !csl.color
    csl_ext.initialize_queue %color {queue_id = 5 : i3, output = true}
    csl_ext.initialize_queue %color {queue_id = 6 : i3}
    %zero = arith.constant 0.0 : f32
    %a = "csl.constants"(%n, %zero) : (i16, f32) -> memref<?xf32>
    csl.func @f() {
      %lit = "csl.get_fab_dsd"(%n) <{fabric_color = 3 : ui5, queue_id = 5 : i3}> : (i16) -> !csl<dsd fabout_dsd>
      %in = csl_ext.get_fab_dsd %n, %color {queue_id = 6 : i3} : i16 -> !csl<dsd fabin_dsd>
      %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
      csl_ext.block local, 12 : ui5
      csl_ext.unblock data, 3 : ui5
      "csl.fmovs"(%a_dsd, %in) {async = #csl_ext.async<unblock local 12>} : (!csl<dsd mem1d_dsd>, !csl<dsd fabin_dsd>) -> ()
      "csl.fmovs"(%lit, %a_dsd) {async = #csl_ext.async<>} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      "csl.fmovs"(%lit, %a_dsd) {async = #csl_ext.async<activate local 12 ut 4>} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      "csl.fmovs"(%lit, %a_dsd) {async = #csl_ext.async<ut 7>} : (!csl<dsd fabout_dsd>, !csl<dsd mem1d_dsd>) -> ()
      %t = arith.constant 1 : i1
      scf.if %t {
        csl_ext.block local, 13 : ui5
      }
      csl.return
    }
  }) : () -> ()
  "csl.module"() <{kind = #csl<module_kind layout>, sym_name = "layout"}> ({
    csl.layout {
      %one = arith.constant 1 : i16
      %zero = arith.constant 0 : i16
      %c = arith.constant 3 : i16
      %color = "csl.get_color"(%c) : (i16) -> !csl.color
      "csl.set_rectangle"(%one, %one) : (i16, i16) -> ()
      csl_ext.set_color_config %zero, %zero, %color routes <rx = [ramp], tx = [ramp, south, east]> : i16, i16
    }
  }) : () -> ()
}

// CHECK:      // FILE: pe
// CHECK:      comptime {
// CHECK-NEXT:   if (@is_arch("wse3")) {
// CHECK-NEXT:     @initialize_queue(@get_output_queue(5), .{ .color = @get_color(3) });
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:          @initialize_queue(@get_input_queue(6), .{ .color = @get_color(3) });
// CHECK:      fn f() void {
// CHECK-NEXT:   const lit : fabout_dsd = @get_dsd(fabout_dsd, .{
// CHECK-NEXT:     .extent = 8,
// CHECK-NEXT:     .fabric_color = @get_color(3),
// CHECK-NEXT:     .output_queue = @get_output_queue(5),
// CHECK-NEXT:   });
// CHECK-NEXT:   const in : fabin_dsd = @get_dsd(fabin_dsd, .{
// CHECK-NEXT:     .extent = 8,
// CHECK-NEXT:     .fabric_color = @get_color(3),
// CHECK-NEXT:     .input_queue = @get_input_queue(6),
// CHECK-NEXT:   });
// CHECK:        @block(@get_local_task_id(12));
// CHECK-NEXT:   @unblock(@get_data_task_id(@get_color(3)));
// CHECK-NEXT:   @fmovs(a_dsd, in, .{ .async = true, .unblock = @get_local_task_id(12) });
// CHECK-NEXT:   @fmovs(lit, a_dsd, .{ .async = true });
// CHECK-NEXT:   @fmovs(lit, a_dsd, .{ .async = true, .activate = @get_local_task_id(12), .ut_id = @get_ut_id(4) });
// CHECK-NEXT:   @fmovs(lit, a_dsd, .{ .async = true, .ut_id = @get_ut_id(7) });
// CHECK-NEXT:   if (true) {
// CHECK-NEXT:     @block(@get_local_task_id(13));
// CHECK-NEXT:   }
// CHECK:      // FILE: layout
// CHECK:        @set_color_config(0, 0, @get_color(3), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ RAMP, SOUTH, EAST } } });
