// Partitioning the indexing, shape, scan and sorting ops: what their factor
// rules leave unsplit is gathered first, never computed on a wrong block.
// RUN: pyflame-opt %s -p sharding-propagation,spmd-partition 2>/dev/null | filecheck %s

// gather with the table split by rows over "a": each device looks up the
// positions in its block (rows lo..hi, the extremes of its block of an iota),
// reads row 0 for the others and zeros them; an all-reduce over "a" sums the
// devices' shares. The index, split over "a" too, is gathered first.
// CHECK-LABEL: func.func @gather
// CHECK: %[[I:.*]] = sharding.all_gather %i {{.*}}axes = ["a"], dim = 0 : i64} : tensor<6x8xi64> -> tensor<12x8xi64>
// CHECK: %[[IB:.*]] = sharding.local_slice %[[I]] {{.*}} : tensor<12x8xi64> -> tensor<12x4xi64>
// CHECK: %[[POS:.*]] = pyflame.iota {shape = array<i64: 16>, dim = 0 : i64, dtype = i64}
// CHECK: %[[MINE:.*]] = sharding.local_slice %[[POS]] {{.*}} : tensor<16xi64> -> tensor<8xi64>
// CHECK: %[[LO:.*]] = pyflame.min %[[MINE]]
// CHECK: %[[HI:.*]] = pyflame.max %[[MINE]]
// CHECK: pyflame.ge %[[IB]], %[[LO]]
// CHECK: pyflame.le %[[IB]], %[[HI]]
// CHECK: %[[ROWS:.*]] = pyflame.gather %t, %{{.*}} {dim = 0 : i64} : (tensor<8x4xf32>, tensor<12x4xi64>) -> tensor<12x4xf32>
// CHECK: %[[OUT:.*]] = pyflame.mul %[[ROWS]], %{{.*}} : (tensor<12x4xf32>, tensor<12x4xf32>) -> tensor<12x4xf32>
// CHECK: %[[SUM:.*]] = sharding.all_reduce %[[OUT]] {{.*}}axes = ["a"], reduction = "sum"}
// CHECK: func.return %[[SUM]]
func.func @gather(%t: tensor<16x8xf32>, %i: tensor<12x8xi64>) -> tensor<12x8xf32> {
  %ts = sharding.annotate %t {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<16x8xf32> -> tensor<16x8xf32>
  %is = sharding.annotate %i {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {}]>} : tensor<12x8xi64> -> tensor<12x8xi64>
  %0 = pyflame.gather %ts, %is {dim = 0 : i64} : (tensor<16x8xf32>, tensor<12x8xi64>) -> tensor<12x8xf32>
  func.return %0 : tensor<12x8xf32>
}

// slice: the sliced dimension is gathered first; the whole one ends at its local
// size (limit 4, not the global 8).
// CHECK-LABEL: func.func @slice_pad
// CHECK: sharding.all_gather %x {{.*}}axes = ["b"], dim = 1 : i64} : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: pyflame.slice {{.*}}limit = array<i64: 4, 6>{{.*}} : (tensor<4x8xf32>) -> tensor<4x4xf32>
// CHECK: pyflame.pad {{.*}} : (tensor<4x4xf32>) -> tensor<4x7xf32>
func.func @slice_pad(%x: tensor<8x8xf32>) -> tensor<8x7xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %0 = pyflame.slice %a {start = array<i64: 0, 2>, limit = array<i64: 8, 6>, stride = array<i64: 1, 1>} : (tensor<8x8xf32>) -> tensor<8x4xf32>
  %1 = pyflame.pad %0 {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<8x4xf32>) -> tensor<8x7xf32>
  func.return %1 : tensor<8x7xf32>
}

// The scan dimension is gathered before the scan, the sort dimension before sort.
// CHECK-LABEL: func.func @sort_scan
// CHECK: sharding.all_gather %x {{.*}}axes = ["a"], dim = 0 : i64
// CHECK: pyflame.cumsum {{.*}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: sharding.all_gather {{.*}}axes = ["b"], dim = 1 : i64
// CHECK: pyflame.sort {{.*}} -> (tensor<8x6xf32>, tensor<8x6xi64>)
func.func @sort_scan(%x: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xi64>) {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0 = pyflame.cumsum %a {dim = 0 : i64, reverse = false} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %1, %2 = pyflame.sort %0 {dim = 1 : i64, descending = false} : (tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xi64>)
  func.return %1, %2 : tensor<8x6xf32>, tensor<8x6xi64>
}

// CHECK-LABEL: func.func @split
// CHECK: sharding.all_gather %x {{.*}}axes = ["b"], dim = 1 : i64
// CHECK: %{{.*}}, %[[B:.*]] = pyflame.split {{.*}} -> (tensor<4x4xf32>, tensor<4x2xf32>)
// CHECK: func.return %[[B]] : tensor<4x2xf32>
func.func @split(%x: tensor<8x6xf32>) -> tensor<8x2xf32> {
  %a = sharding.annotate %x {sharding = #sharding.sharding<["a"=2, "b"=2], [{"a"}, {"b"}]>} : tensor<8x6xf32> -> tensor<8x6xf32>
  %0, %1 = pyflame.split %a {sizes = array<i64: 4, 2>, dim = 1 : i64} : (tensor<8x6xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>)
  func.return %1 : tensor<8x2xf32>
}
