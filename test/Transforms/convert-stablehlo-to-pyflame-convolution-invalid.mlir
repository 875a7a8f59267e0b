// A convolution whose declared result is not the spec's: refused at the op.
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// CHECK: convert-stablehlo-to-pyflame-convolution-invalid.mlir:[[# @LINE + 2]]:3: error: 'stablehlo.convolution' gives [1, 2, 2, 3] by the spec, the text declares [1, 3, 2, 3]
func.func public @main(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x3x2x3xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x3x2x3xf32>
  return %0 : tensor<1x3x2x3xf32>
}
