// Shape ops to MO; identity slices, single-piece splits and same-shape
// broadcasts lower to nothing.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @shapes(
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>) -> (tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5x2x3x4xf32>, tensor<2x2x2xf32>, tensor<2x8x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: %[[R:.*]] = rmo.reshape(%arg0) [newShape = #mosh<ape[6, 4]> : !mosh.ape] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[6, 4], f32>
  %0 = pyflame.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: %[[PERM:.*]] = mo.constant <#M.dense_array<2, 0, 1> : tensor<3xsi64>>
  // CHECK: %[[T:.*]] = rmo.mo.transpose(%arg0, %[[PERM]]) : (!mo.tensor<[2, 3, 4], f32>, !mo.tensor<[3], si64>) -> !mo.tensor<[4, 2, 3], f32>
  %1 = pyflame.permute %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: %[[B:.*]] = rmo.broadcast_to(%arg0) [newShape = #mosh<ape[5, 2, 3, 4]> : !mosh.ape]
  %2 = pyflame.broadcast_to %x {shape = array<i64: 5, 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<5x2x3x4xf32>
  // CHECK: %[[S:.*]] = rmo.slice(%arg0) [starts = #mosh<ape[0, 1, 0]> : !mosh.ape, stops = #mosh<ape[2, 3, 4]> : !mosh.ape, steps = #mosh<ape[1, 1, 2]> : !mosh.ape] : (!mo.tensor<[2, 3, 4], f32>) -> !mo.tensor<[2, 2, 2], f32>
  %3 = pyflame.slice %x {start = array<i64: 0, 1, 0>, limit = array<i64: 2, 3, 4>, stride = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  // CHECK: %[[C:.*]] = rmo.concat(%arg0, %arg1) [axis = 1 : index] : (!mo.tensor<[2, 3, 4], f32>, !mo.tensor<[2, 5, 4], f32>) -> !mo.tensor<[2, 8, 4], f32>
  %4 = pyflame.concat %x, %y {dim = 1} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: %[[SIZES:.*]] = mo.constant <#M.dense_array<1, 2> : tensor<2xsi64>>
  // CHECK: %[[P:.*]]:2 = mo.split(%arg0, %[[SIZES]]) [axis = 1] : (!mo.tensor<[2, 3, 4], f32>, !mo.tensor<[2], si64>) -> (!mo.tensor<[2, 1, 4], f32>, !mo.tensor<[2, 2, 4], f32>)
  %5:2 = pyflame.split %x {sizes = array<i64: 1, 2>, dim = 1} : (tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>)
  %6 = pyflame.slice %x {start = array<i64: 0, 0, 0>, limit = array<i64: 2, 3, 4>, stride = array<i64: 1, 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %7 = pyflame.broadcast_to %x {shape = array<i64: 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NOT: rmo.slice
  // CHECK-NOT: rmo.broadcast_to
  // CHECK: mo.output %[[R]], %[[T]], %[[B]], %[[S]], %[[C]], %[[P]]#0, %[[P]]#1, %arg0, %arg0 :
  func.return %0, %1, %2, %3, %4, %5#0, %5#1, %6, %7 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<5x2x3x4xf32>, tensor<2x2x2xf32>, tensor<2x8x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// pad: interior padding per dim through a new axis padded with zeros, merged
// back and sliced; then one constant pad for low/high.
// CHECK-LABEL: mo.graph @pads(
func.func @pads(%x: tensor<4x8xf32>, %i: tensor<3xi32>, %b: tensor<2xi1>) -> (tensor<5x17xf32>, tensor<3xi32>, tensor<4xi1>) {
  // CHECK: %[[U:.*]] = rmo.reshape(%arg0) [newShape = #mosh<ape[4, 8, 1]> : !mosh.ape]
  // CHECK: %[[Z:.*]] = rmo.mo.pad.constant(%[[U]], %{{.*}}, %{{.*}}) : (!mo.tensor<[4, 8, 1], f32>, !mo.tensor<[6], si64>, !mo.tensor<[], f32>) -> !mo.tensor<[4, 8, 2], f32>
  // CHECK: %[[M:.*]] = rmo.reshape(%[[Z]]) [newShape = #mosh<ape[4, 16]> : !mosh.ape]
  // CHECK: %[[S:.*]] = rmo.slice(%[[M]]) [starts = #mosh<ape[0, 0]> : !mosh.ape, stops = #mosh<ape[4, 15]> : !mosh.ape
  // CHECK: %[[P:.*]] = rmo.mo.pad.constant(%[[S]], %{{.*}}, %{{.*}}) : (!mo.tensor<[4, 15], f32>, !mo.tensor<[4], si64>, !mo.tensor<[], f32>) -> !mo.tensor<[5, 17], f32>
  %0 = pyflame.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, interior = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<5x17xf32>
  // no padding at all: nothing to do
  %1 = pyflame.pad %i {low = array<i64: 0>, high = array<i64: 0>, interior = array<i64: 0>} : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: %[[BP:.*]] = rmo.mo.pad.constant(%arg2, %{{.*}}, %{{.*}}) : (!mo.tensor<[2], bool>, !mo.tensor<[2], si64>, !mo.tensor<[], bool>) -> !mo.tensor<[4], bool>
  %2 = pyflame.pad %b {low = array<i64: 1>, high = array<i64: 1>, interior = array<i64: 0>} : (tensor<2xi1>) -> tensor<4xi1>
  // CHECK: mo.output %[[P]], %arg1, %[[BP]] :
  func.return %0, %1, %2 : tensor<5x17xf32>, tensor<3xi32>, tensor<4xi1>
}
