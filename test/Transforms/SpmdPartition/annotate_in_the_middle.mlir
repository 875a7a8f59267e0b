// Annotations in the middle of a program become resharding at that point:
// Megatron-SP's all-gather before the column-parallel layer and reduce-scatter
// after the row-parallel one, the weights staying local.
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @sequence_parallel
// CHECK-SAME: (%x: tensor<4x4xf32> {{.*}}, %w1: tensor<4x3xf32> {{.*}}, %w2: tensor<3x4xf32> {{.*}})
// CHECK-NEXT: %[[T:.*]] = pyflame.tanh %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[G:.*]] = sharding.all_gather %[[T]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], dim = 0 : i64} : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[H:.*]] = pyflame.matmul %[[G]], %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[R:.*]] = pyflame.relu %[[H]]
// CHECK-NEXT: %[[P:.*]] = pyflame.matmul %[[R]], %w2 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[S:.*]] = sharding.reduce_scatter %[[P]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[Y:.*]] = pyflame.add %x, %[[S]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return %[[Y]]
// CHECK-NOT: sharding.all_reduce
func.func @sequence_parallel(%x: tensor<8x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %xs = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %a = sharding.annotate %w1 {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x6xf32> -> tensor<4x6xf32>
  %b = sharding.annotate %w2 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<6x4xf32> -> tensor<6x4xf32>
  %0 = pyflame.tanh %xs : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["m"=2], [{}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %2 = pyflame.matmul %1, %a : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %3 = pyflame.relu %2 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %4 = pyflame.matmul %3, %b : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %5 = sharding.annotate %4 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %6 = pyflame.add %xs, %5 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %6 : tensor<8x4xf32>
}
