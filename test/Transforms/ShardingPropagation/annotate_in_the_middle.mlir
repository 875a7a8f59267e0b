// Annotations in the middle of a program (pf.reshard inside a partition-ed
// function): hard constraints on their results; they seed their operand only
// where nothing else decided its layout.
// RUN: pyflame-opt %s -p sharding-propagation | filecheck %s

// Megatron-SP: the residual stream split on the sequence (dim 0) over "m"; the
// whole sequence before the column-parallel matmul, sequence blocks after the
// row-parallel one. The tanh keeps its operand's sequence blocks (the
// annotation after it does not pull them back), the second matmul stays a
// partial sum over "m" (its operand's layout, not the annotation's).
// CHECK-LABEL: func.func @sequence_parallel
// CHECK: pyflame.tanh {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>
// CHECK: sharding.annotate {{.*}}[{}, {}]>
// CHECK: pyflame.matmul {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>
// CHECK: pyflame.relu {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>
// CHECK: pyflame.matmul {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {}], partial = {"m"}>
// CHECK: sharding.annotate {{.*}}[{"m"}, {}]>
// CHECK: pyflame.add {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>
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

// An operand nothing else lays out takes the annotation's layout, backwards
// through the ops before it (the argument arrives split: no communication).
// CHECK-LABEL: func.func @seeds_backward
// CHECK-SAME: {sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>}
// CHECK: pyflame.exp {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>
func.func @seeds_backward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = pyflame.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}
