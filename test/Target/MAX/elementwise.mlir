// Elementwise pyflame ops to MO: direct ops where MAX's semantics are numpy's,
// compositions where they differ (sign, integer relu, bool arithmetic, ...).
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @unary(%arg0: !mo.tensor<[4, 8], f32>) -> (
func.func @unary(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: rmo.mo.negative(%arg0)
  %0 = pyflame.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.abs(%arg0)
  %1 = pyflame.abs %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // sign: where(x > 0, 1, where(0 > x, -1, 0)), PyTorch's: 0 at NaN and at -0.0
  // CHECK: %[[Z:.*]] = mo.constant <#M.dense_array<0.000000e+00> : tensor<f32>> : !mo.tensor<[], f32>
  // CHECK: %[[LT:.*]] = rmo.greater(%[[Z]], %arg0)
  // CHECK: %[[M1:.*]] = mo.constant <#M.dense_array<-1.000000e+00> : tensor<f32>>
  // CHECK: %[[IN:.*]] = rmo.select(%[[LT]], %[[M1]], %[[Z]])
  // CHECK: %[[GT:.*]] = rmo.greater(%arg0, %[[Z]])
  // CHECK: %[[P1:.*]] = mo.constant <#M.dense_array<1.000000e+00> : tensor<f32>>
  // CHECK: rmo.select(%[[GT]], %[[P1]], %[[IN]])
  %2 = pyflame.sign %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mul(%arg0, %arg0)
  %3 = pyflame.square %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.relu(%arg0)
  %4 = pyflame.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.exp(%arg0)
  %5 = pyflame.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.log(%arg0)
  %6 = pyflame.log %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.sqrt(%arg0)
  %7 = pyflame.sqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.rsqrt(%arg0)
  %8 = pyflame.rsqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.sin(%arg0)
  %9 = pyflame.sin %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.cos(%arg0)
  %10 = pyflame.cos %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.tanh(%arg0)
  %11 = pyflame.tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[ONE:.*]] = mo.constant <#M.dense_array<1.000000e+00> : tensor<f32>>
  // CHECK: rmo.div(%[[ONE]], %arg0)
  %12 = pyflame.reciprocal %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.sigmoid(%arg0)
  %13 = pyflame.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.erf(%arg0)
  %14 = pyflame.erf %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.gelu(%arg0)
  %15 = pyflame.gelu %x {approximate = "none"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mo.gelu_tanh(%arg0)
  %16 = pyflame.gelu %x {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: mo.output
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// log1p is MAX's own log1p (not log of 1 + x)
// CHECK-LABEL: mo.graph @log1p(
// CHECK-NOT: rmo.mo.log(
// CHECK: rmo.mo.log1p(%arg0)
// CHECK-NOT: rmo.mo.log(
// CHECK: mo.output
func.func @log1p(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = pyflame.log1p %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: mo.graph @binary(
func.func @binary(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
  // broadcasting stays implicit: MAX broadcasts like numpy
  // CHECK: rmo.add(%arg0, %arg1) : (!mo.tensor<[4, 8], f32>, !mo.tensor<[8], f32>) -> !mo.tensor<[4, 8], f32>
  %0 = pyflame.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.sub(%arg0, %arg1)
  %1 = pyflame.sub %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.mul(%arg0, %arg1)
  %2 = pyflame.mul %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.div(%arg0, %arg1)
  %3 = pyflame.div %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.pow(%arg0, %arg1)
  %4 = pyflame.pow %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.max(%arg0, %arg1)
  %5 = pyflame.maximum %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.min(%arg0, %arg1)
  %6 = pyflame.minimum %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: rmo.equal(%arg0, %arg1) : (!mo.tensor<[4, 8], f32>, !mo.tensor<[8], f32>) -> !mo.tensor<[4, 8], bool>
  %7 = pyflame.eq %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: rmo.not_equal(%arg0, %arg1)
  %8 = pyflame.ne %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // lt and le are greater and greater_equal with the operands swapped
  // CHECK: rmo.greater(%arg1, %arg0)
  %9 = pyflame.lt %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: rmo.greater_equal(%arg1, %arg0)
  %10 = pyflame.le %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: rmo.greater(%arg0, %arg1)
  %11 = pyflame.gt %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: rmo.greater_equal(%arg0, %arg1)
  %12 = pyflame.ge %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
}

// Bool operands follow numpy's ufuncs: + and maximum are or, * and minimum are
// and, != is xor; ordered comparisons compare as integers.
// CHECK-LABEL: mo.graph @bools(
func.func @bools(%p: tensor<3xi1>, %q: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  // CHECK: rmo.or(%arg0, %arg1)
  %0 = pyflame.add %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.and(%arg0, %arg1)
  %1 = pyflame.mul %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.or(%arg0, %arg1)
  %2 = pyflame.maximum %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.and(%arg0, %arg1)
  %3 = pyflame.minimum %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: %[[X:.*]] = rmo.xor(%arg0, %arg1)
  // CHECK: rmo.mo.not(%[[X]])
  %4 = pyflame.eq %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.xor(%arg0, %arg1)
  %5 = pyflame.ne %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: %[[A:.*]] = mo.cast(%arg0) : (!mo.tensor<[3], bool>) -> !mo.tensor<[3], si32>
  // CHECK: %[[B:.*]] = mo.cast(%arg1) : (!mo.tensor<[3], bool>) -> !mo.tensor<[3], si32>
  // CHECK: rmo.greater(%[[B]], %[[A]])
  %6 = pyflame.lt %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.and(%arg0, %arg1)
  %7 = pyflame.logical_and %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.or(%arg0, %arg1)
  %8 = pyflame.logical_or %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.mo.not(%arg0)
  %9 = pyflame.logical_not %p : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: mo.graph @integers_where_convert(
func.func @integers_where_convert(%i: tensor<3xi32>, %x: tensor<3xf32>, %c: tensor<3xi1>) -> (tensor<3xi32>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf16>, tensor<3xbf16>) {
  // integer relu is max(x, 0)
  // CHECK: %[[Z:.*]] = mo.constant <#M.dense_array<0> : tensor<si32>> : !mo.tensor<[], si32>
  // CHECK: rmo.max(%arg0, %[[Z]])
  %0 = pyflame.relu %i : (tensor<3xi32>) -> tensor<3xi32>
  // logical ops on numbers test against zero
  // CHECK: %[[Z2:.*]] = mo.constant <#M.dense_array<0> : tensor<si32>>
  // CHECK: rmo.equal(%arg0, %[[Z2]])
  %1 = pyflame.logical_not %i : (tensor<3xi32>) -> tensor<3xi1>
  // CHECK: %[[NZ:.*]] = rmo.not_equal(%arg1, %{{.*}}) : (!mo.tensor<[3], f32>, !mo.tensor<[], f32>) -> !mo.tensor<[3], bool>
  // CHECK: rmo.or(%[[NZ]], %arg2)
  %2 = pyflame.logical_or %x, %c : (tensor<3xf32>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: rmo.select(%arg2, %arg1, %arg1)
  %3 = pyflame.where %c, %x, %x : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: mo.cast(%arg1) : (!mo.tensor<[3], f32>) -> !mo.tensor<[3], si32>
  %4 = pyflame.convert %x {dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  // to bool is "nonzero" (numpy's astype), not a cast
  // CHECK: rmo.not_equal(%arg1, %{{.*}}) : (!mo.tensor<[3], f32>, !mo.tensor<[], f32>) -> !mo.tensor<[3], bool>
  %5 = pyflame.convert %x {dtype = i1} : (tensor<3xf32>) -> tensor<3xi1>
  // CHECK: mo.cast(%arg1) : (!mo.tensor<[3], f32>) -> !mo.tensor<[3], f16>
  %6 = pyflame.convert %x {dtype = f16} : (tensor<3xf32>) -> tensor<3xf16>
  // CHECK: mo.cast(%arg1) : (!mo.tensor<[3], f32>) -> !mo.tensor<[3], bf16>
  %7 = pyflame.convert %x {dtype = bf16} : (tensor<3xf32>) -> tensor<3xbf16>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<3xi32>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf16>, tensor<3xbf16>
}
