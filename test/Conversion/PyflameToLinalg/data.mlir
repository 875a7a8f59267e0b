// constant and iota: dense arith.constant (non-finite floats as integer bits
// bitcast back, a form both xDSL and MLIR print alike), iota from linalg.index.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-LABEL: func.func @data
// CHECK:      arith.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK:      %[[BITS:.*]] = arith.constant dense<[0, 2143289344, 2139095040]> : tensor<3xi32>
// CHECK:      arith.bitcast %[[BITS]] : tensor<3xi32> to tensor<3xf32>
// CHECK:      arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK:      linalg.generic
// CHECK:        %[[I:.*]] = linalg.index 1 : index
// CHECK:        %[[W:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:        arith.sitofp %[[W]] : i64 to f32
func.func @data() -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2xi1>, tensor<2x4xf32>) {
  %0 = pyflame.constant {value = dense<1.5> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = pyflame.constant {value = dense<"0x000000000000C07F0000807F"> : tensor<3xf32>} : () -> tensor<3xf32>
  %2 = pyflame.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %3 = pyflame.iota {shape = array<i64: 2, 4>, dim = 1, dtype = f32} : () -> tensor<2x4xf32>
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<3xf32>, tensor<2xi1>, tensor<2x4xf32>
}
