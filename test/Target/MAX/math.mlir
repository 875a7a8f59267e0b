// Issue 14's math primitives to MO: MAX's own rounding ops and acos,
// floor_div, mod moved to fmod's sign (the dividend's), logical ops for bool
// bitwise ops; atan2 and expm1 have no MO op: legalize-for-max decomposes them.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @rounding(
// CHECK: rmo.mo.floor(%arg0)
// CHECK: rmo.mo.ceil(%arg0)
// CHECK: rmo.mo.round(%arg0)
// CHECK: rmo.mo.trunc(%arg0)
// CHECK: mo.custom [symbol = "mo.acos"](%arg0)
// CHECK: mo.output
func.func @rounding(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = pyflame.floor %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.round %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.trunc %x : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyflame.acos %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: mo.graph @integer(
// floor_divide: MAX's floor_div (a truncating divide, then the floor correction)
// CHECK: rmo.div(%arg0, %arg1)
// fmod: mod, then minus the divisor where the remainder's sign is not the dividend's
// CHECK: %[[R:.*]] = rmo.mod(%arg0, %arg1)
// CHECK: %[[SUB:.*]] = rmo.sub(%[[R]], %arg1)
// CHECK: rmo.select(%{{.*}}, %[[SUB]], %[[R]])
// CHECK: rmo.xor(%arg2, %arg3)
// CHECK: rmo.mo.not(%arg2)
func.func @integer(%a: tensor<4xi64>, %b: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>) {
  %0 = pyflame.floor_divide %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = pyflame.fmod %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = pyflame.bitwise_xor %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %3 = pyflame.bitwise_not %p : (tensor<4xi1>) -> tensor<4xi1>
  func.return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: mo.graph @decomposed(
// CHECK-NOT: atan
// CHECK: rmo.div(%arg1, %arg0)
// CHECK: rmo.mo.exp(%arg0)
// CHECK: rmo.mo.log(
// CHECK: mo.output
func.func @decomposed(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = pyflame.atan2 %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.expm1 %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
