// legalize-for-max: what the MAX path does to a module before building its
// graph. Fusion is undone (MAX's graph compiler fuses on its own): named fused
// ops become their chains and pyflame.fused regions are inlined; ops MAX has
// rules for (softmax, logsumexp, ...) stay; an op without a MAX rule or a
// decomposition is rejected (test/python/max/test_lowering.py).
// RUN: pyflame-opt %s -p legalize-for-max --split-input-file | filecheck %s

// CHECK-LABEL: func.func @named
// CHECK-NEXT:    %0 = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = pyflame.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = pyflame.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = pyflame.sigmoid %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %4 = pyflame.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %5 = pyflame.add %4, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %6 = pyflame.matmul %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %7 = pyflame.relu %6 : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %8 = pyflame.matmul %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %9 = pyflame.gelu %8 {approximate = "tanh"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %10 = pyflame.softmax %9 {dim = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %1, %3, %5, %7, %10
func.func @named(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = pyflame.fused_add_relu %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.fused_mul_sigmoid %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.fused_fma %a, %b, %c : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.fused_matmul_relu %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %4 = pyflame.fused_matmul_gelu %a, %w {approximate = "tanh"} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %5 = pyflame.softmax %4 {dim = 1} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0, %1, %2, %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A region is inlined, its block arguments bound to its operands, its
// constants kept; a region with two results gives both.
// CHECK-LABEL: func.func @region
// CHECK-NEXT:    %[[C:.*]] = pyflame.constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = pyflame.mul %[[S]], %[[C]] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[T:.*]] = pyflame.sum %[[M]] {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[M]], %[[T]] : tensor<4x8xf32>, tensor<4xf32>
func.func @region(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %r, %t = pyflame.fused %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %c = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %0 = pyflame.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = pyflame.mul %0, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %2 = pyflame.sum %1 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    pyflame.yield %1, %2 : tensor<4x8xf32>, tensor<4xf32>
  }
  func.return %r, %t : tensor<4x8xf32>, tensor<4xf32>
}
