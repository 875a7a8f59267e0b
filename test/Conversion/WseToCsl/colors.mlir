// RUN: not pyflame-opt %s -t csl 2>&1 | filecheck %s
// A shift by 21 PEs needs 22 colors (every link carries 21 streams at once,
// plus the one it starts): more than the 21 routable colors.

wse.program @main {width = 24, height = 1} {
^bb0(%a: !wse.tensor<24xf32, #wse.layout<[x], y = 0>>):
  %b = wse.shift "x" %a {distance = 21 : i64} : !wse.tensor<24xf32, #wse.layout<[x], y = 0>> -> !wse.tensor<24xf32, #wse.layout<[x], y = 0>>
  wse.return %b : !wse.tensor<24xf32, #wse.layout<[x], y = 0>>
}

// CHECK: error: csl backend: the program needs 22 colors (shift along x by 21 (22)) but only 21 are routable (0-23 without the reserved [21, 22, 23])
