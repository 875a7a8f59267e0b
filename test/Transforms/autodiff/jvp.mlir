// Forward mode, and transforms of functions that contain transforms.
// RUN: pyflame-opt %s --split-input-file -p pyflame-autodiff,cse,dce | filecheck %s

// jvp of tanh: t * (1 - z*z)
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pyflame.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<3xf32> {
  %y, %ty = pyflame.jvp @f(%x) tangents(%t) {wrt = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %ty : tensor<3xf32>
}
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[Z:.*]] = pyflame.tanh %x
// CHECK-NEXT:    %[[ONE:.*]] = pyflame.constant {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZZ:.*]] = pyflame.mul %[[Z]], %[[Z]]
// CHECK-NEXT:    %[[D:.*]] = pyflame.sub %[[ONE]], %[[ZZ]]
// CHECK-NEXT:    %[[T:.*]] = pyflame.mul %t, %[[D]]
// CHECK-NEXT:    func.return %[[T]]

// -----

// grad of grad: the inner vjp is expanded first, then differentiated again.
// d/dx (d/dx sum(x*x*x)) . 1 = 6x
func.func private @cube(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = pyflame.mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = pyflame.mul %0, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 0>, keepdim = false} : (tensor<2xf32>) -> tensor<f32>
  func.return %2 : tensor<f32>
}
func.func private @grad_sum(%x: tensor<2xf32>) -> tensor<f32> {
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %y, %g = pyflame.vjp @cube(%x) cotangents(%one) {wrt = array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>)
  %s = pyflame.sum %g {dims = array<i64: 0>, keepdim = false} : (tensor<2xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @main(%x: tensor<2xf32>, %c: tensor<f32>) -> tensor<2xf32> {
  %y, %h = pyflame.vjp @grad_sum(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> (tensor<f32>, tensor<2xf32>)
  func.return %h : tensor<2xf32>
}
// CHECK-NOT: pyflame.vjp
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK: func.return
