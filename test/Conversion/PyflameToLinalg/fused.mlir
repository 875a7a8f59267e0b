// Named fused ops lower to the chains they stand for; pyflame.fused regions
// are inlined first. Errors name the op.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s
// RUN: pyflame-opt %s -p fuse,convert-pyflame-to-linalg | mlir-opt | filecheck %s --check-prefix=REFUSED

// CHECK-LABEL: func.func @fused
// CHECK:        arith.addf
// CHECK:        arith.maximumf
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK:        math.erf
// CHECK:        math.tanh
// CHECK-NOT:  pyflame.
// REFUSED-LABEL: func.func @fused
// REFUSED-NOT:  pyflame.
func.func @fused(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = pyflame.fused_add_relu %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.fused_fma %a, %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.fused_matmul_gelu %a, %w {approximate = "none"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.fused %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %4 = pyflame.mul %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %5 = pyflame.tanh %4 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    pyflame.yield %5 : tensor<4x8xf32>
  }
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
