// algebraic-simplify: identities that are exact in IEEE arithmetic by default;
// the ones that change results (NaN, inf, signed zeros) only with fast-math.
// RUN: pyflame-opt %s -p algebraic-simplify | filecheck %s
// RUN: pyflame-opt %s -p 'algebraic-simplify{fast-math=true}' | filecheck %s --check-prefix=FAST
// RUN: pyflame-opt %s -p 'algebraic-simplify{expand-mean=true}' | filecheck %s --check-prefix=MEAN

// x*1, 1*x, x/1, x-0.0, x+(-0.0), x**1 are x, bit for bit.
// CHECK-LABEL: func.func @identities
// CHECK-NOT:     pyflame.mul
// CHECK-NOT:     pyflame.div
// CHECK-NOT:     pyflame.sub
// CHECK-NOT:     pyflame.add
// CHECK-NOT:     pyflame.pow
// CHECK:         func.return %x, %x, %x, %x, %x, %x
func.func @identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %nzero = pyflame.constant {value = dense<-0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = pyflame.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = pyflame.mul %one, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.div %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = pyflame.sub %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = pyflame.add %nzero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = pyflame.pow %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// What is not exact stays by default: x+0.0 (-0.0 + 0.0 is +0.0), x*0 (NaN*0 is
// NaN), x-x (inf-inf is NaN), x/x (0/0 is NaN), exp(log x), log(exp x).
// CHECK-LABEL: func.func @not_exact
// CHECK:         pyflame.add %x
// CHECK:         pyflame.mul %x
// CHECK:         pyflame.sub %x, %x
// CHECK:         pyflame.div %x, %x
// CHECK:         pyflame.log
// CHECK:         pyflame.exp
// CHECK:         pyflame.exp
// CHECK:         pyflame.log
// FAST-LABEL: func.func @not_exact
// FAST-NEXT:     %[[Z1:.*]] = pyflame.constant {value = dense<0.000000e+00> : tensor<4xf32>}
// FAST-NEXT:     %[[Z2:.*]] = pyflame.constant {value = dense<0.000000e+00> : tensor<4xf32>}
// FAST-NEXT:     %[[O:.*]] = pyflame.constant {value = dense<1.000000e+00> : tensor<4xf32>}
// FAST-NEXT:     func.return %x, %[[Z1]], %[[Z2]], %[[O]], %x, %x
func.func @not_exact(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.add %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = pyflame.mul %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = pyflame.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.div %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = pyflame.log %x : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyflame.exp %l : (tensor<4xf32>) -> tensor<4xf32>
  %e = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %5 = pyflame.log %e : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Integers have no NaN or signed zero: x+0, x*0 and x-x simplify by default.
// CHECK-LABEL: func.func @integers
// CHECK-NEXT:    %[[Z1:.*]] = pyflame.constant {value = dense<0> : tensor<4xi32>}
// CHECK-NEXT:    %[[Z2:.*]] = pyflame.constant {value = dense<0> : tensor<4xi32>}
// CHECK-NEXT:    func.return %i, %[[Z1]], %[[Z2]]
func.func @integers(%i: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = pyflame.constant {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = pyflame.add %i, %zero : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %1 = pyflame.mul %zero, %i : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = pyflame.sub %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// An identity that would change the result shape (x broadcast by the
// constant) does not fire.
// CHECK-LABEL: func.func @broadcasting_identity
// CHECK:         pyflame.mul %x, %{{.*}} : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @broadcasting_identity(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %ones = pyflame.constant {value = dense<1.0> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
  %0 = pyflame.mul %x, %ones : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// neg(neg x) is x; the inner neg stays while something else uses it.
// CHECK-LABEL: func.func @double_negation
// CHECK:         %[[N:.*]] = pyflame.neg %x
// CHECK-NOT:     pyflame.neg
// CHECK:         func.return %x, %[[N]]
func.func @double_negation(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = pyflame.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1, %0 : tensor<4xf32>, tensor<4xf32>
}

// x + neg(y) is x - y and x - neg(y) is x + y (exact); abs(neg x) is abs x;
// relu, abs are idempotent; maximum(x, x) and where(c, x, x) are x.
// CHECK-LABEL: func.func @pairs
// CHECK-DAG:     %[[S:.*]] = pyflame.sub %x, %y
// CHECK-DAG:     %[[A:.*]] = pyflame.add %x, %y
// CHECK-DAG:     %[[B:.*]] = pyflame.abs %x
// CHECK-DAG:     %[[R:.*]] = pyflame.relu %x
// CHECK-NOT:     pyflame.neg
// CHECK-NOT:     pyflame.maximum
// CHECK-NOT:     pyflame.where
// CHECK:         func.return %[[S]], %[[A]], %[[B]], %[[R]], %x, %x
func.func @pairs(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ny = pyflame.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  %0 = pyflame.add %ny, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.sub %x, %ny : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %nx = pyflame.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %a = pyflame.abs %nx : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  %r = pyflame.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.relu %r : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyflame.maximum %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = pyflame.where %c, %x, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Shape ops: permutations compose (to nothing when the composition is the
// identity), reshapes and broadcasts collapse, no-ops vanish.
// CHECK-LABEL: func.func @shapes
// CHECK-DAG:     %[[P:.*]] = pyflame.permute %x {perm = array<i64: 2, 0, 1>}
// CHECK-DAG:     %[[R:.*]] = pyflame.reshape %x {shape = array<i64: 24>}
// CHECK-DAG:     %[[B:.*]] = pyflame.broadcast_to %v {shape = array<i64: 5, 3, 4>}
// CHECK-NOT:     pyflame.permute
// CHECK-NOT:     pyflame.reshape
// CHECK-NOT:     pyflame.broadcast_to
// CHECK-NOT:     pyflame.slice
// CHECK:         func.return %x, %[[P]], %[[R]], %[[B]], %x, %x
func.func @shapes(%x: tensor<2x3x4xf32>, %v: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<5x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %p1 = pyflame.permute %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %0 = pyflame.permute %p1 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %1 = pyflame.permute %p1 {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  %r1 = pyflame.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %2 = pyflame.reshape %r1 {shape = array<i64: 24>} : (tensor<6x4xf32>) -> tensor<24xf32>
  %b1 = pyflame.broadcast_to %v {shape = array<i64: 3, 4>} : (tensor<4xf32>) -> tensor<3x4xf32>
  %3 = pyflame.broadcast_to %b1 {shape = array<i64: 5, 3, 4>} : (tensor<3x4xf32>) -> tensor<5x3x4xf32>
  %4 = pyflame.reshape %x {shape = array<i64: 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %5 = pyflame.slice %x {start = array<i64: 0, 0, 0>, limit = array<i64: 2, 3, 4>, stride = array<i64: 1, 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<5x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// A reshape that only drops the 1s of a keepdim reduction is the reduction
// without keepdim; one that moves data, or a reduction used twice, stays.
// CHECK-LABEL: func.func @kept_dims
// CHECK-NEXT:    %[[S:.*]] = pyflame.sum %x {dims = array<i64: 0>, keepdim = false} : (tensor<64x10xf32>) -> tensor<10xf32>
// CHECK-NEXT:    %[[M:.*]] = pyflame.max %x {dims = array<i64: 1>, keepdim = true}
// CHECK-NEXT:    %[[R:.*]] = pyflame.reshape %[[M]] {shape = array<i64: 64>}
// CHECK-NEXT:    %[[K:.*]] = pyflame.mean %x {dims = array<i64: 0>, keepdim = true}
// CHECK-NEXT:    %[[T:.*]] = pyflame.reshape %[[K]] {shape = array<i64: 2, 5>}
// CHECK-NEXT:    func.return %[[S]], %[[R]], %[[M]], %[[T]]
func.func @kept_dims(%x: tensor<64x10xf32>) -> (tensor<10xf32>, tensor<64xf32>, tensor<64x1xf32>, tensor<2x5xf32>) {
  %s = pyflame.sum %x {dims = array<i64: 0>, keepdim = true} : (tensor<64x10xf32>) -> tensor<1x10xf32>
  %0 = pyflame.reshape %s {shape = array<i64: 10>} : (tensor<1x10xf32>) -> tensor<10xf32>
  %m = pyflame.max %x {dims = array<i64: 1>, keepdim = true} : (tensor<64x10xf32>) -> tensor<64x1xf32>
  %1 = pyflame.reshape %m {shape = array<i64: 64>} : (tensor<64x1xf32>) -> tensor<64xf32>
  %k = pyflame.mean %x {dims = array<i64: 0>, keepdim = true} : (tensor<64x10xf32>) -> tensor<1x10xf32>
  %2 = pyflame.reshape %k {shape = array<i64: 2, 5>} : (tensor<1x10xf32>) -> tensor<2x5xf32>
  func.return %0, %1, %m, %2 : tensor<10xf32>, tensor<64xf32>, tensor<64x1xf32>, tensor<2x5xf32>
}

// A convert round trip through a wider type is the identity; through a
// narrower one it rounds, and stays.
// CHECK-LABEL: func.func @converts
// CHECK:         %[[H:.*]] = pyflame.convert %x {dtype = f16}
// CHECK-NEXT:    %[[B:.*]] = pyflame.convert %[[H]] {dtype = f32}
// CHECK-NEXT:    func.return %x, %[[B]]
func.func @converts(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = pyflame.convert %x {dtype = f64} : (tensor<4xf32>) -> tensor<4xf64>
  %0 = pyflame.convert %w {dtype = f32} : (tensor<4xf64>) -> tensor<4xf32>
  %h = pyflame.convert %x {dtype = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = pyflame.convert %h {dtype = f32} : (tensor<4xf16>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// mean -> sum / numel only when asked (it adds ops); a reduction over no
// dimension is its operand.
// CHECK-LABEL: func.func @reductions
// CHECK:         %[[M:.*]] = pyflame.mean %x
// CHECK-NOT:     pyflame.sum
// CHECK:         func.return %[[M]], %x
// MEAN-LABEL: func.func @reductions
// MEAN-DAG:      %[[S:.*]] = pyflame.sum %x {dims = array<i64: 0, 1>, keepdim = false}
// MEAN-DAG:      %[[N:.*]] = pyflame.constant {value = dense<1.200000e+01> : tensor<f32>}
// MEAN:          %[[D:.*]] = pyflame.div %[[S]], %[[N]]
// MEAN:          func.return %[[D]], %x
func.func @reductions(%x: tensor<3x4xf32>) -> (tensor<f32>, tensor<3x4xf32>) {
  %0 = pyflame.mean %x {dims = array<i64: 0, 1>, keepdim = false} : (tensor<3x4xf32>) -> tensor<f32>
  %1 = pyflame.sum %x {dims = array<i64>, keepdim = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0, %1 : tensor<f32>, tensor<3x4xf32>
}

// log(softmax x) is log_softmax x only under fast-math (it rounds differently).
// CHECK-LABEL: func.func @log_softmax
// CHECK:         pyflame.softmax
// FAST-LABEL: func.func @log_softmax
// FAST:          pyflame.log_softmax %x {dim = 1 : i64}
// FAST-NOT:      pyflame.softmax
func.func @log_softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = pyflame.softmax %x {dim = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = pyflame.log %0 : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %1 : tensor<2x5xf32>
}
