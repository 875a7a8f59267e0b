// What upstream MLIR prints with --mlir-print-debuginfo parses: location
// aliases used before their definitions at the end of the file (also inside
// callsite and fused locations), source ranges (kept as their start) and fused
// metadata (dropped). Line numbers stay, so a later error points at its line.
// An op whose own location names another file is reported there, as mlir-opt does.
// RUN: not pyflame-opt %s --mlir-print-debuginfo --split-input-file 2>/dev/null | filecheck %s
// RUN: not pyflame-opt %s -p canonicalize --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// CHECK:      %0 = pyflame.exp %x : (tensor<3xf32>) -> tensor<3xf32> loc("model.py":10:2)
// CHECK-NEXT: %1 = pyflame.tanh %0 : (tensor<3xf32>) -> tensor<3xf32> loc(callsite("model.py":10:2 at fused["model.py":1:1, "train.py":7:3]))
// CHECK-NEXT: %2 = pyflame.neg %1 : (tensor<3xf32>) -> tensor<3xf32> loc("model.py":4:5)
// CHECK-NEXT: %3 = pyflame.abs %2 : (tensor<3xf32>) -> tensor<3xf32> loc(fused["a.py":1:1, "b.py":2:2])
// CHECK-NEXT: func.return %3 : tensor<3xf32> loc("model.py":1:1)
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pyflame.exp %x : (tensor<3xf32>) -> tensor<3xf32> loc(#loc1)
  %1 = pyflame.tanh %0 : (tensor<3xf32>) -> tensor<3xf32> loc(#loc2)
  %2 = pyflame.neg %1 : (tensor<3xf32>) -> tensor<3xf32> loc("model.py":4:5 to 4:9)
  %3 = pyflame.abs %2 : (tensor<3xf32>) -> tensor<3xf32> loc(fused<"meta">["a.py":1:1, "b.py":2:2])
  return %3 : tensor<3xf32> loc(#loc)
}
#loc = loc("model.py":1:1)
#loc1 = loc("model.py":10:2)
#loc2 = loc(callsite(#loc1 at fused[#loc, "train.py":7:3]))

// -----

// ERR: model.py:20:2: error: 'pyflame.exp' op result #0 has type tensor<4xf32>
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pyflame.exp %x : (tensor<3xf32>) -> tensor<4xf32> loc(#loc3)
  return %0 : tensor<4xf32>
}
#loc3 = loc("model.py":20:2)
