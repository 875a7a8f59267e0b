// RUN: pyflame-opt %s --verify-diagnostics --split-input-file
// The wse verifiers.

// expected-error@+1 {{inputs live on one PE per element}}
wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4xf32, #wse.layout<[x], y = *>>):
  wse.return %a : !wse.tensor<4xf32, #wse.layout<[x], y = *>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  // expected-error@+1 {{needs partial results over x}}
  %b = wse.combine "x" %a : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
  wse.return %b : !wse.tensor<4x4xf32, #wse.layout<[y, x]>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>, %x: !wse.tensor<4xf32, #wse.layout<[x], y = 0>>):
  // expected-error@+1 {{M is tiled over y: B must be replicated over y, got '0'}}
  %p = wse.matmul %a, %x : (!wse.tensor<4x4xf32, #wse.layout<[y, x]>>, !wse.tensor<4xf32, #wse.layout<[x], y = 0>>) -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
  %y = wse.combine "x" %p : !wse.tensor<4xf32, #wse.layout<[y], x = sum>> -> !wse.tensor<4xf32, #wse.layout<[y], x = 0>>
  wse.return %y : !wse.tensor<4xf32, #wse.layout<[y], x = 0>>
}

// -----

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<4x4xf32, #wse.layout<[y, x]>>):
  %r = wse.reduce "sum" %a {dims = array<i64: 1>, keepdim = false} : !wse.tensor<4x4xf32, #wse.layout<[y, x]>> -> !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
  // expected-error@+1 {{output #0 is partial: wse.combine it first}}
  wse.return %r : !wse.tensor<4xf32, #wse.layout<[y], x = sum>>
}
