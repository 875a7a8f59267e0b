// matmul (numpy semantics: vectors are reshaped to matrices and back; half
// precision accumulates in float32) and the softmax family to MO.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @matmuls(
func.func @matmuls(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %m: tensor<2x3x4xf32>, %v: tensor<4xf32>, %h: tensor<3x4xf16>, %hb: tensor<4x5xf16>) -> (tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<5xf32>, tensor<3xf32>, tensor<3x5xf16>) {
  // CHECK: %[[MM:.*]] = rmo.matmul(%arg0, %arg1) : (!mo.tensor<[3, 4], f32>, !mo.tensor<[4, 5], f32>) -> !mo.tensor<[3, 5], f32>
  %0 = pyflame.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  // batch dims broadcast in MAX's matmul too
  // CHECK: %[[BMM:.*]] = rmo.matmul(%arg2, %arg1) : (!mo.tensor<[2, 3, 4], f32>, !mo.tensor<[4, 5], f32>) -> !mo.tensor<[2, 3, 5], f32>
  %1 = pyflame.matmul %m, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: %[[ROW:.*]] = rmo.reshape(%arg3) [newShape = #mosh<ape[1, 4]> : !mosh.ape]
  // CHECK: %[[VM:.*]] = rmo.matmul(%[[ROW]], %arg1) : (!mo.tensor<[1, 4], f32>, !mo.tensor<[4, 5], f32>) -> !mo.tensor<[1, 5], f32>
  // CHECK: %[[VMR:.*]] = rmo.reshape(%[[VM]]) [newShape = #mosh<ape[5]> : !mosh.ape]
  %2 = pyflame.matmul %v, %b : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  // CHECK: %[[COL:.*]] = rmo.reshape(%arg3) [newShape = #mosh<ape[4, 1]> : !mosh.ape]
  // CHECK: %[[MV:.*]] = rmo.matmul(%arg0, %[[COL]]) : (!mo.tensor<[3, 4], f32>, !mo.tensor<[4, 1], f32>) -> !mo.tensor<[3, 1], f32>
  // CHECK: %[[MVR:.*]] = rmo.reshape(%[[MV]]) [newShape = #mosh<ape[3]> : !mosh.ape]
  %3 = pyflame.matmul %a, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  // CHECK: %[[HA:.*]] = mo.cast(%arg4) : (!mo.tensor<[3, 4], f16>) -> !mo.tensor<[3, 4], f32>
  // CHECK: %[[HB:.*]] = mo.cast(%arg5) : (!mo.tensor<[4, 5], f16>) -> !mo.tensor<[4, 5], f32>
  // CHECK: %[[HM:.*]] = rmo.matmul(%[[HA]], %[[HB]])
  // CHECK: %[[HR:.*]] = mo.cast(%[[HM]]) : (!mo.tensor<[3, 5], f32>) -> !mo.tensor<[3, 5], f16>
  %4 = pyflame.matmul %h, %hb : (tensor<3x4xf16>, tensor<4x5xf16>) -> tensor<3x5xf16>
  // CHECK: mo.output %[[MM]], %[[BMM]], %[[VMR]], %[[MVR]], %[[HR]] :
  func.return %0, %1, %2, %3, %4 : tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<5xf32>, tensor<3xf32>, tensor<3x5xf16>
}

// CHECK-LABEL: mo.graph @softmax_family(
func.func @softmax_family(%a: tensor<3x4xf32>, %h: tensor<3x4xf16>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xf16>) {
  // softmax written out (MAX's own softmax op gave NaN after a fused causal mask)
  // CHECK: %[[M:.*]] = rmo.mo.reduce.max(%arg0) [axis = 1] : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 1], f32>
  // CHECK: %[[SH:.*]] = rmo.sub(%arg0, %[[M]])
  // CHECK: %[[EX:.*]] = rmo.mo.exp(%[[SH]])
  // CHECK: %[[SU:.*]] = rmo.mo.reduce.add(%[[EX]]) [axis = 1]
  // CHECK: %[[SM:.*]] = rmo.div(%[[EX]], %[[SU]]) : (!mo.tensor<[3, 4], f32>, !mo.tensor<[3, 1], f32>) -> !mo.tensor<[3, 4], f32>
  %0 = pyflame.softmax %a {dim = 1} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: %[[M0:.*]] = rmo.mo.reduce.max(%arg0) [axis = 0]
  // CHECK: %[[SH0:.*]] = rmo.sub(%arg0, %[[M0]])
  // CHECK: %[[EX0:.*]] = rmo.mo.exp(%[[SH0]])
  // CHECK: %[[SU0:.*]] = rmo.mo.reduce.add(%[[EX0]]) [axis = 0]
  // CHECK: %[[LG0:.*]] = rmo.mo.log(%[[SU0]])
  // CHECK: %[[LSM:.*]] = rmo.sub(%[[SH0]], %[[LG0]])
  %1 = pyflame.log_softmax %a {dim = 0} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // logsumexp: shift by the max where it is finite (an all -inf row gives -inf, not NaN)
  // CHECK: %[[MX:.*]] = rmo.mo.reduce.max(%arg0) [axis = 1] : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 1], f32>
  // CHECK: %[[INF:.*]] = rmo.mo.is_inf(%[[MX]])
  // CHECK: %[[NAN:.*]] = rmo.mo.is_nan(%[[MX]])
  // CHECK: %[[BAD:.*]] = rmo.or(%[[INF]], %[[NAN]])
  // CHECK: %[[OK:.*]] = rmo.mo.not(%[[BAD]])
  // CHECK: %[[SHIFT:.*]] = rmo.select(%[[OK]], %[[MX]], %{{.*}})
  // CHECK: %[[D:.*]] = rmo.sub(%arg0, %[[SHIFT]])
  // CHECK: %[[E:.*]] = rmo.mo.exp(%[[D]])
  // CHECK: %[[S:.*]] = rmo.mo.reduce.add(%[[E]]) [axis = 1]
  // CHECK: %[[L:.*]] = rmo.mo.log(%[[S]])
  // CHECK: %[[R:.*]] = rmo.add(%[[L]], %[[SHIFT]])
  // CHECK: %[[LSE:.*]] = rmo.reshape(%[[R]]) [newShape = #mosh<ape[3]> : !mosh.ape]
  %2 = pyflame.logsumexp %a {dims = array<i64: 1>, keepdim = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  // CHECK: %[[W:.*]] = mo.cast(%arg1) : (!mo.tensor<[3, 4], f16>) -> !mo.tensor<[3, 4], f32>
  // CHECK: %[[HM:.*]] = rmo.mo.reduce.max(%[[W]]) [axis = 1]
  // CHECK: %[[HS:.*]] = rmo.div(
  // CHECK: %[[HSR:.*]] = mo.cast(%[[HS]]) : (!mo.tensor<[3, 4], f32>) -> !mo.tensor<[3, 4], f16>
  %3 = pyflame.softmax %h {dim = 1} : (tensor<3x4xf16>) -> tensor<3x4xf16>
  // CHECK: mo.output %[[SM]], %[[LSM]], %[[LSE]], %[[HSR]] :
  func.return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xf16>
}
