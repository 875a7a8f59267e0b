// pyflame-opt --mlir-pass-pipeline: after the xDSL passes, upstream MLIR runs
// the pipeline (pyflame ops known through IRDL); its errors are reported as
// pyflame-opt errors (exit code 1, no traceback).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg --mlir-pass-pipeline='linalg-fuse-elementwise-ops' | filecheck %s
// RUN: not pyflame-opt %s --mlir-pass-pipeline='no-such-pass' 2>&1 | filecheck %s --check-prefix=BAD

// the two elementwise generics fused into one by upstream MLIR
// CHECK-LABEL: func.func @chain
// CHECK:       linalg.generic
// CHECK:         arith.addf
// CHECK:         math.exp
// CHECK-NOT:   linalg.generic
// BAD: error: upstream pipeline 'builtin.module(no-such-pass)' failed: {{.*}}'no-such-pass' does not refer to a registered pass
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.exp %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}
