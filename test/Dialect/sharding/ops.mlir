// The sharding dialect's attributes and ops round-trip through pyflame-opt.
// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s | pyflame-opt | filecheck %s

// CHECK-LABEL: func.func @annotate
// CHECK: sharding.annotate %{{.*}} {sharding = #sharding.sharding<["data"=2, "model"=2], [{"data"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK: sharding.annotate %{{.*}} {sharding = #sharding.sharding<["data"=2, "model"=2], [{}, {"model", "data"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
func.func @annotate(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = sharding.annotate %x {sharding = #sharding.sharding<["data"=2, "model"=2], [{"data"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["data"=2, "model"=2], [{}, {"model", "data"}], partial = {}>} : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @collectives
// CHECK: sharding.all_reduce %{{.*}} {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["m"], reduction = "sum"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: sharding.all_gather %{{.*}} {{.*}}axes = ["d", "m"]{{.*}} : tensor<4x8xf32> -> tensor<4x64xf32>
// CHECK: sharding.reduce_scatter %{{.*}} : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK: sharding.all_to_all %{{.*}} : tensor<4x8xf32> -> tensor<16x2xf32>
// CHECK: sharding.ppermute %{{.*}} {{.*}}pairs = array<i64: 0, 1, 1, 0>{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: sharding.local_slice %{{.*}} {sharding = #sharding.sharding<["d"=2, "m"=4], [{"d"}, {"m"}]>} : tensor<4x8xf32> -> tensor<2x2xf32>
func.func @collectives(%x: tensor<4x8xf32>) {
  %0 = sharding.all_reduce %x {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["m"], reduction = "sum"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = sharding.all_gather %x {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["d", "m"], dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x64xf32>
  %2 = sharding.reduce_scatter %x {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["m"], dim = 0 : i64} : tensor<4x8xf32> -> tensor<1x8xf32>
  %3 = sharding.all_to_all %x {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["m"], split_dim = 1 : i64, concat_dim = 0 : i64} : tensor<4x8xf32> -> tensor<16x2xf32>
  %4 = sharding.ppermute %x {mesh = #sharding.mesh<["d"=2, "m"=4]>, axes = ["d"], pairs = array<i64: 0, 1, 1, 0>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = sharding.local_slice %x {sharding = #sharding.sharding<["d"=2, "m"=4], [{"d"}, {"m"}]>} : tensor<4x8xf32> -> tensor<2x2xf32>
  func.return
}
