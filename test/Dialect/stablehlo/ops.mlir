// StableHLO as JAX prints it (jax.jit(f).lower(...).as_text()): every op form
// dialects/stablehlo.py reads, printed back the same; the generic form
// (--mlir-print-op-generic) reads back to the same ops.
// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s --mlir-print-op-generic | pyflame-opt - | filecheck %s
// RUN: pyflame-opt %s --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  // CHECK-LABEL: func.func public @main
  func.func public @main(%arg0: tensor<4x3xf32>, %arg1: tensor<3x5xf32>, %i: tensor<i32>) -> (tensor<4x5xf32> {jax.result_info = "result"}) {
    // CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    // CHECK-NEXT: %cst = stablehlo.constant dense<0xff800000> : tensor<f32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    // CHECK-NEXT: %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
    // CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<4xf32>) -> tensor<4x5xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<4xf32>) -> tensor<4x5xf32>
    // CHECK-NEXT: %3 = stablehlo.subtract %0, %2 : tensor<4x5xf32>
    %3 = stablehlo.subtract %0, %2 : tensor<4x5xf32>
    // CHECK-NEXT: %4 = stablehlo.compare GT, %3, %0, FLOAT : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
    %4 = stablehlo.compare  GT, %3, %0,  FLOAT : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
    // CHECK-NEXT: %5 = stablehlo.select %4, %3, %0 : tensor<4x5xi1>, tensor<4x5xf32>
    %5 = stablehlo.select %4, %3, %0 : tensor<4x5xi1>, tensor<4x5xf32>
    // CHECK-NEXT: %6 = stablehlo.slice %5 [0:4:2, 1:5] : (tensor<4x5xf32>) -> tensor<2x4xf32>
    %6 = stablehlo.slice %5 [0:4:2, 1:5] : (tensor<4x5xf32>) -> tensor<2x4xf32>
    // CHECK-NEXT: %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
    // CHECK-NEXT: %8 = stablehlo.dynamic_slice %5, %i, %i, sizes = [4, 2] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<4x2xf32>
    %8 = stablehlo.dynamic_slice %5, %i, %i, sizes = [4, 2] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<4x2xf32>
    // CHECK-NEXT: %9 = stablehlo.concatenate %7, %8, dim = 1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
    %9 = stablehlo.concatenate %7, %8, dim = 1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
    // CHECK-NEXT: %10 = stablehlo.iota dim = 1 : tensor<4x1xi32>
    %10 = stablehlo.iota dim = 1 : tensor<4x1xi32>
    // CHECK-NEXT: %11 = stablehlo.convert %10 : (tensor<4x1xi32>) -> tensor<4x1xf32>
    %11 = stablehlo.convert %10 : (tensor<4x1xi32>) -> tensor<4x1xf32>
    // CHECK-NEXT: %12 = stablehlo.pad %11, %cst, low = [0, 1], high = [0, 3], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x5xf32>
    %12 = stablehlo.pad %11, %cst, low = [0, 1], high = [0, 3], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x5xf32>
    // CHECK-NEXT: %13 = stablehlo.reshape %9 : (tensor<4x4xf32>) -> tensor<16xf32>
    %13 = stablehlo.reshape %9 : (tensor<4x4xf32>) -> tensor<16xf32>
    // CHECK-NEXT: %14 = chlo.erf %13 : tensor<16xf32> -> tensor<16xf32>
    %14 = chlo.erf %13 : tensor<16xf32> -> tensor<16xf32>
    // CHECK-NEXT: %15 = stablehlo.reverse %14, dims = [0] : tensor<16xf32>
    %15 = stablehlo.reverse %14, dims = [0] : tensor<16xf32>
    // CHECK-NEXT: %16 = stablehlo.reduce(%15 init: %cst) across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    // CHECK-NEXT:  reducer(%a: tensor<f32>, %b: tensor<f32>) {
    // CHECK-NEXT:   %17 = stablehlo.add %b, %a : tensor<f32>
    // CHECK-NEXT:   stablehlo.return %17 : tensor<f32>
    // CHECK-NEXT: }
    %16 = stablehlo.reduce(%15 init: %cst) across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %17 = stablehlo.add %b, %a : tensor<f32>
      stablehlo.return %17 : tensor<f32>
    }
    %18 = stablehlo.broadcast_in_dim %16, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %19 = stablehlo.add %12, %18 : tensor<4x5xf32>
    // CHECK: %20 = func.call @helper(%19) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %20 = call @helper(%19) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    return %20 : tensor<4x5xf32>
  }
  func.func private @helper(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.logistic %arg0 : tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
}

// GENERIC: "stablehlo.dot_general"(%{{.*}}, %{{.*}}) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}>
// GENERIC: "stablehlo.compare"(%{{.*}}, %{{.*}}) <{comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>}>
