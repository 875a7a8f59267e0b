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

// all_gather, then each device's static block (rows 0-3 on gpu:0, 4-7 on gpu:1),
// taken where the annotation is: x's rows are annotated replicated, so the
// constraint on the sum does not reach back into the softmax
// CHECK-LABEL: mo.graph @gather_slice(
// CHECK: mo.distributed.allgather({{.*}}) [group_size = 2]
// CHECK: rmo.mo.reduce.max
// CHECK: rmo.div
// CHECK: rmo.slice(%{{[0-9]+}}) [starts = #mosh<ape[0]> : !mosh.ape, stops = #mosh<ape[4]> : !mosh.ape{{.*}}gpu:0>
// CHECK: rmo.slice(%{{[0-9]+}}) [starts = #mosh<ape[4]> : !mosh.ape, stops = #mosh<ape[8]> : !mosh.ape{{.*}}gpu:1>
func.func @gather_slice(%x: tensor<8x4xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 1>, keepdim = false} : (tensor<8x4xf32>) -> tensor<8xf32>
  %s = sharding.annotate %1 {sharding = #sharding.sharding<["m"=2], [{"m"}]>} : tensor<8xf32> -> tensor<8xf32>
  %2 = pyflame.add %s, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %2 : tensor<8xf32>
}
