// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse | filecheck %s
// Slice, pad, concat and a reshape across dims on 2x2 PEs: the dims they cut,
// pad or join are gathered whole (wse.gather) from the tiled exp, the other dims
// keep their tiling, and the window is a local copy on every PE; a host input
// (b) is placed whole on column 0, where the replicated exp serves it too.

module attributes {wse.grid = "2x2"} {
  func.func @main(%a: tensor<8x6xf32>, %b: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x8xf32>, tensor<8x9xf32>, tensor<4x12xf32>) {
    %e = pyflame.exp %a : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %0 = pyflame.slice %e {start = array<i64: 0, 1>, limit = array<i64: 8, 5>, stride = array<i64: 1, 2>} : (tensor<8x6xf32>) -> tensor<8x2xf32>
    %1 = pyflame.concat %e, %b {dim = 1 : i64} : (tensor<8x6xf32>, tensor<8x2xf32>) -> tensor<8x8xf32>
    %2 = pyflame.pad %e {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<8x6xf32>) -> tensor<8x9xf32>
    %3 = pyflame.reshape %e {shape = array<i64: 4, 12>} : (tensor<8x6xf32>) -> tensor<4x12xf32>
    func.return %0, %1, %2, %3 : tensor<8x2xf32>, tensor<8x8xf32>, tensor<8x9xf32>, tensor<4x12xf32>
  }
}


// CHECK:      ^bb0(%[[A:.*]]: !wse.tensor<8x6xf32, #wse.layout<[y, x]>>, %[[B:.*]]: !wse.tensor<8x2xf32, #wse.layout<[y, -], x = 0>>):
// CHECK-NEXT:   %[[E:.*]] = wse.map "exp"(%[[A]])
// CHECK-NEXT:   %[[G:.*]] = wse.gather "x" %[[E]] : {{.*}} -> !wse.tensor<8x6xf32, #wse.layout<[y, -], x = *>>
// CHECK-NEXT:   %{{.*}} = wse.slice %[[G]] {start = array<i64: 0, 1>, limit = array<i64: 8, 5>, stride = array<i64: 1, 2>} : {{.*}} -> !wse.tensor<8x2xf32, #wse.layout<[y, -], x = *>>
// CHECK-NEXT:   %{{.*}} = wse.concat %[[G]], %[[B]] {dim = 1 : i64} : {{.*}} -> !wse.tensor<8x8xf32, #wse.layout<[y, -], x = 0>>
// CHECK-NEXT:   %{{.*}} = wse.pad %[[G]] {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : {{.*}} -> !wse.tensor<8x9xf32, #wse.layout<[y, -], x = *>>
// CHECK-NEXT:   %[[W:.*]] = wse.gather "y" %[[G]] : {{.*}} -> !wse.tensor<8x6xf32, #wse.layout<[-, -], x = *, y = *>>
// CHECK-NEXT:   %{{.*}} = wse.reshape %[[W]] : {{.*}} -> !wse.tensor<4x12xf32, #wse.layout<[-, -], x = *, y = *>>
