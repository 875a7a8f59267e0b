// MAX has no matrix factorizations: the decompositions (dialects/decomp.py)
// are refused by name, and pyflame-opt exits 1 without a traceback.
// REQUIRES: max
// RUN: not pyflame-opt %s -t max 2>&1 | filecheck %s

// CHECK: pyflame-opt: error: MAX lowering of pyflame.svd: is not supported by the MAX backend
// CHECK-NOT: Traceback
func.func @main(%a: tensor<4x3xf32>) -> tensor<3xf32> {
  %u, %s, %vh = pyflame.svd %a {full_matrices = false} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
  func.return %s : tensor<3xf32>
}
