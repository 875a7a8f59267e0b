// Shape ops: reshape through tensor.reshape, permute and broadcast_to as
// linalg.generic maps, slice/split as extract_slice, concat/pad as insert_slice
// (pad into a zero-filled tensor, interior padding as the stride).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @shape
// CHECK:      %[[S:.*]] = arith.constant dense<[8, 4]> : tensor<2xi64>
// CHECK:      tensor.reshape %arg0(%[[S]]) : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<8x4xf32>
// CHECK:      linalg.generic {indexing_maps = [#[[T]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>)
// CHECK:      linalg.generic {{.*}} ins(%arg1 : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:      tensor.extract_slice %arg0[1, 0] [2, 4] [1, 2] : tensor<4x8xf32> to tensor<2x4xf32>
// CHECK:      %[[C0:.*]] = tensor.insert_slice %arg0 into %{{.*}}[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
// CHECK:      tensor.insert_slice %arg0 into %[[C0]][4, 0] [4, 8] [1, 1]
// CHECK:      tensor.extract_slice %arg0[0, 0] [4, 3] [1, 1]
// CHECK:      tensor.extract_slice %arg0[0, 3] [4, 5] [1, 1]
// CHECK:      %[[P:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<7x17xf32>)
// CHECK:      tensor.insert_slice %arg0 into %[[P]][1, 0] [4, 8] [1, 2] : tensor<4x8xf32> into tensor<7x17xf32>
func.func @shape(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x4xf32>, tensor<8x8xf32>, tensor<4x3xf32>, tensor<4x5xf32>, tensor<7x17xf32>) {
  %0 = pyflame.reshape %x {shape = array<i64: 8, 4>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %1 = pyflame.permute %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = pyflame.broadcast_to %b {shape = array<i64: 4, 8>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.slice %x {start = array<i64: 1, 0>, limit = array<i64: 3, 8>, stride = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x4xf32>
  %4 = pyflame.concat %x, %x {dim = 0} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %5, %6 = pyflame.split %x {sizes = array<i64: 3, 5>, dim = 1} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x5xf32>)
  %7 = pyflame.pad %x {low = array<i64: 1, 0>, high = array<i64: 2, 2>, interior = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<7x17xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x4xf32>, tensor<8x8xf32>, tensor<4x3xf32>, tensor<4x5xf32>, tensor<7x17xf32>
}
