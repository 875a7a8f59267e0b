// A bool attribute left out reads as false, as MLIR's UnitAttr: IR written by
// hand or by another producer need not spell out keepdim = false.
// RUN: pyflame-opt %s | filecheck %s

// CHECK: pyflame.sum %{{.*}} {dims = array<i64: 0, 1>, keepdim = false}
// CHECK: pyflame.mean %{{.*}} {dims = array<i64: 1>, keepdim = true}
func.func @main(%x: tensor<4x3xf32>) -> (tensor<f32>, tensor<4x1xf32>) {
  %0 = pyflame.sum %x {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
  %1 = pyflame.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  func.return %0, %1 : tensor<f32>, tensor<4x1xf32>
}
