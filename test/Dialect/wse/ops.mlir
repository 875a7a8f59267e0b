// Every wse op prints and parses back, in the custom and the generic form.
// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s | pyflame-opt | filecheck %s
// RUN: pyflame-opt %s --print-op-generic | pyflame-opt | filecheck %s
// RUN: pyflame-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// GENERIC: "wse.program"() <{{.*}}sym_name = "main"
// GENERIC: "wse.map"(%{{.*}}, %{{.*}}) <{fn = "add"}>

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>, %v: !wse.tensor<4xf32, #wse.layout<[x], y = 0>>, %m: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  %c = wse.constant dense<5.000000e-01> : tensor<f32> : !wse.tensor<f32, #wse.layout<[], x = *, y = *>>
  %s = wse.map "add"(%a, %m) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  %h = wse.map "mul"(%c, %s) : (!wse.tensor<f32, #wse.layout<[], x = *, y = *>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  %k = wse.map "gt"(%h, %a) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xi1, #wse.layout<[y, x]>>
  %r = wse.reduce "sum" %h {dims = array<i64: 1>, keepdim = false} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
  %y = wse.combine "x" %r : !wse.tensor<4xf32, #wse.layout<[y], x = sum>> -> !wse.tensor<4xf32, #wse.layout<[y], x = 0>>
  %vb = wse.broadcast "y" %v : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = *>>
  %g = wse.gather "x" %v : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[-], x = *, y = 0>>
  %sc = wse.scatter "x" %g {dim = 0 : i64} : !wse.tensor<4xf32, #wse.layout<[-], x = *, y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
  %sh = wse.shift "x" %a {distance = 1 : i64} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  %t = wse.transpose %sh : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[x, y]>>
  %rs = wse.reshape %y : !wse.tensor<4xf32, #wse.layout<[y], x = 0>> -> !wse.tensor<4x1xf32, #wse.layout<[y, -], x = 0>>
  %p = wse.matmul %a, %vb : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4xf32, #wse.layout<[x], y = *>>) -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
  %q = wse.summa %a, %m : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %q, %t, %rs, %sc, %k : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[x, y]>>, !wse.tensor<4x1xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<4xf32, #wse.layout<[x], y = 0>>, !wse.tensor<4x4xi1, #wse.layout<[y, x]>>
}

// CHECK:      wse.program @main {width = 2, height = 2} {
// CHECK-NEXT: ^bb{{[0-9]+}}(%{{[a-z0-9_]+}}: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>, %{{[a-z0-9_]+}}: !wse.tensor<4xf32, #wse.layout<[x], y = 0>>, %{{[a-z0-9_]+}}: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.constant dense<5.000000e-01> : tensor<f32> : !wse.tensor<f32, #wse.layout<[], x = *, y = *>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.map "add"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.map "mul"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (!wse.tensor<f32, #wse.layout<[], x = *, y = *>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.map "gt"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xi1, #wse.layout<[y, x]>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.reduce "sum" %{{[a-z0-9_]+}} {dims = array<i64: 1>, keepdim = false} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.combine "x" %{{[a-z0-9_]+}} : !wse.tensor<4xf32, #wse.layout<[y], x = sum>> -> !wse.tensor<4xf32, #wse.layout<[y], x = 0>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.broadcast "y" %{{[a-z0-9_]+}} : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = *>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.gather "x" %{{[a-z0-9_]+}} : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[-], x = *, y = 0>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.scatter "x" %{{[a-z0-9_]+}} {dim = 0 : i64} : !wse.tensor<4xf32, #wse.layout<[-], x = *, y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.shift "x" %{{[a-z0-9_]+}} {distance = 1 : i64} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.transpose %{{[a-z0-9_]+}} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[x, y]>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.reshape %{{[a-z0-9_]+}} : !wse.tensor<4xf32, #wse.layout<[y], x = 0>> -> !wse.tensor<4x1xf32, #wse.layout<[y, -], x = 0>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4xf32, #wse.layout<[x], y = *>>) -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
// CHECK-NEXT: %{{[a-z0-9_]+}} = wse.summa %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
// CHECK-NEXT: wse.return %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[x, y]>>, !wse.tensor<4x1xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<4xf32, #wse.layout<[x], y = 0>>, !wse.tensor<4x4xi1, #wse.layout<[y, x]>>
