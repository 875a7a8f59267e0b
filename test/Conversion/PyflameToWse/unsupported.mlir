// RUN: not pyflame-opt %s -t wse 2>&1 | filecheck %s
// An op the backend cannot lower fails before anything is lowered or emitted.

func.func @main(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = pyflame.cumsum %a {dim = 1 : i64, reverse = false} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// CHECK: error: csl backend: op pyflame.cumsum is not supported (no CSL lowering for it yet)
