// Transform ops must be expanded first; the error names the op.
// RUN: not pyflame-opt %s -p convert-pyflame-to-linalg 2>&1 | filecheck %s

// CHECK: linalg lowering of pyflame.vjp: must be expanded first (run pyflame-autodiff)
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.sin %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %ct: tensor<4xf32>) -> tensor<4xf32> {
  %y, %g = pyflame.vjp @f(%x) cotangents(%ct) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %g : tensor<4xf32>
}
