// Reductions to MO. MAX reduces one axis per op and keeps it (size 1): adjacent
// dims are merged by a reshape first, other dims reduced one after the other,
// and a final reshape gives the declared result. Integer sums widen to int64
// and half precision accumulates in float32, as the reference kernels do.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @reductions(
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<3x4xi32>, %h: tensor<3x4xf16>) -> (tensor<3xf32>, tensor<1x3x1xf32>, tensor<4xi64>, tensor<2x4xf32>, tensor<3xf32>, tensor<3xf16>, tensor<f32>) {
  // CHECK: %[[S0:.*]] = rmo.mo.reduce.add(%arg0) [axis = 0] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[1, 3, 4], f32>
  // CHECK: %[[S1:.*]] = rmo.mo.reduce.add(%[[S0]]) [axis = 2] : (!mo.tensor<[1, 3, 4], f32>) -> !mo.tensor<[1, 3, 1], f32>
  // CHECK: %[[SUM:.*]] = rmo.reshape(%[[S1]]) [newShape = #mosh<ape[3]> : !mosh.ape]
  %0 = pyflame.sum %x {dims = array<i64: 0, 2>, keepdim = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // keepdim: no final reshape needed
  // CHECK: %[[M0:.*]] = rmo.mo.reduce.mean(%arg0) [axis = 0]
  // CHECK: %[[MEAN:.*]] = rmo.mo.reduce.mean(%[[M0]]) [axis = 2] : (!mo.tensor<[1, 3, 4], f32>) -> !mo.tensor<[1, 3, 1], f32>
  %1 = pyflame.mean %x {dims = array<i64: 0, 2>, keepdim = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: %[[W:.*]] = mo.cast(%arg1) : (!mo.tensor<[3, 4], si32>) -> !mo.tensor<[3, 4], si64>
  // CHECK: %[[IS:.*]] = rmo.mo.reduce.add(%[[W]]) [axis = 0] : (!mo.tensor<[3, 4], si64>) -> !mo.tensor<[1, 4], si64>
  // CHECK: %[[ISUM:.*]] = rmo.reshape(%[[IS]]) [newShape = #mosh<ape[4]> : !mosh.ape]
  %2 = pyflame.sum %i {dims = array<i64: 0>, keepdim = false} : (tensor<3x4xi32>) -> tensor<4xi64>
  // CHECK: rmo.mo.reduce.max(%arg0) [axis = 1] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[2, 1, 4], f32>
  %3 = pyflame.max %x {dims = array<i64: 1>, keepdim = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: rmo.mo.reduce.min(%arg0) [axis = 0]
  // CHECK: rmo.mo.reduce.min(%{{.*}}) [axis = 2]
  %4 = pyflame.min %x {dims = array<i64: 0, 2>, keepdim = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK: %[[HW:.*]] = mo.cast(%arg2) : (!mo.tensor<[3, 4], f16>) -> !mo.tensor<[3, 4], f32>
  // CHECK: %[[HM:.*]] = rmo.mo.reduce.mean(%[[HW]]) [axis = 1] : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 1], f32>
  // CHECK: %[[HR:.*]] = rmo.reshape(%[[HM]])
  // CHECK: mo.cast(%[[HR]]) : (!mo.tensor<[3], f32>) -> !mo.tensor<[3], f16>
  %5 = pyflame.mean %h {dims = array<i64: 1>, keepdim = false} : (tensor<3x4xf16>) -> tensor<3xf16>
  // every dim: one reduction of the flattened tensor
  // CHECK: %[[FLAT:.*]] = rmo.reshape(%arg0) [newShape = #mosh<ape[24]> : !mosh.ape]
  // CHECK-NEXT: rmo.mo.reduce.add(%[[FLAT]]) [axis = 0] : (!mo.tensor<[24], f32>) -> !mo.tensor<[1], f32>
  // CHECK: !mo.tensor<[], f32>
  %6 = pyflame.sum %x {dims = array<i64: 0, 1, 2>, keepdim = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: mo.output %[[SUM]], %[[MEAN]], %[[ISUM]],
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<3xf32>, tensor<1x3x1xf32>, tensor<4xi64>, tensor<2x4xf32>, tensor<3xf32>, tensor<3xf16>, tensor<f32>
}

// CHECK-LABEL: mo.graph @arg_reductions(
func.func @arg_reductions(%x: tensor<2x3x4xf32>) -> (tensor<2x4xi64>, tensor<2x1x4xi64>, tensor<i64>) {
  // CHECK: %[[A:.*]] = rmo.mo.reduce.arg_max(%arg0) [axis = 1] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[2, 1, 4], si64>
  // CHECK: %[[AR:.*]] = rmo.reshape(%[[A]]) [newShape = #mosh<ape[2, 4]> : !mosh.ape]
  %0 = pyflame.argmax %x {dim = 1, keepdim = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  // CHECK: %[[B:.*]] = rmo.mo.reduce.arg_min(%arg0) [axis = 1] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[2, 1, 4], si64>
  %1 = pyflame.argmin %x {dim = 1, keepdim = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
  // no dim: the index into the flattened tensor
  // CHECK: %[[F:.*]] = rmo.reshape(%arg0) [newShape = #mosh<ape[24]> : !mosh.ape]
  // CHECK: %[[C:.*]] = rmo.mo.reduce.arg_max(%[[F]]) [axis = 0] : (!mo.tensor<[24], f32>) -> !mo.tensor<[1], si64>
  // CHECK: %[[CR:.*]] = rmo.reshape(%[[C]]) [newShape = #mosh<ape[]> : !mosh.ape]
  %2 = pyflame.argmax %x {keepdim = false} : (tensor<2x3x4xf32>) -> tensor<i64>
  // CHECK: mo.output %[[AR]], %[[B]], %[[CR]]
  func.return %0, %1, %2 : tensor<2x4xi64>, tensor<2x1x4xi64>, tensor<i64>
}
