// RUN: pyflame-opt %S/../../fixtures/csl/gemm_bcast.mlir -t csl | filecheck %s
// GEMM with row/column broadcasts: block/unblock idiom and async completion actions.

// CHECK:      // FILE: pe_program
// CHECK:      task gemm() void {
// CHECK-NEXT:   @fmovs(C_all, 0.0);
// CHECK:          @fmacs(C_j, C_j, A_k, (B[((k * @as(i32, Nt)) + j)]));
// CHECK:        @bind_local_task(gemm, @get_local_task_id(11));
// CHECK:      fn compute() void {
// CHECK-NEXT:   @block(@get_local_task_id(11));
// CHECK:          @fmovs(row_out, A_all, .{ .async = true });
// CHECK:        @unblock(@get_local_task_id(11));
// CHECK:        @fmovs(A_all, row_in, .{ .async = true, .unblock = @get_local_task_id(11) });
// CHECK:        @activate(@get_local_task_id(11));
// CHECK:        @fmovs(B_all, col_in, .{ .async = true, .activate = @get_local_task_id(11) });
// CHECK:      // FILE: layout
// CHECK:      @set_color_config(px, py, @get_color(3), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP, EAST } } });
// CHECK:      @set_color_config(px, py, @get_color(4), .{ .routes = .{ .rx = .{ NORTH }, .tx = .{ RAMP, SOUTH } } });
