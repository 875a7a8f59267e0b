// constant-fold: ops of constant operands are evaluated with the op table's
// kernels; results above size-limit stay ops; NaN and -0.0 survive folding.
// RUN: pyflame-opt %s -p constant-fold --split-input-file | filecheck %s
// RUN: pyflame-opt %s -p 'constant-fold{size-limit=2}' --split-input-file | filecheck %s --check-prefix=LIMIT

// A chain of constant ops folds in one run, to one constant; the dead inputs go.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[C:.*]] = pyflame.constant {value = dense<[4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    func.return %[[C]]
// LIMIT-LABEL: func.func @chain
// LIMIT-COUNT-3: pyflame.constant
// LIMIT:         pyflame.add
// LIMIT:         pyflame.mul
func.func @chain() -> tensor<3xf32> {
  %a = pyflame.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %two = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.add %a, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = pyflame.mul %0, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}

// -----

// An op with a non-constant operand stays.
// CHECK-LABEL: func.func @not_constant
// CHECK:         pyflame.add %x, %{{.*}}
func.func @not_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.add %x, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// Elementwise ops of splats fold to a splat at any size the IR already holds,
// even above size-limit (one element is computed).
// CHECK-LABEL: func.func @splat
// CHECK-NEXT:    pyflame.constant {value = dense<6.000000e+00> : tensor<64x64xf32>}
// CHECK-NEXT:    func.return
// LIMIT-LABEL: func.func @splat
// LIMIT-NEXT:    pyflame.constant {value = dense<6.000000e+00> : tensor<64x64xf32>}
func.func @splat() -> tensor<64x64xf32> {
  %a = pyflame.constant {value = dense<2.0> : tensor<64x64xf32>} : () -> tensor<64x64xf32>
  %b = pyflame.constant {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.mul %a, %b : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  func.return %0 : tensor<64x64xf32>
}

// -----

// IEEE results are kept: 0/0 is NaN, NaN * 0 is NaN, -0.0 + -0.0 is -0.0,
// 1/0 is inf. Non-finite literals print as raw little-endian hex; 0/0 may
// give either NaN sign.
// CHECK-LABEL: func.func @ieee
// CHECK-DAG:     pyflame.constant {value = dense<"0x0000C0{{7F|FF}}"> : tensor<f32>}
// CHECK-DAG:     pyflame.constant {value = dense<-0.000000e+00> : tensor<f32>}
// CHECK-DAG:     pyflame.constant {value = dense<"0x0000807F"> : tensor<f32>}
// CHECK-NOT:     pyflame.mul
// CHECK-NOT:     pyflame.div
func.func @ieee() -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %nzero = pyflame.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %nan = pyflame.div %zero, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %0 = pyflame.mul %nan, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = pyflame.add %nzero, %nzero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = pyflame.div %one, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Reductions, shape ops and iota fold too (iota as a constant source).
// CHECK-LABEL: func.func @other_ops
// CHECK-NEXT:    pyflame.constant {value = dense<[3, 12]> : tensor<2xi64>}
// CHECK-NEXT:    pyflame.constant {value = dense<{{\[}}[0.000000e+00, 2.000000e+00], [1.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT:    func.return
func.func @other_ops() -> (tensor<2xi64>, tensor<2x2xf32>) {
  %i = pyflame.iota {shape = array<i64: 2, 3>, dim = 1 : i64, dtype = i64} : () -> tensor<2x3xi64>
  %j = pyflame.iota {shape = array<i64: 2, 3>, dim = 0 : i64, dtype = i64} : () -> tensor<2x3xi64>
  %three = pyflame.constant {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %m = pyflame.mul %j, %three : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  %a = pyflame.add %i, %m : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %s = pyflame.sum %a {dims = array<i64: 1>, keepdim = false} : (tensor<2x3xi64>) -> tensor<2xi64>
  %c = pyflame.constant {value = dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %t = pyflame.permute %c {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %s, %t : tensor<2xi64>, tensor<2x2xf32>
}

// -----

// A split with a shared constant operand would become more constants than it
// removes: it stays. Two results from one dying constant are fine.
// CHECK-LABEL: func.func @split
// CHECK:         pyflame.split
// CHECK-LABEL: func.func @split_dying
// CHECK-NOT:     pyflame.split
// CHECK-COUNT-2: pyflame.constant
func.func @split() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %c = pyflame.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0, %1, %2 = pyflame.split %c {sizes = array<i64: 1, 1, 1>, dim = 0 : i64} : (tensor<3xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  func.return %0, %1, %2 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
func.func @split_dying() -> (tensor<1xf32>, tensor<2xf32>) {
  %c = pyflame.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0, %1 = pyflame.split %c {sizes = array<i64: 1, 2>, dim = 0 : i64} : (tensor<3xf32>) -> (tensor<1xf32>, tensor<2xf32>)
  func.return %0, %1 : tensor<1xf32>, tensor<2xf32>
}

// -----

// A fused kernel whose body folds to a constant, or yields its own argument,
// is no kernel: replaced by the constant (hoisted) or the operand. (The
// reference backend refused the zero-operand kernel 'fuse' made of @ieee.)
// CHECK-LABEL: func.func @fused_folds
// CHECK-NOT:     pyflame.fused
// CHECK:         %[[C:.*]] = pyflame.constant {value = dense<"0x0000C0FF"> : tensor<f32>}
// CHECK:         func.return %[[C]], %arg0
// LIMIT-LABEL: func.func @fused_folds
// LIMIT-NOT:     pyflame.fused
func.func @fused_folds(%arg0: tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %0 = pyflame.fused : () -> tensor<f32> {
    %z = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %nan = pyflame.div %z, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %1 = pyflame.mul %nan, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
    pyflame.yield %1 : tensor<f32>
  }
  %2 = pyflame.fused %arg0 : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    pyflame.yield %a : tensor<2xf32>
  }
  func.return %0, %2 : tensor<f32>, tensor<2xf32>
}
