// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// Elementwise code: one DSD builtin over the whole tile when the operands match,
// a loop of DSD ops over the rows for a broadcast operand, an immediate for a
// splat, a scalar loop with the math library where no builtin exists.

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<8x6xf32, #wse.layout<[y, x]>>, %b: !wse.tensor<8x6xf32, #wse.layout<[y, x]>>, %r: !wse.tensor<6xf32, #wse.layout<[x], y = 0>>):
  %rb = wse.broadcast "y" %r : !wse.tensor<6xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<6xf32, #wse.layout<[x], y = *>>
  %s = wse.map "add"(%a, %b) : (!wse.tensor<8x6xf32, #wse.layout<[y, x]>>, !wse.tensor<8x6xf32, #wse.layout<[y, x]>>) -> !wse.tensor<8x6xf32, #wse.layout<[y, x]>>
  %t = wse.map "mul"(%s, %rb) : (!wse.tensor<8x6xf32, #wse.layout<[y, x]>>, !wse.tensor<6xf32, #wse.layout<[x], y = *>>) -> !wse.tensor<8x6xf32, #wse.layout<[y, x]>>
  %h = wse.constant dense<5.000000e-01> : tensor<f32> : !wse.tensor<f32, #wse.layout<[], x = *, y = *>>
  %u = wse.map "sub"(%h, %t) : (!wse.tensor<f32, #wse.layout<[], x = *, y = *>>, !wse.tensor<8x6xf32, #wse.layout<[y, x]>>) -> !wse.tensor<8x6xf32, #wse.layout<[y, x]>>
  %e = wse.map "exp"(%u) : (!wse.tensor<8x6xf32, #wse.layout<[y, x]>>) -> !wse.tensor<8x6xf32, #wse.layout<[y, x]>>
  wse.return %e : !wse.tensor<8x6xf32, #wse.layout<[y, x]>>
}

// CHECK:      const math_lib : imported_module = @import_module("<math>");
// CHECK:      var buf0 : [12]f32 = @zeros([12]f32);
// CHECK:      task main() void {
// CHECK:        .tensor_access = | d0 | { 12 } -> buf{{[0-9]}}[ d0 ]
// CHECK:        @fadds([[D:.*]], [[A:.*]], [[B:.*]]);
//   the row vector: the tile is 4x3, so one @fmuls per column (stride 3) by r[j]
// CHECK:        .tensor_access = | d0 | { 4 } -> buf{{[0-9]}}[ (d0 * 3) ]
// CHECK:        for(@range(i16, 0, 3, 1)) |[[J:.*]]| {
// CHECK-NEXT:     const [[S:.*]] : mem1d_dsd = @increment_dsd_offset({{.*}}, [[J]], f32);
// CHECK-NEXT:     const [[T:.*]] : mem1d_dsd = @increment_dsd_offset({{.*}}, [[J]], f32);
// CHECK-NEXT:     @fmuls([[T]], [[S]], (buf{{[0-9]}}[@as(i32, [[J]])]));
// CHECK:        @fsubs({{.*}}, 0.5, {{.*}});
//   exp: a scalar loop over the valid rows and columns with math_lib
// CHECK:        for(@range(i16, 0, 4, 1))
// CHECK:          for(@range(i16, 0, 3, 1))
// CHECK-NEXT:         const [[E:.*]] : f32 = math_lib.exp_f32((buf3[@as(i32, ((v{{.*}} * 3) + v{{.*}}))]));
// CHECK-NEXT:         buf3[@as(i32, ((v{{.*}} * 3) + v{{.*}}))] = [[E]];
// CHECK:        sys_mod.unblock_cmd_stream();
