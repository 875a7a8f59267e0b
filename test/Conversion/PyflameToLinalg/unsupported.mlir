// An op without a lowering fails with its name.
// RUN: not pyflame-opt %s -p convert-pyflame-to-linalg 2>&1 | filecheck %s

// CHECK: linalg lowering of pyflame.pow: integer pow (int32) has no lowering yet
func.func @ipow(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = pyflame.pow %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
