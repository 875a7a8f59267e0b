// convert-stablehlo-to-pyflame refuses, at the op, what no pyflame op computes.
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// CHECK: convert-stablehlo-to-pyflame-invalid.mlir:[[# @LINE + 2]]:3: error: 'stablehlo.compare' compares float32 tensors as TOTALORDER
func.func public @totalorder(%a: tensor<4xf32>) -> tensor<4xi1> {
  %0 = stablehlo.compare LT, %a, %a, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
