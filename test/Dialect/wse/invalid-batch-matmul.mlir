// Verifier errors of wse.batch_matmul (the batch laid over the grid, issue 16).
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

wse.program @main {width = 1, height = 4} {
^bb0(%a: !wse.tensor<6x3xf32, #wse.layout<[y, -], x = 0>>, %b: !wse.tensor<9x2xf32, #wse.layout<[y, -], x = 0>>):
  // expected-error @+1 {{3 batch elements do not split evenly over the 4 PEs of axis y}}
  %c = wse.batch_matmul %a, %b {batch = 3 : i64} : (!wse.tensor<6x3xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<9x2xf32, #wse.layout<[y, -], x = 0>>) -> !wse.tensor<6x2xf32, #wse.layout<[y, -], x = 0>>
  wse.return %c : !wse.tensor<6x2xf32, #wse.layout<[y, -], x = 0>>
}

// -----

wse.program @main {width = 2, height = 1} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[-, x], y = 0>>, %b: !wse.tensor<8x2xf32, #wse.layout<[-, -], x = 0, y = 0>>):
  // expected-error @+1 {{wse.batch_matmul needs K whole on every PE}}
  %c = wse.batch_matmul %a, %b {batch = 2 : i64} : (!wse.tensor<4x4xf32, #wse.layout<[-, x], y = 0>>, !wse.tensor<8x2xf32, #wse.layout<[-, -], x = 0, y = 0>>) -> !wse.tensor<4x2xf32, #wse.layout<[-, -], x = 0, y = 0>>
  wse.return %c : !wse.tensor<4x2xf32, #wse.layout<[-, -], x = 0, y = 0>>
}
