// A scan along a split dimension whose result is consumed split: a carry
// exchange (local scan, all-gather of the blocks' totals, the masked
// combination of the totals before this block) instead of a gathered operand.
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @cumsum
// CHECK-NEXT: %[[S:.*]] = pyflame.cumsum %x {dim = 1 : i64, reverse = false} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[T:.*]] = pyflame.slice %[[S]] {start = array<i64: 0, 3>, limit = array<i64: 4, 4>, stride = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[G:.*]] = sharding.all_gather %[[T]] {mesh = #sharding.mesh<["m"=2]>, axes = ["m"], dim = 1 : i64} : tensor<4x1xf32> -> tensor<4x2xf32>
// CHECK-NEXT: %[[I:.*]] = pyflame.iota {shape = array<i64: 2>, dim = 0 : i64, dtype = i64}
// CHECK-NEXT: %[[ME:.*]] = sharding.local_slice %[[I]] {{.*}} : tensor<2xi64> -> tensor<1xi64>
// CHECK-NEXT: %[[J:.*]] = pyflame.reshape %[[I]] {shape = array<i64: 1, 2>}
// CHECK-NEXT: %[[K:.*]] = pyflame.reshape %[[ME]] {shape = array<i64: 1, 1>}
// CHECK-NEXT: %[[B:.*]] = pyflame.lt %[[J]], %[[K]]
// CHECK-NEXT: %[[Z:.*]] = pyflame.constant {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[W:.*]] = pyflame.where %[[B]], %[[G]], %[[Z]] : (tensor<1x2xi1>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[C:.*]] = pyflame.sum %[[W]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: pyflame.add %[[S]], %[[C]] : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
// CHECK-NOT: sharding.all_gather
// CHECK: func.return
func.func @cumsum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = pyflame.cumsum %a {dim = 1 : i64, reverse = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// Reversed: each block's first element is its total, and the blocks after it count.
// CHECK-LABEL: func.func @reverse_cumsum
// CHECK: pyflame.slice %{{.*}} {start = array<i64: 0, 0>, limit = array<i64: 4, 1>, stride = array<i64: 1, 1>}
// CHECK: sharding.all_gather
// CHECK: pyflame.gt
func.func @reverse_cumsum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = pyflame.cumsum %a {dim = 1 : i64, reverse = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
