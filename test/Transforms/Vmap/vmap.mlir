// Batching a function: matmul with an unbatched weight, broadcasting, a reduction.
// RUN: pyflame-opt %s -p pyflame-vmap | filecheck %s

func.func private @f(%x: tensor<4xf32>, %w: tensor<4x3xf32>) -> tensor<f32> {
  %0 = pyflame.matmul %x, %w : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  %1 = pyflame.tanh %0 : (tensor<3xf32>) -> tensor<3xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 0>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
  func.return %2 : tensor<f32>
}
func.func @main(%xs: tensor<4x5xf32>, %w: tensor<4x3xf32>) -> tensor<5xf32> {
  %y = pyflame.vmap @f(%xs, %w) {in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5xf32>
  func.return %y : tensor<5xf32>
}

// CHECK-NOT: pyflame.vmap
// CHECK-NOT: func.func private @f
// CHECK-LABEL: func.func @main
// CHECK:         %[[T:.*]] = pyflame.permute %xs {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
// CHECK:         %[[M:.*]] = pyflame.matmul %[[T]], %w : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[H:.*]] = pyflame.tanh %[[M]] : (tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK:         %[[S:.*]] = pyflame.sum %[[H]] {dims = array<i64: 1>, keepdim = false} : (tensor<5x3xf32>) -> tensor<5xf32>
// CHECK:         func.return %[[S]] : tensor<5xf32>
