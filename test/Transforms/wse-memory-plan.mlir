// wse-memory-plan: per-PE buffers for the values of every wse.program. Each
// value-producing op gets wse.buffer (its buffer's index), ops whose CSL needs
// scratch get wse.scratch, the program gets wse.buffers (sizes in words); a
// dead buffer is reused, ops that move no bytes alias their operand's buffer,
// and the pass fails when a PE would exceed its SRAM budget.
// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse,wse-memory-plan --split-input-file | filecheck %s
// RUN: not pyflame-opt %s -p 'legalize-for-wse,convert-pyflame-to-wse,wse-memory-plan{budget=4000}' --split-input-file 2>&1 | filecheck %s --check-prefix=BUDGET

// GEMV on 4x4 PEs (test/Conversion/PyflameToWse/gemv.mlir). Buffer 0 is A's
// 32x32 tile, 1 and 2 are x's and b's; the broadcast of x and the combine of
// the partial sums work in place, and the add writes into its dying operand.
// CHECK:      wse.program @main {width = 4, height = 4, wse.buffers = [#builtin.int<1024>, #builtin.int<32>, #builtin.int<32>, #builtin.int<32>]}
// CHECK:        wse.broadcast "y" %{{.*}} {wse.buffer = #builtin.int<1>}
// CHECK-NEXT:   wse.matmul {{.*}} {wse.buffer = #builtin.int<3>}
// CHECK-NEXT:   wse.combine "x" {{.*}} {wse.buffer = #builtin.int<3>}
// CHECK-NEXT:   wse.map "add"({{.*}}) {wse.buffer = #builtin.int<3>}
// CHECK-NEXT:   wse.return
// A's tile alone (4096 B) is past a 4000-byte budget.
// BUDGET: error: pass failed: csl backend: the 4x4 grid needs 4352 bytes of SRAM per PE at wse.broadcast {{.*}} but the budget is 4000 bytes
module attributes {wse.grid = "4x4"} {
  func.func @main(%A: tensor<128x128xf32>, %x: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<128xf32> {
    %0 = pyflame.matmul %A, %x : (tensor<128x128xf32>, tensor<128xf32>) -> tensor<128xf32>
    %1 = pyflame.add %0, %b : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
    func.return %1 : tensor<128xf32>
  }
}

// -----

// A reduction over both dims of a 2-D tile needs scratch for the one op: buffer 1,
// 8 words (one per row of the 8x4 tile); the result (one word) and its combines share buffer 2.
// CHECK:      wse.program @main {width = 2, height = 2, wse.buffers = [#builtin.int<32>, #builtin.int<8>, #builtin.int<1>]}
// CHECK:        wse.reduce "sum" %{{.*}} {wse.buffer = #builtin.int<2>, wse.scratch = [#builtin.int<1>], dims = array<i64: 0, 1>
// CHECK-NEXT:   wse.combine "x" %{{.*}} {wse.buffer = #builtin.int<2>}
// CHECK-NEXT:   wse.combine "y" %{{.*}} {wse.buffer = #builtin.int<2>}
module attributes {wse.grid = "2x2"} {
  func.func @main(%a: tensor<16x8xf32>) -> tensor<f32> {
    %0 = pyflame.sum %a {dims = array<i64: 0, 1>, keepdim = false} : (tensor<16x8xf32>) -> tensor<f32>
    func.return %0 : tensor<f32>
  }
}
