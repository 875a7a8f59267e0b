// Shardings flow from annotations through the factor rules.
// RUN: pyflame-opt %s -p sharding-propagation | filecheck %s

// Data parallel: the batch split of x reaches the matmul, relu and the result;
// the weights stay replicated.
// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: %w: tensor<4x6xf32> {sharding.sharding = #sharding.sharding<["d"=2], [{}, {}]>}
// CHECK: pyflame.matmul {{.*}}sharding.sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>
// CHECK: pyflame.relu {{.*}}sharding.sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>
func.func @data_parallel(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %xs = sharding.annotate %x {sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.matmul %xs, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = pyflame.relu %0 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  func.return %1 : tensor<8x6xf32>
}

// Megatron: W1 split by columns makes h split by columns; W2 split by rows
// makes the contracting factor sharded: the result is a partial sum over "m".
// CHECK-LABEL: func.func @megatron
// CHECK: pyflame.matmul {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>
// CHECK: pyflame.relu {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>
// CHECK: pyflame.matmul {{.*}}sharding.sharding = #sharding.sharding<["m"=2], [{}, {}], partial = {"m"}>
func.func @megatron(%x: tensor<8x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x3xf32>) -> tensor<8x3xf32> {
  %a = sharding.annotate %w1 {sharding = #sharding.sharding<["m"=2], [{}, {"m"}]>} : tensor<4x6xf32> -> tensor<4x6xf32>
  %b = sharding.annotate %w2 {sharding = #sharding.sharding<["m"=2], [{"m"}, {}]>} : tensor<6x3xf32> -> tensor<6x3xf32>
  %0 = pyflame.matmul %x, %a : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = pyflame.relu %0 : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %2 = pyflame.matmul %1, %b : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  func.return %2 : tensor<8x3xf32>
}

// Backward propagation: an annotation on a result reaches the operands;
// transpose permutes the factors; a summed sharded dimension becomes partial.
// CHECK-LABEL: func.func @backward_and_reduce
// CHECK-SAME: %x: tensor<8x4xf32> {sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>}
// CHECK: pyflame.permute {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"b"}, {"a"}]>
// CHECK: pyflame.sum {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"b"}], partial = {"a"}>
func.func @backward_and_reduce(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  %0 = pyflame.permute %x {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %1 = sharding.annotate %0 {sharding = #sharding.sharding<["a"=2, "b"=2], [{"b"}, {"a"}]>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// Softmax keeps its normalized dimension whole; an indivisible dimension stays
// replicated; cumsum keeps its scanned dimension whole.
// CHECK-LABEL: func.func @blocked
// CHECK: pyflame.softmax {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
// CHECK: pyflame.exp {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
// CHECK: pyflame.cumsum {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{}, {}]>
func.func @blocked(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.exp %0 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = pyflame.cumsum %1 {dim = 0 : i64, reverse = false} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %2 : tensor<8x4xf32>
}

// concat keeps the other dimensions' splits and its own dimension whole.
// CHECK-LABEL: func.func @concat
// CHECK: pyflame.concat {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
func.func @concat(%x: tensor<8x4xf32>, %y: tensor<8x2xf32>) -> tensor<8x6xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = pyflame.concat %a, %y {dim = 1 : i64} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<8x6xf32>
  func.return %0 : tensor<8x6xf32>
}
