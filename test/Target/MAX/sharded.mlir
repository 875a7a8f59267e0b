// The partitioned sharded MLP as one MAX multi-device graph (built, not
// compiled): every device's copy on DeviceRef.GPU(i), MAX's collectives over
// the mesh groups (contiguous, group_size), one signal buffer per device.
// REQUIRES: max
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition -t max-sharded 2>/dev/null | filecheck %s

// Data parallel over "d", Megatron over "m", on a 2x2 mesh: local x [4, 4],
// W1 [4, 3] (columns), W2 [3, 3] (rows); one allreduce over the "m" pairs.
// CHECK-LABEL: mo.graph @mlp(
// CHECK-SAME: %arg0: !mo.tensor<[4, 4], f32, gpu:0>, %arg1: !mo.tensor<[4, 3], f32, gpu:0>, %arg2: !mo.tensor<[3, 3], f32, gpu:0>
// CHECK-SAME: %arg9: !mo.tensor<[4, 4], f32, gpu:3>
// CHECK-SAME: %arg12: !mo.buffer<[{{[0-9]+}}], ui8, gpu:0>
// CHECK-SAME: -> (!mo.tensor<[4, 3], f32, gpu:0>, !mo.tensor<[4, 3], f32, gpu:1>, !mo.tensor<[4, 3], f32, gpu:2>, !mo.tensor<[4, 3], f32, gpu:3>)
// CHECK-COUNT-4: rmo.matmul(%arg{{[0-9]+}}, %arg{{[0-9]+}})
// CHECK-COUNT-4: rmo.mo.relu
// CHECK-COUNT-4: rmo.matmul
// CHECK: %outputs:4, %{{.*}} = mo.distributed.allreduce.sum(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %arg12, %arg13, %arg14, %arg15, %{{[0-9]+}}) [group_size = 2]
// CHECK: mo.output %outputs#0, %outputs#1, %outputs#2, %outputs#3
func.func @mlp(%x: tensor<8x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x3xf32>) -> tensor<8x3xf32> {
  %xs = sharding.annotate %x {sharding = #sharding.sharding<["d"=2, "m"=2], [{"d"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %a = sharding.annotate %w1 {sharding = #sharding.sharding<["d"=2, "m"=2], [{}, {"m"}]>} : tensor<4x6xf32> -> tensor<4x6xf32>
  %b = sharding.annotate %w2 {sharding = #sharding.sharding<["d"=2, "m"=2], [{"m"}, {}]>} : tensor<6x3xf32> -> tensor<6x3xf32>
  %0 = pyflame.matmul %xs, %a : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = pyflame.relu %0 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %2 = pyflame.matmul %1, %b : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  func.return %2 : tensor<8x3xf32>
}

// A partial sum the consumer wants split: MAX's reducescatter.
// CHECK-LABEL: mo.graph @reduce_scatter(
// CHECK: mo.distributed.reducescatter.sum({{.*}}) [axis = 0, group_size = 2]
// CHECK-NOT: allreduce
// CHECK: mo.output
func.func @reduce_scatter(%x: tensor<8x6xf32>, %w: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0 = pyflame.matmul %a, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// The softmax along the split dimension stays split (its sum reduces it): each
// device's max, a max all-reduce (MAX's allreduce sums only: the maxima are
// all-gathered along a new axis and reduced on each device), the exp-sum
// all-reduce; then the row sum's partial sums are reduce-scattered straight
// into the annotated row blocks (no gather of x, no slice)
// CHECK-LABEL: mo.graph @gather_slice(
// CHECK: rmo.mo.reduce.max(%arg0) [axis = 1]
// CHECK: mo.distributed.allgather({{.*}}) [group_size = 2]
// CHECK: rmo.mo.reduce.max(%{{[0-9]+}}) [axis = 0]
// CHECK: rmo.mo.exp
// CHECK: mo.distributed.allreduce.sum
// CHECK: rmo.div
// CHECK: mo.distributed.reducescatter.sum({{.*}}) [axis = 0, group_size = 2]
// CHECK-NOT: rmo.slice
// CHECK: mo.output
func.func @gather_slice(%x: tensor<8x4xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 1>, keepdim = false} : (tensor<8x4xf32>) -> tensor<8xf32>
  %s = sharding.annotate %1 {sharding = #sharding.sharding<["m"=2], [{"m"}]>} : tensor<8xf32> -> tensor<8xf32>
  %2 = pyflame.add %s, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %2 : tensor<8xf32>
}
