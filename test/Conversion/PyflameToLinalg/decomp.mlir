// The matrix decompositions (dialects/decomp.py) have no linalg lowering
// (linalg has no factorizations): the error names the op and the backend.
// RUN: not pyflame-opt %s -p convert-pyflame-to-linalg 2>&1 | filecheck %s

// CHECK: linalg lowering of pyflame.cholesky: is not supported by the mlir backend
// CHECK-NOT: Traceback
func.func @main(%a: tensor<2x3x3xf64>) -> tensor<2x3x3xf64> {
  %0 = pyflame.cholesky %a : (tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  func.return %0 : tensor<2x3x3xf64>
}
