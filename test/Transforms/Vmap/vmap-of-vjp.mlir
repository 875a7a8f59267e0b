// Per-example gradients: the vjp inside the mapped function is expanded
// first, then the vmap batches its derivative code.
// RUN: pyflame-opt %s -p pyflame-vmap,cse,dce | filecheck %s

func.func private @loss(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %0 = pyflame.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 0>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
func.func private @g(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %c = pyflame.constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %l, %dw = pyflame.vjp @loss(%w, %x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
  func.return %dw : tensor<3xf32>
}
func.func @main(%w: tensor<3xf32>, %xs: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %g = pyflame.vmap @g(%w, %xs) {in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK-NOT: pyflame.vjp
// CHECK-NOT: pyflame.vmap
// CHECK-LABEL: func.func @main
// CHECK:         %[[G:.*]] = pyflame.mul %{{.*}}, %xs : (tensor<{{.*}}xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         func.return %[[G]] : tensor<2x3xf32>
