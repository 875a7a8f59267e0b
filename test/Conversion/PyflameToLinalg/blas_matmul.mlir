// The mlir backend's matmuls to BLAS: after upstream bufferization, every f32/f64
// contraction generic that BLAS can compute exactly (2-D, transposed operand
// after elementwise fusion, batched, size-1 broadcast batch dims) becomes
// cblas_?gemm calls (beta 1: accumulate into the zero-filled output), one per
// batch element in an scf.for nest; the rest (vectors, integers, tiny products)
// stay contraction generics for the loop lowering.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},buffer-deallocation-pipeline)' | python -m pyflame_mlir.runtime.mlir_blas | filecheck %s

// CHECK-DAG: func.func private @{{.*}}cblas_sgemm{{.*}}(i32, i32, i32, i{{32|64}}, i{{32|64}}, i{{32|64}}, f32, !llvm.ptr, i{{32|64}}, !llvm.ptr, i{{32|64}}, f32, !llvm.ptr, i{{32|64}})
// CHECK-DAG: func.func private @{{.*}}cblas_dgemm{{.*}}(i32, i32, i32, i{{32|64}}, i{{32|64}}, i{{32|64}}, f64, !llvm.ptr

// 2-D f32: row major (101), no transposes (111), m n k = 64 48 32, lda ldb ldc = 32 48 48
// CHECK-LABEL: func.func @plain
// CHECK-NOT:   linalg.generic
// CHECK:       linalg.fill
// CHECK-NOT:   linalg.generic
// CHECK:       call @{{.*}}cblas_sgemm{{.*}}(%c101_i32, %c111_i32{{(_[0-9]+)?}}, %c111_i32{{(_[0-9]+)?}}, %c64_i{{32|64}}, %c48_i{{32|64}}, %c32_i{{32|64}}, %[[ONE:cst[_0-9]*]], %{{[0-9]+}}, %c32_i{{32|64}}{{(_[0-9]+)?}}, %{{[0-9]+}}, %c48_i{{32|64}}{{(_[0-9]+)?}}, %[[ONE]], %{{[0-9]+}}, %c48_i{{32|64}}{{(_[0-9]+)?}})
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @plain(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %0 = pyflame.matmul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  func.return %0 : tensor<64x48xf32>
}

// the transpose (a permute generic) is fused into the contraction: lhs stored
// transposed, gemm's transa = 112, lda = 64 (the stored row length)
// CHECK-LABEL: func.func @transposed
// CHECK-NOT:   linalg.generic
// CHECK:       call @{{.*}}cblas_sgemm{{.*}}(%c101_i32, %c112_i32, %c111_i32, %c64_i{{32|64}}, %c48_i{{32|64}}, %c32_i{{32|64}}, %{{.*}}, %{{[0-9]+}}, %c64_i{{32|64}}_{{[0-9]+}},
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @transposed(%a: tensor<32x64xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %t = pyflame.permute %a {perm = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %0 = pyflame.matmul %t, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  func.return %0 : tensor<64x48xf32>
}

// f64, batch 3 with lhs broadcast along it (size-1 batch dim): one loop of
// three dgemm calls; lhs's pointer does not move with the batch index
// CHECK-LABEL: func.func @batched
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         arith.muli %[[I]]
// CHECK:         call @{{.*}}cblas_dgemm
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @batched(%a: tensor<1x20x30xf64>, %b: tensor<3x30x40xf64>) -> tensor<3x20x40xf64> {
  %0 = pyflame.matmul %a, %b : (tensor<1x20x30xf64>, tensor<3x30x40xf64>) -> tensor<3x20x40xf64>
  func.return %0 : tensor<3x20x40xf64>
}

// left as loops: a vector operand, integers, a product below the BLAS threshold
// CHECK-LABEL: func.func @kept
// CHECK-NOT:   cblas
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:   cblas
// CHECK:       return
func.func @kept(%v: tensor<64xf32>, %b: tensor<64x48xf32>, %i: tensor<16x16xi32>, %s: tensor<4x4xf32>) -> (tensor<48xf32>, tensor<16x16xi32>, tensor<4x4xf32>) {
  %0 = pyflame.matmul %v, %b : (tensor<64xf32>, tensor<64x48xf32>) -> tensor<48xf32>
  %1 = pyflame.matmul %i, %i : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi32>
  %2 = pyflame.matmul %s, %s : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %0, %1, %2 : tensor<48xf32>, tensor<16x16xi32>, tensor<4x4xf32>
}
