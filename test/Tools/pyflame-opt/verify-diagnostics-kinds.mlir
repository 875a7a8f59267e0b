// --verify-diagnostics as mlir-opt: every expected-error, -warning, -remark and
// -note must be produced (pyflame-opt produces errors only, so an expected
// warning or note is never met: exit 1, "expected warning ... was not
// produced" at the column of its "expected-"), the message runs to the last
// "}}" of its line, expected-error-re takes {{regex}} parts, @unknown stands
// for a diagnostic without a location.
// RUN: not pyflame-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// CHECK-NOT: [0-9]+
// CHECK: verify-diagnostics-kinds.mlir:[[# @LINE + 13]]:6: error: expected warning "never" was not produced
// CHECK: verify-diagnostics-kinds.mlir:[[# @LINE + 18]]:6: error: expected note "never" was not produced
// CHECK: verify-diagnostics-kinds.mlir:[[# @LINE + 24]]:6: error: expected remark "never" was not produced
// CHECK: verify-diagnostics-kinds.mlir:[[# @LINE + 29]]:6: error: expected error "has type {{[{][{]}}f64{{[}][}]}}" was not produced
// CHECK-NOT: Traceback

func.func @re(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error-re@+1 {{result #0 has type tensor<{{[0-9]+}}xf32>}}
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// -----
func.func @warning(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-warning@+1 {{never}}
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @note(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-note@+1 {{never}}
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @remark(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // expected-remark@-1 {{never}}
  func.return %0 : tensor<2xf32>
}
// -----
func.func @braces(%a: tensor<2xf32>) -> tensor<3xf32> {
  // the message is "has type {{f64}}", literally (only -re reads {{...}} as a regex)
  // expected-error@+1 {{has type {{f64}}}}
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
