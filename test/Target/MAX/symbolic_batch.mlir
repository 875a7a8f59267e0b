// PYFLAME_MAX_SYMBOLIC_BATCH=1: dim 0 of the first argument is the symbolic dim
// `batch`, and so is every dim the ops tie to it (broadcasting, matmul rows,
// kept dims of reductions, permutations, reshapes that keep it in place);
// shape attributes spell it too (symbolic_batch_errors.mlir: graphs that pin it).
// REQUIRES: max
// RUN: env PYFLAME_MAX_SYMBOLIC_BATCH=1 pyflame-opt %s -t max | filecheck %s

// CHECK: mo.graph @mlp<batch>(%arg0: !mo.tensor<[batch, 16], f32>, %arg1: !mo.tensor<[16, 4], f32>, %arg2: !mo.tensor<[batch, 4], f32>) -> (!mo.tensor<[batch, 4], f32>, !mo.tensor<[], f32>, !mo.tensor<[4, batch], f32>, !mo.tensor<[batch, 2, 2], f32>, !mo.tensor<[16, 4], f32>)
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %y: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<f32>, tensor<4x8xf32>, tensor<8x2x2xf32>, tensor<16x4xf32>) {
  // CHECK: rmo.matmul(%arg0, %arg1) : (!mo.tensor<[batch, 16], f32>, !mo.tensor<[16, 4], f32>) -> !mo.tensor<[batch, 4], f32>
  %0 = pyflame.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  // a splat constant of the batch's size is broadcast to the symbolic shape
  // CHECK: rmo.broadcast_to(%{{.*}}) [newShape = #mosh<ape[batch, 4]> : !mosh.ape]
  %c = pyflame.constant {value = dense<2.0> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %1 = pyflame.mul %0, %c : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK: rmo.sub(%{{.*}}, %arg2) : (!mo.tensor<[batch, 4], f32>, !mo.tensor<[batch, 4], f32>)
  %2 = pyflame.sub %1, %y : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  // reducing over the batch: one axis at a time (no merged reshape of a symbolic dim)
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 0] : (!mo.tensor<[batch, 4], f32>) -> !mo.tensor<[1, 4], f32>
  // CHECK: rmo.mo.reduce.add(%{{.*}}) [axis = 1] : (!mo.tensor<[1, 4], f32>) -> !mo.tensor<[1, 1], f32>
  %3 = pyflame.sum %2 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<8x4xf32>) -> tensor<f32>
  // CHECK: rmo.mo.transpose({{.*}}) -> !mo.tensor<[4, batch], f32>
  %4 = pyflame.permute %2 {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.reshape(%{{.*}}) [newShape = #mosh<ape[batch, 2, 2]> : !mosh.ape]
  %5 = pyflame.reshape %2 {shape = array<i64: 8, 2, 2>} : (tensor<8x4xf32>) -> tensor<8x2x2xf32>
  // the weight gradient contracts the batch away
  // CHECK: rmo.matmul(%{{.*}}, %{{.*}}) : (!mo.tensor<[16, batch], f32>, !mo.tensor<[batch, 4], f32>) -> !mo.tensor<[16, 4], f32>
  %xt = pyflame.permute %x {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %6 = pyflame.matmul %xt, %2 : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  func.return %2, %3, %4, %5, %6 : tensor<8x4xf32>, tensor<f32>, tensor<4x8xf32>, tensor<8x2x2xf32>, tensor<16x4xf32>
}

