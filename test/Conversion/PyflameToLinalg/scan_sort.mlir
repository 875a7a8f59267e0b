// prod: a linalg.generic reduction with mulf/muli into a fill of 1 (integers
// widen to i64). Scans and sort have no linalg named op: they lower as their
// O(n^2) decompositions (dialects/scan.py QUADRATIC), here cumsum: the operand
// broadcast over a new [n, n] grid, the mask i <= j from two linalg.index
// iotas, a select, and an addf reduction over the new axis.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-LABEL: func.func @prod
// CHECK:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[I:.*]] = linalg.fill ins(%[[ONE]] : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<3x4xf32>) outs(%[[I]] : tensor<3xf32>)
// CHECK:        arith.mulf
// CHECK:      arith.constant 1 : i64
// CHECK:        arith.extsi %{{.*}} : i32 to i64
// CHECK:        arith.muli %{{.*}} : i64
func.func @prod(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>) -> (tensor<3xf32>, tensor<4xi64>) {
  %0 = pyflame.prod %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  %1 = pyflame.prod %i {dims = array<i64: 0>, keepdim = false} : (tensor<3x4xi32>) -> tensor<4xi64>
  func.return %0, %1 : tensor<3xf32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @cumsum
// CHECK:      tensor.reshape %arg0(%{{.*}}) : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x1x4xf32>
// CHECK:        linalg.index 1 : index
// CHECK:        linalg.index 2 : index
// CHECK:        arith.cmpi sle
// CHECK:        arith.select
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3x4x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:        arith.addf
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = pyflame.cumsum %x {dim = 1 : i64, reverse = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
