// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse | filecheck %s
// The same MLP, small, on 4x4 PEs: both layers as SUMMA, every tensor tiled
// over both axes, so the softmax runs on every PE. (With the panels' transfers
// overlapped the cycle model prefers SUMMA even here; the K-local alternative,
// x broadcast along the rows and w1 down the columns, then an all-gather of h,
// simulates 14% slower.)

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

// CHECK:      ^bb0(%[[X:.*]]: !wse.tensor<64x32xf32, #wse.layout<[y, x]>>, %[[W1:.*]]: !wse.tensor<32x16xf32, #wse.layout<[y, x]>>, %[[W2:.*]]: !wse.tensor<16x10xf32, #wse.layout<[y, x]>>):
// CHECK-NEXT:   %[[H:.*]] = wse.summa %[[X]], %[[W1]] : {{.*}} -> !wse.tensor<64x16xf32, #wse.layout<[y, x]>>
// CHECK-NEXT:   %[[R:.*]] = wse.map "relu"(%[[H]])
// CHECK-NEXT:   %[[Z:.*]] = wse.summa %[[R]], %[[W2]] : {{.*}} -> !wse.tensor<64x10xf32, #wse.layout<[y, x]>>
// CHECK-NEXT:   wse.reduce "max" %[[Z]] {dims = array<i64: 1>, keepdim = true} : {{.*}} -> !wse.tensor<64x1xf32, #wse.layout<[y, -], x = max>>
// CHECK-NEXT:   wse.combine "x"
// CHECK-NEXT:   wse.broadcast "x"
// CHECK-NEXT:   wse.map "sub"
// CHECK-NEXT:   wse.map "exp"
// CHECK:        wse.map "log"
// CHECK:        wse.return
