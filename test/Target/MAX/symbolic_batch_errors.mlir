// Symbolic batch refused: the op that pins the batch dim is named, and
// pyflame-opt exits 1 without a traceback.
// REQUIRES: max
// RUN: not env PYFLAME_MAX_SYMBOLIC_BATCH=1 pyflame-opt %s -t max 2>&1 | filecheck %s

// CHECK: pyflame-opt: error: MAX lowering of pyflame.reshape: symbolic batch: reshape merges or splits this dim, but it is the batch dim (size 8)
// CHECK-NOT: Traceback
func.func @flatten(%x: tensor<8x4xf32>) -> tensor<32xf32> {
  %0 = pyflame.reshape %x {shape = array<i64: 32>} : (tensor<8x4xf32>) -> tensor<32xf32>
  func.return %0 : tensor<32xf32>
}
