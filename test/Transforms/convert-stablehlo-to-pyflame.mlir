// convert-stablehlo-to-pyflame: each StableHLO op as the pyflame ops that
// compute it (dot_general: permute/reshape/matmul; broadcast_in_dim:
// reshape/broadcast_to; reduce: the reduction, combined with a non-identity
// init); what it cannot convert is an error at the op
// (convert-stablehlo-to-pyflame-invalid.mlir).
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame --split-input-file | filecheck %s

// CHECK-LABEL: func.func public @mlp
// CHECK-NEXT:    %0 = pyflame.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %1 = pyflame.reshape %b {shape = array<i64: 1, 5>} : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %2 = pyflame.broadcast_to %1 {shape = array<i64: 4, 5>} : (tensor<1x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %3 = pyflame.add %0, %2 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %4 = pyflame.tanh %3 : (tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %cst = pyflame.constant {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %5 = pyflame.sum %4 {dims = array<i64: 1>, keepdim = false} : (tensor<4x5xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %one = pyflame.constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %6 = pyflame.max %4 {dims = array<i64: 1>, keepdim = false} : (tensor<4x5xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %7 = pyflame.maximum %6, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %5, %7 : tensor<4xf32>, tensor<4xf32>
func.func public @mlp(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<5xf32>) -> tensor<4x5xf32>
  %2 = stablehlo.add %0, %1 : tensor<4x5xf32>
  %3 = stablehlo.tanh %2 : tensor<4x5xf32>
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %5 = stablehlo.reduce(%3 init: %one) applies stablehlo.maximum across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
  return %4, %5 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func public @batched
// CHECK-NEXT:    %0 = pyflame.permute %b {perm = array<i64: 0, 2, 1>} : (tensor<2x5x3xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %1 = pyflame.matmul %a, %0 : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
// CHECK-NEXT:    func.return %1
func.func public @batched(%a: tensor<2x4x3xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x4x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x4x3xf32>, tensor<2x5x3xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// scatter of set (x.at[i].set): a stable sort of the slots, the last update of
// each slot gathered into it, the operand elsewhere
// CHECK-LABEL: func.func public @set
// CHECK:         pyflame.sort %{{.*}} {dim = 0 : i64, descending = false} : (tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
// CHECK:         pyflame.scatter_add %{{.*}} : (tensor<5xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<5xi64>
// CHECK:         pyflame.gather %{{.*}} : (tensor<2xf32>, tensor<4xi64>) -> tensor<4xf32>
// CHECK:         pyflame.where %{{.*}} : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func public @set(%x: tensor<4xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// case (lax.switch): each branch inlined, its value selected by the index
// (out of range: the last branch)
// CHECK-LABEL: func.func public @switch
// CHECK-NEXT:    %0 = pyflame.sin %x
// CHECK-NEXT:    %1 = pyflame.cos %x
// CHECK-NEXT:    %2 = pyflame.constant {value = dense<0> : tensor<i32>}
// CHECK-NEXT:    %3 = pyflame.eq %i, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT:    %4 = pyflame.where %3, %0, %1 : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %4
func.func public @switch(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.case"(%i) ({
    %1 = stablehlo.sine %x : tensor<3xf32>
    stablehlo.return %1 : tensor<3xf32>
  }, {
    %1 = stablehlo.cosine %x : tensor<3xf32>
    stablehlo.return %1 : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
