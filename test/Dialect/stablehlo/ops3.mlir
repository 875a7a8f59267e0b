// StableHLO as JAX prints it, round 3: convolution (pretty and generic forms,
// #stablehlo.conv dimension numbers), select_and_scatter, printed back the same.
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

// CHECK-LABEL: func.func public @pool_grad
func.func public @pool_grad(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  // CHECK: %0 = "stablehlo.select_and_scatter"(%x, %s, %cst) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
  // CHECK-NEXT:   %[[C:.*]] = stablehlo.compare GE, %[[A]], %[[B]], FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  // CHECK-NEXT:   stablehlo.return %[[C]] : tensor<i1>
  // CHECK-NEXT: }, {
  // CHECK:        stablehlo.add %{{.*}}, %{{.*}} : tensor<f32>
  // CHECK:      }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  // GENERIC: "stablehlo.select_and_scatter"
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

// CHECK-LABEL: func.func public @sorts
func.func public @sorts(%x: tensor<6x3xf32>, %i: tensor<6x3xi32>) -> (tensor<6x3xi32>, tensor<6x2xf32>, tensor<6x2xi32>) {
  // CHECK: %0, %1 = "stablehlo.sort"(%x, %i) <{dimension = 1 : i64, is_stable = true}> ({
  // CHECK:   stablehlo.compare LT, %{{.*}}, %{{.*}}, TOTALORDER
  // CHECK: }) : (tensor<6x3xf32>, tensor<6x3xi32>) -> (tensor<6x3xf32>, tensor<6x3xi32>)
  // GENERIC: "stablehlo.sort"
  %0:2 = "stablehlo.sort"(%x, %i) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<6x3xf32>, tensor<6x3xi32>) -> (tensor<6x3xf32>, tensor<6x3xi32>)
  // CHECK: %values, %indices = chlo.top_k(%x, k = 2) : tensor<6x3xf32> -> (tensor<6x2xf32>, tensor<6x2xi32>)
  // GENERIC: "chlo.top_k"(%{{.*}}) <{k = 2 : i64}> : (tensor<6x3xf32>) -> (tensor<6x2xf32>, tensor<6x2xi32>)
  %values, %indices = chlo.top_k(%x, k = 2) : tensor<6x3xf32> -> (tensor<6x2xf32>, tensor<6x2xi32>)
  return %0#1, %values, %indices : tensor<6x3xi32>, tensor<6x2xf32>, tensor<6x2xi32>
}

// CHECK-LABEL: func.func public @bits
func.func public @bits(%a: tensor<4xi32>, %x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xcomplex<f32>>) {
  // CHECK-NEXT: %0 = stablehlo.shift_right_logical %a, %a : tensor<4xi32>
  %0 = stablehlo.shift_right_logical %a, %a : tensor<4xi32>
  // CHECK-NEXT: %1 = stablehlo.popcnt %0 : tensor<4xi32>
  %1 = stablehlo.popcnt %0 : tensor<4xi32>
  // CHECK-NEXT: %2 = stablehlo.reduce_precision %x, format = e5m10 : tensor<4xf32>
  // GENERIC: "stablehlo.reduce_precision"(%{{.*}}) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.reduce_precision %x, format = e5m10 : tensor<4xf32>
  // CHECK-NEXT: %3 = stablehlo.complex %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  %3 = stablehlo.complex %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xcomplex<f32>>
}

// CHECK-LABEL: func.func private @cholesky
func.func private @cholesky(%arg0: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {
  // CHECK-NEXT: %0, %1 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, j=3, k=3, l=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  // GENERIC: "stablehlo.custom_call"(%{{.*}}) <{call_target_name = "lapack_spotrf_ffi"}>
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=3, j=3, k=3, l=3}, custom>} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}
