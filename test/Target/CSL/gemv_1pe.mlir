// RUN: pyflame-opt %S/../../fixtures/csl/gemv_1pe.mlir -t csl | filecheck %s
// GEMV on one PE: one @fmacs per column of A, walking the columns with @increment_dsd_offset.

// CHECK:      // FILE: pe_program
// CHECK:      var A : [(M * N)]f32 = @constants([(M * N)]f32, 0.0);
// CHECK:      fn compute() void {
// CHECK:        .tensor_access = | d0 | { M } -> y[ d0 ]
// CHECK:        @fmovs(y_dsd, b_dsd);
// CHECK:        for(@range(i32, 0, @as(i32, N), 1)) |j| {
// CHECK-NEXT:     const A_j : mem1d_dsd = @increment_dsd_offset(A_col, (@as(i16, j) * M), f32);
// CHECK-NEXT:     @fmacs(y_dsd, y_dsd, A_j, (x[j]));
// CHECK-NEXT:   }
// CHECK-NEXT:   sys_mod.unblock_cmd_stream();
// CHECK:      // FILE: layout
// CHECK:      @set_tile_code(0, 0, "pe_program.csl", tile_params);
