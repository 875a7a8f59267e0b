// Indexing: gather as a parallel generic over the index whose body extracts
// the input at the index value (clamped into range); scatter_add as a generic
// over the output and the index positions along dim (a reduction) that adds
// the sources whose index names the element.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-LABEL: func.func @indexing
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<2x4xi64>)
// CHECK:        arith.index_cast
// CHECK:        arith.maxsi
// CHECK:        arith.minsi
// CHECK:        tensor.extract %arg0
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg3 : tensor<3x2xi64>, tensor<3x2xf32>)
// CHECK:        arith.cmpi eq
// CHECK:        arith.addf
// CHECK:        arith.select
func.func @indexing(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %j: tensor<3x2xi64>, %s: tensor<3x2xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  %g = pyflame.gather %x, %i {dim = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  %a = pyflame.scatter_add %x, %j, %s {dim = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %g, %a : tensor<2x4xf32>, tensor<3x4xf32>
}
