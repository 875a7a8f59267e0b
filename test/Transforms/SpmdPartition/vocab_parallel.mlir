// Megatron's vocabulary-parallel cross entropy: logits split by vocabulary
// ("m") are not gathered before log_softmax; the one-hot pick of the target
// logit is a partial sum over "m".
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: %w: tensor<4x8xf32>
// CHECK: %[[L:.*]] = pyflame.matmul %h, %w : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[M:.*]] = pyflame.max %[[L]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[MM:.*]] = sharding.all_reduce %[[M]] {sharding.stop_gradient, mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "max"} : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[Z:.*]] = pyflame.sub %[[L]], %[[MM]]
// CHECK-NEXT: %[[E:.*]] = pyflame.exp %[[Z]]
// CHECK-NEXT: %[[S:.*]] = pyflame.sum %[[E]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[SS:.*]] = sharding.all_reduce %[[S]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "sum"} : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[LG:.*]] = pyflame.log %[[SS]]
// CHECK-NEXT: %[[LP:.*]] = pyflame.sub %[[Z]], %[[LG]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: sharding.local_slice %{{.*}} : tensor<16xi64> -> tensor<8xi64>
// CHECK: %[[P:.*]] = pyflame.sum %{{.*}} {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: sharding.all_reduce %[[P]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], reduction = "sum"} : tensor<4xf32> -> tensor<4xf32>
// CHECK-NOT: sharding.all_gather
func.func @cross_entropy(%h: tensor<4x4xf32>, %w: tensor<4x16xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %ws = sharding.annotate %w {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x16xf32> -> tensor<4x16xf32>
  %0 = pyflame.matmul %h, %ws : (tensor<4x4xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = pyflame.log_softmax %0 {dim = 1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = pyflame.iota {shape = array<i64: 16>, dim = 0 : i64, dtype = i64} : () -> tensor<16xi64>
  %3 = pyflame.reshape %2 {shape = array<i64: 1, 16>} : (tensor<16xi64>) -> tensor<1x16xi64>
  %4 = pyflame.reshape %y {shape = array<i64: 4, 1>} : (tensor<4xi64>) -> tensor<4x1xi64>
  %5 = pyflame.eq %4, %3 : (tensor<4x1xi64>, tensor<1x16xi64>) -> tensor<4x16xi1>
  %z = pyflame.constant {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %6 = pyflame.where %5, %1, %z : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %7 = pyflame.sum %6 {dims = array<i64: 1>, keepdim = false} : (tensor<4x16xf32>) -> tensor<4xf32>
  %8 = pyflame.mean %7 {dims = array<i64: 0>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  %9 = pyflame.neg %8 : (tensor<f32>) -> tensor<f32>
  func.return %9 : tensor<f32>
}
