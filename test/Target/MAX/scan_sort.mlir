// prod, scans and sort to MO. prod is MO's reduce.mul (integers widen to int64);
// cumsum is MO's cumsum (reverse as an attribute); the other scans and sort have
// no MO op here and lower as their decompositions: the operand broadcast over a
// new [n, n] grid, masked, and reduced over the new axis (exact, O(n^2)).
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @scans(
func.func @scans(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>) -> (tensor<3xf32>, tensor<4xi64>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xi64>) {
  // CHECK: rmo.mo.reduce.mul(%arg0) [axis = 1] : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 1], f32>
  %0 = pyflame.prod %x {dims = array<i64: 1>, keepdim = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  // CHECK: %[[W:.*]] = mo.cast(%arg1) : (!mo.tensor<[3, 4], si32>) -> !mo.tensor<[3, 4], si64>
  // CHECK: rmo.mo.reduce.mul(%[[W]]) [axis = 0] : (!mo.tensor<[3, 4], si64>) -> !mo.tensor<[1, 4], si64>
  %1 = pyflame.prod %i {dims = array<i64: 0>, keepdim = false} : (tensor<3x4xi32>) -> tensor<4xi64>
  // CHECK: rmo.mo.cumsum(%arg0) [axis = 1, exclusive = 0, reverse = 1]
  %2 = pyflame.cumsum %x {dim = 1 : i64, reverse = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // logcumsumexp: a logsumexp over the masked [3, 4, 4] grid
  // CHECK: rmo.broadcast_to(%{{.*}}) [newShape = #mosh<ape[3, 4, 4]> : !mosh.ape] : (!mo.tensor<[3, 1, 4], f32>) -> !mo.tensor<[3, 4, 4], f32>
  // CHECK: rmo.mo.reduce.max(%{{.*}}) [axis = 2] : (!mo.tensor<[3, 4, 4], f32>) -> !mo.tensor<[3, 4, 1], f32>
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 2] : (!mo.tensor<[3, 4, 4], f32>) -> !mo.tensor<[3, 4, 1], f32>
  %3 = pyflame.logcumsumexp %x {dim = 1 : i64, reverse = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // sort: ranks (a count over the grid), then the element of each rank
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 1] : (!mo.tensor<[3, 4, 4], si64>) -> !mo.tensor<[3, 1, 4], si64>
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 2] : (!mo.tensor<[3, 4, 4], f32>) -> !mo.tensor<[3, 4, 1], f32>
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 2] : (!mo.tensor<[3, 4, 4], si64>) -> !mo.tensor<[3, 4, 1], si64>
  %4, %5 = pyflame.sort %x {dim = 1 : i64, descending = false} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
  func.return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<4xi64>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xi64>
}
