// Reductions: a linalg.generic with reduction iterators into a filled init
// (the op's identity); keepdim reshapes; int sums widen to i64, half precision
// accumulates in f32; argmax carries (value, index) and lets the first NaN win.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce
// CHECK:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[I:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK:      linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%[[I]] : tensor<4xf32>)
// CHECK:        arith.addf
// mean divides by the count
// CHECK:      iterator_types = ["reduction", "reduction"]
// CHECK:        arith.constant 3.200000e+01 : f32
// CHECK:        arith.divf
// max: -inf identity, NaN-propagating maximumf, keepdim through a reshape
// CHECK:      arith.constant 0xFF800000 : f32
// CHECK:        arith.maximumf
// CHECK:      tensor.reshape %{{.*}} : (tensor<4xf32>, tensor<2xi64>) -> tensor<4x1xf32>
// CHECK:      arith.constant 0x7F800000 : f32
// CHECK:        arith.minimumf
// int sum widens to i64
// CHECK:        arith.extsi %{{.*}} : i32 to i64
// CHECK:        arith.addi %{{.*}} : i64
// half precision accumulates in f32 and rounds once
// CHECK:        arith.extf %{{.*}} : f16 to f32
// CHECK:      arith.truncf
// argmax: two outputs, the index from linalg.index
// CHECK:      linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK:        arith.cmpf uno
// CHECK:        linalg.index 1 : index
// CHECK-NOT:  pyflame.
func.func @reduce(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %h: tensor<4x8xf16>) -> (tensor<4xf32>, tensor<f32>, tensor<4x1xf32>, tensor<8xf32>, tensor<4xi64>, tensor<8xf16>, tensor<4xi64>, tensor<1x1xi64>) {
  %0 = pyflame.sum %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %1 = pyflame.mean %x {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  %2 = pyflame.max %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %3 = pyflame.min %x {dims = array<i64: 0>, keepdim = false} : (tensor<4x8xf32>) -> tensor<8xf32>
  %4 = pyflame.sum %i {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xi32>) -> tensor<4xi64>
  %5 = pyflame.sum %h {dims = array<i64: 0>, keepdim = false} : (tensor<4x8xf16>) -> tensor<8xf16>
  %6 = pyflame.argmax %x {dim = 1, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xi64>
  %7 = pyflame.argmin %x {keepdim = true} : (tensor<4x8xf32>) -> tensor<1x1xi64>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<f32>, tensor<4x1xf32>, tensor<8xf32>, tensor<4xi64>, tensor<8xf16>, tensor<4xi64>, tensor<1x1xi64>
}
