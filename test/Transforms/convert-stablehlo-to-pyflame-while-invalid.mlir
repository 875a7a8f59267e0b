// A while whose condition reads data has no pyflame op: the pass refuses it at
// the op (pf.load_mlir runs it as lax.while_loop when the function is called).
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// CHECK: convert-stablehlo-to-pyflame-while-invalid.mlir:[[# @LINE + 3]]:3: error: 'stablehlo.while' is not supported unless it counts
func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<1.000000e+01> : tensor<f32>
  %0 = stablehlo.while(%iterArg = %arg0) : tensor<3xf32>
  cond {
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%iterArg init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.compare LT, %1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %1 = stablehlo.add %iterArg, %iterArg : tensor<3xf32>
    stablehlo.return %1 : tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}
