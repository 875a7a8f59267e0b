// Issue 14's math primitives: one math op each (roundeven for round: half to
// even, as the reference), integer floor division and remainder, bool bitwise
// ops as i1 logic (not: xor with true).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-LABEL: func.func @rounding
// CHECK: math.floor %{{.*}} : f32
// CHECK: math.ceil %{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: math.trunc %{{.*}} : f32
// CHECK: math.acos %{{.*}} : f32
func.func @rounding(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = pyflame.floor %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.round %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.trunc %x : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyflame.acos %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @integer
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.remsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.xori %{{.*}}, %{{.*}} : i1
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: arith.xori %{{.*}}, %[[T]] : i1
func.func @integer(%a: tensor<4xi64>, %b: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>) {
  %0 = pyflame.floor_divide %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = pyflame.fmod %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = pyflame.bitwise_xor %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %3 = pyflame.bitwise_not %p : (tensor<4xi1>) -> tensor<4xi1>
  func.return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @inverse
// CHECK: math.atan2 %{{.*}}, %{{.*}} : f32
// expm1 is Kahan's (u - 1) * x / log(u), u = exp(x), not math.expm1 (upstream: exp(x) - 1)
// CHECK: %[[U:.*]] = math.exp %[[X:.*]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.subf %[[U]], %{{.*}} : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[U]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[X]], %[[L]] : f32
// CHECK-NEXT: arith.mulf %[[M]], %[[Q]] : f32
// CHECK-NOT: math.expm1
func.func @inverse(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = pyflame.atan2 %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.expm1 %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
