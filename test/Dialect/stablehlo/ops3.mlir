// StableHLO as JAX prints it, round 3: convolution (pretty and generic forms,
// #stablehlo.conv dimension numbers), printed back the same.
// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s --mlir-print-op-generic | pyflame-opt - | filecheck %s
// RUN: pyflame-opt %s --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func public @conv
func.func public @conv(%x: tensor<2x6x6x3xf32>, %w: tensor<3x3x3x4xf32>, %g: tensor<2x6x6x4xf32>) -> (tensor<2x3x10x4xf32>, tensor<3x3x3x4xf32>) {
  // CHECK-NEXT: %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 0], [2, 1]], lhs_dilate = [1, 2], rhs_dilate = [1, 2], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x3x10x4xf32>
  // GENERIC: "stablehlo.convolution"(%{{.*}}, %{{.*}}) <{dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, window_strides = array<i64: 2, 1>, padding = dense<{{\[}}[1, 0], [2, 1]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 2>, rhs_dilation = array<i64: 1, 2>, window_reversal = array<i1: false, true>, batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}>
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 0], [2, 1]], lhs_dilate = [1, 2], rhs_dilate = [1, 2], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x3x10x4xf32>
  // CHECK-NEXT: %1 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x6x6x3xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x3x4xf32>
  %1 = "stablehlo.convolution"(%x, %g) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]>, feature_group_count = 1 : i64, padding = dense<1> : tensor<2x2xi64>}> : (tensor<2x6x6x3xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x3x4xf32>
  return %0, %1 : tensor<2x3x10x4xf32>, tensor<3x3x3x4xf32>
}
