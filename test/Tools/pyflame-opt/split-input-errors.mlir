// --split-input-file as mlir-opt: an error in one chunk is reported (at its
// line in the whole file), the other chunks are still printed, exit code 1.
// RUN: not pyflame-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err
// CHECK: func.func @a
// CHECK: // {{[-]+}}
// CHECK-NEXT: // {{[-]+}}
// CHECK: func.func @c
// ERR: split-input-errors.mlir:[[# @LINE + 7]]:3: error: 'pyflame.add' op result #0 has type tensor<5xf32>
// ERR-NOT: Traceback
func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// -----
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return %x : tensor<4xf32>
}
// -----
func.func @c(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
