// MAX has no LU factorization (issue 14): pyflame.lu_factor is refused by
// name like the other decompositions, and pyflame-opt exits 1 without a traceback.
// REQUIRES: max
// RUN: not pyflame-opt %s -t max 2>&1 | filecheck %s

// CHECK: pyflame-opt: error: MAX lowering of pyflame.lu_factor: is not supported by the MAX backend
// CHECK-NOT: Traceback
func.func @main(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %lu, %piv, %perm = pyflame.lu_factor %a : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xi32>, tensor<3xi32>)
  func.return %lu : tensor<3x4xf32>
}
