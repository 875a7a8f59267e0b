// select_and_scatter (max pool's gradient, as jax.grad prints it): per window
// offset a strided slice; the pick a running where (GE: the first largest
// stays); each offset's source values placed back by an interior pad and added.
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame | filecheck %s

// CHECK-LABEL: func.func public @main
func.func public @main(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>) -> tensor<4x4xf32> {
  // CHECK:      %[[V0:.*]] = pyflame.slice %x {start = array<i64: 0, 0>, limit = array<i64: 3, 3>, stride = array<i64: 2, 2>}
  // CHECK:      %[[V1:.*]] = pyflame.slice %x {start = array<i64: 0, 1>, limit = array<i64: 3, 4>, stride = array<i64: 2, 2>}
  // CHECK-NEXT: %[[KEEP:.*]] = pyflame.ge %[[V0]], %[[V1]]
  // CHECK-NEXT: %[[TAKE:.*]] = pyflame.logical_not %[[KEEP]]
  // CHECK-NEXT: %{{.*}} = pyflame.where %[[TAKE]], %[[V1]], %[[V0]]
  // CHECK:      pyflame.pad %{{.*}} {low = array<i64: 1, 1>, high = array<i64: 0, 0>, interior = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<4x4xf32>
  // CHECK-NOT:  stablehlo.
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %cst) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
