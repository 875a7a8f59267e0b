// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse | filecheck %s
// GEMV y = A x + b on 4x4 PEs: A tiled over rows and columns, x placed on row 0
// and multicast down the columns, partial sums combined along the rows (to
// column 0), where b is placed.

module attributes {wse.grid = "4x4"} {
  func.func @main(%A: tensor<128x128xf32>, %x: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<128xf32> {
    %0 = pyflame.matmul %A, %x : (tensor<128x128xf32>, tensor<128xf32>) -> tensor<128xf32>
    %1 = pyflame.add %0, %b : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
    func.return %1 : tensor<128xf32>
  }
}

// CHECK:      wse.program @main {width = 4, height = 4} {
// CHECK-NEXT: ^bb0(%[[A:.*]]: !wse.tensor<128x128xf32, #wse.layout<[y, x]>>, %[[X:.*]]: !wse.tensor<128xf32, #wse.layout<[x], y = 0>>, %[[B:.*]]: !wse.tensor<128xf32, #wse.layout<[y], x = 0>>):
// CHECK-NEXT:   %[[XB:.*]] = wse.broadcast "y" %[[X]] : {{.*}} -> !wse.tensor<128xf32, #wse.layout<[x], y = *>>
// CHECK-NEXT:   %[[P:.*]] = wse.matmul %[[A]], %[[XB]] : {{.*}} -> !wse.tensor<128xf32, #wse.layout<[y], x = sum>>
// CHECK-NEXT:   %[[Y:.*]] = wse.combine "x" %[[P]] : {{.*}} -> !wse.tensor<128xf32, #wse.layout<[y], x = 0>>
// CHECK-NEXT:   %[[R:.*]] = wse.map "add"(%[[Y]], %[[B]])
// CHECK-NEXT:   wse.return %[[R]] : !wse.tensor<128xf32, #wse.layout<[y], x = 0>>
