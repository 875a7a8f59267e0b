// Fused ops lower to the chains they stand for (MAX's graph compiler fuses
// elementwise chains and matmul epilogues itself); a pyflame.fused region is
// inlined, its block arguments bound to its operands.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @named(
func.func @named(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  // CHECK: %[[A:.*]] = rmo.add(%arg0, %arg1)
  // CHECK-NEXT: %[[AR:.*]] = rmo.mo.relu(%[[A]])
  %0 = pyflame.fused_add_relu %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[M:.*]] = rmo.mul(%arg0, %arg1)
  // CHECK-NEXT: %[[MS:.*]] = rmo.mo.sigmoid(%[[M]])
  %1 = pyflame.fused_mul_sigmoid %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[F:.*]] = rmo.mul(%arg0, %arg1)
  // CHECK-NEXT: %[[FMA:.*]] = rmo.add(%[[F]], %arg2)
  %2 = pyflame.fused_fma %a, %b, %c : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MM:.*]] = rmo.matmul(%arg0, %arg3)
  // CHECK-NEXT: %[[MR:.*]] = rmo.mo.relu(%[[MM]])
  %3 = pyflame.fused_matmul_relu %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  // CHECK: %[[MG:.*]] = rmo.matmul(%arg0, %arg3)
  // CHECK-NEXT: %[[G:.*]] = rmo.mo.gelu_tanh(%[[MG]])
  %4 = pyflame.fused_matmul_gelu %a, %w {approximate = "tanh"} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  // CHECK: mo.output %[[AR]], %[[MS]], %[[FMA]], %[[MR]], %[[G]] :
  func.return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: mo.graph @region(
func.func @region(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK: %[[S:.*]] = rmo.add(%arg0, %arg1)
  // CHECK-NEXT: %[[R:.*]] = rmo.mo.relu(%[[S]])
  // CHECK-NEXT: %[[T:.*]] = rmo.mo.reduce.add(%[[R]]) [axis = 1]
  // CHECK-NEXT: %[[TR:.*]] = rmo.reshape(%[[T]]) [newShape = #mosh<ape[4]> : !mosh.ape]
  %r, %t = pyflame.fused %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %0 = pyflame.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = pyflame.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = pyflame.sum %1 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    pyflame.yield %1, %2 : tensor<4x8xf32>, tensor<4xf32>
  }
  // CHECK: mo.output %[[R]], %[[TR]] :
  func.return %r, %t : tensor<4x8xf32>, tensor<4xf32>
}
