// Indexing to MO: gather as mo.gather (numpy's take) on the flattened input at
// flat positions (index * stride + the other coordinates from mo.range);
// scatter_add as mo.scatter.add, bool through si32 and != 0.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @indexing(
// CHECK:      %[[R:.*]] = rmo.mo.range
// CHECK:      %[[M:.*]] = rmo.mul(%arg1, %{{.*}})
// CHECK:      %[[F:.*]] = rmo.add(%[[R]], %[[M]])
// CHECK:      %[[X:.*]] = rmo.reshape(%arg0) [newShape = #mosh<ape[12]> : !mosh.ape]
// CHECK:      rmo.mo.gather(%[[X]], %{{.*}}) [axis = 0] : (!mo.tensor<[12], f32>, !mo.tensor<[2, 4], si64>) -> !mo.tensor<[2, 4], f32>
// CHECK:      rmo.mo.scatter.add(%arg0, %arg3, %arg2, %{{.*}}) : (!mo.tensor<[3, 4], f32>, !mo.tensor<[3, 2], f32>, !mo.tensor<[3, 2], si32>, !mo.tensor<[], si64>) -> !mo.tensor<[3, 4], f32>
// CHECK:      %[[B:.*]] = mo.cast(%arg4) : (!mo.tensor<[3, 4], bool>) -> !mo.tensor<[3, 4], si32>
// CHECK:      %[[S:.*]] = rmo.mo.scatter.add(%[[B]], %{{.*}}) {{.*}} -> !mo.tensor<[3, 4], si32>
// CHECK:      rmo.not_equal(%[[S]], %{{.*}})
func.func @indexing(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %j: tensor<3x2xi32>, %s: tensor<3x2xf32>, %b: tensor<3x4xi1>, %c: tensor<3x2xi1>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3x4xi1>) {
  %g = pyflame.gather %x, %i {dim = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  %a = pyflame.scatter_add %x, %j, %s {dim = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %o = pyflame.scatter_add %b, %j, %c {dim = 1 : i64} : (tensor<3x4xi1>, tensor<3x2xi32>, tensor<3x2xi1>) -> tensor<3x4xi1>
  func.return %g, %a, %o : tensor<2x4xf32>, tensor<3x4xf32>, tensor<3x4xi1>
}
