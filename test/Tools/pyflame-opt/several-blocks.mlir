// Functions of several blocks (cf branches, two returns) parse, print and
// go through cse/dce; a pass or target that handles one block only refuses
// them with a located error, not an internal error.
// RUN: pyflame-opt %s -p cse,dce | filecheck %s
// RUN: not pyflame-opt %s -p legalize-for-max 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not pyflame-opt %s -t csl 2>&1 | filecheck %s --check-prefix=ERR
// CHECK: cf.cond_br %flag, ^bb1, ^bb2
// CHECK: func.return %0
// CHECK: func.return %1
// ERR: several-blocks.mlir:[[# @LINE + 2]]:1: error: 'func.func' op @two_blocks has 3 blocks: this pipeline or target handles functions of one block only
// ERR-NOT: internal error
func.func @two_blocks(%a: tensor<4xf32>, %flag: i1) -> tensor<4xf32> {
  cf.cond_br %flag, ^bb1, ^bb2
^bb1:
  %0 = pyflame.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
^bb2:
  %1 = pyflame.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
