// A splat of 10^8 elements would make the parser build a list of 10^8 floats
// (minutes, gigabytes): refused at the literal's type.
// RUN: not pyflame-opt %s 2>&1 | filecheck %s
// CHECK: huge-splat.mlir:[[# @LINE + 3]]:56: error: dense literal of 100000000 elements (the limit is 4194304
// CHECK-NOT: Traceback
func.func @f() -> tensor<100000000xf32> {
  %0 = pyflame.constant {value = dense<1.000000e+00> : tensor<100000000xf32>} : () -> tensor<100000000xf32>
  func.return %0 : tensor<100000000xf32>
}
