// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// A batched matmul laid over the grid (issue 16): [4*2, 3] x [4*3, 2], the batch rows
// over y (two batch elements per PE): each PE multiplies its own two, one after the
// other, at their offsets in the tiles (A's block 1 six elements in, B's three rows
// in, C's four elements in); no fabric traffic.

wse.program @main {width = 1, height = 2} {
^bb0(%a: !wse.tensor<8x3xf32, #wse.layout<[y, -], x = 0>>, %b: !wse.tensor<12x2xf32, #wse.layout<[y, -], x = 0>>):
  %c = wse.batch_matmul %a, %b {batch = 4 : i64} : (!wse.tensor<8x3xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<12x2xf32, #wse.layout<[y, -], x = 0>>) -> !wse.tensor<8x2xf32, #wse.layout<[y, -], x = 0>>
  wse.return %c : !wse.tensor<8x2xf32, #wse.layout<[y, -], x = 0>>
}

// CHECK:      task main() void {
// CHECK:        .tensor_access = | d0 | { 4 } -> [[C:buf[0-9]+]][ d0 ]
// CHECK:        .tensor_access = | d0 | { 2 } -> [[A:buf[0-9]+]][ (d0 * 3) ]
// CHECK:        for(@range(i16, 0, 3, 1)) |[[K:.*]]| {
// CHECK-NEXT:     const [[AK:.*]] : mem1d_dsd = @increment_dsd_offset({{.*}}, [[K]], f32);
// CHECK-NEXT:     @fmacs({{.*}}, {{.*}}, [[AK]], ([[B:buf[0-9]+]][@as(i32, ([[K]] * 2))]));
// CHECK:        .tensor_access = | d0 | { 4 } -> [[C]][ (d0 + 4) ]
// CHECK:        for(@range(i16, 0, 3, 1)) |[[K2:.*]]| {
// CHECK-NEXT:     const [[AK2:.*]] : mem1d_dsd = @increment_dsd_offset({{.*}}, ([[K2]] + 6), f32);
// CHECK-NEXT:     @fmacs({{.*}}, {{.*}}, [[AK2]], ([[B]][@as(i32, (([[K2]] + 3) * 2))]));
// CHECK-NOT:    fabout_dsd
// CHECK:        sys_mod.unblock_cmd_stream();
