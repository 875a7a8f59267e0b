// convert-pyflame-to-wse turns x / c (c a splat) into x * (1/c); with c = 0
// that divided by zero in the planner (an internal error). x / +-0 is
// x * +-inf for every x (0 and NaN give NaN), so the reciprocal is +-inf.
// RUN: pyflame-opt %s -p convert-pyflame-to-wse 2>&1 | filecheck %s
// CHECK-NOT: internal error
// CHECK: wse.
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.div %x, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}
