// What other tools print: mlir-opt writes NaN and infinities as hexadecimal bit
// patterns (dense<0x7FC00000>), torch-mlir and StableHLO exports large constants as
// dense_resource with a trailing resource section. Each keeps its meaning through
// pyflame-opt: the NaN stays a NaN (it was read as the integer 2143289344), the
// resource keeps its blob. Bad ones are located errors (see the -split chunks).
// RUN: not pyflame-opt %s --split-input-file -p cse 2>/dev/null | filecheck %s
// RUN: not pyflame-opt %s --split-input-file -p cse 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// CHECK-LABEL: func.func @nan
// (pyflame.constant prints its bytes, little-endian: 0x7FC00000 is 0000C07F)
// CHECK: dense<"0x0000C07F"> : tensor<2xf32>
// CHECK: dense<"0x0000807F0000803F"> : tensor<2xf32>
// CHECK: dense<"0x007C003C"> : tensor<2xf16>
// CHECK-LABEL: func.func @resource
// CHECK: dense_resource<blob1> : tensor<2xf32>
// CHECK: blob1: "0x040000000000803F00000040"
// CHECK-LABEL: func.func @empty_follows
// ERR: from-other-tools.mlir:[[# @LINE + 30]]:29: error: hexadecimal float literal should not have a leading minus
// ERR: from-other-tools.mlir:[[# @LINE + 34]]:29: error: hexadecimal float constant out of range for type f16
// ERR-NOT: Traceback
func.func @nan() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf16>) {
  %c = pyflame.constant {value = dense<0x7FC00000> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = pyflame.constant {value = dense<[0x7F800000, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = pyflame.constant {value = dense<[0x7C00, 0x3C00]> : tensor<2xf16>} : () -> tensor<2xf16>
  func.return %c, %d, %h : tensor<2xf32>, tensor<2xf32>, tensor<2xf16>
}
// -----
func.func @resource(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense_resource<blob1> : tensor<2xf32>
  %0 = pyflame.add %a, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
// -----
// only a comment: an empty module, as mlir-opt reads it
// -----
func.func @empty_follows() {
  func.return
}
// -----
func.func @minus() -> tensor<2xf32> {
  %c = arith.constant dense<-0x7FC00000> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
// -----
func.func @wide() -> tensor<2xf16> {
  %c = arith.constant dense<0x10000> : tensor<2xf16>
  func.return %c : tensor<2xf16>
}
