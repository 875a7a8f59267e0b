// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse | filecheck %s
// Reductions: local reduce, then a combine along each axis a reduced dim was
// tiled over; mean scales by 1/count; min is -max(-x). 13x9 on 3x2 PEs: the
// last blocks are short.

module attributes {wse.grid = "3x2"} {
  func.func @main(%a: tensor<13x9xf32>) -> (tensor<9xf32>, tensor<13x1xf32>, tensor<f32>) {
    %0 = pyflame.mean %a {dims = array<i64: 0>, keepdim = false} : (tensor<13x9xf32>) -> tensor<9xf32>
    %1 = pyflame.min %a {dims = array<i64: 1>, keepdim = true} : (tensor<13x9xf32>) -> tensor<13x1xf32>
    %2 = pyflame.max %a {dims = array<i64: 0, 1>, keepdim = false} : (tensor<13x9xf32>) -> tensor<f32>
    func.return %0, %1, %2 : tensor<9xf32>, tensor<13x1xf32>, tensor<f32>
  }
}

// CHECK:      ^bb0(%[[A:.*]]: !wse.tensor<13x9xf32, #wse.layout<[y, x]>>):
// CHECK-NEXT:   %[[S:.*]] = wse.reduce "sum" %[[A]] {dims = array<i64: 0>, keepdim = false} : {{.*}} -> !wse.tensor<9xf32, #wse.layout<[x], y = sum>>
// CHECK-NEXT:   %[[C:.*]] = wse.combine "y" %[[S]] : {{.*}} -> !wse.tensor<9xf32, #wse.layout<[x], y = 0>>
// CHECK-NEXT:   %[[K:.*]] = wse.constant dense<0.0769{{.*}}> : tensor<f32>
// CHECK-NEXT:   %{{.*}} = wse.map "mul"(%[[C]], %[[K]])
// CHECK-NEXT:   %[[N:.*]] = wse.map "neg"(%[[A]])
// CHECK-NEXT:   %[[M:.*]] = wse.reduce "max" %[[N]] {dims = array<i64: 1>, keepdim = true} : {{.*}} -> !wse.tensor<13x1xf32, #wse.layout<[y, -], x = max>>
// CHECK-NEXT:   %[[MC:.*]] = wse.combine "x" %[[M]]
// CHECK-NEXT:   %{{.*}} = wse.map "neg"(%[[MC]])
// CHECK-NEXT:   %[[T:.*]] = wse.reduce "max" %[[A]] {dims = array<i64: 0, 1>, keepdim = false} : {{.*}} -> !wse.tensor<f32, #wse.layout<[], x = max, y = max>>
// CHECK-NEXT:   %[[TX:.*]] = wse.combine "x" %[[T]] : {{.*}} -> !wse.tensor<f32, #wse.layout<[], x = 0, y = max>>
// CHECK-NEXT:   %{{.*}} = wse.combine "y" %[[TX]] : {{.*}} -> !wse.tensor<f32, #wse.layout<[], x = 0, y = 0>>
