// pyflame.lu_factor (issue 14) has no linalg lowering (linalg has no
// factorizations): the error names the op and the backend.
// RUN: not pyflame-opt %s -p convert-pyflame-to-linalg 2>&1 | filecheck %s

// CHECK: linalg lowering of pyflame.lu_factor: is not supported by the mlir backend
// CHECK-NOT: Traceback
func.func @main(%a: tensor<2x3x3xf64>) -> tensor<2x3x3xf64> {
  %lu, %piv, %perm = pyflame.lu_factor %a : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi32>, tensor<2x3xi32>)
  func.return %lu : tensor<2x3x3xf64>
}
