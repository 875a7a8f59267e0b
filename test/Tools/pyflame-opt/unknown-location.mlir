// An op at loc(unknown) that does not verify: "<unknown>:0: error:", as
// mlir-opt reports it (it was "file:0:0:" and an empty source line), and
// expected-error@unknown expects it.
// RUN: not pyflame-opt %s 2>&1 >/dev/null | filecheck %s --check-prefix=UNK
// RUN: pyflame-opt %s --verify-diagnostics
// UNK: <unknown>:0: error: 'pyflame.add' op result #0 has type tensor<3xf32>
// UNK-NOT: unknown-location.mlir:0:0
// expected-error@unknown {{result #0 has type tensor<3xf32>}}
func.func @unknown(%a: tensor<2xf32>) -> tensor<3xf32> {
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32> loc(unknown)
  func.return %0 : tensor<3xf32>
}
