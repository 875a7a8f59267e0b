// stablehlo.convolution as JAX prints it (lax.conv_general_dilated, NHWC/HWIO):
// the input to (N, C, H, W), one strided slice per kernel offset stacked as
// columns, one matmul with the kernel as (O, I*K), the result back to NHWC.
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame | filecheck %s

// CHECK-LABEL: func.func public @main
func.func public @main(%arg0: tensor<1x4x4x2xf32>, %arg1: tensor<2x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  // CHECK-NEXT: %0 = pyflame.permute %arg0 {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: %1 = pyflame.permute %arg1 {perm = array<i64: 3, 2, 0, 1>} : (tensor<2x2x2x3xf32>) -> tensor<3x2x2x2xf32>
  // CHECK-NEXT: %2 = pyflame.slice %0 {start = array<i64: 0, 0, 0, 0>, limit = array<i64: 1, 2, 3, 3>, stride = array<i64: 1, 1, 2, 2>}
  // CHECK:      %8 = pyflame.slice %0 {start = array<i64: 0, 0, 1, 1>, limit = array<i64: 1, 2, 4, 4>, stride = array<i64: 1, 1, 2, 2>}
  // CHECK:      %10 = pyflame.concat %3, %5, %7, %9 {dim = 2 : i64} : {{.*}} -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: %11 = pyflame.permute %10 {perm = array<i64: 1, 2, 0, 3>} : (tensor<1x2x4x4xf32>) -> tensor<2x4x1x4xf32>
  // CHECK-NEXT: %12 = pyflame.reshape %11 {shape = array<i64: 8, 4>}
  // CHECK-NEXT: %13 = pyflame.reshape %1 {shape = array<i64: 3, 8>}
  // CHECK-NEXT: %14 = pyflame.matmul %13, %12 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %15 = pyflame.reshape %14 {shape = array<i64: 3, 1, 2, 2>}
  // CHECK-NEXT: %16 = pyflame.permute %15 {perm = array<i64: 1, 2, 3, 0>} : (tensor<3x1x2x2xf32>) -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: func.return %16
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x4x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}
