// The global program becomes one device's: local shapes and collectives.
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// Data parallel: no communication in the forward program, local batch of 4.
// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: (%x: tensor<4x4xf32> {{.*}}, %w: tensor<4x6xf32> {{.*}}) -> (tensor<4x6xf32> {sharding.sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>})
// CHECK-NEXT: pyflame.matmul %x, %w : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NOT: sharding.
// CHECK: func.return
func.func @data_parallel(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %xs = sharding.annotate %x {sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.matmul %xs, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = pyflame.relu %0 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  func.return %1 : tensor<8x6xf32>
}

// Megatron column/row: local weight blocks, one all-reduce of the partial sums.
// CHECK-LABEL: func.func @megatron
// CHECK-SAME: %w1: tensor<4x3xf32>
// CHECK-SAME: %w2: tensor<3x3xf32>
// CHECK: %[[H:.*]] = pyflame.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[R:.*]] = pyflame.relu %[[H]]
// CHECK: %[[P:.*]] = pyflame.matmul %[[R]], %w2 : (tensor<8x3xf32>, tensor<3x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[S:.*]] = sharding.all_reduce %[[P]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "sum"} : tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK: func.return %[[S]]
func.func @megatron(%x: tensor<8x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x3xf32>) -> tensor<8x3xf32> {
  %a = sharding.annotate %w1 {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x6xf32> -> tensor<4x6xf32>
  %b = sharding.annotate %w2 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<6x3xf32> -> tensor<6x3xf32>
  %0 = pyflame.matmul %x, %a : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = pyflame.relu %0 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %2 = pyflame.matmul %1, %b : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  func.return %2 : tensor<8x3xf32>
}

// A partial sum whose consumer wants it split over the same axis: reduce-scatter.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: %[[P:.*]] = pyflame.matmul %{{.*}} -> tensor<8x4xf32>
// CHECK: sharding.reduce_scatter %[[P]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NOT: sharding.all_reduce
func.func @reduce_scatter(%x: tensor<8x6xf32>, %w: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0 = pyflame.matmul %a, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// Resharding: gather a split the op cannot take, cut a replicated value locally
// (two annotations meet at the add: the longer split wins); reshape takes the
// local target shape.
// CHECK-LABEL: func.func @reshard
// CHECK: sharding.all_gather %x {{.*}}axes = ["b"], dim = 1 : i64{{.*}} : tensor<4x2xf32> -> tensor<4x4xf32>
// CHECK: pyflame.softmax
// CHECK: pyflame.reshape %{{.*}} {shape = array<i64: 16>} : (tensor<4x4xf32>) -> tensor<16xf32>
// CHECK: sharding.local_slice %y {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}]>} : tensor<32xf32> -> tensor<16xf32>
// CHECK: pyflame.add
func.func @reshard(%x: tensor<8x4xf32>, %y: tensor<32xf32>) -> tensor<32xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.reshape %0 {shape = array<i64: 32>} : (tensor<8x4xf32>) -> tensor<32xf32>
  %s = sharding.annotate %1 {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}]>} : tensor<32xf32> -> tensor<32xf32>
  %b = sharding.annotate %y {sharding = #sharding.sharding<["a"=2, "b"=2], [{}]>} : tensor<32xf32> -> tensor<32xf32>
  %2 = pyflame.add %s, %b : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  func.return %2 : tensor<32xf32>
}
