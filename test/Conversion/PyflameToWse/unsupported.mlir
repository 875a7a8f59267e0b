// RUN: not pyflame-opt %s -t wse 2>&1 | filecheck %s
// An op the backend cannot lower fails before anything is lowered or emitted.

func.func @main(%a: tensor<4x6xf32>) -> tensor<4xi64> {
  %0 = pyflame.argmax %a {dim = 1 : i64, keepdim = false} : (tensor<4x6xf32>) -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// CHECK: error: csl backend: op pyflame.argmax is not supported (integer (index) results are not lowered)
