// decompose: ops replaced by the decompositions on their op-table entries.
// softmax/log_softmax/logsumexp are the max-shift form (max, sub, exp, sum,
// then div / sub-log / log-add, keepdim=false reshaped at the end); a fused op
// is its chain. The list spells op names; an empty list means every op with a
// decomposition.
// RUN: pyflame-opt %s -p 'decompose{ops=softmax,log_softmax,logsumexp}' --split-input-file | filecheck %s
// RUN: pyflame-opt %s -p 'decompose{ops=softmax}' --split-input-file | filecheck %s --check-prefix=ONLY
// RUN: pyflame-opt %s -p decompose --split-input-file | filecheck %s --check-prefix=ALL
// RUN: not pyflame-opt %s -p 'decompose{ops=add}' 2>&1 | filecheck %s --check-prefix=NODEC
// RUN: not pyflame-opt %s -p 'decompose{ops=sofmax}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// NODEC: decompose: pyflame.add has no decomposition
// UNKNOWN: decompose: unknown op 'sofmax'

// CHECK-LABEL: func.func @softmax_family
// CHECK-NEXT:    %0 = pyflame.max %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %1 = pyflame.sub %x, %0 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = pyflame.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = pyflame.sum %2 {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %4 = pyflame.div %2, %3 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %5 = pyflame.max %x {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %6 = pyflame.sub %x, %5 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %7 = pyflame.exp %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %8 = pyflame.sum %7 {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %9 = pyflame.log %8 : (tensor<1x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %10 = pyflame.sub %6, %9 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %11 = pyflame.max %x {dims = array<i64: 0, 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %12 = pyflame.sub %x, %11 : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %13 = pyflame.exp %12 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %14 = pyflame.sum %13 {dims = array<i64: 0, 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %15 = pyflame.log %14 : (tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %16 = pyflame.add %15, %11 : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %17 = pyflame.reshape %16 {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
// CHECK-NEXT:    %18 = pyflame.max %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %19 = pyflame.sub %x, %18 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %20 = pyflame.exp %19 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %21 = pyflame.sum %20 {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %22 = pyflame.log %21 : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %23 = pyflame.add %22, %18 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %4, %10, %17, %23 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x1xf32>
// ONLY-LABEL: func.func @softmax_family
// ONLY:         pyflame.div
// ONLY-NEXT:    pyflame.log_softmax %x {dim = 0 : i64}
// ONLY-NEXT:    pyflame.logsumexp %x {dims = array<i64: 0, 1>, keepdim = false}
// ONLY-NEXT:    pyflame.logsumexp %x {dims = array<i64: 1>, keepdim = true}
func.func @softmax_family(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x1xf32>) {
  %0 = pyflame.softmax %x {dim = 1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.log_softmax %x {dim = 0} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.logsumexp %x {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  %3 = pyflame.logsumexp %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x1xf32>
}

// -----

// A fused op is left alone unless listed; with every decomposition, it is its chain.
// CHECK-LABEL: func.func @fused
// CHECK-NEXT:    pyflame.fused_matmul_gelu %a, %w {approximate = "tanh"}
// ALL-LABEL: func.func @fused
// ALL-NEXT:    %0 = pyflame.matmul %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// ALL-NEXT:    %1 = pyflame.gelu %0 {approximate = "tanh"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// ALL-NEXT:    %2 = pyflame.mul %b, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// ALL-NEXT:    %3 = pyflame.add %2, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// ALL-NEXT:    func.return %1, %3
func.func @fused(%a: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<8xf32>) -> (tensor<4x3xf32>, tensor<8xf32>) {
  %0 = pyflame.fused_matmul_gelu %a, %w {approximate = "tanh"} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = pyflame.fused_fma %b, %b, %b : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %0, %1 : tensor<4x3xf32>, tensor<8xf32>
}
