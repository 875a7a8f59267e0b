// --allow-unregistered-dialect as mlir-opt: an unknown op in the generic form
// is kept through passes; in the custom form it is an error at its name (it
// said "Operation builtin.unregistered does not have a custom format", at the
// operand); without the flag it is an error.
// RUN: not pyflame-opt %s --split-input-file --allow-unregistered-dialect -p canonicalize,cse,dce 2>/dev/null | filecheck %s
// RUN: not pyflame-opt %s --split-input-file --allow-unregistered-dialect 2>&1 >/dev/null | filecheck %s --check-prefix=CUSTOM
// RUN: not pyflame-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=NOFLAG
// CHECK: "foo.bar"(%a) : (tensor<2xf32>) -> tensor<2xf32>
// CUSTOM: unregistered-ops.mlir:[[# @LINE + 9]]:8: error: custom op 'foo.baz' is unknown: dialect 'foo' is not registered
// NOFLAG: unregistered-ops.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: Operation foo.bar is not registered
// CHECK-NOT: Traceback
func.func @generic(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "foo.bar"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @custom(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = foo.baz %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
