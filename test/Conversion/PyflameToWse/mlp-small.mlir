// RUN: pyflame-opt %s -t wse | filecheck %s
// The same MLP, small, on 4x4 PEs. Here the cycle model prefers K kept whole:
// x is broadcast along the rows and w1 down the columns, h comes out tiled
// over both axes, and h is all-gathered along the rows for the second layer,
// so that the softmax still runs on every PE.

module attributes {wse.grid = "4x4"} {
  func.func @main(%x: tensor<64x32xf32>, %w1: tensor<32x16xf32>, %w2: tensor<16x10xf32>) -> tensor<f32> {
    %0 = pyflame.matmul %x, %w1 : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %1 = pyflame.relu %0 : (tensor<64x16xf32>) -> tensor<64x16xf32>
    %2 = pyflame.matmul %1, %w2 : (tensor<64x16xf32>, tensor<16x10xf32>) -> tensor<64x10xf32>
    %3 = pyflame.log_softmax %2 {dim = 1 : i64} : (tensor<64x10xf32>) -> tensor<64x10xf32>
    %4 = pyflame.sum %3 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<64x10xf32>) -> tensor<f32>
    func.return %4 : tensor<f32>
  }
}

// CHECK:      ^bb0(%[[X:.*]]: !wse.tensor<64x32xf32, #wse.layout<[y, -], x = 0>>, %[[W1:.*]]: !wse.tensor<32x16xf32, #wse.layout<[-, x], y = 0>>, %[[W2:.*]]: !wse.tensor<16x10xf32, #wse.layout<[-, x], y = 0>>):
// CHECK-NEXT:   %[[XB:.*]] = wse.broadcast "x" %[[X]] : {{.*}} -> !wse.tensor<64x32xf32, #wse.layout<[y, -], x = *>>
// CHECK-NEXT:   %[[WB:.*]] = wse.broadcast "y" %[[W1]] : {{.*}} -> !wse.tensor<32x16xf32, #wse.layout<[-, x], y = *>>
// CHECK-NEXT:   %[[H:.*]] = wse.matmul %[[XB]], %[[WB]] : {{.*}} -> !wse.tensor<64x16xf32, #wse.layout<[y, x]>>
// CHECK-NEXT:   %[[R:.*]] = wse.map "relu"(%[[H]])
// CHECK-NEXT:   %[[G:.*]] = wse.gather "x" %[[R]] : {{.*}} -> !wse.tensor<64x16xf32, #wse.layout<[y, -], x = *>>
// CHECK-NEXT:   %[[W2B:.*]] = wse.broadcast "y" %[[W2]]
// CHECK-NEXT:   %{{.*}} = wse.matmul %[[G]], %[[W2B]] : {{.*}} -> !wse.tensor<64x10xf32, #wse.layout<[y, x]>>
// CHECK:        wse.map "log"
// CHECK:        wse.return
