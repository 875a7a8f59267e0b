// Verifier errors of the wse dialect ops, located on their op (those of whole
// programs: invalid-program.mlir).
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{unknown elementwise fn 'erf'}}
  %b = wse.map "erf"(%a) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{add takes 2 operand(s), got 1}}
  %b = wse.map "add"(%a) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{result element type must be i1}}
  %b = wse.map "gt"(%a, %a) : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4x4xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{reduction kind must be one of ('sum', 'max'), not 'prod'}}
  %r = wse.reduce "prod" %a {dims = array<i64: 1>, keepdim = false} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
  wse.return %a : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{wse.broadcast along y needs a tensor held by one line of y, got 'dim'}}
  %b = wse.broadcast "y" %a : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4xf32, #wse.layout<[x], y = 0>>):
  // expected-error @+1 {{wse.shift needs a non-zero distance}}
  %b = wse.shift "x" %a {distance = 0 : i64} : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
  wse.return %b : !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4xf32, #wse.layout<[x], y = 0>>):
  // expected-error @+1 {{wse.transpose takes a rank-2 tensor}}
  %b = wse.transpose %a : !wse.tensor<4xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
  wse.return %b : !wse.tensor<4xf32, #wse.layout<[x], y = 0>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x2xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{wse.reshape [4, 2] -> [8] may only insert or remove unit dimensions}}
  %b = wse.reshape %a : !wse.tensor<4x2xf32, #wse.layout<[y, x]>> -> !wse.tensor<8xf32, #wse.layout<[y], x = 0>>
  wse.return %b : !wse.tensor<8xf32, #wse.layout<[y], x = 0>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x3xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{contracted sizes differ: 3 and 4}}
  %p = wse.matmul %a, %a : (!wse.tensor<4x3xf32, #wse.layout<[y, x]>>, !wse.tensor<4x3xf32, #wse.layout<[y, x]>>) -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %p : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 4, height = 2} {
^bb0(%a: !wse.tensor<8x8xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{wse.summa needs a square grid (A's and B's K blocks must match), got 4x2}}
  %q = wse.summa %a, %a : (!wse.tensor<8x8xf32, #wse.layout<[y, x]>>, !wse.tensor<8x8xf32, #wse.layout<[y, x]>>) -> !wse.tensor<8x8xf32, #wse.layout<[y, x]>>
  wse.return %q : !wse.tensor<8x8xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{result must be !wse.tensor<4x4xf32, #wse.layout<[y, -], x = *>>}}
  %b = wse.gather "x" %a : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<8x6xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{wse.slice changes dimension 1, which is tiled over x: it must be whole on every PE (gather it first)}}
  %b = wse.slice %a {start = array<i64: 0, 1>, limit = array<i64: 8, 6>, stride = array<i64: 1, 1>} : !wse.tensor<8x6xf32, #wse.layout<[y, x]>> -> !wse.tensor<8x5xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<8x5xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>>, %b: !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 1>>):
  // expected-error @+1 {{a wse.concat operand is held by different lines of PEs (['0', '1'])}}
  %c = wse.concat %a, %b {dim = 1 : i64} : (!wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 1>>) -> !wse.tensor<8x12xf32, #wse.layout<[y, -], x = 0>>
  wse.return %c : !wse.tensor<8x12xf32, #wse.layout<[y, -], x = 0>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%t: !wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>, %i: !wse.tensor<4x2xf32, #wse.layout<[-, -], x = 0, y = 0>>):
  // expected-error @+1 {{wse.take_rows needs a [V, C] table and [N, 1] indices, got [10, 6] and [4, 2]}}
  %r = wse.take_rows %t[%i] : (!wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>, !wse.tensor<4x2xf32, #wse.layout<[-, -], x = 0, y = 0>>) -> !wse.tensor<4x6xf32, #wse.layout<[-, -], x = 0, y = 0>>
  wse.return %r : !wse.tensor<4x6xf32, #wse.layout<[-, -], x = 0, y = 0>>
}

// -----

wse.program @main {width = 3, height = 2} {
^bb0(%a: !wse.tensor<6x6xf32, #wse.layout<[y, x]>>):
  // expected-error @+1 {{wse.relayout needs a square grid}}
  %b = wse.relayout %a : !wse.tensor<6x6xf32, #wse.layout<[y, x]>> -> !wse.tensor<6x6xf32, #wse.layout<[x, y]>>
  wse.return %b : !wse.tensor<6x6xf32, #wse.layout<[x, y]>>
}
