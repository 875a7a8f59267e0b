// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// GEMV over the valid K of each tile: one @fmacs per column of A, the scalar
// x[k] read from memory (the hand-written fixture's inner step), and a chain.

wse.program @main {width = 3, height = 2} {
^bb0(%a: !wse.tensor<16x11xf32, #wse.layout<[y, x]>>, %x0: !wse.tensor<11xf32, #wse.layout<[x], y = 0>>):
  %x = wse.broadcast "y" %x0 : !wse.tensor<11xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<11xf32, #wse.layout<[x], y = *>>
  %p = wse.matmul %a, %x : (!wse.tensor<16x11xf32, #wse.layout<[y, x]>>, !wse.tensor<11xf32, #wse.layout<[x], y = *>>) -> !wse.tensor<16xf32, #wse.layout<[y], x = sum>>
  %y = wse.combine "x" %p : !wse.tensor<16xf32, #wse.layout<[y], x = sum>> -> !wse.tensor<16xf32, #wse.layout<[y], x = 0>>
  wse.return %y : !wse.tensor<16xf32, #wse.layout<[y], x = 0>>
}

// CHECK:      const valid_x11 : i16 = if ({{.*}}) {{.*}} else 4;
// CHECK:      task main() void {
// CHECK:        @fmovs([[C:.*]], 0.0);
// CHECK:        .tensor_access = | d0 | { 8 } -> buf0[ (d0 * 4) ]
// CHECK:        for(@range(i16, 0, valid_x11, 1)) |[[K:.*]]| {
// CHECK-NEXT:     const [[AK:.*]] : mem1d_dsd = @increment_dsd_offset({{.*}}, [[K]], f32);
// CHECK-NEXT:     @fmacs([[C]], [[C]], [[AK]], (buf1[@as(i32, [[K]])]));
