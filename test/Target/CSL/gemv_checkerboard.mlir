// RUN: pyflame-opt %S/../../fixtures/csl/gemv_checkerboard.mlir -t csl | filecheck %s
// Checkerboard GEMV: data task per x wavelet, async chained reduction on param colors,
// per-PE routes chosen by column parity and row position.

// CHECK:      // FILE: pe_program
// CHECK:      param send_east_color : color;
// CHECK:      task recv_x(x_val : f32) void {
// CHECK-NEXT:   const col : mem1d_dsd = A_col;
// CHECK-NEXT:   @fmacs(y_dsd, y_dsd, col, x_val);
// CHECK:        @activate(@get_local_task_id(10));
// CHECK:        @bind_data_task(recv_x, @get_data_task_id(@get_color(2)));
// CHECK:      task reduce() void {
// CHECK-NEXT:   const out : fabout_dsd = @get_dsd(fabout_dsd, .{
// CHECK-NEXT:     .extent = M_per_PE,
// CHECK-NEXT:     .fabric_color = send_east_color,
// CHECK-NEXT:     .output_queue = @get_output_queue(2),
// CHECK-NEXT:   });
// CHECK:        @fadds(y_dsd, y_dsd, in, .{ .async = true, .activate = @get_local_task_id(9) });
// CHECK:        @fmovs(out, y_dsd, .{ .async = true, .activate = @get_local_task_id(9) });
// CHECK:        @fadds(out, y_dsd, in, .{ .async = true, .activate = @get_local_task_id(9) });
// CHECK:      fn compute() void {
// CHECK:        .output_queue = @get_output_queue(4),
// CHECK:        @fmovs(x_out, x_dsd, .{ .async = true });
// CHECK:      // FILE: layout
// CHECK:      const send : color = if (((px % 2)  ==  0)) @get_color(0) else @get_color(1);
// CHECK:      @set_color_config(px, py, send, .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ EAST } } });
// CHECK-NEXT: @set_color_config(px, py, recv, .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } } });
// CHECK:      @set_color_config(px, py, @get_color(2), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ RAMP, SOUTH } } });
// CHECK:      @set_color_config(px, py, @get_color(2), .{ .routes = .{ .rx = .{ NORTH }, .tx = .{ RAMP, SOUTH } } });
