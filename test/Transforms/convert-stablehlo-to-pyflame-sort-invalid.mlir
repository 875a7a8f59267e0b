// A sort whose comparator is not JAX's (a float LT that leaves NaN unordered):
// refused at the op.
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// CHECK: convert-stablehlo-to-pyflame-sort-invalid.mlir:[[# @LINE + 2]]:3: error: 'stablehlo.sort' whose comparator is not JAX's
func.func public @main(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
