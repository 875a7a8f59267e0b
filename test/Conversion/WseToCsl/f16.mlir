// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// Half precision (issue #16): an f32 input narrowed to f16 (@fs2h), f16 maps
// with the f16 builtins on [n]f16 buffers (two elements per word in the memory plan),
// a matmul of f16
// tiles accumulated in f32 (@fmachs), and the f16 result widened for the host (@fh2s).

wse.program @main {width = 2, height = 1} {
^bb0(%a: !wse.tensor<4x6xf32, #wse.layout<[-, x], y = 0>>, %v: !wse.tensor<6xf16, #wse.layout<[x], y = 0>>):
  %h = wse.map "copy"(%a) : (!wse.tensor<4x6xf32, #wse.layout<[-, x], y = 0>>) -> !wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>
  %r = wse.map "relu"(%h) : (!wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>) -> !wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>
  %s = wse.map "add"(%r, %h) : (!wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>, !wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>) -> !wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>
  %p = wse.matmul %s, %v : (!wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>, !wse.tensor<6xf16, #wse.layout<[x], y = 0>>) -> !wse.tensor<4xf32, #wse.layout<[-], x = sum, y = 0>>
  %c = wse.combine "x" %p : !wse.tensor<4xf32, #wse.layout<[-], x = sum, y = 0>> -> !wse.tensor<4xf32, #wse.layout<[-], x = 0, y = 0>>
  %o = wse.map "copy"(%r) : (!wse.tensor<4x6xf16, #wse.layout<[-, x], y = 0>>) -> !wse.tensor<4x6xf32, #wse.layout<[-, x], y = 0>>
  wse.return %c, %o : !wse.tensor<4xf32, #wse.layout<[-], x = 0, y = 0>>, !wse.tensor<4x6xf32, #wse.layout<[-, x], y = 0>>
}

// CHECK:      var buf{{[0-9]+}} : [{{[0-9]+}}]f16 = @zeros([{{[0-9]+}}]f16);
// CHECK:      task main() void {
// CHECK:        @fs2h(
// CHECK:        @fmaxh({{.*}}, {{.*}}, {{.*}});
// CHECK:        @faddh(
// CHECK:        @fmachs(
// CHECK:        @fh2s(
