// prod: a linalg.generic reduction with mulf/muli into a fill of 1 (integers
// widen to i64). Scans and sort have no linalg named op. A scan is a
// Hillis-Steele scan (dialects/scan.py SCANS): ceil(log2 n) steps, each the
// operand shifted 2^t places (a slice after a fill of the identity) combined
// elementwise with itself; O(n log n), no [n, n] grid. sort is a bitonic
// network (lowering/to_linalg.py _sort): n padded to a power of two, then per
// stage one parallel generic where each place reads its partner i ^ j and
// keeps the element its place asks for (key: value, NaN largest, then the
// position), finally a gather of the values.
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
// CHECK-NOT:  tensor<3x4x4xf32>
// CHECK:      tensor.extract_slice %arg0[0, 0] [3, 3] [1, 1] : tensor<3x4xf32> to tensor<3x3xf32>
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 1] [3, 3] [1, 1] : tensor<3x3xf32> into tensor<3x4xf32>
// CHECK:      linalg.generic
// CHECK:        arith.addf
// CHECK:      tensor.extract_slice %{{.*}}[0, 0] [3, 2] [1, 1] : tensor<3x4xf32> to tensor<3x2xf32>
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 2] [3, 2] [1, 1] : tensor<3x2xf32> into tensor<3x4xf32>
// CHECK:      linalg.generic
// CHECK:        arith.addf
// CHECK-NOT:  tensor.extract_slice
// CHECK:      return
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = pyflame.cumsum %x {dim = 1 : i64, reverse = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// n = 5 pads to 8: three merge levels, 1 + 2 + 3 = 6 compare-exchange stages
// with partner distances 1, 2, 1, 4, 2, 1.
// CHECK-LABEL: func.func @sort
// CHECK:      tensor.insert_slice %arg0 into %{{.*}}[0, 0] [3, 5] [1, 1] : tensor<3x5xf32> into tensor<3x8xf32>
// CHECK:      linalg.index 1 : index
// CHECK-COUNT-6: arith.xori %{{.*}}, %c{{[0-9]}} : index
// CHECK-NOT:  arith.xori %{{.*}} : index
// CHECK:      tensor.extract_slice %{{.*}}[0, 0] [3, 5] [1, 1] : tensor<3x8xi64> to tensor<3x5xi64>
// CHECK:      linalg.generic
// CHECK:        tensor.extract
// CHECK:      return
func.func @sort(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  %0, %1 = pyflame.sort %x {dim = 1 : i64, descending = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  func.return %0, %1 : tensor<3x5xf32>, tensor<3x5xi64>
}

// one exchange stage, in full: the partner's position from the permutation,
// both values, NaN the largest, equal values by position, padding last
// CHECK-LABEL: func.func @sort_stage
// CHECK:      linalg.generic
// CHECK:        %[[I:.*]] = linalg.index 0 : index
// CHECK:        %[[J:.*]] = arith.xori %[[I]], %c1 : index
// CHECK:        %[[THEIRS:.*]] = tensor.extract %{{.*}}[%[[J]]] : tensor<2xi64>
// CHECK:        %[[A:.*]] = tensor.extract %arg0[%{{.*}}] : tensor<2xf64>
// CHECK:        %[[B:.*]] = tensor.extract %arg0[%{{.*}}] : tensor<2xf64>
// CHECK:        arith.cmpf olt, %[[B]], %[[A]] : f64
// CHECK:        arith.cmpf oeq, %[[A]], %[[B]] : f64
// CHECK:        arith.cmpf uno
// CHECK:        arith.cmpi slt, %in, %[[THEIRS]] : i64
// CHECK:        arith.cmpi sge, %in, %c2_i64 : i64
// CHECK:        arith.select
// CHECK:        linalg.yield
func.func @sort_stage(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xi64>) {
  %0, %1 = pyflame.sort %x {dim = 0 : i64, descending = true} : (tensor<2xf64>) -> (tensor<2xf64>, tensor<2xi64>)
  func.return %0, %1 : tensor<2xf64>, tensor<2xi64>
}
