// The issue #16 wse ops (slice, pad, concat, permute, take_rows, add_rows) print
// and parse back; their verifiers name the rule broken.
// RUN: pyflame-opt %s --split-input-file | filecheck %s
// RUN: pyflame-opt %s --split-input-file --print-op-generic | pyflame-opt --split-input-file | filecheck %s

wse.program @main {width = 2, height = 2} {
^bb0(%a: !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>>, %t: !wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>, %i: !wse.tensor<4x1xf32, #wse.layout<[-, -], x = 0, y = 0>>, %w: !wse.tensor<2x3x4xf32, #wse.layout<[-, -, -], x = 0, y = 0>>):
  %s = wse.slice %a {start = array<i64: 0, 1>, limit = array<i64: 8, 6>, stride = array<i64: 1, 2>} : !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>> -> !wse.tensor<8x3xf32, #wse.layout<[y, -], x = 0>>
  %p = wse.pad %a {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 1>} : !wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>> -> !wse.tensor<8x14xf32, #wse.layout<[y, -], x = 0>>
  %c = wse.concat %a, %s {dim = 1 : i64} : (!wse.tensor<8x6xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<8x3xf32, #wse.layout<[y, -], x = 0>>) -> !wse.tensor<8x9xf32, #wse.layout<[y, -], x = 0>>
  %q = wse.permute %w {perm = array<i64: 2, 0, 1>} : !wse.tensor<2x3x4xf32, #wse.layout<[-, -, -], x = 0, y = 0>> -> !wse.tensor<4x2x3xf32, #wse.layout<[-, -, -], x = 0, y = 0>>
  %r = wse.take_rows %t[%i] : (!wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>, !wse.tensor<4x1xf32, #wse.layout<[-, -], x = 0, y = 0>>) -> !wse.tensor<4x6xf32, #wse.layout<[-, -], x = 0, y = 0>>
  %g = wse.add_rows %t[%i], %r : (!wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>, !wse.tensor<4x1xf32, #wse.layout<[-, -], x = 0, y = 0>>, !wse.tensor<4x6xf32, #wse.layout<[-, -], x = 0, y = 0>>) -> !wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>
  wse.return %p, %c, %q, %g : !wse.tensor<8x14xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<8x9xf32, #wse.layout<[y, -], x = 0>>, !wse.tensor<4x2x3xf32, #wse.layout<[-, -, -], x = 0, y = 0>>, !wse.tensor<10x6xf32, #wse.layout<[-, -], x = 0, y = 0>>
}

// CHECK:      wse.slice %{{.*}} {start = array<i64: 0, 1>, limit = array<i64: 8, 6>, stride = array<i64: 1, 2>} : {{.*}} -> !wse.tensor<8x3xf32, #wse.layout<[y, -], x = 0>>
// CHECK-NEXT: wse.pad %{{.*}} {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 1>} : {{.*}} -> !wse.tensor<8x14xf32
// CHECK-NEXT: wse.concat %{{.*}}, %{{.*}} {dim = 1 : i64} : {{.*}} -> !wse.tensor<8x9xf32
// CHECK-NEXT: wse.permute %{{.*}} {perm = array<i64: 2, 0, 1>} : {{.*}} -> !wse.tensor<4x2x3xf32
// CHECK-NEXT: wse.take_rows %{{.*}}[%{{.*}}] : {{.*}} -> !wse.tensor<4x6xf32
// CHECK-NEXT: wse.add_rows %{{.*}}[%{{.*}}], %{{.*}} : {{.*}} -> !wse.tensor<10x6xf32
