// Factor rules of the indexing, shape, scan and sorting ops.
// RUN: pyflame-opt %s -p sharding-propagation | filecheck %s

// gather: the table dimension of x is a reduction factor (Megatron's
// vocabulary-parallel lookup): split over "a", it makes the result a partial sum
// over "a"; the index's positions lose "a" to it; its other dimension, which
// covers x's whole, shares x's split ("b").
// CHECK-LABEL: func.func @gather
// CHECK: pyflame.gather {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{}, {"b"}], partial = {"a"}>
func.func @gather(%t: tensor<16x8xf32>, %i: tensor<12x8xi64>) -> tensor<12x8xf32> {
  %ts = sharding.annotate %t {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<16x8xf32> -> tensor<16x8xf32>
  %is = sharding.annotate %i {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>} : tensor<12x8xi64> -> tensor<12x8xi64>
  %0 = pyflame.gather %ts, %is {dim = 0 : i64} : (tensor<16x8xf32>, tensor<12x8xi64>) -> tensor<12x8xf32>
  func.return %0 : tensor<12x8xf32>
}

// slice and pad: a dimension taken whole keeps its split; a sliced or padded one
// is replicated.
// CHECK-LABEL: func.func @slice_pad
// CHECK: pyflame.slice {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
// CHECK: pyflame.pad {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
func.func @slice_pad(%x: tensor<8x8xf32>) -> tensor<8x7xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %0 = pyflame.slice %a {start = array<i64: 0, 2>, limit = array<i64: 8, 6>, stride = array<i64: 1, 1>} : (tensor<8x8xf32>) -> tensor<8x4xf32>
  %1 = pyflame.pad %0 {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<8x4xf32>) -> tensor<8x7xf32>
  func.return %1 : tensor<8x7xf32>
}

// A scan keeps its scanned dimension whole and the other split; sort likewise
// (both results share the op's one sharding).
// CHECK-LABEL: func.func @sort_scan
// CHECK: pyflame.cumsum {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{}, {"b"}]>
// CHECK: pyflame.sort {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{}, {}]>
func.func @sort_scan(%x: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xi64>) {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0 = pyflame.cumsum %a {dim = 0 : i64, reverse = false} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %1, %2 = pyflame.sort %0 {dim = 1 : i64, descending = false} : (tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xi64>)
  func.return %1, %2 : tensor<8x6xf32>, tensor<8x6xi64>
}

// split: the pieces keep the other dimensions' split, the split one whole.
// CHECK-LABEL: func.func @split
// CHECK: pyflame.split {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
func.func @split(%x: tensor<8x6xf32>) -> tensor<8x2xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0, %1 = pyflame.split %a {sizes = array<i64: 4, 2>, dim = 1 : i64} : (tensor<8x6xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>)
  func.return %1 : tensor<8x2xf32>
}

// log_softmax keeps its normalized dimension split where every use of its
// result is reduced along it (the cross entropy pattern: no gathered logits),
// and whole where its result is wanted whole; a reshape adding a size-1
// dimension carries the split on the dimension of the same size.
// CHECK-LABEL: func.func @log_softmax_reshape
// CHECK: pyflame.log_softmax {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>
// CHECK: pyflame.sum {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}], partial = {"b"}>
// CHECK: pyflame.log_softmax {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>
// CHECK: pyflame.reshape {{.*}}sharding.sharding = #sharding.sharding<["a"=2, "b"=2], [{}, {"b"}]>
func.func @log_softmax_reshape(%x: tensor<8x4xf32>, %v: tensor<4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>, tensor<1x4xf32>) {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x4xf32> -> tensor<8x4xf32>
  %b = sharding.annotate %v {sharding = #sharding.sharding<["a"=2, "b"=2], [{"b"}]>} : tensor<4xf32> -> tensor<4xf32>
  %0 = pyflame.log_softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 1>, keepdim = false} : (tensor<8x4xf32>) -> tensor<8xf32>
  %2 = pyflame.log_softmax %a {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = pyflame.reshape %b {shape = array<i64: 1, 4>} : (tensor<4xf32>) -> tensor<1x4xf32>
  func.return %1, %2, %3 : tensor<8xf32>, tensor<8x4xf32>, tensor<1x4xf32>
}
