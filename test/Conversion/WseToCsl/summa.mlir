// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// SUMMA as a chain of tasks with double-buffered panels: the step task is
// blocked while the next step's panels arrive; the A panel's arrival unblocks
// it and the B panel's activates it. Column/row 0 relays panels whose root is
// elsewhere in a task of its own; the last step activates the continuation.

wse.program @main {width = 3, height = 3} {
^bb0(%a: !wse.tensor<48x36xf32, #wse.layout<[y, x]>>, %b: !wse.tensor<36x24xf32, #wse.layout<[y, x]>>):
  %c = wse.summa %a, %b : (!wse.tensor<48x36xf32, #wse.layout<[y, x]>>, !wse.tensor<36x24xf32, #wse.layout<[y, x]>>) -> !wse.tensor<48x24xf32, #wse.layout<[y, x]>>
  %d = wse.map "relu"(%c) : (!wse.tensor<48x24xf32, #wse.layout<[y, x]>>) -> !wse.tensor<48x24xf32, #wse.layout<[y, x]>>
  wse.return %d : !wse.tensor<48x24xf32, #wse.layout<[y, x]>>
}

// CHECK:      var [[STEP:summa[0-9]+_step]] : i16 = 0;
// CHECK:      var [[RELAYED:summa[0-9]+_relayed]] : i16 = 0;
// CHECK:      task main() void {
// CHECK:        @fmovs({{.*}}, 0.0);
// CHECK:        [[STEP]] = 0;
// CHECK:        @block(@get_local_task_id([[S:[0-9]+]]));
// CHECK:        @fmovs({{.*}}, .{ .async = true });
// CHECK:        @fmovs({{.*}}, .{ .async = true, .unblock = @get_local_task_id([[S]]) });
// CHECK:        @fmovs({{.*}}, .{ .async = true, .activate = @get_local_task_id([[S]]) });
// CHECK-NOT:    sys_mod.unblock_cmd_stream();
// CHECK:      @bind_local_task(main,
// CHECK:      task summa_step_[[S]]() void {
// CHECK:        @block(@get_local_task_id([[S]]));
// CHECK:        @fmovs({{.*}}, .{ .async = true, .activate = @get_local_task_id([[RX:[0-9]+]]) });
// CHECK:        @fmacs(
// CHECK:        [[STEP]] = (
// CHECK:        @activate(@get_local_task_id([[AFTER:[0-9]+]]));
// CHECK:      task summa_relay_x_[[RX]]() void {
// CHECK:        @fmovs({{.*}}, .{ .async = true });
// CHECK:        @unblock(@get_local_task_id([[S]]));
// CHECK:      task summa_relay_y_{{[0-9]+}}() void {
// CHECK:        @activate(@get_local_task_id([[S]]));
// CHECK:      task after_summa_[[AFTER]]() void {
// CHECK:        @fmaxs({{.*}}, 0.0);
// CHECK:        sys_mod.unblock_cmd_stream();
