// softmax and logsumexp along a dimension split over "m", without gathering
// it: the shard's max all-reduced (max; a constant for autodiff), the shard's
// sum of exponentials all-reduced (sum). A softmax every use sums over its
// dimension stays split; logsumexp reduces the split dimension in place.
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @soft_targets
// CHECK: %[[L:.*]] = pyflame.matmul %h, %w : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[M:.*]] = pyflame.max %[[L]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[MM:.*]] = sharding.all_reduce %[[M]] {sharding.stop_gradient, mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "max"} : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[Z:.*]] = pyflame.sub %[[L]], %[[MM]]
// CHECK-NEXT: %[[E:.*]] = pyflame.exp %[[Z]]
// CHECK-NEXT: %[[S:.*]] = pyflame.sum %[[E]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[SS:.*]] = sharding.all_reduce %[[S]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "sum"} : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[P:.*]] = pyflame.div %[[E]], %[[SS]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: pyflame.mul %[[P]], %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[M2:.*]] = pyflame.max %[[L]]
// CHECK-NEXT: %[[MM2:.*]] = sharding.all_reduce %[[M2]] {sharding.stop_gradient
// CHECK: %[[S2:.*]] = sharding.all_reduce %{{.*}} {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "sum"} : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[LG:.*]] = pyflame.log %[[S2]]
// CHECK-NEXT: %[[LSE:.*]] = pyflame.add %[[MM2]], %[[LG]] : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: pyflame.reshape %[[LSE]] {shape = array<i64: 4>} : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NOT: sharding.all_gather
// CHECK-NOT: pyflame.softmax
// CHECK-NOT: pyflame.logsumexp
func.func @soft_targets(%h: tensor<4x4xf32>, %w: tensor<4x16xf32>, %t: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %ws = sharding.annotate %w {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x16xf32> -> tensor<4x16xf32>
  %0 = pyflame.matmul %h, %ws : (tensor<4x4xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = pyflame.softmax %0 {dim = 1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = pyflame.mul %1, %t : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = pyflame.sum %2 {dims = array<i64: 1>, keepdim = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %4 = pyflame.logsumexp %0 {dims = array<i64: 1>, keepdim = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  func.return %3, %4 : tensor<4xf32>, tensor<4xf32>
}
