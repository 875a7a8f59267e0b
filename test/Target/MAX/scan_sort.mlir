// prod, scans and sort to MO. prod is MO's reduce.mul (integers widen to int64);
// cumsum is MO's cumsum (reverse as an attribute). The other scans have no MO
// op: Hillis-Steele scans (dialects/scan.py SCANS), ceil(log2 n) steps of the
// operand shifted 2^t places (slice + concat with the identity) combined with
// itself; O(n log n), no [n, n] grid. sort is two of MO's top_k/bottom_k
// (lowering/to_max.py _sort): a sort of the key (NaN as +inf), the runs of equal
// keys numbered by a cumsum, then a bottom_k of the distinct int64 keys
// (run * 2 + nan) * n + position: the stable order, whatever order MO's top_k
// gives equal keys; the position is that key mod n, the values a gather.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @scans(
func.func @scans(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>) -> (tensor<3xf32>, tensor<4xi64>, tensor<3x4xf32>, tensor<3x4xf32>) {
  // CHECK: rmo.mo.reduce.mul(%arg0) [axis = 1] : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 1], f32>
  %0 = pyflame.prod %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  // CHECK: %[[W:.*]] = mo.cast(%arg1) : (!mo.tensor<[3, 4], si32>) -> !mo.tensor<[3, 4], si64>
  // CHECK: rmo.mo.reduce.mul(%[[W]]) [axis = 0] : (!mo.tensor<[3, 4], si64>) -> !mo.tensor<[1, 4], si64>
  %1 = pyflame.prod %i {dims = array<i64: 0>, keepdim = false} : (tensor<3x4xi32>) -> tensor<4xi64>
  // CHECK: rmo.mo.cumsum(%arg0) [axis = 1, exclusive = 0, reverse = 1]
  %2 = pyflame.cumsum %x {dim = 1 : i64, reverse = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // logcumsumexp: two steps (shifts by 1 and 2), each a log1p(exp(-|a - b|)) + max
  // CHECK-NOT: !mo.tensor<[3, 4, 4], f32>
  // CHECK: rmo.slice(%arg0) [starts = #mosh<ape[0, 0]> : !mosh.ape, stops = #mosh<ape[3, 3]> : !mosh.ape
  // CHECK: rmo.concat(%{{.*}}, %{{.*}}) [axis = 1 : index] : (!mo.tensor<[3, 1], f32>, !mo.tensor<[3, 3], f32>) -> !mo.tensor<[3, 4], f32>
  // CHECK: rmo.mo.log1p
  // CHECK: rmo.slice(%{{.*}}) [starts = #mosh<ape[0, 0]> : !mosh.ape, stops = #mosh<ape[3, 2]> : !mosh.ape
  // CHECK: rmo.concat(%{{.*}}, %{{.*}}) [axis = 1 : index] : (!mo.tensor<[3, 2], f32>, !mo.tensor<[3, 2], f32>) -> !mo.tensor<[3, 4], f32>
  // CHECK: rmo.mo.log1p
  // CHECK-NOT: rmo.slice
  // CHECK: mo.output
  %3 = pyflame.logcumsumexp %x {dim = 1 : i64, reverse = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0, %1, %2, %3 : tensor<3xf32>, tensor<4xi64>, tensor<3x4xf32>, tensor<3x4xf32>
}

// CHECK-LABEL: mo.graph @sort(
func.func @sort(%x: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>) {
  // CHECK: %[[T:.*]] = rmo.mo.transpose(%arg0, %{{.*}})
  // CHECK: rmo.mo.is_nan(%[[T]]) : (!mo.tensor<[3, 5], f32>) -> !mo.tensor<[3, 5], bool>
  // CHECK: %{{.*}}, %{{.*}} = rmo.top_k(%{{.*}}) [k = 5, axis = -1] : (!mo.tensor<[3, 5], f32>)
  // CHECK: rmo.mo.cumsum(%{{.*}}) [axis = 1, exclusive = 0, reverse = 0] : (!mo.tensor<[3, 5], si64>)
  // CHECK: rmo.mo.gather
  // CHECK: %[[KEYS:.*]], %{{.*}} = rmo.mo.bottom_k(%{{.*}}) : (!mo.tensor<[3, 5], si64>
  // CHECK: rmo.mod(%[[KEYS]], %{{.*}}) : (!mo.tensor<[3, 5], si64>, !mo.tensor<[], si64>) -> !mo.tensor<[3, 5], si64>
  // CHECK: rmo.mo.gather
  // CHECK: rmo.mo.transpose
  %0, %1 = pyflame.sort %x {dim = 0 : i64, descending = true} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xi64>)
  func.return %0, %1 : tensor<5x3xf32>, tensor<5x3xi64>
}
