// A lowering pass that cannot take an op (legalize-for-max and
// convert-pyflame-to-linalg before pyflame-autodiff) is a located error on
// that op, exit 1, not an "internal error".
// RUN: not pyflame-opt %s -p legalize-for-max 2>&1 | filecheck %s --check-prefix=MAX
// RUN: not pyflame-opt %s -p convert-pyflame-to-linalg 2>&1 | filecheck %s --check-prefix=LINALG
// MAX: lowering-refusals.mlir:[[# @LINE + 10]]:3: error: 'pyflame.vjp' op MAX backend: cannot lower pyflame.vjp
// MAX-NOT: internal error
// LINALG: lowering-refusals.mlir:[[# @LINE + 8]]:3: error: 'pyflame.vjp' op linalg lowering of pyflame.vjp: must be expanded first
// LINALG-NOT: internal error
func.func private @sq(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = pyflame.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  %y, %g = pyflame.vjp @sq(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
  func.return %g : tensor<4xf32>
}
